"""What one visitor of a public demo may cost the server: a small, bounded amount, whoever calls the API.

Gradio keeps each browser session's ``gr.State`` values (up to ``state_session_capacity`` sessions, and
an hour after a tab closes) and writes every picture it sends to its cache folder. On a public demo:

- a page load keeps no picture in its state (``TabState.picture`` stays empty until a run shows one,
  and ``PublicRuns.let_go`` empties it again when the run has been shown);
- at most ``STATE_SESSIONS`` sessions' states are kept, each for ``STATE_TTL_S`` after its last use,
  and a closed page's state goes at once (``drop_session`` on unload), its picture and run with it;
- Gradio's cached pictures older than ``CACHE_AGE_S`` are removed every ``CACHE_SWEEP_S``;
- every ``TRIM_EVERY`` page loads the freed heap is handed back to the system (``release_memory``), as
  it is when a burst of runs ends.

Private demos keep Gradio's defaults.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import gradio as gr

from mae.ui.phone_view import TabState
from mae.ui.public_runs import release_memory

STATE_SESSIONS = 500
"""Sessions whose state a public demo keeps (the oldest goes first); Gradio's default is 10,000."""
STATE_TTL_S = 900
"""Seconds a public session's state is kept after its last change."""
CACHE_SWEEP_S = 300
CACHE_AGE_S = 900
"""Gradio's cache of sent pictures: swept every ``CACHE_SWEEP_S`` of files older than ``CACHE_AGE_S``."""


TRIM_EVERY = 50
"""Page loads between two hand-backs of freed heap memory."""
_loads = itertools.count(1)
_loads_lock = threading.Lock()


def page_loaded() -> None:
    """Count a public page load; every ``TRIM_EVERY``-th hands the freed heap back to the system."""
    with _loads_lock:
        number = next(_loads)
    if number % TRIM_EVERY == 0:
        release_memory()


def forget_tab(tab: Any) -> None:
    """Gradio's ``delete_callback`` of the tab state: the picture and the run go with it."""
    if isinstance(tab, TabState):
        tab.picture = None
        tab.run = None


def state_options(public: bool) -> dict[str, Any]:
    """Keyword arguments of the tab's ``gr.State``."""
    return {"time_to_live": STATE_TTL_S, "delete_callback": forget_tab} if public else {}


def blocks_options(public: bool) -> dict[str, Any]:
    """Keyword arguments of the demo's ``gr.Blocks``."""
    return {"delete_cache": (CACHE_SWEEP_S, CACHE_AGE_S)} if public else {}


def launch_options(public: bool) -> dict[str, Any]:
    """Keyword arguments of ``launch``."""
    return {"state_session_capacity": STATE_SESSIONS} if public else {}


def drop_session(demo: gr.Blocks) -> Any:
    """The unload handler of a public demo: the closed page's states go now, not an hour later."""

    def on_unload(request: gr.Request) -> None:
        holder = getattr(demo, "state_holder", None)
        session = request.session_hash
        if holder is not None and session and session in holder:
            holder.delete_state(session)

    return on_unload
