"""The "Check this model" button exists in private mode only: in public mode it is neither built nor
registered (its handler would spend the server's calls and reach any base URL a visitor types)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ui_testkit import make_backend, settings_for

from mae.device.virtual import VirtualPhone

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def _doctor_parts(tmp_path: Path) -> tuple[set[str], list[str]]:
    import app

    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    demo = app.build_demo(backend, lister=lambda: [])
    ids = {
        b.elem_id
        for b in demo.blocks.values()
        if (getattr(b, "elem_id", None) or "").startswith("mae-doctor")
    }
    handlers = [
        f"{d.fn.__module__}.{d.fn.__qualname__}"
        for d in demo.fns.values()
        if d.fn is not None and d.fn.__module__ == "mae.ui.doctor_panel"
    ]
    return ids, handlers


def test_private_demo_has_the_button_and_its_handler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPACE_ID", raising=False)
    ids, handlers = _doctor_parts(tmp_path)
    assert ids == {"mae-doctor", "mae-doctor-verdict", "mae-doctor-picture"}
    assert len(handlers) == 1


def test_public_demo_neither_shows_nor_registers_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPACE_ID", "someone/mae-demo")
    ids, handlers = _doctor_parts(tmp_path)
    assert ids == set() and handlers == []
