"""Hand-made task records and a fast ground-truth Perceptor for the evaluation tests."""

from __future__ import annotations

from typing import Any

from PIL import Image

from mae.device.virtual import VirtualPhone
from mae.errors import ExitReason
from mae.eval.records import ActionEntry, TaskRecord, task_key
from mae.perception.elements import Perception
from mae.run.results import RunTotals


def record(
    task_id: str = "t1",
    *,
    scenario: str = "S1",
    repeat: int = 0,
    exit_reason: ExitReason = ExitReason.FINISHED,
    rubric_steps: list[int | None] | None = None,
    outcomes: str = "AAA",
    shortcuts: str = "",
    action_correct: list[bool | None] | None = None,
    reflection_correct: list[bool | None] | None = None,
    grader: str = "code",
    totals: dict[str, Any] | None = None,
    **extra: Any,
) -> TaskRecord:
    """A record with one action per outcome letter; ``shortcuts`` marks actions that called one ('S':
    ``Tap_Type_and_Enter``, three atomic operations)."""
    rubric_steps = [1, 2, None] if rubric_steps is None else rubric_steps
    steps = len(outcomes)
    actions = [
        ActionEntry(
            step=i + 1,
            text=f"Tap({i}, {i})",
            outcome=o,
            shortcut="Tap_Type_and_Enter" if i < len(shortcuts) and shortcuts[i] == "S" else None,
            operations=3 if i < len(shortcuts) and shortcuts[i] == "S" else 1,
        )
        for i, o in enumerate(outcomes)
    ]
    curve = [
        sum(1 for s in rubric_steps if s is not None and s <= t) / max(1, len(rubric_steps))
        for t in range(steps + 1)
    ]
    return TaskRecord(
        key=task_key(task_id, repeat),
        task_id=task_id,
        scenario=scenario,
        instruction=f"do {task_id}",
        repeat=repeat,
        exit_reason=exit_reason,
        finished=exit_reason is ExitReason.FINISHED,
        rubrics=[f"rubric {i}" for i in range(len(rubric_steps))],
        grader=grader,
        rubric_steps=rubric_steps,
        final_passed=[s is not None for s in rubric_steps],
        curve=curve,
        actions=actions,
        action_correct=action_correct if action_correct is not None else [o == "A" for o in outcomes],
        reflection_correct=reflection_correct if reflection_correct is not None else [True] * steps,
        correctness_source=extra.pop("correctness_source", "code"),
        totals=RunTotals(**(totals or {"steps": steps, "seconds": 3.0 * steps})),
        **extra,
    )


class TruthPerceptor:
    """W_V from the virtual phone's own elements: instant and exact."""

    def __init__(self, phone: VirtualPhone) -> None:
        self.phone = phone

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
        return Perception(
            width=image.width,
            height=image.height,
            elements=self.phone.ground_truth(),
            keyboard_active=bool(keyboard_active),
        )
