"""What the Judge view needs: eval folders, a trajectory's frames, and marks from the form's values."""

from __future__ import annotations

from pathlib import Path

from mae.eval.marks import JudgeMarks, apply_marks, load_marks
from mae.eval.records import RESULTS_FILE, TaskRecord, read_results

NEVER = "never"


def list_eval_folders(log_dir: Path | str) -> list[Path]:
    """Eval folders under ``log_dir`` (those holding results), newest first."""
    root = Path(log_dir)
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if p.is_dir() and (p / RESULTS_FILE).is_file()]
    return sorted(found, key=lambda p: (p / RESULTS_FILE).stat().st_mtime, reverse=True)


def judged_record(folder: Path | str, key: str) -> TaskRecord | None:
    """The record ``key`` of ``folder`` with its saved marks applied."""
    for record in read_results(folder):
        if record.key == key:
            return apply_marks(record, load_marks(folder, key))
    return None


def _image(run_dir: Path, name: str) -> Path | None:
    for ext in ("jpg", "png"):
        path = run_dir / f"{name}.{ext}"
        if path.is_file():
            return path
    return None


def trajectory_frames(record: TaskRecord) -> list[tuple[str, str]]:
    """``(image path, caption)``: the screen before each action (the action drawn on it), then the
    screen after the last action."""
    if not record.run_dir or not Path(record.run_dir).is_dir():
        return []
    run_dir = Path(record.run_dir)
    frames: list[tuple[str, str]] = []
    for action in record.actions:
        path = _image(run_dir, f"step_{action.step:03d}_before")
        if path is not None:
            verdict = f" · reflector: {action.outcome}" if action.executed else " · not executed"
            frames.append((str(path), f"step {action.step}: {action.shown}{verdict}"))
    if record.actions:
        last = _image(run_dir, f"step_{record.actions[-1].step:03d}_after")
        if last is not None:
            frames.append((str(last), f"after step {record.actions[-1].step} (final screen)"))
    return frames


def step_choices(steps: int) -> list[str]:
    return [NEVER, "at the start", *[f"after step {i}" for i in range(1, steps + 1)]]


def step_label(step: int | None) -> str:
    if step is None:
        return NEVER
    return "at the start" if step == 0 else f"after step {step}"


def parse_step_label(label: str | None) -> int | None:
    if not label or label == NEVER:
        return None
    if label == "at the start":
        return 0
    return int(label.rsplit(" ", 1)[-1])


def action_label(index: int, record: TaskRecord) -> str:
    action = record.actions[index]
    return f"{action.step}: {action.text}"


def verdict_label(index: int, record: TaskRecord) -> str:
    action = record.actions[index]
    return f"{action.step}: {action.outcome} for {action.text}"


def marks_from_form(
    record: TaskRecord,
    rubric_labels: list[str | None],
    correct_actions: list[str],
    correct_verdicts: list[str],
) -> JudgeMarks:
    """A person's marks: every rubric, action and verdict of the run counts as judged (Mobile-Agent v1
    has no Action Reflector, so no verdicts: its RA stays "-", as in the paper)."""
    actions = set(correct_actions)
    verdicts = set(correct_verdicts)
    reflector = record.agent != "v1"
    return JudgeMarks(
        key=record.key,
        judge="person",
        rubric_steps=[parse_step_label(label) for label in rubric_labels[: len(record.rubrics)]],
        action_correct=[action_label(i, record) in actions for i in range(len(record.actions))],
        reflection_correct=[
            verdict_label(i, record) in verdicts if a.executed and reflector else None
            for i, a in enumerate(record.actions)
        ],
    )
