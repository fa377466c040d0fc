"""Working memory of one task (paper Table 1): plan, subgoal, progress, notes, action and error history.

Everything here is plain data (pydantic, JSON-serialisable); the loop owns it and the agents read it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Outcome = Literal["A", "B", "C"]
"""Action Reflector outcomes: A success or partial success, B wrong page, C no change."""

OUTCOME_MEANING: dict[str, str] = {
    "A": "success or partial success",
    "B": "failed: wrong page",
    "C": "failed: no change",
}


class ActionRecord(BaseModel):
    """One step's action (W_A[t]): what the Operator chose and how it turned out."""

    step: int
    name: str = Field(description="atomic operation or Shortcut name as the Operator wrote it")
    arguments: dict[str, Any] = Field(default_factory=dict)
    text: str = Field(description="the action as one line, as the model wrote it, e.g. Tap(540, 1200)")
    screen_text: str | None = Field(
        default=None, description="the action in screen pixels, when the model wrote it in another frame"
    )
    frame: str = Field(default="", description="that frame in words for people, e.g. in its 768×1664 image")
    description: str = ""
    shortcut: str | None = Field(default=None, description="Shortcut name when the action called one")
    atomic_steps: list[str] = Field(default_factory=list, description="atomic operations, screen pixels")
    written_steps: list[str] = Field(
        default_factory=list, description="a Shortcut's atomic operations in the model's frame, for prompts"
    )

    @property
    def prompt_steps(self) -> list[str]:
        """The atomic operations as prompts show them: in the model's frame (older records: as run)."""
        return self.written_steps or self.atomic_steps

    executed: bool = Field(default=True, description="False when invalid/refused, never ran")
    completed_steps: int = Field(default=0, description="atomic operations that ran to completion")
    outcome: Outcome = "C"
    error: str | None = Field(default=None, description="why it failed (reflector or validation feedback)")
    stopped: bool = Field(default=False, description="the user stopped the run in the middle of it")
    pending: bool = Field(
        default=False, description="fast mode's speculative Operator sees it before the Reflector judged it"
    )

    @property
    def failed(self) -> bool:
        return self.outcome != "A"

    def summary(self) -> str:
        """One line for prompts: action, expectation and outcome."""
        status = "successful or partially successful"  # the paper's A
        if self.outcome != "A":
            status = f"failed ({OUTCOME_MEANING[self.outcome]})"
        if not self.executed:
            status = "not executed"  # the feedback says why: invalid, or declined by the user
        elif self.pending:
            status = "not judged yet (your action is used only if this one succeeded)"
        text = f"Action: {self.text} | Description: {self.description or '-'} | Outcome: {status}"
        if self.error:
            text += f" | Feedback: {self.error}"
        return text


class ErrorRecord(BaseModel):
    """One failed step (W_E[t]): the action and the error description with likely cause."""

    step: int
    action: str
    outcome: Outcome
    description: str

    def summary(self) -> str:
        meaning = OUTCOME_MEANING[self.outcome]
        return f"Step {self.step}: {self.action} -> {meaning}. {self.description}".strip()


class WorkingMemory(BaseModel):
    """The short-term memory W of one task."""

    instruction: str
    plan: str = ""
    subgoal: str = ""
    progress: str = "No progress yet."
    notes: str = ""
    error_flag: bool = Field(default=False, description="W_EF: raised after k consecutive failures")
    finished: bool = False
    actions: list[ActionRecord] = Field(default_factory=list)
    errors: list[ErrorRecord] = Field(default_factory=list)

    def record(self, action: ActionRecord) -> None:
        """Add a finished step to the history (and to the error history when it failed)."""
        self.actions.append(action)
        if action.failed:
            self.errors.append(
                ErrorRecord(
                    step=action.step,
                    action=action.text,
                    outcome=action.outcome,
                    description=action.error or "",
                )
            )

    def consecutive_failures(self) -> int:
        """How many of the latest actions failed in a row."""
        count = 0
        for action in reversed(self.actions):
            if not action.failed:
                break
            count += 1
        return count

    def recent_actions(self, m: int) -> list[ActionRecord]:
        return self.actions[-m:] if m > 0 else []

    def recent_errors(self, k: int) -> list[ErrorRecord]:
        return self.errors[-k:] if k > 0 else []

    def trailing_repeats(self, text: str) -> int:
        """How many of the latest actions, in a row, were exactly ``text``."""
        count = 0
        for action in reversed(self.actions):
            if action.text != text:
                break
            count += 1
        return count
