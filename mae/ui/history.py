"""The History tab's logic: past runs in the trajectory directory, replay by step, zip and GIF export.

Reads the layout written by ``mae.run.trajectory`` (``steps.jsonl``, ``summary.json``,
``step_NNN_before.*`` annotated screens, ``step_NNN_after*.*`` settled screens).
"""

from __future__ import annotations

import json
import re
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from mae.run.results import exit_text
from mae.ui.text import md_text
from mae.ui.views import StageRecord, StepRecord, as_dict, step_html
from mae.wording import counted

_FRAME = re.compile(r"^step_(\d{3,})_(before|after)(?:_(\d+))?\.(jpg|jpeg|png)$")
ROLE_STAGES = {
    "manager": "manager",
    "operator": "operator",
    "reflector": "reflector",
    "action_reflector": "reflector",
    "notetaker": "notetaker",
    "experience": "experience",
    "tips_reflector": "experience",
    "shortcuts_reflector": "experience",
    "v1_agent": "v1_agent",
    "v1_check": "v1_check",
    "planning": "planning",
    "decision": "decision",
    "reflection": "reflection",
}


@dataclass
class RunInfo:
    """One past run, as listed in the History tab."""

    path: Path
    task: str
    status: str
    exit_reason: str
    steps: int
    seconds: float
    started: float

    score: float | None = None
    """The Satisfaction Score at the end when the run was graded (``grade_of``), else None."""

    def row(self) -> list[Any]:
        """The History tab's table row: started, task, exit, steps, time, score."""
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.started)) if self.started else "?"
        score = "not graded" if self.score is None else f"{self.score:.0%}"
        return [
            when,
            self.task,
            exit_text(self.exit_reason or self.status),
            self.steps,
            f"{self.seconds:.1f} s",
            score,
        ]

    def label(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.started)) if self.started else "?"
        task = self.task if len(self.task) <= 60 else self.task[:57] + "…"
        return f"{when} · {task} · {self.exit_reason or self.status} · {counted(self.steps, 'step')}"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _number(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def run_info(run_dir: Path) -> RunInfo | None:
    """What ``summary.json`` says about a run; None when ``run_dir`` is not a run directory."""
    summary_path = run_dir / "summary.json"
    if not summary_path.is_file() and not (run_dir / "steps.jsonl").is_file():
        return None
    summary = _read_json(summary_path)
    totals = as_dict(summary.get("totals"))
    # an action that ran before a later reply ended the run is missing from the loop's count, but its
    # annotated screen was saved just before it executed
    executed = len(frames(run_dir, "before"))
    steps = max(executed, int(_number(totals.get("steps", summary.get("steps", executed)))))
    started = _number(summary.get("started_at", summary.get("start_time")), 0.0)
    if not started:
        try:
            started = run_dir.stat().st_mtime
        except OSError:
            started = 0.0
    grade = grade_of(run_dir)
    return RunInfo(
        score=grade.score if grade is not None else None,
        path=run_dir,
        task=str(summary.get("instruction", summary.get("task", run_dir.name))),
        status=str(summary.get("status", "unknown")),
        exit_reason=str(summary.get("exit_reason") or ""),
        steps=steps,
        seconds=_number(totals.get("seconds", summary.get("seconds"))),
        started=started,
    )


RUN_COLUMNS = ["started", "task", "exit", "steps", "time", "score"]


@dataclass
class Grade:
    """How a run was graded: the Satisfaction Score after each step (the SSS curve) and the rubric."""

    curve: list[float]
    rubrics: list[str] = field(default_factory=list)
    passed: list[bool] = field(default_factory=list)
    grader: str = ""

    @property
    def score(self) -> float | None:
        return self.curve[-1] if self.curve else None


def _grade_from(data: dict[str, Any]) -> Grade | None:
    curve = [_number(v) for v in data.get("curve") or [] if isinstance(v, int | float)]
    if not curve and isinstance(data.get("score"), int | float):
        curve = [float(data["score"])]
    if not curve:
        return None
    rubrics = [str(r) for r in data.get("rubrics") or []]
    passed = [bool(v) for v in data.get("final_passed") or []]
    return Grade(curve=curve, rubrics=rubrics, passed=passed, grader=str(data.get("grader") or ""))


def grade_of(run_dir: Path) -> Grade | None:
    """The run's grade: ``grade.json`` in the run directory, else the line of an evaluation's
    ``results.jsonl`` (in the run's parent or grandparent folder) whose ``run_dir`` is this run."""
    own = _read_json(run_dir / "grade.json")
    if own:
        return _grade_from(own)
    for folder in (run_dir.parent, run_dir.parent.parent):
        results = folder / "results.jsonl"
        if not results.is_file():
            continue
        try:
            lines = results.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in reversed(lines):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if (
                isinstance(record, dict)
                and record.get("run_dir")
                and Path(str(record["run_dir"])).name == run_dir.name
            ):
                return _grade_from(record)
    return None


def list_runs(log_dir: Path | str) -> list[RunInfo]:
    """Every run under ``log_dir``, newest first (an absent directory has none)."""
    root = Path(log_dir)
    if not root.is_dir():
        return []
    runs = [info for child in root.iterdir() if child.is_dir() and (info := run_info(child)) is not None]
    return sorted(runs, key=lambda info: (info.started, info.path.name), reverse=True)


def frames(run_dir: Path, which: str = "before") -> list[tuple[int, Path]]:
    """``(step, path)`` of the ``before`` (annotated) or ``after`` screens, in step order.

    For ``after``, a step with several (a Shortcut) contributes its last one.
    """
    found: dict[int, tuple[int, Path]] = {}
    if not run_dir.is_dir():
        return []
    for entry in run_dir.iterdir():
        match = _FRAME.match(entry.name)
        if not match or match.group(2) != which:
            continue
        step, sub = int(match.group(1)), int(match.group(3) or 10**6)
        if step not in found or sub > found[step][0]:
            found[step] = (sub, entry)
    return [(step, found[step][1]) for step in sorted(found)]


def replay_frames(run_dir: Path) -> list[tuple[int, Path]]:
    """The replay: every step's annotated screen, then the final settled screen."""
    before = frames(run_dir, "before")
    after = frames(run_dir, "after")
    if after and (not before or after[-1][0] >= before[-1][0]):
        return [*before, (after[-1][0] + 1, after[-1][1])]
    return before


def read_records(run_dir: Path) -> list[dict[str, Any]]:
    """The records of ``steps.jsonl``, skipping a torn last line."""
    path = run_dir / "steps.jsonl"
    records: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return records
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


@dataclass
class RunReplay:
    """A loaded run: summary, records per step, and the frames to show."""

    info: RunInfo
    summary: dict[str, Any]
    steps: dict[int, StepRecord] = field(default_factory=dict)
    frames: list[tuple[int, Path]] = field(default_factory=list)


def _stage_of(record: dict[str, Any]) -> str | None:
    role = str(record.get("agent") or record.get("role") or "")
    return ROLE_STAGES.get(role.lower())


def steps_from_records(
    records: list[dict[str, Any]], summary: dict[str, Any] | None = None
) -> dict[int, StepRecord]:
    """Per-step records (the same ones the live timeline shows) from ``steps.jsonl`` and ``summary.json``.

    An agent's corrective retry adds to its stage's time and tokens; the final outcome of each action
    comes from the summary's action history (the loop may downgrade the reflector's verdict).
    """
    steps: dict[int, StepRecord] = {}

    def step(index: int) -> StepRecord:
        return steps.setdefault(index, StepRecord(index=index))

    for record in records:
        kind = record.get("kind")
        index = int(_number(record.get("step"), 0))
        if kind == "agent":
            stage = _stage_of(record)
            if stage is None:
                continue
            target = step(index)
            tokens = int(_number(record.get("input_tokens"))) + int(_number(record.get("output_tokens")))
            seconds = _number(record.get("latency_s"))
            previous = target.stages.get(stage)
            if previous is not None:
                seconds += previous.seconds
                tokens += previous.tokens
            parsed = as_dict(record.get("parsed"))
            target.stages[stage] = StageRecord(
                stage=stage,
                seconds=seconds,
                result=parsed or (previous.result if previous else {}),
                tokens=tokens,
                problem=record.get("problem") or None,
            )
            target.model_calls += 1
            target.tokens += tokens
            if stage == "reflector" and parsed:
                target.outcome = parsed.get("outcome") or target.outcome
                target.progress = parsed.get("progress") or target.progress
        elif kind == "perception" and index > 0:
            step(index).stages["perceive"] = StageRecord(
                stage="perceive",
                seconds=_number(record.get("seconds")),
                result={"elements": record.get("elements")},
            )
        elif kind == "action":
            target = step(index)
            shown = record.get("screen_text") or record.get("text") or record.get("action")  # screen pixels
            target.action = str(shown or "") or target.action
            target.action_description = record.get("description") or target.action_description
        elif kind == "outcome" and record.get("outcome"):
            step(index).outcome = str(record["outcome"])
        elif kind == "approval":
            step(index).approval = bool(record.get("approved"))
        elif kind == "step":
            execution = _number(record.get("execution_s"))
            if execution > 0:
                step(index).stages.setdefault("execute", StageRecord(stage="execute", seconds=execution))
    actions = (summary or {}).get("actions")
    for action in actions if isinstance(actions, list) else []:
        if not isinstance(action, dict) or "step" not in action:
            continue
        target = step(int(_number(action.get("step"))))
        target.action = str(action.get("screen_text") or action.get("text") or target.action or "") or None
        if action.get("outcome"):
            target.outcome = str(action["outcome"])
        target.error = action.get("error") or target.error
    return steps


def load_replay(run_dir: Path | str) -> RunReplay | None:
    """Load a run for replay; None when ``run_dir`` is not a run directory."""
    path = Path(run_dir)
    info = run_info(path)
    if info is None:
        return None
    return RunReplay(
        info=info,
        summary=_read_json(path / "summary.json"),
        steps=steps_from_records(read_records(path), _read_json(path / "summary.json")),
        frames=replay_frames(path),
    )


def summary_markdown(replay: RunReplay) -> str:
    """The header of a replay: task, exit reason, steps, time, calls and tokens."""
    info = replay.info
    totals = as_dict(replay.summary.get("totals"))
    calls = int(_number(totals.get("model_calls")))
    tokens = int(_number(totals.get("input_tokens"))) + int(_number(totals.get("output_tokens")))
    reason = info.exit_reason or info.status
    return (
        f"**Task:** {md_text(info.task)}\n\n**Exit:** {md_text(exit_text(reason))} ({md_text(reason)}) · "
        f"{counted(info.steps, 'step')} · {info.seconds:.1f} s · {counted(calls, 'model call')} · "
        f"{tokens} tokens · {md_text(info.path.name)}"
    )


def frame_at(replay: RunReplay, position: int, display_width: int = 540) -> tuple[Image.Image | None, str]:
    """The image (scaled to ``display_width``) and the step card at slider ``position`` (1-based)."""
    if not replay.frames:
        return None, '<p class="mae-empty">This run saved no screenshots.</p>'
    position = min(max(1, int(position)), len(replay.frames))
    step, path = replay.frames[position - 1]
    image: Image.Image | None
    try:
        with Image.open(path) as handle:
            image = handle.convert("RGB")
    except OSError:
        image = None
    if image is not None and image.width > display_width:
        height = max(1, round(image.height * display_width / image.width))
        image = image.resize((display_width, height), Image.Resampling.LANCZOS)
    record = replay.steps.get(step)
    if record is None:
        card = f'<p class="mae-empty">Final screen after step {step - 1}.</p>'
    else:
        card = step_html(record)
    return image, f'<div class="mae-timeline">{card}</div>'


def export_zip(run_dir: Path | str, out_dir: Path | None = None) -> Path:
    """The whole run directory as ``<name>.zip``."""
    source = Path(run_dir)
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="mae-run-"))
    archive = out_dir / f"{source.name}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        for path in sorted(source.rglob("*")):
            if path.is_file() and not path.name.endswith(".part"):
                handle.write(path, arcname=f"{source.name}/{path.relative_to(source)}")
    return archive


def export_gif(
    run_dir: Path | str, out_dir: Path | None = None, *, width: int = 360, frame_ms: int = 1200
) -> Path:
    """An animated GIF of the annotated screens (the final screen held longer); ``ValueError`` if none."""
    source = Path(run_dir)
    sequence = replay_frames(source)
    if not sequence:
        raise ValueError(f"{source.name} has no screenshots to animate")
    images: list[Image.Image] = []
    for _, path in sequence:
        with Image.open(path) as handle:
            image = handle.convert("RGB")
        height = max(1, round(image.height * width / image.width))
        images.append(image.resize((width, height), Image.Resampling.LANCZOS))
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="mae-gif-"))
    target = out_dir / f"{source.name}.gif"
    durations = [frame_ms] * (len(images) - 1) + [frame_ms * 3]
    images[0].save(
        target, save_all=True, append_images=images[1:], duration=durations, loop=0, optimize=True, disposal=1
    )
    return target
