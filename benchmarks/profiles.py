"""Shared by ``agent_calls.py`` and ``loop_overhead.py``: Mobile-Agent-E's loop profiles (the paper's order,
each fast-mode switch on its own, fast mode) and the per-step call figures of a run.

Sequential model calls per step: the wall time covered by model calls (overlapping calls counted once)
divided by the mean call latency, per action; at 3.5 s per call a step waits that many times 3.5 s for
its models (perception, execution and settling come on top). The scripted models answer from what the
phone has run (``CountingPhone``), so a speculative Operator asked early gets the same action as the
Operator asked again after it was discarded.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from mae.device.virtual import VirtualPhone
from mae.llm.client import CallRecord
from mae.run.results import TaskResult
from mae.run.stats import model_wall_seconds

PROFILES: dict[str, dict[str, Any]] = {
    "paper order": {},
    "parallel Notetaker": {"parallel_notetaker": True},
    "Manager on demand (N=4)": {"manager_every": 4},
    "notes in Reflector": {"notes_in_reflector": True},
    "pop-ups w/o Manager": {"dismiss_popups": True},
    "on demand + speculation": {"manager_every": 4, "speculative_operator": True},
    "fast w/o speculation": {"fast": True, "speculative_operator": False},
    "fast": {"fast": True},
}
"""Loop settings of each profile (``LoopSettings``); ``fast`` turns on the four switches."""

CALL_S = 3.5
"""Seconds per model call the s/op figure assumes (the order of a hosted GPT-4o call)."""


class CountingPhone(VirtualPhone):
    """The virtual phone, counting the atomic operations it has run (one settle per operation)."""

    def __init__(self) -> None:
        super().__init__()
        self.operations = 0

    def settle(self, timeout_s: float = 3.0) -> float:
        self.operations += 1
        return super().settle(timeout_s)

    def actions_done(self, sizes: Sequence[int]) -> int:
        """How many of the scripted actions (``sizes``: atomic operations of each) have run."""
        done = total = 0
        for size in sizes:
            if total + size > self.operations:
                break
            total, done = total + size, done + 1
        return done


def call_figures(result: TaskResult, records: Sequence[CallRecord]) -> dict[str, Any]:
    """Calls, sequential calls, s/op at ``CALL_S`` and tokens, per action of ``result`` (``records``: its
    client's model calls)."""
    totals, steps = result.totals, max(1, len(result.actions))
    latencies = [r.latency_s for r in records if r.ok]
    mean_call = statistics.fmean(latencies) if latencies else 0.0
    sequential = model_wall_seconds(records) / mean_call / steps if mean_call else 0.0
    return {
        "actions": len(result.actions),
        "model_calls": totals.model_calls,
        "model_calls_per_step": round(totals.model_calls / steps, 2),
        "sequential_calls_per_step": round(sequential, 2),
        "s_per_op_at_3_5": round(sequential * CALL_S, 1),
        "input_tokens_per_step": round(totals.input_tokens / steps),
        "output_tokens_per_step": round(totals.output_tokens / steps),
        "images_per_step": round(totals.images / steps, 2),
    }
