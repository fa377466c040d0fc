"""Starting runs on a public demo: the line (``mae.ui.admission``), the checks a visitor's run passes,
and the clean-up after it. Also the note a second tab of a private demo gets when the phone is busy.

``mae.ui.run_tab`` calls these from its Run handler; the run itself starts as on a private demo.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Iterator
from typing import Any

from mae.errors import ConfigError
from mae.perception.ocr import release_arena_memory
from mae.ui import space
from mae.ui.admission import Admission, Ticket, queue_message
from mae.ui.live import LiveRun
from mae.ui.phone_view import TabState
from mae.ui.runner import Backend, RunJob
from mae.ui.text import md_text

MAX_WAIT_POLLS = 3600
"""How many one-second waits a visitor spends in line at most (an hour) before being asked to retry."""


MALLOC_ARENAS = 2
"""glibc heap arenas a public server uses (``M_ARENA_MAX``): by default each of the many handler
threads gets its own, and what visitors' page loads and runs freed stays in them."""
M_ARENA_MAX = -8


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def limit_arenas(arenas: int = MALLOC_ARENAS) -> None:
    """Let this process's threads share ``arenas`` glibc heap arenas (as ``MALLOC_ARENA_MAX`` would),
    so freed memory is reused across threads instead of staying resident per thread; nothing where
    there is no glibc."""
    libc = _libc()
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is not None:
        mallopt(M_ARENA_MAX, arenas)


def release_memory() -> None:
    """Give the memory finished runs freed back to the system: shrink onnxruntime's OCR arenas to their
    first block (they stay at the peak of concurrent screens otherwise), collect cycles, then ask glibc
    to return its free heap pages (``malloc_trim``; threads leave freed blocks in per-thread arenas that
    would otherwise keep the server's resident size at its peak). Nothing happens where there is no glibc."""
    release_arena_memory()
    gc.collect()
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


def busy_note(task: str) -> str:
    """What Run says in a second tab of a private demo while another tab's run operates the phone."""
    shown = task if len(task) <= 120 else f"{task[:117]}…"
    return (
        f"**The phone is busy** with “{md_text(shown)}” from another tab. Press **Watch it here** to "
        "follow that run in this tab, or wait for it to end and press Run again."
    )


class PublicRuns:
    """The line, the per-visitor checks and the clean-up of a public demo's runs."""

    def __init__(self, backend: Backend, admission: Admission, session_ttl_s: float | None = None) -> None:
        self.backend = backend
        self.admission = admission
        limit_arenas()
        self.session_ttl_s = space.session_ttl() if session_ttl_s is None else session_ttl_s

    def join(self, session: str) -> Ticket:
        """A place in line for ``session`` (``ConfigError``: it already has one)."""
        return self.admission.join(session)

    def wait_turn(self, ticket: Ticket) -> Iterator[str]:
        """The status line to show while ``ticket`` waits, once a second, until it is admitted;
        ``ConfigError`` when the wait is too long. The caller gives the ticket back if it stops early."""
        for _ in range(MAX_WAIT_POLLS):
            if self.admission.wait(ticket, 1.0):
                return
            yield queue_message(max(1, self.admission.position(ticket)), self.admission.limit)
        raise ConfigError("the line did not move for an hour: reload the page and try again later")

    def prepare(self, job: RunJob, session: str) -> None:
        """Make ``job`` this visitor's own (folders, memory, virtual phone) and check what it would reach:
        ``ConfigError`` with a sentence when its base URL or keys are not allowed here."""
        job.settings = space.session_settings(job.settings, session)
        job.device = space.session_phone(session)
        refused = space.key_refusal(job.settings, job.api_keys) or space.base_url_refusal(job.settings)
        if refused:
            raise ConfigError(refused)

    def hand_over(self, run: LiveRun, ticket: Ticket) -> None:
        """The ticket goes back, and idle session folders go, when ``run`` ends (call before it starts)."""

        def ended(_run: LiveRun) -> None:
            self.admission.leave(ticket)
            space.forget_phone(ticket.session)  # its screens are memory; the next run starts afresh
            self.sweep()
            if self.admission.running == 0:  # the last run of a burst: hand the freed heap back
                release_memory()

        run.on_end(ended)

    @staticmethod
    def let_go(tab: TabState) -> None:
        """After a visitor's run has been shown to its end: the page's state keeps no run and no
        full-size picture (a public server holds many sessions' states)."""
        tab.run = None
        tab.picture = None

    def leave(self, ticket: Ticket) -> None:
        self.admission.leave(ticket)

    def sweep(self) -> list[str]:
        """Remove the session folders idle for longer than the session time-to-live."""
        return space.sweep_sessions(self.backend.settings, self.admission.sessions(), self.session_ttl_s)

    def figures(self) -> dict[str, Any]:
        """Running, waiting and peak counts (for the load benchmark)."""
        return {
            "running": self.admission.running,
            "waiting": self.admission.waiting,
            "peak": self.admission.peak,
            "limit": self.admission.limit,
        }
