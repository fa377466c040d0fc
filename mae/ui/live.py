"""Runs owned by the server, not by a browser tab: any tab can watch, stop or approve the run on a phone.

A ``LiveRun`` folds its controller's events into one shared ``RunView`` on a pump thread; every tab that
shows it (a reload, a second tab) waits on ``changed`` and renders the same view. Closing a tab stops
nothing. A run ends by itself, by Stop, or, when ``MAE_IDLE_STOP`` is set (public deployments), after
that many seconds without any tab looking at it (a public demo stops such a run after
``PUBLIC_IDLE_STOP_S`` unless ``MAE_IDLE_STOP`` says otherwise, and drops ended runs from the registry).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping

from mae.errors import ConfigError
from mae.public_mode import is_public
from mae.ui.session import RunController
from mae.ui.views import RunView

IDLE_STOP_ENV = "MAE_IDLE_STOP"
PUBLIC_IDLE_STOP_S = 120.0
"""A public demo's default: a run nobody has watched for this long was abandoned."""


def idle_stop_seconds(environ: Mapping[str, str] | None = None) -> float | None:
    """Seconds a run may go on with no tab watching (``MAE_IDLE_STOP``; on a public demo
    ``PUBLIC_IDLE_STOP_S`` when unset); None = never stopped for that."""
    environ = os.environ if environ is None else environ
    text = environ.get(IDLE_STOP_ENV, "").strip()
    if not text and is_public(environ):
        return PUBLIC_IDLE_STOP_S
    if not text or text == "0":
        return None
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{IDLE_STOP_ENV} must be a number of seconds, not {text!r}") from None
    if value < 0:
        raise ConfigError(f"{IDLE_STOP_ENV} must be 0 (off) or more seconds")
    return value


class LiveRun:
    """One run on one phone, its shared view, and when a tab last looked at it."""

    def __init__(self, device: str, controller: RunController, view: RunView) -> None:
        self.device = device
        self.controller = controller
        self.view = view
        self.version = 0
        self.changed = threading.Condition()
        self.last_seen = time.monotonic()
        self.stopped_for_idle = False
        self._pump = threading.Thread(target=self._pump_events, name="mae-ui-pump", daemon=True)
        self._on_end: list[Callable[[LiveRun], None]] = []

    def on_end(self, callback: Callable[[LiveRun], None]) -> None:
        """Call ``callback(run)`` once the run and its last events are over (from the pump thread)."""
        self._on_end.append(callback)

    def start(self, job: object) -> None:
        self.controller.start(job)
        self._pump.start()

    @property
    def active(self) -> bool:
        """The run (or its last events) is still going."""
        return self.controller.active or self.view.running

    def _pump_events(self) -> None:
        try:
            self._pump_until_finished()
        finally:
            for callback in self._on_end:
                try:
                    callback(self)
                except Exception:  # one callback's failure never keeps the others from running
                    continue

    def _pump_until_finished(self) -> None:
        while True:
            items = self.controller.drain(0.5)
            if items:
                with self.changed:
                    for item in items:
                        self.view.apply(item)
                    self.version += 1
                    self.changed.notify_all()
            if self.view.finished is not None and not self.controller.active and not items:
                return

    def wait(self, seen_version: int, timeout_s: float = 1.0) -> int:
        """Block until the view moves past ``seen_version`` (or ``timeout_s``); the current version."""
        self.touch()
        with self.changed:
            if self.version == seen_version:
                self.changed.wait(timeout_s)
            return self.version

    def touch(self) -> None:
        """A tab is looking at this run."""
        self.last_seen = time.monotonic()


class RunRegistry:
    """The server's runs, one per phone name; the latest run of a phone stays until the next starts."""

    def __init__(self, idle_stop_s: float | None = None, *, keep_finished: bool = True) -> None:
        self.idle_stop_s = idle_stop_s
        self.keep_finished = keep_finished
        """False on a public demo: a run leaves the registry when it ends (its watchers keep their view)."""
        self._runs: dict[str, LiveRun] = {}
        self._lock = threading.Lock()
        self._watchdog: threading.Thread | None = None

    def get(self, device: str) -> LiveRun | None:
        with self._lock:
            return self._runs.get(device)

    def active(self, device: str | None = None) -> LiveRun | None:
        """The running run on ``device`` (on any phone when ``device`` is None), or None."""
        with self._lock:
            runs = list(self._runs.values())
        return next((r for r in runs if r.active and (device is None or r.device == device)), None)

    def forget(self, device: str) -> bool:
        """Drop the ended run of ``device`` (a reloaded page then shows none); False if it still runs."""
        with self._lock:
            run = self._runs.get(device)
            if run is not None and run.active:
                return False
            self._runs.pop(device, None)
            return True

    def add(self, run: LiveRun) -> None:
        """Register ``run`` for its phone (the caller checked that no run is active there)."""
        with self._lock:
            self._runs[run.device] = run
        if not self.keep_finished:
            run.on_end(self._drop)
        if self.idle_stop_s is not None and self._watchdog is None:
            self._watchdog = threading.Thread(target=self._watch_idle, name="mae-ui-idle", daemon=True)
            self._watchdog.start()

    def _drop(self, run: LiveRun) -> None:
        with self._lock:
            if self._runs.get(run.device) is run:
                del self._runs[run.device]

    def __len__(self) -> int:
        with self._lock:
            return len(self._runs)

    def stop_unwatched(self, now: float | None = None) -> list[LiveRun]:
        """Stop the runs no tab has looked at for ``idle_stop_s``; the runs stopped."""
        if self.idle_stop_s is None:
            return []
        now = time.monotonic() if now is None else now
        with self._lock:
            runs = list(self._runs.values())
        stopped = []
        for run in runs:
            if run.controller.active and now - run.last_seen > self.idle_stop_s and run.controller.stop():
                run.stopped_for_idle = True
                stopped.append(run)
        return stopped

    def _watch_idle(self) -> None:
        while True:
            time.sleep(min(5.0, max(0.5, (self.idle_stop_s or 5.0) / 4)))
            self.stop_unwatched()
