"""Sensitive actions in an eval: who answers the gate (``--sensitive``), and what each answer was.

On the virtual phone nothing real can be lost (no money, no messages leave it), so an eval there
approves by default and records every approval in its results; on a real phone the default is to ask
at the terminal. ``deny`` refuses every one: the agent is told the user declined and goes on.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mae.actions.registry import ActionCall
from mae.errors import ConfigError
from mae.run.loop import Approver

SensitivePolicy = Literal["ask", "allow", "deny"]
POLICIES: tuple[SensitivePolicy, ...] = ("ask", "allow", "deny")


class ApprovalEntry(BaseModel):
    """One sensitive action of a run and the answer it got."""

    step: int
    action: str = Field(description="the action in screen pixels, as the question showed it")
    reason: str = Field(default="", description="why the gate stopped it, e.g. permission: tapping 'Allow'")
    approved: bool


def choose_policy(given: str | None, assume_yes: bool, virtual_phone: bool) -> SensitivePolicy:
    """The policy from ``--sensitive`` and ``--yes`` (= allow); by default allow on the virtual phone and
    ask on a real one. ``ConfigError`` when the two flags disagree."""
    if given is not None and given not in POLICIES:
        raise ConfigError(f"--sensitive {given!r}: choose ask, allow or deny")
    if assume_yes and given not in (None, "allow"):
        raise ConfigError(f"--yes approves every sensitive action, --sensitive {given} does not: keep one")
    if given is not None:
        return given
    if assume_yes:
        return "allow"
    return "allow" if virtual_phone else "ask"


def policy_approver(policy: SensitivePolicy, ask: Approver) -> Approver:
    """The run's approver for ``policy``; ``ask`` asks a person (the terminal)."""
    if policy == "ask":
        return ask

    def answer(_call: ActionCall, _description: str, _step: int) -> bool:
        return policy == "allow"

    return answer
