"""What a run returns: why it ended, the final working memory, totals and per-step timings."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from mae.errors import ExitReason
from mae.memory.working import ActionRecord, ErrorRecord, WorkingMemory

EXIT_CODES: dict[ExitReason, int] = {
    ExitReason.FINISHED: 0,
    ExitReason.MAX_STEPS: 3,
    ExitReason.CONSECUTIVE_ERRORS: 4,
    ExitReason.REPEATED_ACTION: 5,
    ExitReason.UNUSABLE_REPLY: 6,
    ExitReason.MODEL_ERROR: 7,
    ExitReason.DEVICE_ERROR: 8,
    ExitReason.REJECTED: 9,
    ExitReason.ERROR: 10,
    ExitReason.STOPPED: 130,
}
"""Process exit code of ``python -m mae run`` per exit reason (2 = bad settings or usage)."""

EXIT_TEXT: dict[str, str] = {
    "finished": "the agent finished the task",
    "max_steps": "reached the step limit",
    "consecutive_errors": "too many consecutive errors",
    "repeated_action": "the same action was repeated too often",
    "unusable_reply": "a model reply could not be used, even after a correction",
    "model_error": "the model provider failed",
    "device_error": "the phone could not be reached",
    "stopped": "stopped by the user",
    "rejected": "a sensitive action was rejected",
    "error": "an error stopped the run",
}
"""Readable text of the loop's exit reasons (unknown reasons are shown as they are)."""


def exit_text(reason: str) -> str:
    """Readable text of an exit reason."""
    return EXIT_TEXT.get(reason, reason.replace("_", " "))


class RunTotals(BaseModel):
    """Counts and seconds over a whole run."""

    steps: int = 0
    seconds: float = 0.0
    model_calls: int = 0
    failed_model_calls: int = 0
    input_tokens: int = 0
    cached_tokens: int = Field(default=0, description="input tokens served from the provider's prompt cache")
    output_tokens: int = 0
    reasoning_tokens: int = Field(default=0, description="output tokens spent on hidden reasoning")
    images: int = 0
    model_seconds: float = Field(default=0.0, description="wall time spent waiting for models")
    perception_seconds: float = 0.0
    execution_seconds: float = Field(default=0.0, description="actions on the phone, settling included")
    framework_seconds: float = Field(default=0.0, description="wall time minus model time")


class StepTiming(BaseModel):
    """Where one step's time went."""

    step: int
    wall_s: float
    model_s: float
    perception_s: float
    execution_s: float
    framework_s: float
    model_calls: int
    input_tokens: int
    output_tokens: int
    images: int
    cached_tokens: int = 0
    """Input tokens the provider served from its prompt cache (billed at the cached rate)."""
    reasoning_tokens: int = 0


class TaskResult(BaseModel):
    """The result of ``run_task``."""

    instruction: str
    exit_reason: ExitReason
    message: str = ""
    finished: bool = False
    memory: WorkingMemory
    totals: RunTotals = Field(default_factory=RunTotals)
    steps: list[StepTiming] = Field(default_factory=list)
    run_dir: Path | None = None

    @property
    def actions(self) -> list[ActionRecord]:
        """Every step's action with its Shortcut name (if any) and outcome A/B/C."""
        return self.memory.actions

    @property
    def errors(self) -> list[ErrorRecord]:
        return self.memory.errors

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.exit_reason]
