"""An optional model judge for runs no code can grade (Mobile-Eval-E on a real phone).

For each ungraded task run, a model sees the task, its rubric, the action list with the Action
Reflector's verdicts, the agent's final notes and every screen after a step that differs from the one
before it (downscaled to ``FRAME_WIDTH`` pixels wide, up to ``MAX_IMAGES``). It says after which step
each rubric item first held and whether it still held at the end (an end-state item such as "stopped
at the route screen" that was lost later does not count), and which actions and which verdicts were
wrong; when it leaves those two out, AA and RA stay "not judged". Its marks are saved with
``judge="model"``; every table and plot labels them MODEL JUDGE, and a person's marks always win (the
judge never overwrites them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageChops
from pydantic import BaseModel, Field

from mae.agents.base import ask
from mae.agents.parsing import ReplyProblem, require_sections, strip_fence
from mae.agents.prompting import render_prompt
from mae.eval.marks import JudgeMarks, load_marks, save_marks
from mae.eval.records import TaskRecord, read_results
from mae.llm.client import ChatClient
from mae.llm.errors import ModelError

ROLE = "judge"
MAX_IMAGES = 40
FRAME_WIDTH = 480
_LINE = re.compile(r"^\s*(?:[-*]\s*)?(?:rubric|item)?\s*#?(\d+)\s*[.):\-]?\s*(.*)$", re.I)
_LOST = re.compile(r"\b(lost|no longer holds?|not (?:held )?at the end|undone)\b", re.I)
_NONE = {"", "none", "none.", "n/a", "-", "no", "nothing", "[]"}


class RubricSteps(BaseModel):
    steps: list[int | None]
    final_held: list[bool | None] = Field(default_factory=list)
    wrong_actions: list[int] | None = None
    wrong_verdicts: list[int] | None = None


def _step_of(text: str, steps: int) -> int | None:
    lowered = text.lower().strip(" *`_.")
    if not lowered:
        raise ReplyProblem("a rubric line has no answer: write 'never', 'at the start' or 'after step N'")
    named = re.search(r"\bstep\s*#?\s*(\d+)", lowered)
    if named is None:
        if re.search(r"\b(start|beginning|before the first)\b", lowered):
            return 0
        if re.search(r"\b(never|not|no|none|n/a)\b", lowered):
            return None
    numbers = [named.group(1)] if named else re.findall(r"\d+", lowered)
    if not numbers:
        raise ReplyProblem(f"cannot read {text.strip()!r}: write 'never', 'at the start' or 'after step N'")
    step = int(numbers[-1])
    if step > steps:
        raise ReplyProblem(f"step {step} does not exist: the run had {steps} steps")
    return step


def _step_list(text: str | None, steps: int, what: str) -> list[int] | None:
    """Step numbers listed in a section ("3, 7", "steps 3 and 7", "none"); None when the section is absent."""
    if text is None or not text.strip():  # the section is absent (or empty): not judged
        return None
    body = strip_fence(text).strip().strip("*`_")
    if body.lower() in _NONE or re.fullmatch(r"(none|no|nothing)\b.*", body.lower()):
        return []
    numbers = sorted({int(n) for n in re.findall(r"\d+", body)})
    if not numbers:
        raise ReplyProblem(f"cannot read the {what}: list step numbers such as '3, 7', or write 'none'")
    if numbers[-1] > steps or numbers[0] < 1:
        raise ReplyProblem(f"the {what} name a step that does not exist: the run had {steps} steps")
    return numbers


def parse_rubric_steps(text: str, rubrics: int, steps: int) -> RubricSteps:
    """Read ``### Rubric Steps ###``: one numbered line per rubric item (tolerant of bullets, bold,
    fences, 'Rubric 2:' and CRLF); every item must be answered. A line saying the item was lost later
    ("after step 5, lost later") marks it as not held at the end. The optional ``### Wrong Actions ###``
    and ``### Wrong Verdicts ###`` sections list step numbers (or "none")."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    sections = require_sections(
        text, ["Rubric Steps"], optional=("Thought", "Wrong Actions", "Wrong Verdicts")
    )
    body = strip_fence(sections["Rubric Steps"])
    found: dict[int, int | None] = {}
    held: dict[int, bool | None] = {}
    for line in body.splitlines():
        match = _LINE.match(line.replace("**", ""))
        if match is None:
            continue
        index = int(match.group(1))
        if 1 <= index <= rubrics:
            answer = match.group(2)
            found[index] = _step_of(answer, steps)
            held[index] = None if found[index] is None else _LOST.search(answer) is None
    missing = [i for i in range(1, rubrics + 1) if i not in found]
    if missing:
        raise ReplyProblem(
            f"no answer for rubric item(s) {', '.join(map(str, missing))}: give one numbered line per item"
        )
    return RubricSteps(
        steps=[found[i] for i in range(1, rubrics + 1)],
        final_held=[held[i] for i in range(1, rubrics + 1)],
        wrong_actions=_step_list(sections.get("Wrong Actions"), steps, "wrong actions"),
        wrong_verdicts=_step_list(sections.get("Wrong Verdicts"), steps, "wrong verdicts"),
    )


