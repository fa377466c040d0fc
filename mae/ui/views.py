"""Pure functions from run events to what the demo shows: timeline HTML, status line, progress.

``RunView`` folds the loop's ``Event`` stream (``mae.run.events``) into per-step records; the render
functions turn a ``RunView`` into HTML/Markdown strings. Nothing here touches Gradio; the same step
cards render a live run and a replay (``mae.ui.history`` builds them from a trajectory).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

from PIL import Image, ImageDraw

from mae.run.events import Event
from mae.run.results import exit_text
from mae.ui.text import md_code, md_text, readable
from mae.wording import counted

Box = tuple[str, tuple[int, int, int, int]]
"""One Perceptor element as drawn: ``(kind, (x1, y1, x2, y2))``."""


@dataclass(frozen=True)
class Perceived:
    """A Perceptor result together with the one picture it was computed for."""

    image: Image.Image
    boxes: tuple[Box, ...]


STAGE_LABELS: dict[str, str] = {
    "v1_agent": "Mobile-Agent (v1)",
    "planning": "Planning Agent",
    "decision": "Decision Agent",
    "manager": "Manager",
    "operator": "Operator",
    "execute": "Execute",
    "perceive": "Perceptor",
    "reflector": "Action Reflector",
    "reflection": "Reflection Agent",
    "undo": "Back (undo)",
    "v1_check": "Completion check",
    "notetaker": "Notetaker",
    "experience": "Experience Reflector",
}
"""Display names of the loop's stages, in the order a step runs them."""

STAGE_FIELDS: dict[str, list[tuple[str, str]]] = {
    "manager": [("thought", "Thought"), ("plan", "Plan"), ("subgoal", "Subgoal")],
    "operator": [
        ("thought", "Thought"),
        ("text", "Action"),
        ("description", "Expectation"),
        ("shortcut", "Shortcut"),
        ("atomic", "Steps"),
    ],
    "perceive": [("elements", "Elements")],
    "reflector": [("outcome", "Outcome"), ("progress", "Progress"), ("error_description", "Feedback")],
    "notetaker": [("notes", "Notes")],
    "v1_agent": [("observation", "Observation"), ("thought", "Thought"), ("action", "Action")],
    "v1_check": [("thought", "Thought"), ("completed", "Completed")],
    "planning": [("thought", "Thought"), ("progress", "Task progress")],
    "decision": [
        ("thought", "Thought"),
        ("action", "Action"),
        ("operation", "Expectation"),
        ("memory", "Memory"),
    ],
    "reflection": [("answer", "Answer"), ("thought", "Thought")],
    "experience": [
        ("summary", "Memory"),
        ("new_shortcuts", "New Shortcuts"),
        ("revised", "Revised"),
        ("refused", "Refused"),
        ("problems", "Problems"),
    ],
}
"""The reply fields each stage's card shows, in order; other stages show every field."""

HIDDEN_FIELDS = frozenset(
    {"raw", "image", "images", "screenshot", "prompt", "timings", "finished", "shown", "frame"}
)
"""Result keys never rendered for stages without a field list (bulky or internal)."""

OUTCOME_TEXT: dict[str, str] = {
    "A": "A — successful or partially successful",
    "B": "B — wrong page; needs to go back",
    "C": "C — no change on the screen",
}


@dataclass
class StageRecord:
    """One finished stage of a step."""

    stage: str
    seconds: float = 0.0
    result: dict[str, Any] = field(default_factory=dict)
    tokens: int = 0
    problem: str | None = None


@dataclass
class StepRecord:
    """Everything that happened in one step."""

    index: int
    stages: dict[str, StageRecord] = field(default_factory=dict)
    action: str | None = None
    action_description: str | None = None
    outcome: str | None = None
    progress: str | None = None
    error: str | None = None
    approval: bool | None = None
    warnings: list[str] = field(default_factory=list)
    model_calls: int = 0
    tokens: int = 0


