"""Agent runs behind the ``run_task`` tool: the loop in a worker thread, its progress as messages.

The tool call's async side polls a job for what happened (``Progress``, a ``Question`` about a sensitive
action, the end); the worker thread blocks in the approver until the question is answered, the job is
stopped, or nobody answers within ``APPROVAL_WAIT_S``.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mae.actions.registry import ActionCall
from mae.config import Settings
from mae.errors import ExitReason, MaeError, MemoryStoreError
from mae.mcp.views import RunView
from mae.run.events import Event
from mae.run.results import TaskResult
from mae.run.runtime import Runtime

APPROVAL_WAIT_S = 300.0
"""How long a run waits for an answer about a sensitive action before it counts as refused."""
KEPT_JOBS = 16
"""Finished jobs kept for a client that comes back with an answer (the oldest finished go first)."""
TEXT_LIMIT = 160


def _short(text: Any, limit: int = TEXT_LIMIT) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


log = logging.getLogger(__name__)


@dataclass
class Progress:
    """One progress notification: a value that grows through the run and a line of text."""

    value: float
    total: float
    message: str


@dataclass
class Question:
    """A sensitive action waiting for a person's answer."""

    action: str
    reason: str
    answered: threading.Event = field(default_factory=threading.Event)
    approved: bool = False

    def answer(self, approved: bool) -> None:
        self.approved = approved
        self.answered.set()


@dataclass
class Ended:
    """The run is over (``result`` is None when it could not start)."""

    result: TaskResult | None
    error: str | None = None


Item = Progress | Question | Ended
Approve = Callable[[str, str], bool | None]
"""``(action, reason) -> True/False`` decided at once, or None when a person must be asked."""


