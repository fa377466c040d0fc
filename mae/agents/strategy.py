"""The seam between the step loop and an agent: what a strategy decides and what the loop offers it.

The loop (``mae.run.loop``) owns everything every agent shares: perception, execution and settling, the
trajectory, events, the exits, approval, stop and the device lock. An agent (``AgentStrategy``) only
decides the next action from the working memory and the screen, and judges it afterwards, updating its
own memory. Mobile-Agent-E (``mae.agents.e_agent``), Mobile-Agent-v2 (``mae.agents.v2``) and Mobile-Agent
v1 (``mae.agents.v1``) are the three strategies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from mae.agents.base import AgentResult, AgentTurn, Screen
from mae.agents.operator import OperatorDecision
from mae.config import LoopSettings
from mae.errors import ExitReason
from mae.llm.client import ChatClient
from mae.memory.working import ActionRecord, WorkingMemory

V = TypeVar("V")
M = TypeVar("M", bound=BaseModel)


class RunExit(Exception):
    """Ends the run with ``reason`` (raised by the loop or by a strategy, caught by the loop)."""

    def __init__(self, reason: ExitReason, message: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass
class Finish:
    """The agent judged the task done; ``message`` says who and why."""

    message: str


@dataclass
class Invalid:
    """The agent's action could not be used even after its corrective retry: recorded as a failed step."""

    text: str
    problem: str


Decision = OperatorDecision | Finish | Invalid
"""What ``AgentStrategy.decide`` returns: an action to run, the end of the task, or an invalid action."""


class RunContext(Protocol):
    """What the loop offers a strategy during a step."""

    client: ChatClient
    memory: WorkingMemory
    settings: LoopSettings
    prompts_dir: Path | None
    step: int

    def stage(self, name: str, work: Callable[[], V]) -> tuple[V, float]:
        """Run ``work`` as a named stage (events, timing) and return its value and seconds."""
        ...

    def emit(self, type_: str, **data: Any) -> None:
        """Report an event of ``type_`` with ``data``."""
        ...

    def on_turn(self, turn: AgentTurn) -> None:
        """Record one model call (pass as ``on_turn`` to agent calls)."""
        ...

    def undo(self) -> Screen:
        """Press Back on the phone, settle, and return the perceived screen after it."""
        ...

    def screen_unchanged(self, screen: Screen) -> bool:
        """Whether the phone still shows ``screen`` (a fresh screenshot compared with it)."""
        ...


def require(result: AgentResult[M], agent: str) -> M:
    """The parsed value of ``result``; ``RunExit(UNUSABLE_REPLY)`` naming ``agent`` when there is none."""
    if result.value is None:
        said = " ".join((result.turns[-1].raw if result.turns else "").split())
        shown = f"“{said[:120]}…”" if len(said) > 120 else f"“{said}”" if said else "nothing"
        message = f"{agent}: {result.problem} (the model's last reply: {shown})"
        raise RunExit(ExitReason.UNUSABLE_REPLY, message)
    return result.value


class AgentStrategy(Protocol):
    """One agent framework on the shared loop."""

    name: str
    """``e``, ``v2`` or ``v1``."""
    stages: tuple[str, ...]
    """The stage names its agents report (the timeline shows them in this order)."""

    def decide(self, run: RunContext, screen: Screen) -> Decision:
        """The next action on ``screen`` (or the end of the task), updating the agent's own memory."""
        ...

    def judge(
        self, run: RunContext, record: ActionRecord, before: Screen, after: Screen, failure: str | None
    ) -> Screen | None:
        """Set ``record.outcome``/``error`` after the action ran, update memory; return a new screen when
        the agent changed the phone (e.g. undid the action), else ``None``."""
        ...

    def declined(self, record: ActionRecord) -> None:
        """The person refused this sensitive action (it did not run; ``record.error`` says so): tell the
        agent's own history, as the user's answer."""
        ...


def invalid_text(raw: str) -> str:
    """A one-line stand-in for an invalid action in the history: its JSON line, if any."""
    lines = raw.strip().splitlines()
    return next((line for line in lines if line.strip().startswith("{")), "(invalid action)")[:200]