@dataclass
class RunView:
    """The state of a run as the UI sees it, built from its events."""

    task: str = ""
    device: str = ""
    backbone: str = ""
    run_dir: str | None = None
    max_steps: int = 0
    started_at: float | None = None
    steps: dict[int, StepRecord] = field(default_factory=dict)
    current_step: int = 0
    current_stage: str | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failed_calls: int = 0
    warnings: list[str] = field(default_factory=list)
    pending_approval: dict[str, Any] | None = None
    finished: dict[str, Any] | None = None
    screen: Image.Image | None = None
    annotated: Image.Image | None = None
    screen_boxes: list[Box] | None = None
    """The Perceptor's boxes computed for ``screen`` (None: not perceived yet)."""
    annotated_boxes: list[Box] | None = None
    """The Perceptor's boxes of the screen ``annotated`` was drawn on."""
    perceived: Perceived | None = None
    """The latest Perceptor result (the screen the next action is chosen on)."""
    screen_version: int = 0
    experience: StageRecord | None = None
    """The Experience Reflectors' report (after the run, when self-evolution is on)."""

    @property
    def running(self) -> bool:
        return self.started_at is not None and self.finished is None

    def step(self, index: int) -> StepRecord:
        if index not in self.steps:
            self.steps[index] = StepRecord(index=index)
        return self.steps[index]

    def apply(self, event: Event | Perceived) -> None:
        """Fold one event (or a Perceptor result) into the view."""
        if isinstance(event, Perceived):
            self._on_perceived(event)
            return
        data = event.data
        if event.step:
            self.current_step = max(self.current_step, event.step)
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event, data)

    def _on_run_started(self, event: Event, data: dict[str, Any]) -> None:
        self.task = str(data.get("task", ""))
        self.device = str(data.get("device", ""))
        self.backbone = str(data.get("backbone", ""))
        self.run_dir = data.get("run_dir")
        self.max_steps = int(data.get("max_steps") or 0)
        self.started_at = event.time

    def _on_stage_started(self, event: Event, data: dict[str, Any]) -> None:
        self.current_stage = str(data.get("stage", ""))
        if event.step and self.current_stage != "experience":
            self.step(event.step)

    def _on_stage_finished(self, event: Event, data: dict[str, Any]) -> None:
        stage = str(data.get("stage", ""))
        result = as_dict(data.get("result"))
        record = StageRecord(
            stage=stage,
            seconds=float(data.get("seconds") or 0.0),
            result=dict(result),
            tokens=_token_sum(data.get("tokens")),
            problem=data.get("problem") or None,
        )
        if stage == "experience":
            self.experience = record
        else:
            self.step(event.step).stages[stage] = record
        if self.current_stage == stage:
            self.current_stage = None

    def _on_model_call(self, event: Event, data: dict[str, Any]) -> None:
        self.model_calls += 1
        inp, out = int(data.get("input_tokens") or 0), int(data.get("output_tokens") or 0)
        self.input_tokens += inp
        self.output_tokens += out
        if data.get("ok") is False:
            self.failed_calls += 1
        if event.step:
            record = self.step(event.step)
            record.model_calls += 1
            record.tokens += inp + out

    def _on_perceived(self, perceived: Perceived) -> None:
        """The Perceptor read ``perceived.image``: its boxes belong to that picture only."""
        self.perceived = perceived
        if self.screen is None and self.annotated is None:
            self.screen = perceived.image  # the run's first screen is perceived without a screen event
            self.screen_version += 1
        if perceived.image is self.screen:
            self.screen_boxes = list(perceived.boxes)
            self.screen_version += 1

    def _on_action(self, event: Event, data: dict[str, Any]) -> None:
        record = self.step(event.step)
        record.action = str(data.get("action", "")) or None
        record.action_description = data.get("description")
        if event.image is not None:
            self.annotated = event.image
            # the action is drawn on the screen the Operator chose it on: the latest perceived one
            base = self.perceived
            same_size = base is not None and base.image.size == event.image.size
            self.annotated_boxes = list(base.boxes) if base is not None and same_size else None
            self.screen_version += 1

    def _on_screen(self, event: Event, data: dict[str, Any]) -> None:
        if event.image is not None:
            self.screen = event.image
            self.screen_boxes = None
            self.annotated = None
            self.annotated_boxes = None
            self.screen_version += 1

    def _on_outcome(self, event: Event, data: dict[str, Any]) -> None:
        record = self.step(event.step)
        record.outcome = data.get("outcome")
        record.progress = data.get("progress")
        record.error = data.get("error_description") or None

    def _on_approval_needed(self, event: Event, data: dict[str, Any]) -> None:
        self.pending_approval = {"step": event.step, **data}

    def _on_approval(self, event: Event, data: dict[str, Any]) -> None:
        self.pending_approval = None
        self.step(event.step).approval = bool(data.get("approved"))

    def _on_warning(self, event: Event, data: dict[str, Any]) -> None:
        message = str(data.get("message", ""))
        self.warnings.append(message)
        self.step(event.step).warnings.append(message)

    def _on_run_finished(self, event: Event, data: dict[str, Any]) -> None:
        self.finished = dict(data)
        self.pending_approval = None
        self.current_stage = None
        if data.get("run_dir"):
            self.run_dir = data["run_dir"]


