"""Parallel evaluation on one machine: N workers, each with its own phone, taking task runs from a queue.

A step waits on its model calls (>= 95 % of wall time), so an eval scales with phones, not cores. Every
worker owns a runtime (a phone, a model client, a Perceptor); all of them share one ``RequestGate`` that
bounds the model requests in flight, and one eval folder that only this process writes (one line of
``results.jsonl`` per finished task run, as in a serial eval, so reports and ``--resume`` are unchanged).
The evolution setting keeps a scenario's tasks of one repeat in order on one worker (they share a
long-term memory); the individual setting runs any task run on any worker.

A worker whose phone fails (the run ends with ``device_error``, or the phone cannot be prepared) ends
that task cleanly, hands the rest of its chain back to the queue and stops; the others go on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mae.actions.registry import ActionCall
from mae.device import VIRTUAL
from mae.errors import ConfigError, DeviceError, ExitReason
from mae.eval.records import TaskRecord, append_result
from mae.eval.runner import (
    Episode,
    EvalOptions,
    EvalRunner,
    Progress,
    duration_text,
    outcome_text,
)
from mae.eval.tasks import EvalTask
from mae.run.events import Event
from mae.run.evolution import BetweenTasks
from mae.run.loop import Approver
from mae.run.runtime import Runtime

log = logging.getLogger(__name__)
MAX_WORKERS = 64


class RequestGate:
    """Bounds the model requests in flight across workers and counts the most seen at once."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ConfigError("the number of model requests in flight must be at least 1")
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests = 0

    def __enter__(self) -> None:
        self._slots.acquire()
        with self._lock:
            self.in_flight += 1
            self.requests += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.in_flight -= 1
        self._slots.release()


def gate_runtime(runtime: Runtime, gate: RequestGate) -> None:
    """Make every model request of ``runtime`` wait for a slot of ``gate``."""
    runtime.client.gate = gate


def phone_specs(device: str | None, workers: int) -> list[str]:
    """One device spec per worker: ``virtual`` gives each worker its own virtual phone; ``SERIAL,SERIAL``
    names the phones; nothing takes the attached ADB phones (the virtual phone when none is attached)."""
    if not 1 <= workers <= MAX_WORKERS:
        raise ConfigError(f"--workers must be between 1 and {MAX_WORKERS}")
    if device == VIRTUAL:
        return [VIRTUAL] * workers
    if device:
        serials = [s.strip() for s in device.split(",") if s.strip()]
        if len(serials) < workers:
            raise ConfigError(
                f"--workers {workers} needs one phone each, but --device names {len(serials)}: name more "
                "serials (comma-separated) or use fewer workers"
            )
        return serials[:workers]
    from mae.device.adb_devices import attached_serials

    attached = attached_serials()
    if not attached:
        return [VIRTUAL] * workers
    if len(attached) < workers:
        raise ConfigError(
            f"--workers {workers} needs one phone each, but {len(attached)} phone(s) are attached: attach "
            "more, use fewer workers, or use --device virtual"
        )
    return attached[:workers]


@dataclass
class WorkerStatus:
    """What one worker is doing, for its progress line."""

    name: str
    phone: str
    state: str = "waiting"
    task: str = ""
    step: int = 0
    done: int = 0
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        if self.state == "running":
            return f"{self.name} ({self.phone}): {self.task} step {self.step} · {self.done} done"
        return f"{self.name} ({self.phone}): {self.state} · {self.done} done"


