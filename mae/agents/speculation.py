"""Fast mode's speculative Operator: the next step's Operator, started while the Action Reflector judges.

It is asked as if the action being judged succeeded (outcome A; its prompt says the action is not judged
yet) on the screen after it, with the progress and notes of before the judgement. Its action is used only
when the verdict is A, no Manager round is due and the phone still shows that screen; otherwise it is
discarded and the Operator is asked again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from mae.agents.base import AgentResult, AgentTurn, Screen
from mae.agents.operator import OperatorDecision
from mae.memory.working import ActionRecord, WorkingMemory

log = logging.getLogger(__name__)

DISCARDED = "operator (speculative, discarded)"
"""The agent name a discarded speculative Operator's model calls are recorded under."""


@dataclass
class Speculation:
    """A speculative Operator call in flight, the screen it was asked on, and its recorded calls."""

    screen: Screen
    future: Future[AgentResult[OperatorDecision]]
    turns: list[AgentTurn] = field(default_factory=list)

    def result(self) -> AgentResult[OperatorDecision]:
        """Wait for the speculative Operator's reply (provider failures propagate)."""
        return self.future.result()

    def discard(self) -> list[AgentTurn]:
        """Wait for it to end and return its calls, renamed as discarded (a failure is only logged: the
        Operator is asked again)."""
        try:
            self.future.result()
        except Exception:
            log.info("a speculative Operator call failed; it was discarded anyway", exc_info=True)
        for turn in self.turns:
            turn.agent = DISCARDED
        return self.turns


def assumed_success(memory: WorkingMemory, record: ActionRecord) -> WorkingMemory:
    """A copy of ``memory`` as the next step would see it if ``record`` is judged A."""
    snapshot = memory.model_copy(deep=True)
    snapshot.record(record.model_copy(update={"outcome": "A", "error": None, "pending": True}))
    snapshot.error_flag = False
    return snapshot


def start(
    screen: Screen, ask: Callable[[Callable[[AgentTurn], None]], AgentResult[OperatorDecision]]
) -> Speculation:
    """Start ``ask(on_turn)`` (an Operator call) in a thread of its own; its calls go to the result's
    ``turns`` until the next step records them."""
    turns: list[AgentTurn] = []
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mae-speculative-operator")
    try:
        future = pool.submit(ask, turns.append)
    finally:
        pool.shutdown(wait=False)
    return Speculation(screen=screen, future=future, turns=turns)
