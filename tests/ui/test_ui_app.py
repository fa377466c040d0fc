"""The Blocks app builds with every component the browser tests and users rely on; closed tabs stop runs."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from ui_testkit import make_backend, settings_for

from mae.device.virtual import VirtualPhone
from mae.ui.session import RunController, RunHooks

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

ELEM_IDS = {
    "mae-task", "mae-run", "mae-stop", "mae-device", "mae-refresh-devices", "mae-backbone", "mae-base-url",
    "mae-model", "mae-max-steps", "mae-evolve", "mae-safety", "mae-phone", "mae-overlay", "mae-manual-back",
    "mae-manual-home", "mae-manual-switch_app", "mae-status", "mae-progress", "mae-approval", "mae-approve",
    "mae-reject", "mae-timeline", "mae-tips", "mae-shortcut-table", "mae-shortcuts", "mae-memory-history",
    "mae-rollback", "mae-runs", "mae-replay-image", "mae-replay-step", "mae-zip", "mae-gif", "mae-download",
    "mae-key-openai_api_key", "mae-key-custom",
}  # fmt: skip


def test_the_demo_has_every_component(tmp_path: Path) -> None:
    import app

    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    demo = app.build_demo(backend, lister=lambda: [])
    found = {block.elem_id for block in demo.blocks.values() if getattr(block, "elem_id", None)}
    assert found >= ELEM_IDS, sorted(ELEM_IDS - found)
    keys = [b for b in demo.blocks.values() if getattr(b, "elem_id", "") and b.elem_id.startswith("mae-key-")]
    assert keys and all(getattr(b, "type", None) == "password" for b in keys)


def test_closing_the_tab_stops_its_run() -> None:
    import app

    stopped = threading.Event()

    def runner(job: Any, hooks: RunHooks) -> None:
        if hooks.stop_event.wait(10):
            stopped.set()

    session = app.UiSession(RunController(runner))
    session.controller.start(None)
    app._end_session(session)
    session.controller.join(10)
    assert stopped.is_set() and not session.controller.active
    app._end_session(None)  # a tab that never ran anything


def test_a_tab_has_one_session_and_closing_it_stops_the_run_at_once() -> None:
    import app

    stopped = threading.Event()

    def runner(job: Any, hooks: RunHooks) -> None:
        if hooks.stop_event.wait(10):
            stopped.set()

    class Request:  # what Gradio passes: the tab's session hash
        session_hash = "tab-1"

    made: list[Any] = []

    def make() -> Any:
        made.append(app.UiSession(RunController(runner)))
        return made[-1]

    first = app._tab_session(Request(), make)  # type: ignore[arg-type]
    assert app._tab_session(Request(), make) is first and len(made) == 1  # racing events share it
    first.controller.start(None)
    app._tab_closed(Request())  # type: ignore[arg-type]
    first.controller.join(10)
    assert stopped.is_set() and not first.controller.active
    assert app._tab_session(Request(), make) is not first  # a reloaded tab starts afresh
    app._tab_closed(Request())  # type: ignore[arg-type]
