"""The run controller of one browser session: a run in a background thread, its events in a queue.

The UI thread starts a run, drains its events to update the page, asks it to stop, and answers
sensitive-action approvals. The run itself is a ``Runner`` function (``mae.ui.runner.run_job`` in the
app, a scripted one in tests) that receives the hooks the loop needs.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mae.run.events import Event, EventListener
from mae.ui.text import md_text, readable

DEFAULT_APPROVAL_TIMEOUT_S = 300.0


class RunActiveError(RuntimeError):
    """This session already has a run going."""


@dataclass
class PendingApproval:
    """An action waiting for the user's decision."""

    info: dict[str, Any]
    answer: queue.Queue[bool] = field(default_factory=lambda: queue.Queue(maxsize=1))
    asked_at: float = field(default_factory=time.time)


class ApprovalGate:
    """Blocks the run's thread on a sensitive action until the UI answers, the run stops, or time runs out.

    A timeout or a stop counts as a rejection: nothing sensitive happens without a yes.
    """

    def __init__(self, stop_event: threading.Event, timeout_s: float = DEFAULT_APPROVAL_TIMEOUT_S) -> None:
        self.stop_event = stop_event
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._pending: PendingApproval | None = None

    @property
    def pending(self) -> dict[str, Any] | None:
        with self._lock:
            return dict(self._pending.info) if self._pending else None

    def ask(self, info: dict[str, Any]) -> bool:
        """Called from the run's thread; returns the user's answer (False on timeout or stop)."""
        pending = PendingApproval(info=info)
        with self._lock:
            self._pending = pending
        deadline = time.monotonic() + self.timeout_s
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.stop_event.is_set():
                    return False
                try:
                    return pending.answer.get(timeout=min(0.2, remaining))
                except queue.Empty:
                    continue
        finally:
            with self._lock:
                if self._pending is pending:
                    self._pending = None

    def answer(self, approved: bool) -> bool:
        """Answer the waiting question; False when nothing was waiting."""
        with self._lock:
            pending = self._pending
            self._pending = None
        if pending is None:
            return False
        try:
            pending.answer.put_nowait(approved)
        except queue.Full:
            return False
        return True


@dataclass
class RunHooks:
    """What a runner hands the loop: where events go, the stop flag, and the approval callback."""

    listener: EventListener
    stop_event: threading.Event
    approve: Callable[[dict[str, Any]], bool]


Runner = Callable[[Any, RunHooks], Any]
"""``runner(job, hooks)`` runs one task to its end (blocking) and returns its result."""


class RunController:
    """One session's run: start it, read its events, stop it, answer approvals."""

    def __init__(self, runner: Runner, *, approval_timeout_s: float = DEFAULT_APPROVAL_TIMEOUT_S) -> None:
        self.runner = runner
        self.approval_timeout_s = approval_timeout_s
        self._events: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.stop_event = threading.Event()
        self.gate = ApprovalGate(self.stop_event, approval_timeout_s)
        self.result: Any = None
        self.error: BaseException | None = None
        self._finished_seen = False

    @property
    def active(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, job: Any) -> None:
        """Start ``job`` in a background thread; ``RunActiveError`` if one is still going."""
        if self.active:
            raise RunActiveError("a run is already going in this session: stop it or wait for it to finish")
        self.stop_event = threading.Event()
        self.gate = ApprovalGate(self.stop_event, self.approval_timeout_s)
        self._events = queue.Queue()
        self.result = None
        self.error = None
        self._finished_seen = False
        hooks = RunHooks(listener=self._emit, stop_event=self.stop_event, approve=self.gate.ask)
        self._thread = threading.Thread(target=self._run, args=(job, hooks), name="mae-ui-run", daemon=True)
        self._thread.start()

    def post(self, item: Any) -> None:
        """Queue something besides a loop event (a Perceptor result) in order with the events."""
        self._events.put(item)

    def _emit(self, event: Event) -> None:
        if event.type == "run_finished":
            self._finished_seen = True
        self._events.put(event)

    def _run(self, job: Any, hooks: RunHooks) -> None:
        try:
            self.result = self.runner(job, hooks)
        except BaseException as exc:
            self.error = exc
            self._emit(Event("warning", data={"message": error_message(exc)}))
        finally:
            if not self._finished_seen:
                reason = "stopped" if self.stop_event.is_set() and self.error is None else "error"
                data = {"exit_reason": reason, "finished": False, "steps": 0, "seconds": 0.0, "totals": {}}
                self._emit(Event("run_finished", data=data))

    def drain(self, timeout_s: float = 0.5) -> list[Any]:
        """Events since the last call: waits up to ``timeout_s`` for the first, then takes all queued."""
        events: list[Any] = []
        try:
            events.append(self._events.get(timeout=timeout_s))
        except queue.Empty:
            return events
        while True:
            try:
                events.append(self._events.get_nowait())
            except queue.Empty:
                return events

    def stop(self) -> bool:
        """Ask the run to stop before its next action; False when no run is going."""
        if not self.active:
            return False
        self.stop_event.set()
        return True

    def answer(self, approved: bool) -> bool:
        """Approve or reject the action waiting for approval; False when none waits."""
        return self.gate.answer(approved)

    def join(self, timeout_s: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout_s)


def error_markdown(exc: BaseException) -> str:
    """``error_message`` to put inside Markdown: shown as the same letters (``mae.ui.text.md_text``)."""
    return md_text(error_message(exc))


def error_message(exc: BaseException) -> str:
    """A sentence for the user: typed errors already say what to do; unexpected ones say what failed."""
    text = str(exc).strip()
    if not text:
        return "Something went wrong on the server; the details are in its log."
    return readable(text)