def fold(events: list[Event], view: RunView | None = None) -> RunView:
    """Apply ``events`` in order to ``view`` (a new one if omitted) and return it."""
    view = view or RunView()
    for event in events:
        view.apply(event)
    return view


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a dict, else an empty one (event data and JSON files are not trusted)."""
    return value if isinstance(value, dict) else {}


def _token_sum(tokens: Any) -> int:
    if isinstance(tokens, int | float):
        return int(tokens)
    if isinstance(tokens, dict):
        return int(sum(v for v in tokens.values() if isinstance(v, int | float)))
    return 0


# --------------------------------------------------------------------------------------------------
# Rendering


def _text(value: Any) -> str:
    """A reply field as readable text: strings as they are, lists as lines, the rest as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return json.dumps(value, ensure_ascii=False)


def _row(label: str, value: str, css: str = "") -> str:
    return (
        f'<div class="mae-field{css}"><span class="mae-key">{html.escape(label)}</span>'
        f'<span class="mae-val">{html.escape(value)}</span></div>'
    )


def _field_rows(stage: str, result: dict[str, Any]) -> str:
    fields = STAGE_FIELDS.get(stage)
    if fields is None:
        fields = [(k, k.replace("_", " ").capitalize()) for k in result if k not in HIDDEN_FIELDS]
    rows = []
    for key, label in fields:
        value = result.get(key)
        if key in ("text", "action") and result.get("shown"):
            value = result["shown"]  # screen pixels, with what the model wrote in its own frame
        if value in (None, "", [], {}):
            continue
        if stage == "operator" and key == "atomic" and not result.get("shortcut"):
            continue
        if (stage, key) in (("reflector", "outcome"), ("reflection", "answer")):
            value = OUTCOME_TEXT.get(str(value), str(value))
        rows.append(_row(label, _text(value)))
    return "".join(rows)


def _stage_html(record: StageRecord) -> str:
    label = STAGE_LABELS.get(record.stage, record.stage.capitalize())
    meta = f"{record.seconds:.1f} s"
    if record.tokens:
        meta += f" · {record.tokens} tok"
    body = _field_rows(record.stage, record.result)
    if record.problem:
        body += f'<div class="mae-warn">Corrected once: {html.escape(readable(record.problem))}</div>'
    return (
        f'<div class="mae-stage mae-stage-{html.escape(record.stage)}">'
        f'<div class="mae-stage-head"><b>{html.escape(label)}</b><span class="mae-time">{meta}</span></div>'
        f"{body}</div>"
    )


def step_html(record: StepRecord, live_stage: str | None = None) -> str:
    """One step of the timeline as an HTML card: every stage's fields and time, outcome, approvals."""
    total = sum(s.seconds for s in record.stages.values())
    title = "Start" if record.index == 0 else f"Step {record.index}"
    manager = record.stages.get("manager")
    if manager is not None and manager.result.get("finished") and not record.action:
        title += " — the Manager judges the task finished"
    if record.action:
        title += f" — <code>{html.escape(record.action)}</code>"
    badge = ""
    if record.outcome:
        letter = html.escape(record.outcome)
        badge = f'<span class="mae-badge mae-outcome-{letter}">{letter}</span>'
    parts = [
        f'<div class="mae-step" id="mae-step-{record.index}" data-step="{record.index}">',
        f'<div class="mae-step-head">{badge}<span>{title}</span>'
        f'<span class="mae-time">{total:.1f} s</span></div>',
    ]
    ordered = [s for s in STAGE_LABELS if s in record.stages]
    ordered += [s for s in record.stages if s not in STAGE_LABELS]
    for stage in ordered:
        if stage == "execute" and not record.stages[stage].result:
            seconds = record.stages[stage].seconds
            parts.append(
                '<div class="mae-stage mae-stage-execute"><div class="mae-stage-head"><b>Execute</b>'
                f'<span class="mae-time">{seconds:.1f} s</span></div></div>'
            )
            continue
        parts.append(_stage_html(record.stages[stage]))
    if record.outcome and not {"reflector", "reflection"} & record.stages.keys():
        parts.append(_row("Outcome", OUTCOME_TEXT.get(record.outcome, record.outcome)))
        if record.error:
            parts.append(_row("Feedback", record.error))
    if record.approval is not None:
        verdict = "approved" if record.approval else "rejected"
        parts.append(f'<div class="mae-note">Sensitive action {verdict} by the user.</div>')
    for message in record.warnings:
        parts.append(f'<div class="mae-warn">⚠ {html.escape(readable(message))}</div>')
    if live_stage:
        label = STAGE_LABELS.get(live_stage, live_stage)
        parts.append(f'<div class="mae-live">{html.escape(label)} is working…</div>')
    parts.append("</div>")
    return "".join(parts)