class RunJob:
    """One ``run_task`` run: the loop on ``runtime`` in a thread, reporting through a queue."""

    _ids = itertools.count(1)

    def __init__(
        self,
        task: str,
        runtime: Runtime,
        *,
        decide: Approve,
        use_memory: bool,
    ) -> None:
        self.id = f"run-{next(self._ids)}-{int(time.time())}"
        self.task = task
        self.runtime = runtime
        self.decide = decide
        self.use_memory = use_memory
        self.stop_event = threading.Event()
        self.items: queue.Queue[Item] = queue.Queue()
        self.ended: Ended | None = None
        self.pending: Question | None = None
        """A question handed to the client (protocol 2026-07-28), answered when it calls again."""
        self.notes: list[str] = []
        self.total = 1.0
        self._progress = 0.0
        self._reasons: list[str] = []
        """Why the safety policy stopped an action (the ``approval_needed`` event comes just before the
        approver is called)."""
        self._thread = threading.Thread(target=self._work, name=f"mae-mcp-{self.id}", daemon=True)

    # ------------------------------------------------------------------ the worker thread
    def start(self) -> None:
        self._thread.start()

    def _work(self) -> None:
        ended = Ended(result=None)
        try:
            ended = Ended(result=self._run())
        except MaeError as exc:
            ended = Ended(result=None, error=str(exc))
        except Exception:  # an unforeseen failure still ends the job with a sentence; the log has the rest
            log.exception("MCP run %s failed unexpectedly", self.id)
            ended = Ended(
                result=None,
                error="the run stopped on an unexpected problem; the MCP server's stderr has the details "
                "(please report it with them)",
            )
        finally:
            self.ended = ended
            self.items.put(ended)

    def _run(self) -> TaskResult:
        from mae.run.evolution import MemorySession, runtime_runner
        from mae.run.loop import RunControls, RunRequest

        runtime, settings = self.runtime, self.runtime.settings
        controls = RunControls(
            listener=self._on_event,
            stop_event=self.stop_event,
            approver=self._approve,
            backbone=runtime.backbone,
        )
        runner = runtime_runner(runtime.device, runtime.client, runtime.perceptor, settings, controls)
        if not self.use_memory:
            return runner(RunRequest(self.task))
        session = MemorySession(
            settings, runtime.client, evolve=settings.evolution.evolve, progress=self.notes.append
        )
        prepared = session.prepare(self.task)
        result = runner(prepared.request(self.task))
        try:
            session.finish(result, prepared)
        except MemoryStoreError as exc:
            self.notes.append(f"the long-term memory was not updated: {exc}")
        return result

    def _approve(self, call: ActionCall, description: str, step: int) -> bool:
        action = str(call)
        reason = self._reasons.pop(0) if self._reasons else _short(description, 80)
        decided = self.decide(action, reason)
        if decided is not None:
            return decided
        asked = Question(action=action, reason=reason)
        self.items.put(asked)
        deadline = time.monotonic() + APPROVAL_WAIT_S
        while not asked.answered.wait(0.1):
            if self.stop_event.is_set() or time.monotonic() > deadline:
                return False
        return asked.approved

    def _on_event(self, event: Event) -> None:
        data, step, line = event.data, event.step, None
        if event.type == "run_started":
            self.total = float(data.get("max_steps") or 1)
        elif event.type == "approval_needed":
            self._reasons.append(str(data.get("reason") or ""))
        elif event.type == "stage_finished":
            result = data.get("result") or {}
            if data.get("stage") == "manager" and result.get("subgoal"):
                line, position = f"step {step}: subgoal: {_short(result['subgoal'])}", 0.2
            elif data.get("stage") in ("v1_agent", "decision") and result.get("thought"):
                line, position = f"step {step}: thought: {_short(result['thought'])}", 0.2
        elif event.type == "action":
            line, position = f"step {step}: action: {data['action']} ({_short(data['description'], 80)})", 0.5
        elif event.type == "outcome":
            error = data.get("error_description") or ""
            tail = f": {_short(error, 100)}" if data.get("outcome") != "A" and error else ""
            line, position = f"step {step}: outcome: {data['outcome']}{tail}", 0.9
        if line is not None:
            value = max(step - 1 + position, self._progress + 0.01)
            self._progress = value
            self.items.put(Progress(value=round(value, 2), total=self.total, message=line))

    # ------------------------------------------------------------------ the tool call's side
    def next_item(self) -> Item | None:
        try:
            return self.items.get_nowait()
        except queue.Empty:
            return None

    def stop(self) -> None:
        self.stop_event.set()

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the worker to end; whether it did."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def summary(self, result: TaskResult) -> RunView:
        memory = result.memory
        return RunView(
            task=result.instruction,
            device=self.runtime.device.name,
            agent=self.runtime.settings.loop.agent,
            exit_reason=result.exit_reason.value,
            finished=result.exit_reason is ExitReason.FINISHED,
            message=result.message,
            steps=len(memory.actions),
            progress=memory.progress,
            notes=memory.notes,
            seconds=round(result.totals.seconds, 2),
            model_calls=result.totals.model_calls,
            run_folder=str(result.run_dir or ""),
            remarks=list(self.notes),
        )


class JobBook:
    """The runs of this server by id, so a client answering a question finds its run again."""

    def __init__(self) -> None:
        self._jobs: dict[str, RunJob] = {}
        self._lock = threading.Lock()

    def add(self, job: RunJob) -> None:
        with self._lock:
            self._jobs[job.id] = job
            finished = [key for key, kept in self._jobs.items() if not kept.running and kept is not job]
            for key in finished[: max(0, len(finished) - KEPT_JOBS)]:
                del self._jobs[key]

    def get(self, job_id: str) -> RunJob | None:
        with self._lock:
            return self._jobs.get(job_id)

    def stop_all(self) -> None:
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            job.stop()


def settings_for_run(settings: Settings, agent: str | None, max_steps: int | None) -> Settings:
    """``settings`` with this run's agent and step limit."""
    loop: dict[str, Any] = {}
    if agent:
        loop["agent"] = agent
    if max_steps:
        loop["max_steps"] = max_steps
    if not loop:
        return settings
    return settings.model_copy(update={"loop": settings.loop.model_copy(update=loop)})