class WorkerBoard:
    """The progress of every worker (read by the CLI and the demo's Evaluate tab from other threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._workers: dict[str, WorkerStatus] = {}

    def add(self, name: str, phone: str) -> None:
        with self._lock:
            self._workers[name] = WorkerStatus(name, phone)

    def update(self, name: str, **changes: str | int) -> None:
        with self._lock:
            status = self._workers[name]
            for key, value in changes.items():
                setattr(status, key, value)

    def snapshot(self) -> list[WorkerStatus]:
        with self._lock:
            return [WorkerStatus(**vars(s)) for s in self._workers.values()]

    def lines(self) -> list[str]:
        return [s.line() for s in self.snapshot()]


class ParallelEvalRunner(EvalRunner):
    """Runs an eval into ``folder`` on several runtimes at once (one thread per worker)."""

    def __init__(
        self,
        folder: Path,
        options: EvalOptions,
        tasks: list[EvalTask],
        runtimes: list[Runtime],
        *,
        gate: RequestGate | None = None,
        approver: Approver | None = None,
        progress: Progress | None = None,
        stop_event: threading.Event | None = None,
        listener: Callable[[Event], None] | None = None,
        board: WorkerBoard | None = None,
    ) -> None:
        if not runtimes:
            raise ConfigError("a parallel eval needs at least one phone")
        approve_lock = threading.Lock()

        def one_at_a_time(call: ActionCall, description: str, step: int) -> bool:
            with approve_lock:  # one question on the terminal at a time
                return approver is not None and approver(call, description, step)

        super().__init__(
            folder,
            options,
            tasks,
            runtimes[0],
            approver=one_at_a_time if approver is not None else None,
            progress=progress,
            stop_event=stop_event,
            listener=listener,
        )
        for runtime in runtimes[1:]:
            if self.virtual and not callable(getattr(runtime.device, "state", None)):
                raise ConfigError(
                    "the virtual suite is graded on the virtual phone: run it with --device virtual"
                )
        self.runtimes = runtimes
        self.gate = gate or RequestGate(len(runtimes))
        for runtime in runtimes:
            gate_runtime(runtime, self.gate)
        self.board = board or WorkerBoard()
        self.names = [f"w{i + 1}" for i in range(len(runtimes))]
        for name, runtime in zip(self.names, runtimes, strict=True):
            self.board.add(name, runtime.device.name)
        self.failed_workers: list[str] = []
        """Workers that stopped because their phone failed (``name: why``)."""
        self.left_over = 0
        """Task runs still queued when the eval ended (every phone failed, stopped or halted)."""
        self._lock = threading.Lock()
        self._queue: deque[list[Episode]] = deque()
        self._todo = 0
        self._finished = 0
        self._started = time.monotonic()

    def run(self) -> list[TaskRecord]:
        """Run every task run not done yet on the workers; returns every record of the folder."""
        chains = self.episodes()
        self._queue = deque(chains)
        self._todo = sum(len(chain) for chain in chains)
        total_all = self.options.repeat * len(self.tasks)
        if self._todo < total_all:
            self.progress(f"resuming: {total_all - self._todo} of {total_all} task runs already done")
        self.progress(
            f"{len(self.runtimes)} workers, at most {self.gate.limit} model requests in flight, "
            f"{self._todo} task run(s) to do"
        )
        self._started = time.monotonic()
        threads = [
            threading.Thread(target=self._work, args=(name, runtime), name=f"mae-eval-{name}", daemon=True)
            for name, runtime in zip(self.names, self.runtimes, strict=True)
        ]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.5)
        except KeyboardInterrupt:  # Ctrl-C: every worker ends its task before the next action
            self.stop_event.set()
            for thread in threads:
                thread.join()
        self.left_over = sum(len(chain) for chain in self._queue)
        if self.left_over and len(self.failed_workers) == len(self.runtimes):
            self.progress(
                f"every phone failed, so {self.left_over} task run(s) did not run; fix the phones and resume"
            )
        return self._results()

    def _take(self) -> list[Episode] | None:
        with self._lock:
            if self.stop_event.is_set() or self.halted or not self._queue:
                return None
            return self._queue.popleft()

    def _give_back(self, chain: list[Episode]) -> None:
        if chain:
            with self._lock:
                self._queue.appendleft(chain)

    def _work(self, name: str, runtime: Runtime) -> None:
        while (chain := self._take()) is not None:
            if not self._run_chain(name, runtime, chain):
                return
        self.board.update(name, state="finished" if not self.stop_event.is_set() else "stopped")

    def _run_chain(self, name: str, runtime: Runtime, chain: list[Episode]) -> bool:
        """Run one chain on this worker; False when the worker must stop (its phone failed, the eval was
        stopped or the provider failed)."""
        device = runtime.device
        try:
            session = self.session(runtime, chain[0].repeat, chain[0].task.scenario)
            between = BetweenTasks(BetweenTasks.default_mode(device), device)
        except Exception as exc:  # any failure here is this worker's, not the eval's
            return self._retire(name, chain, f"it could not prepare its phone ({_why(exc)})")
        for position, episode in enumerate(chain):
            if self.stop_event.is_set():
                self.board.update(name, state="stopped")
                return False
            self.board.update(name, state="running", task=episode.key, step=0)
            self.progress(f"[{name}] {episode.key}: {episode.task.instruction[:70]}")

            def on_event(event: Event, name: str = name) -> None:
                if event.type in ("action", "run_started"):
                    self.board.update(name, step=event.step)
                if self.listener is not None:
                    self.listener(event)

            try:
                record = self.run_episode(runtime, episode, session, between, listener=on_event)
            except (DeviceError, OSError) as exc:
                return self._retire(name, chain[position:], f"its phone failed ({_why(exc)})")
            except Exception as exc:  # one worker's bug must not end the others
                log.exception("eval worker %s failed on %s", name, episode.key)
                return self._retire(
                    name, chain[position:], f"it stopped on an unexpected problem ({_why(exc)})"
                )
            if record is None:  # interrupted or the provider failed: not recorded, reruns on resume
                self.progress(f"[{name}] {episode.key}: {self.interruption()}; it runs again on resume")
                self._give_back(chain[position:])
                self.board.update(name, state="stopped")
                return False
            with self._lock:
                append_result(self.folder, record)
                self._finished += 1
                finished = self._finished
            done = self.board.snapshot()[self.names.index(name)].done + 1
            self.board.update(name, state="waiting", done=done)
            left = (time.monotonic() - self._started) / finished * (self._todo - finished)
            eta = f", about {duration_text(left)} left" if finished < self._todo else ""
            self.progress(f"[{name}] [{finished}/{self._todo}{eta}] {episode.key}: {outcome_text(record)}")
            if record.exit_reason is ExitReason.DEVICE_ERROR:
                return self._retire(name, chain[position + 1 :], f"its phone failed ({record.message})")
        return True

    def _retire(self, name: str, rest: list[Episode], why: str) -> bool:
        self._give_back(rest)
        with self._lock:
            self.failed_workers.append(f"{name}: {why}")
            alive = len(self.runtimes) - len(self.failed_workers)
        self.board.update(name, state="stopped: phone failed")
        others = f"the {alive} other worker(s) go on" if alive else "no worker is left"
        self.progress(f"[{name}] stops: {why}; {others}")
        return False


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