def experience_html(view: RunView) -> str:
    """The self-evolution card: the Experience Reflectors at work, or what they changed."""
    body = ""
    if view.experience is not None:
        body = _stage_html(view.experience)
    else:
        body = '<div class="mae-live">The Experience Reflectors are updating the Tips and Shortcuts…</div>'
    return (
        '<div class="mae-step mae-experience" id="mae-step-experience"><div class="mae-step-head">'
        f"<span>Self-evolution</span></div>{body}</div>"
    )


def timeline_html(view: RunView) -> str:
    """The whole timeline, newest step first, inside a container with a stable id."""
    shown = {i: r for i, r in view.steps.items() if i > 0 or r.warnings}
    if not shown:
        if view.running:
            label = STAGE_LABELS.get(view.current_stage or "", "the run")
            placeholder = f"Starting… ({html.escape(label)})"
        elif view.finished is not None:
            placeholder = "The run ended before its first step."
        else:
            placeholder = "No run yet. Type a task and press Run."
        body = f'<p class="mae-empty">{placeholder}</p>'
        return f'<div class="mae-timeline" id="mae-timeline-body">{body}</div>'
    cards = []
    if view.experience is not None or view.current_stage == "experience":
        cards.append(experience_html(view))
    for index in sorted(shown, reverse=True):
        live = view.current_stage if view.running and index == view.current_step else None
        cards.append(step_html(shown[index], live))
    return f'<div class="mae-timeline" id="mae-timeline-body">{"".join(cards)}</div>'


def step_count(view: RunView) -> int:
    """Steps with an executed action (the loop emits ``action`` just before it executes one)."""
    return sum(1 for index, record in view.steps.items() if index > 0 and record.action)


def executed_steps(view: RunView) -> int:
    """The step count to report: actions carried out, even when a later agent's reply ended the run
    before the loop recorded the step."""
    reported = int((view.finished or {}).get("steps") or 0)
    return max(reported, step_count(view))


def progress_html(view: RunView) -> str:
    """A progress bar: step k of the maximum, and the stage at work."""
    if view.started_at is None:
        return '<div class="mae-progress" id="mae-progress-body"><span>Idle</span></div>'
    k = view.current_step
    if view.finished is not None:
        k = executed_steps(view) or k
    total = max(view.max_steps, 1)
    percent = min(100, round(100 * k / total))
    if view.finished is not None and view.finished.get("finished"):
        percent = 100
    stage = ""
    if view.running and view.current_stage:
        stage = f" · {STAGE_LABELS.get(view.current_stage, view.current_stage)}"
    return (
        f'<div class="mae-progress" id="mae-progress-body"><span>Step {k} of {view.max_steps}'
        f'{html.escape(stage)}</span><div class="mae-bar"><div style="width:{percent}%"></div></div></div>'
    )


