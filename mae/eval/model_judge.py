"""An optional model judge for runs no code can grade (Mobile-Eval-E on a real phone).

For each ungraded task run, a model sees the task, its rubric, the action list and up to
``MAX_IMAGES`` screenshots after the steps, and says after which step each rubric item first held.
Its marks are saved with ``judge="model"``; every table and plot labels them MODEL JUDGE, and a
person's marks always win (the judge never overwrites them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from PIL import Image
from pydantic import BaseModel

from mae.agents.base import ask
from mae.agents.parsing import ReplyProblem, require_sections, strip_fence
from mae.agents.prompting import render_prompt
from mae.eval.marks import JudgeMarks, load_marks, save_marks
from mae.eval.records import TaskRecord, read_results
from mae.llm.client import ChatClient
from mae.llm.errors import ModelError

ROLE = "judge"
MAX_IMAGES = 8
_LINE = re.compile(r"^\s*(?:[-*]\s*)?(?:rubric|item)?\s*#?(\d+)\s*[.):\-]?\s*(.*)$", re.I)


class RubricSteps(BaseModel):
    steps: list[int | None]


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


def parse_rubric_steps(text: str, rubrics: int, steps: int) -> RubricSteps:
    """Read ``### Rubric Steps ###``: one numbered line per rubric item (tolerant of bullets, bold,
    fences, 'Rubric 2:' and CRLF); every item must be answered."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    body = strip_fence(require_sections(text, ["Rubric Steps"], optional=("Thought",))["Rubric Steps"])
    found: dict[int, int | None] = {}
    for line in body.splitlines():
        match = _LINE.match(line.replace("**", ""))
        if match is None:
            continue
        index = int(match.group(1))
        if 1 <= index <= rubrics:
            found[index] = _step_of(match.group(2), steps)
    missing = [i for i in range(1, rubrics + 1) if i not in found]
    if missing:
        raise ReplyProblem(
            f"no answer for rubric item(s) {', '.join(map(str, missing))}: give one numbered line per item"
        )
    return RubricSteps(steps=[found[i] for i in range(1, rubrics + 1)])


def _frames(record: TaskRecord) -> list[tuple[int, Path]]:
    if not record.run_dir:
        return []
    run_dir = Path(record.run_dir)
    frames = []
    for action in record.actions:
        for ext in ("jpg", "png"):
            path = run_dir / f"step_{action.step:03d}_after.{ext}"
            if path.is_file():
                frames.append((action.step, path))
                break
    if len(frames) <= MAX_IMAGES:
        return frames
    picks = sorted({round(i * (len(frames) - 1) / (MAX_IMAGES - 1)) for i in range(MAX_IMAGES)})
    return [frames[i] for i in picks]


def judge_record(client: ChatClient, record: TaskRecord) -> JudgeMarks:
    """Ask the model; ``ReplyProblem`` (after one corrective retry) or ``ModelError`` when it fails."""
    frames = _frames(record)
    steps = len(record.actions)
    images = []
    for _, path in frames:
        with Image.open(path) as image:
            images.append(client.encode(ROLE, image.convert("RGB")))
    prompt = render_prompt(
        "eval_judge",
        {
            "instruction": record.instruction,
            "rubrics": "\n".join(f"{i}. {r}" for i, r in enumerate(record.rubrics, 1)),
            "actions": "\n".join(f"step {a.step}: {a.text}" for a in record.actions) or "(none)",
            "images": "\n".join(f"Image {i}: the screen after step {s}" for i, (s, _) in enumerate(frames, 1))
            or "(no screenshots were saved)",
            "steps": steps,
        },
    )
    result = ask(
        client, ROLE, prompt, images, lambda text: parse_rubric_steps(text, len(record.rubrics), steps)
    )
    if result.value is None:
        raise ReplyProblem(result.problem or "the judge's reply could not be read")
    return JudgeMarks(key=record.key, judge="model", rubric_steps=result.value.steps)


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
        if existing is not None:  # keep whatever else was marked
            marks = existing.model_copy(update={"judge": "model", "rubric_steps": marks.rubric_steps})
        save_marks(folder, marks)
        judged += 1
    return judged, problems