def _small(path: Path) -> Image.Image:
    with Image.open(path) as image:
        frame = image.convert("RGB")
    if frame.width > FRAME_WIDTH:
        frame = frame.resize((FRAME_WIDTH, round(frame.height * FRAME_WIDTH / frame.width)))
    return frame


def _frames(record: TaskRecord) -> list[tuple[int, Image.Image]]:
    """Every screen after a step that differs from the screen before it, downscaled; the last screen
    always (the end state). Beyond ``MAX_IMAGES`` changed screens, evenly spaced ones and the last."""
    if not record.run_dir:
        return []
    run_dir = Path(record.run_dir)
    frames: list[tuple[int, Image.Image]] = []
    for index, action in enumerate(record.actions):
        path = next(
            (p for ext in ("jpg", "png") if (p := run_dir / f"step_{action.step:03d}_after.{ext}").is_file()),
            None,
        )
        if path is None:
            continue
        frame = _small(path)
        last = index == len(record.actions) - 1
        same = bool(frames) and frames[-1][1].size == frame.size
        if same and not last and ImageChops.difference(frames[-1][1], frame).getbbox() is None:
            continue  # the same screen again: nothing new to see
        frames.append((action.step, frame))
    if len(frames) <= MAX_IMAGES:
        return frames
    picks = sorted({round(i * (len(frames) - 1) / (MAX_IMAGES - 1)) for i in range(MAX_IMAGES)})
    return [frames[i] for i in picks]


def _final_notes(record: TaskRecord) -> str:
    if not record.run_dir:
        return ""
    try:
        summary = json.loads((Path(record.run_dir) / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    notes = summary.get("notes") if isinstance(summary, dict) else None
    return notes.strip() if isinstance(notes, str) else ""


def _mark(steps: int, wrong: list[int] | None, judged: Callable[[int], bool]) -> list[bool | None]:
    if wrong is None:
        return []
    return [(i + 1 not in wrong) if judged(i) else None for i in range(steps)]


def judge_record(client: ChatClient, record: TaskRecord) -> JudgeMarks:
    """Ask the model; ``ReplyProblem`` (after one corrective retry) or ``ModelError`` when it fails."""
    frames = _frames(record)
    steps = len(record.actions)
    images = [client.encode(ROLE, frame) for _, frame in frames]
    prompt = render_prompt(
        "eval_judge",
        {
            "instruction": record.instruction,
            "rubrics": "\n".join(f"{i}. {r}" for i, r in enumerate(record.rubrics, 1)),
            "actions": "\n".join(
                f"step {a.step}: {a.text} · Action Reflector: {a.outcome if a.executed else 'not run'}"
                for a in record.actions
            )
            or "(none)",
            "notes": _final_notes(record) or "(no notes were kept)",
            "images": "\n".join(f"Image {i}: the screen after step {s}" for i, (s, _) in enumerate(frames, 1))
            or "(no screenshots were saved)",
            "steps": steps,
        },
    )
    result = ask(
        client, ROLE, prompt, images, lambda text: parse_rubric_steps(text, len(record.rubrics), steps)
    )
    reply = result.value
    if reply is None:
        raise ReplyProblem(result.problem or "the judge's reply could not be read")
    # step numbers are the actions' own; map them to positions
    position = {a.step: i + 1 for i, a in enumerate(record.actions)}
    wrong_actions = None if reply.wrong_actions is None else [position.get(s, s) for s in reply.wrong_actions]
    wrong_verdicts = (
        None if reply.wrong_verdicts is None else [position.get(s, s) for s in reply.wrong_verdicts]
    )
    reflector = record.agent != "v1"  # Mobile-Agent v1 has no Action Reflector
    return JudgeMarks(
        key=record.key,
        judge="model",
        rubric_steps=reply.steps,
        final_held=reply.final_held,
        action_correct=_mark(steps, wrong_actions, lambda i: True),
        reflection_correct=_mark(steps, wrong_verdicts, lambda i: reflector and record.actions[i].executed),
    )


def judge_folder(
    folder: Path | str, client: ChatClient, progress: Callable[[str], None] | None = None
) -> tuple[int, list[str]]:
    """Judge every task run that has rubrics, no code grade and no rubric marks yet; returns
    ``(judged count, problems)``. A failed task is reported and left for a person."""
    say = progress or (lambda _message: None)
    judged, problems = 0, []
    for record in read_results(folder):
        existing = load_marks(folder, record.key)
        if record.grader != "none" or not record.rubrics or (existing and existing.rubric_steps):
            continue
        say(f"model judge: {record.key}")
        try:
            marks = judge_record(client, record)
        except (ReplyProblem, ModelError) as exc:
            problems.append(f"{record.key}: {exc}")
            continue
        if existing is not None:  # keep whatever else was marked (a person's action marks win)
            update: dict[str, object] = {
                "judge": "model",
                "rubric_steps": marks.rubric_steps,
                "final_held": marks.final_held,
            }
            if not any(m is not None for m in existing.action_correct + existing.reflection_correct):
                update |= {
                    "action_correct": marks.action_correct,
                    "reflection_correct": marks.reflection_correct,
                }
            marks = existing.model_copy(update=update)
        save_marks(folder, marks)
        judged += 1
    return judged, problems
