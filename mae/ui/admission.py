"""Run admission on a public demo: at most ``MAE_MAX_RUNS`` runs at once, the rest wait in line.

A visitor who presses Run takes a ticket; the page shows the ticket's place in line until a slot is
free. A browser session holds at most one ticket (waiting or running). A ticket whose page stopped
asking for its place (the visitor left) is dropped after ``STALE_S`` seconds, so an abandoned page
never blocks the line. The ticket is given back when its run ends.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from mae.errors import ConfigError

MAX_RUNS_ENV = "MAE_MAX_RUNS"
STALE_S = 30.0
"""Seconds a waiting ticket lives without its page asking for its place."""


class AdmissionRefused(ConfigError):
    """This browser session may not take another ticket; the message says why and what to do."""


def max_runs(environ: Mapping[str, str] | None = None, cores: int | None = None) -> int:
    """Runs a public demo admits at once: ``MAE_MAX_RUNS``, else one per CPU core (at least 1)."""
    environ = os.environ if environ is None else environ
    text = environ.get(MAX_RUNS_ENV, "").strip()
    if not text:
        return max(1, cores if cores is not None else (os.cpu_count() or 1))
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"{MAX_RUNS_ENV} must be a whole number of runs, not {text!r}") from None
    if value < 1:
        raise ConfigError(f"{MAX_RUNS_ENV} must be at least 1")
    return value


_numbers = itertools.count(1)


@dataclass
class Ticket:
    """One visitor's place in line (or slot, once admitted)."""

    session: str
    number: int = field(default_factory=lambda: next(_numbers))
    admitted: bool = False
    seen: float = field(default_factory=time.monotonic)


class Admission:
    """The line and the running slots of one demo server."""

    def __init__(self, limit: int, stale_s: float = STALE_S) -> None:
        self.limit = limit
        self.stale_s = stale_s
        self._waiting: list[Ticket] = []
        self._running: dict[str, Ticket] = {}
        self._changed = threading.Condition()
        self.peak = 0
        """Most runs admitted at the same time so far (the load benchmark reports it)."""

    def join(self, session: str) -> Ticket:
        """A ticket for ``session``; ``AdmissionRefused`` when it already holds one."""
        with self._changed:
            self._drop_stale()
            if session in self._running or any(t.session == session for t in self._waiting):
                raise AdmissionRefused(
                    "this page already has a run going or waiting: watch it, or press Stop and then Run"
                )
            ticket = Ticket(session)
            self._waiting.append(ticket)
            self._admit()
            return ticket

    def position(self, ticket: Ticket) -> int:
        """1 for the first in line, 2 for the next...; 0 once admitted (or dropped)."""
        with self._changed:
            ticket.seen = time.monotonic()
            return self._waiting.index(ticket) + 1 if ticket in self._waiting else 0

    def wait(self, ticket: Ticket, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for ``ticket`` to be admitted; True once it is."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                ticket.seen = time.monotonic()
                self._drop_stale()
                self._admit()
                if ticket.admitted:
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0 or ticket not in self._waiting:
                    return False
                self._changed.wait(remaining)

    def leave(self, ticket: Ticket) -> None:
        """Give the ticket back (its run ended, or its page left the line)."""
        with self._changed:
            if ticket in self._waiting:
                self._waiting.remove(ticket)
            if self._running.get(ticket.session) is ticket:
                del self._running[ticket.session]
            self._admit()
            self._changed.notify_all()

    def sessions(self) -> set[str]:
        """The sessions holding a ticket (running or waiting)."""
        with self._changed:
            return set(self._running) | {t.session for t in self._waiting}

    @property
    def running(self) -> int:
        with self._changed:
            return len(self._running)

    @property
    def waiting(self) -> int:
        with self._changed:
            return len(self._waiting)

    def _admit(self) -> None:
        admitted = False
        while self._waiting and len(self._running) < self.limit:
            ticket = self._waiting.pop(0)
            ticket.admitted = True
            self._running[ticket.session] = ticket
            admitted = True
        self.peak = max(self.peak, len(self._running))
        if admitted:
            self._changed.notify_all()

    def _drop_stale(self) -> None:
        now = time.monotonic()
        self._waiting = [t for t in self._waiting if now - t.seen <= self.stale_s]


def queue_message(position: int, limit: int) -> str:
    """The status line of a visitor waiting in line."""
    ahead = position - 1
    people = "nobody" if ahead == 0 else f"{ahead} {'visitor' if ahead == 1 else 'visitors'}"
    return (
        f"**Waiting in line: position {position}.** This public demo runs {limit} "
        f"{'task' if limit == 1 else 'tasks'} at once; {people} ahead of you. Your run starts by itself; "
        "keep this page open."
    )
