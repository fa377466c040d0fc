"""Space mode rules without a browser: key rules, per-session folders, and a Space-light install."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mae.config import Settings, load_settings
from mae.llm.keys import configure_server_keys
from mae.ui import space

ROOT = Path(__file__).resolve().parents[2]


def test_key_refusal_names_every_key_a_run_would_take_from_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SPACE_ID", "a/b")
    assert configure_server_keys(share=False, host="127.0.0.1")  # what app.py does at start-up
    settings = Settings(backbone="openai", roles={"captioner": {"backbone": "anthropic"}})
    refusal = space.key_refusal(settings, {})
    assert refusal and "OPENAI_API_KEY" in refusal and "ANTHROPIC_API_KEY" in refusal
    only = space.key_refusal(settings, {"OPENAI_API_KEY": "sk-visitor"})
    assert only and "OPENAI_API_KEY" not in only
    assert space.key_refusal(settings, {"OPENAI_API_KEY": "x", "ANTHROPIC_API_KEY": "y"}) is None
    local = Settings(backbone="custom", base_url="http://127.0.0.1:9/v1", model="m")
    assert space.key_refusal(local, {}) is None  # an endpoint without a key needs nothing from the server
    monkeypatch.delenv("SPACE_ID")
    assert configure_server_keys(share=False, host="127.0.0.1") is None
    assert space.key_refusal(settings, {}) is None  # a private demo may use the server's keys


def test_defaults_and_per_session_folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    base = Settings(backbone="openai")
    assert space.apply_defaults(base, {}) is base
    chosen = space.apply_defaults(base, {"SPACE_ID": "a/b"})
    assert chosen.device == "virtual" and chosen.loop.max_steps == space.SPACE_STEP_LIMIT
    assert base.perception.ocr_mem_arena and not chosen.perception.ocr_mem_arena
    kept = {"SPACE_ID": "a/b", "MAE_OCR_MEM_ARENA": "true"}  # the operator's choice is kept
    assert space.apply_defaults(load_settings(environ=kept), kept).perception.ocr_mem_arena
    off = {"MAE_OCR_MEM_ARENA": "false"}
    assert not load_settings(environ=off).perception.ocr_mem_arena
    assert space.apply_defaults(base, {"SPACE_ID": "a/b", "MAE_MAX_STEPS": "40"}).loop.max_steps == 40
    monkeypatch.setenv("SPACE_ID", "a/b")
    one = space.session_settings(chosen, "abcd1234session")
    two = space.session_settings(chosen, "zzzz9999session")
    assert one.log_dir != two.log_dir and one.memory_dir != two.memory_dir
    assert "abcd1234session" not in str(one.log_dir)  # the session id is never a path
    for bad in (None, "", "../../etc", "a b"):
        with pytest.raises(ValueError, match="reload the page"):
            space.session_settings(chosen, bad)
    assert space.session_phone("s1") is space.session_phone("s1")
    assert space.session_phone("s1") is not space.session_phone("s2")


def test_the_space_install_stays_light() -> None:
    requirements = (ROOT / "requirements.txt").read_text().lower()
    for heavy in ("torch", "vllm", "nvidia", "cuda", "transformers"):
        assert not re.search(rf"^{heavy}", requirements, re.M), heavy
    front = (ROOT / "README.md").read_text().split("---")[1]
    assert "sdk: gradio" in front and "app_file: app.py" in front
