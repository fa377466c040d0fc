"""A person's (or a model judge's) marks on one trajectory, saved beside the results.

``marks/<task key>.json`` holds, for one task run: after which step each rubric item became true
(``None`` = never), and whether each action and each Action Reflector verdict was correct. Marks win
over what code derived; the metrics and reports read records through ``apply_marks``.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from mae.errors import ConfigError
from mae.eval.records import TaskRecord
from mae.memory.atomic import atomic_write_text

MARKS_DIR = "marks"


class JudgeMarks(BaseModel):
    """What a judge decided about one trajectory."""

    key: str
    judge: Literal["person", "model"] = "person"
    rubric_steps: list[int | None] = Field(default_factory=list)
    action_correct: list[bool | None] = Field(default_factory=list)
    reflection_correct: list[bool | None] = Field(default_factory=list)
    final_held: list[bool | None] = Field(
        default_factory=list,
        description="per rubric: still held at the end (False: it held after its step but was lost later)",
    )
    updated_at: float = Field(default_factory=time.time)


def marks_path(folder: Path | str, key: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)
    return Path(folder) / MARKS_DIR / f"{safe}.json"


def load_marks(folder: Path | str, key: str) -> JudgeMarks | None:
    path = marks_path(folder, key)
    if not path.is_file():
        return None
    try:
        return JudgeMarks.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, ValidationError):
        raise ConfigError(f"the marks file {path} is damaged; remove it and mark the task again") from None


def save_marks(folder: Path | str, marks: JudgeMarks) -> Path:
    path = marks_path(folder, marks.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, marks.model_dump_json(indent=2) + "\n")
    return path


def curve_from_steps(rubric_steps: list[int | None], steps: int) -> list[float]:
    """SS after step 0..steps when rubric i holds from step ``rubric_steps[i]`` on."""
    if not rubric_steps:
        return [0.0] * (steps + 1)
    total = len(rubric_steps)
    return [sum(1 for s in rubric_steps if s is not None and s <= t) / total for t in range(steps + 1)]


def apply_marks(record: TaskRecord, marks: JudgeMarks | None) -> TaskRecord:
    """The record as the judge sees it: marked rubric steps replace the grading, marked actions and
    verdicts replace the code's judgement (unmarked ones keep it).

    Rubric steps marked as the code found them leave the code's grading as it is: a person who only
    ticks actions does not turn an item that held and was lost again into one that holds at the end."""
    if marks is None:
        return record
    update: dict[str, object] = {}
    steps = len(record.actions)
    if marks.rubric_steps and len(marks.rubric_steps) == len(record.rubrics):
        clipped = [None if s is None else max(0, min(int(s), steps)) for s in marks.rubric_steps]
    else:
        clipped = None
    if clipped is not None and not (record.grader == "code" and clipped == record.rubric_steps):
        lost = [i < len(marks.final_held) and marks.final_held[i] is False for i in range(len(clipped))]
        final = [s is not None and not gone for s, gone in zip(clipped, lost, strict=True)]
        curve = curve_from_steps(clipped, steps)
        if any(lost):  # an end-state item lost again later: the end of the curve drops it
            curve[-1] = sum(final) / len(clipped)
        update |= {"grader": marks.judge, "rubric_steps": clipped, "final_passed": final, "curve": curve}

    def merged(marked: list[bool | None], derived: list[bool | None]) -> list[bool | None]:
        def at(values: list[bool | None], i: int) -> bool | None:
            return values[i] if i < len(values) else None

        return [at(marked, i) if at(marked, i) is not None else at(derived, i) for i in range(steps)]

    if any(m is not None for m in marks.action_correct + marks.reflection_correct):
        update |= {
            "action_correct": merged(marks.action_correct, record.action_correct),
            "reflection_correct": merged(marks.reflection_correct, record.reflection_correct),
            "correctness_source": marks.judge,
        }
    return record.model_copy(update=update)


def judged_records(folder: Path | str, records: list[TaskRecord]) -> list[TaskRecord]:
    """Every record with its marks applied."""
    return [apply_marks(r, load_marks(folder, r.key)) for r in records]
