"""The settings form, the command line and the server options of the demo."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mae.config import Settings, load_settings
from mae.errors import ConfigError
from mae.ui.forms import CUSTOM_KEY_ENV, SAME, RunForm, missing_keys, session_keys, settings_from_form
from mae.ui.launch import approval_timeout, parse_args, parse_auth, server_options, settings_overrides

ROOT = Path(__file__).resolve().parents[2]


def base() -> Settings:
    return load_settings(environ={})


def test_preset_backbone_with_per_agent_overrides() -> None:
    form = RunForm(
        task="t",
        device="virtual",
        backbone="anthropic",
        model="",
        max_steps=12,
        evolution=False,
        role_backbones={"manager": "openai", "operator": SAME},
        role_models={"operator": "claude-x", "manager": ""},
    )
    settings = settings_from_form(base(), form)
    assert (
        settings.loop.max_steps == 12 and settings.evolution.evolve is False and settings.device == "virtual"
    )
    assert settings.profile_for("operator").model == "claude-x"
    assert settings.profile_for("operator").api_key_env == "ANTHROPIC_API_KEY"
    assert settings.profile_for("manager").model == "gpt-6.1-sol"
    assert settings.profile_for("reflector").provider == "anthropic"


def test_custom_backbone_needs_url_and_model_and_uses_the_session_key() -> None:
    with pytest.raises(ConfigError, match="base URL"):
        settings_from_form(base(), RunForm(task="t", backbone="custom", base_url="", model="m"))
    keys = session_keys({CUSTOM_KEY_ENV: "  sk-test  ", "OPENAI_API_KEY": "", "GEMINI_API_KEY": None})
    assert keys == {CUSTOM_KEY_ENV: "sk-test"}
    form = RunForm(
        task="t", backbone="custom", base_url="http://127.0.0.1:8000/v1", model="qwen", api_keys=keys
    )
    settings = settings_from_form(base(), form)
    profile = settings.profile_for("operator")
    assert (profile.base_url, profile.model, profile.api_key_env) == (
        "http://127.0.0.1:8000/v1",
        "qwen",
        CUSTOM_KEY_ENV,
    )
    assert missing_keys(settings, keys, {}) == []
    assert "sk-test" not in repr(form) and "sk-test" not in str(form)
    assert "sk-test" not in settings.model_dump_json()


def test_missing_keys_are_named() -> None:
    settings = settings_from_form(base(), RunForm(task="t", backbone="openai", evolution=True))
    assert missing_keys(settings, {}, {}) == ["OPENAI_API_KEY"]
    assert missing_keys(settings, {"OPENAI_API_KEY": "k"}, {}) == []
    assert missing_keys(settings, {}, {"OPENAI_API_KEY": "k"}) == []
    with pytest.raises(ConfigError, match="unknown backbone"):
        settings_from_form(base(), RunForm(task="t", backbone="nope"))


def test_server_options_default_to_loopback_and_honour_gradio_variables() -> None:
    options = server_options(parse_args([]), {})
    assert (options.host, options.port, options.share, options.auth) == ("127.0.0.1", 7860, False, None)
    env = {
        "GRADIO_SERVER_NAME": "0.0.0.0",
        "GRADIO_SERVER_PORT": "7861",
        "MAE_SHARE": "1",
        "MAE_AUTH": "ann:pw:x",
    }
    options = server_options(parse_args([]), env)
    assert (options.host, options.port, options.share, options.auth) == (
        "0.0.0.0",
        7861,
        True,
        ("ann", "pw:x"),
    )
    assert options.launch_kwargs()["auth"] == ("ann", "pw:x")
    options = server_options(parse_args(["--host", "127.0.0.2", "--port", "9000"]), env)
    assert (options.host, options.port) == ("127.0.0.2", 9000)
    with pytest.raises(ConfigError, match="user:password"):
        parse_auth("nopassword")
    with pytest.raises(ConfigError, match="port number"):
        server_options(parse_args([]), {"GRADIO_SERVER_PORT": "http"})
    assert approval_timeout({}) == 300.0 and approval_timeout({"MAE_APPROVAL_TIMEOUT": "45"}) == 45.0
    with pytest.raises(ConfigError, match="number of seconds"):
        approval_timeout({"MAE_APPROVAL_TIMEOUT": "soon"})


def test_command_line_flags_become_settings() -> None:
    args = parse_args(
        ["--device", "virtual", "--backbone", "custom", "--base-url", "http://h/v1", "--model", "m"]
    )
    settings = load_settings(overrides=settings_overrides(args), environ={})
    assert (settings.device, settings.backbone, settings.base_url, settings.model) == (
        "virtual",
        "custom",
        "http://h/v1",
        "m",
    )


def test_app_help_lists_the_options() -> None:
    done = subprocess.run(
        [sys.executable, "app.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    for flag in (
        "--device",
        "--backbone",
        "--base-url",
        "--model",
        "--profile",
        "--port",
        "--host",
        "--share",
    ):
        assert flag in done.stdout


def test_a_mangled_key_is_refused_naming_the_field_not_the_key() -> None:
    import pytest

    from mae.errors import ConfigError

    for bad in ("sk-abc\ndef", "sk-abc def", "sk-ключ"):
        with pytest.raises(ConfigError, match="OPENAI_API_KEY") as info:
            session_keys({"OPENAI_API_KEY": bad})
        assert bad not in str(info.value)


def test_the_call_fields_start_with_the_values_a_run_would_use() -> None:
    from mae.ui.forms import call_defaults

    assert call_defaults(Settings()) == (120.0, 3)  # the provider defaults
    assert call_defaults(Settings(timeout_s=300, max_retries=0)) == (300.0, 0)  # the server's settings


@pytest.mark.parametrize(
    "url", ["not a url at all", "127.0.0.1:8000/v1", "ftp://host/v1", "http://host:port/v1"]
)
def test_a_base_url_that_is_not_a_web_address_is_refused_before_any_call(url: str) -> None:
    form = RunForm(task="t", backbone="custom", base_url=url, model="m")
    with pytest.raises(ConfigError, match=r"is not a web address: write it like http://127\.0\.0\.1:8000/v1"):
        settings_from_form(base(), form)


def test_the_demo_command_says_where_it_runs_in_its_own_words(tmp_path: Path) -> None:
    import os
    import signal

    from ui_testkit import free_port

    port = free_port()
    env = {**os.environ, "MAE_LOG_DIR": str(tmp_path / "runs"), "MAE_MEMORY_DIR": str(tmp_path / "memory")}
    demo = subprocess.Popen(
        [sys.executable, "app.py", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert demo.stdout is not None
        first = demo.stdout.readline().strip()  # blocks until the demo answers (or exits)
        assert first == (
            f"mae demo: http://127.0.0.1:{port} (Ctrl-C stops it; add --share for a temporary public link)"
        )
        demo.send_signal(signal.SIGINT)
        # No clock of our own: the demo's exit (its stdout closing) is the signal, however busy the
        # machine is; pytest-timeout bounds a demo that never stops.
        output, _ = demo.communicate()
    finally:
        demo.kill()
    assert demo.returncode == 0 and "Traceback" not in output
    assert "share=True" not in first + output  # Gradio's hint names its launch() option, not our flag


def test_fast_mode_checkbox_turns_the_switches_on_and_off() -> None:
    plain = settings_from_form(base(), RunForm(task="t", fast=True)).loop
    assert plain.fast and plain.manager_every == 4 and plain.speculative_operator and plain.notes_in_reflector
    assert settings_from_form(base(), RunForm(task="t")).loop.manager_every == 1  # the paper's order
    server_fast = load_settings(environ={"MAE_FAST": "1", "MAE_MANAGER_EVERY": "6"})
    kept = settings_from_form(server_fast, RunForm(task="t", fast=True)).loop
    assert kept.manager_every == 6  # ticked as the server has it: the server's own switches stand
    unticked = settings_from_form(server_fast, RunForm(task="t", fast=False)).loop
    assert not unticked.fast and unticked.manager_every == 1 and not unticked.dismiss_popups


def test_the_model_field_notes_the_shutdown_date_of_the_papers_gpt4o() -> None:
    from mae.ui.forms import model_note

    assert model_note("openai-gpt4o").startswith("gpt-4o shuts down on 2027-01-14 (")
    assert model_note("openai") == "" and model_note("custom") == ""
