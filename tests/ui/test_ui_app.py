"""The Blocks app builds with every component the browser tests and users rely on."""

from __future__ import annotations

import os
from pathlib import Path

from ui_testkit import make_backend, settings_for

from mae.device.virtual import VirtualPhone

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

ELEM_IDS = {
    "mae-task", "mae-run", "mae-stop", "mae-device", "mae-refresh-devices", "mae-backbone", "mae-base-url",
    "mae-model", "mae-max-steps", "mae-evolve", "mae-safety", "mae-phone", "mae-overlay", "mae-manual-back",
    "mae-manual-home", "mae-manual-switch_app", "mae-status", "mae-progress", "mae-approval", "mae-approve",
    "mae-reject", "mae-timeline", "mae-tips", "mae-shortcut-table", "mae-shortcuts", "mae-memory-history",
    "mae-rollback", "mae-runs", "mae-replay-image", "mae-replay-step", "mae-zip", "mae-gif", "mae-download",
    "mae-key-openai_api_key", "mae-key-custom", "mae-reset-phone", "mae-fresh-start", "mae-html",
    "mae-runs-table",
}  # fmt: skip


def test_the_demo_has_every_component(tmp_path: Path) -> None:
    import app

    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    demo = app.build_demo(backend, lister=lambda: [])
    found = {block.elem_id for block in demo.blocks.values() if getattr(block, "elem_id", None)}
    assert found >= ELEM_IDS, sorted(ELEM_IDS - found)
    keys = [b for b in demo.blocks.values() if getattr(b, "elem_id", "") and b.elem_id.startswith("mae-key-")]
    assert keys and all(getattr(b, "type", None) == "password" for b in keys)


def test_the_page_remembers_settings_but_never_keys(tmp_path: Path) -> None:
    import gradio as gr

    import app

    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    demo = app.build_demo(backend, lister=lambda: [])
    stores = [b for b in demo.blocks.values() if isinstance(b, gr.BrowserState)]
    assert len(stores) == 1 and stores[0].storage_key == app.SETTINGS_KEY
    keys = {b._id for b in demo.blocks.values() if getattr(b, "type", None) == "password"}
    for dependency in demo.fns.values():
        if any(getattr(o, "_id", None) == stores[0]._id for o in dependency.outputs):
            assert not keys & {getattr(i, "_id", None) for i in dependency.inputs}


def test_the_tab_bar_holds_only_tabs(tmp_path: Path) -> None:
    """A component made between two tabs (a timer, say) shifts the tab titles in the browser: the
    History tab was shown as a second "Memory" tab."""
    import gradio as gr

    import app

    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    demo = app.build_demo(backend, lister=lambda: [])
    (tabs,) = [b for b in demo.blocks.values() if isinstance(b, gr.Tabs)]
    assert [c.label for c in tabs.children if isinstance(c, gr.Tab)] == [
        "Run",
        "Memory",
        "History",
        "Evaluate",
    ]
    assert all(isinstance(c, gr.Tab) for c in tabs.children), [type(c).__name__ for c in tabs.children]