def status_markdown(view: RunView, now: float | None = None) -> str:
    """The status line: running/paused, or the final status with exit reason, time, calls and tokens."""
    if view.started_at is None and view.finished is None:
        return "**Ready.** Choose a device and a backbone, type a task and press **Run**."
    if view.finished is None:
        if view.pending_approval is not None:
            action = md_text(str(view.pending_approval.get("action", "")))
            return f"**Waiting for your approval** of {action}."
        elapsed = f" · {now - view.started_at:.0f} s" if now is not None and view.started_at else ""
        return (
            f"**Running** on {md_code(view.device)} with {md_code(view.backbone)}{elapsed} · "
            f"{view.model_calls} model calls · {view.input_tokens + view.output_tokens} tokens"
        )
    data = view.finished
    totals = as_dict(data.get("totals"))
    calls = int(totals.get("model_calls", view.model_calls) or 0)
    tokens_in = int(totals.get("input_tokens", view.input_tokens) or 0)
    tokens_out = int(totals.get("output_tokens", view.output_tokens) or 0)
    reason = str(data.get("exit_reason", "unknown"))
    icon = "✔ Finished" if data.get("finished") else "■ Ended"
    seconds = float(data.get("seconds") or 0.0)
    steps = executed_steps(view)
    text = (
        f"**{icon}:** {exit_text(reason)} (`{reason}`) · {counted(steps, 'step')} · {seconds:.1f} s · "
        f"{counted(calls, 'model call')} · {tokens_in + tokens_out} tokens "
        f"({tokens_in} in / {tokens_out} out)"
    )
    if view.current_stage == "experience":
        text += "\n\nUpdating the long-term memory (Experience Reflectors)…"
    elif view.experience is not None:
        text += f"\n\nSelf-evolution: {md_text(str(view.experience.result.get('summary', 'done')))}"
    message = str(data.get("message") or "")
    if message and not data.get("finished") and message.lower() not in exit_text(reason).lower():
        text += f"\n\n{md_text(readable(message))}"
    if view.warnings and not data.get("finished"):
        text += f"\n\n⚠ {md_text(readable(view.warnings[-1]))}"
    return text


def approval_html(view: RunView) -> str:
    """What the approval box asks (as escaped text: the description comes from the model and the
    action's text from the phone), or an empty string when nothing waits."""
    pending = view.pending_approval
    if pending is None:
        return ""
    reason = pending.get("reason") or "it matches the sensitive-action policy"
    parts = [
        '<div class="mae-approval-body"><div class="mae-approval-title">Approve this action?</div>',
        f"<code>{html.escape(str(pending.get('action', '')))}</code>",
    ]
    if pending.get("description"):
        parts.append(f'<div class="mae-val">{html.escape(_text(pending["description"]))}</div>')
    parts.append(f"<div>Paused because it looks sensitive ({html.escape(str(reason))}).</div></div>")
    return "".join(parts)


def memory_html(view: RunView) -> str:
    """The agents' latest plan, subgoal, progress and notes (working memory), as escaped text."""
    latest: dict[str, str] = {}
    for index in sorted(view.steps):
        step = view.steps[index]
        manager = step.stages.get("manager")
        if manager is not None:
            for key, label in (("plan", "Plan"), ("subgoal", "Subgoal")):
                if manager.result.get(key):
                    latest[label] = _text(manager.result[key])
        if step.progress:
            latest["Progress"] = step.progress
        notes = step.stages.get("notetaker")
        if notes is not None and notes.result.get("notes"):
            latest["Notes"] = _text(notes.result["notes"])
    if not latest:
        return ""
    rows = "".join(_row(label, value) for label, value in latest.items())
    return f'<div class="mae-working">{rows}</div>'


def draw_boxes(image: Image.Image, elements: list[Box]) -> Image.Image:
    """A copy of ``image`` with the Perceptor's boxes (texts green, icons blue)."""
    canvas = image.convert("RGB").copy()
    draw = ImageDraw.Draw(canvas)
    width = max(2, canvas.width // 360)
    for kind, box in elements:
        colour = (34, 197, 94) if kind == "text" else (59, 130, 246)
        draw.rectangle(box, outline=colour, width=width)
    return canvas


def phone_image(view: RunView, overlay: bool = False) -> Image.Image | None:
    """What the phone view shows: the annotated action, else the latest screen; with boxes if asked.

    Boxes are drawn only over the picture they were computed for (never over a later screen).
    """
    picture = phone_picture(view)
    if picture is None:
        return None
    image, boxes = picture
    return draw_boxes(image, boxes) if overlay and boxes else image


def phone_picture(view: RunView) -> tuple[Image.Image, list[Box] | None] | None:
    """The run's picture to show (the annotated action, else the latest screen) with its own boxes."""
    if view.annotated is not None:
        return view.annotated, view.annotated_boxes
    if view.screen is not None:
        return view.screen, view.screen_boxes
    return None
