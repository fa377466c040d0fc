"""Running a validated action on the phone: each atomic step, settling after it, up to the first failure.

A Shortcut's steps each get a screenshot after they settle (the last one is the loop's s_{t+1}). Invalid
actions never get here (the Operator's reply is validated first); an ``ActionError`` raised by the
phone itself (an app that is not installed, ...) is reported with the failing step's number, and a
``DeviceError`` (phone gone) propagates and ends the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PIL import Image

from mae.actions.registry import AtomicAction
from mae.device.base import Device
from mae.errors import ActionError

StepScreen = Callable[[int, AtomicAction, Image.Image], None]


@dataclass
class ExecutionResult:
    """How far an action got."""

    total: int
    completed: int = 0
    error: str | None = None
    failed_step: int | None = None
    stopped: bool = False
    seconds: float = 0.0
    settle_seconds: float = 0.0
    step_screens: list[Image.Image] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.stopped


def execute(
    device: Device,
    steps: Sequence[AtomicAction],
    *,
    settle_timeout_s: float = 3.0,
    should_stop: Callable[[], bool] = lambda: False,
    on_step_screen: StepScreen | None = None,
) -> ExecutionResult:
    """Run ``steps`` in order; screenshot after each but the last when there are several."""
    started = time.monotonic()
    result = ExecutionResult(total=len(steps))
    for index, step in enumerate(steps, 1):
        if index > 1 and should_stop():
            result.stopped = True
            break
        try:
            step.execute(device)
        except ActionError as exc:
            result.failed_step = index
            result.error = (
                f"step {index} of {len(steps)} ({step}) failed: {exc}" if len(steps) > 1 else str(exc)
            )
            break
        result.settle_seconds += device.settle(settle_timeout_s)
        result.completed = index
        if index < len(steps):
            image = device.screenshot()
            result.step_screens.append(image)
            if on_step_screen is not None:
                on_step_screen(index, step, image)
    result.seconds = time.monotonic() - started
    return result
