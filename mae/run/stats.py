"""Timing and cost bookkeeping of a run: per-step timings, totals, and the ``summary.json`` content."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from mae.errors import ExitReason
from mae.llm.client import CallRecord, ChatClient
from mae.memory.working import WorkingMemory
from mae.run.results import RunTotals, StepTiming


def model_wall_seconds(records: Sequence[CallRecord]) -> float:
    """Wall time covered by model calls (overlapping calls counted once)."""
    spans = sorted((r.started_at, r.started_at + r.latency_s) for r in records)
    total, end = 0.0, float("-inf")
    for start, stop in spans:
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


class RunStats:
    """Counts a run's model calls (from the client's records), perception and execution time."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.first_call = len(client.records)
        self.started = time.monotonic()
        self.started_wall = time.time()
        self.timings: list[StepTiming] = []
        self.perception_seconds = 0.0
        self.execution_seconds = 0.0

    def mark(self) -> tuple[float, int]:
        """Where a step starts: ``(monotonic time, index of the next model call record)``."""
        return time.monotonic(), len(self.client.records)

    def close_step(
        self, step: int, mark: tuple[float, int], perception_s: float, execution_s: float
    ) -> StepTiming:
        """The timing of a step that began at ``mark``, remembered for the totals."""
        started, first_call = mark
        records = self.client.records[first_call:]
        wall = time.monotonic() - started
        model = model_wall_seconds(records)
        timing = StepTiming(
            step=step,
            wall_s=round(wall, 4),
            model_s=round(model, 4),
            perception_s=round(perception_s, 4),
            execution_s=round(execution_s, 4),
            framework_s=round(max(0.0, wall - model), 4),
            model_calls=len(records),
            input_tokens=sum(r.input_tokens for r in records),
            output_tokens=sum(r.output_tokens for r in records),
            images=sum(r.images for r in records),
            cached_tokens=sum(r.cached_tokens for r in records),
            reasoning_tokens=sum(r.reasoning_tokens for r in records),
        )
        self.timings.append(timing)
        self.perception_seconds += perception_s
        self.execution_seconds += execution_s
        return timing

    def records(self) -> list[CallRecord]:
        return self.client.records[self.first_call :]

    def totals(self, steps: int) -> RunTotals:
        records = self.records()
        seconds = time.monotonic() - self.started
        model = model_wall_seconds(records)
        return RunTotals(
            steps=steps,
            seconds=round(seconds, 3),
            model_calls=len(records),
            failed_model_calls=sum(not r.ok for r in records),
            input_tokens=sum(r.input_tokens for r in records),
            cached_tokens=sum(r.cached_tokens for r in records),
            output_tokens=sum(r.output_tokens for r in records),
            reasoning_tokens=sum(r.reasoning_tokens for r in records),
            images=sum(r.images for r in records),
            model_seconds=round(model, 3),
            perception_seconds=round(self.perception_seconds, 3),
            execution_seconds=round(self.execution_seconds, 3),
            framework_seconds=round(max(0.0, seconds - model), 3),
        )

    def summary(
        self,
        memory: WorkingMemory,
        *,
        steps: int,
        status: str,
        device: str,
        backbone: str,
        reason: ExitReason | None = None,
        message: str = "",
    ) -> dict[str, Any]:
        """The content of ``summary.json``."""
        return {
            "task": memory.instruction,
            "status": status,
            "device": device,
            "backbone": backbone,
            "started_at": self.started_wall,
            "exit_reason": reason.value if reason else None,
            "message": message,
            "finished": reason is ExitReason.FINISHED,
            "totals": self.totals(steps).model_dump(),
            "plan": memory.plan,
            "subgoal": memory.subgoal,
            "progress": memory.progress,
            "notes": memory.notes,
            "actions": [a.model_dump(mode="json") for a in memory.actions],
            "errors": [e.model_dump(mode="json") for e in memory.errors],
            "step_timings": [t.model_dump() for t in self.timings],
        }
