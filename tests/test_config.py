"""Settings: precedence (defaults < profile < MAE_* < overrides), per-role models, refusals, config CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mae.cli import main
from mae.config import ENV_FIELDS, load_settings
from mae.errors import ConfigError
from mae.llm.providers import AGENT_ROLES, PRESETS

ROOT = Path(__file__).resolve().parents[1]


def _profile(tmp_path: Path, text: str, name: str = "profile.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _no_mae_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("MAE_"):
            monkeypatch.delenv(name)


def test_defaults() -> None:
    settings = load_settings(environ={})
    assert settings.backbone == "openai"
    assert settings.loop.max_steps == 40
    assert settings.loop.operator_history == 5 and settings.loop.escalate_after_errors == 2
    assert settings.perception.ocr == "rapidocr" and settings.perception.icons == "contour"
    assert settings.roles == {}


def test_precedence_defaults_profile_env_overrides(tmp_path: Path) -> None:
    profile = _profile(
        tmp_path,
        """
backbone = "anthropic"
device = "emulator-5554"
[loop]
max_steps = 20
operator_history = 4
[perception]
ocr = "paddleocr"
icons = "groundingdino"
""",
    )
    from_profile = load_settings(profile=profile, environ={})
    assert from_profile.backbone == "anthropic"
    assert from_profile.loop.max_steps == 20 and from_profile.loop.operator_history == 4
    assert from_profile.loop.max_consecutive_errors == 3  # untouched default
    assert from_profile.perception.ocr == "paddleocr"

    environ = {"MAE_MAX_STEPS": "30", "MAE_BACKBONE": "google", "MAE_ICONS": "none"}
    from_env = load_settings(profile=profile, environ=environ)
    assert from_env.backbone == "google" and from_env.loop.max_steps == 30
    assert from_env.perception.icons == "none"
    assert from_env.perception.ocr == "paddleocr"  # the profile still counts below the environment
    assert from_env.loop.operator_history == 4

    final = load_settings(
        profile=profile,
        environ=environ,
        overrides={"loop.max_steps": 10, "backbone": None, "device": "virtual"},
    )
    assert final.loop.max_steps == 10
    assert final.backbone == "google"  # None overrides change nothing
    assert final.device == "virtual"


def test_mae_profile_variable_names_the_profile(tmp_path: Path) -> None:
    profile = _profile(tmp_path, 'backbone = "dashscope"\n')
    assert load_settings(environ={"MAE_PROFILE": str(profile)}).backbone == "dashscope"
    other = _profile(tmp_path, 'backbone = "vllm"\n', name="other.toml")
    assert load_settings(profile=other, environ={"MAE_PROFILE": str(profile)}).backbone == "vllm"


def test_default_roles_follow_the_preset() -> None:
    settings = load_settings(environ={})
    for role in AGENT_ROLES:
        profile = settings.profile_for(role)
        assert profile.provider == "openai"
        assert profile.base_url == PRESETS["openai"].base_url
        assert profile.api_key_env == "OPENAI_API_KEY"
        expected = PRESETS["openai"].caption_model if role == "captioner" else PRESETS["openai"].model
        assert profile.model == expected


def test_vllm_backbone_roles() -> None:
    settings = load_settings(environ={"MAE_BACKBONE": "vllm"})
    operator = settings.profile_for("operator")
    assert operator.base_url == "http://127.0.0.1:8000/v1"
    assert operator.model == "Qwen/Qwen2.5-VL-7B-Instruct"
    assert operator.api_key_env is None
    assert operator.coordinate_space == "image" and operator.image.resize == "qwen"
    moved = load_settings(
        environ={
            "MAE_BACKBONE": "vllm",
            "MAE_BASE_URL": "http://127.0.0.1:8001/v1",
            "MAE_MODEL": "Qwen/Qwen2.5-VL-3B-Instruct",
        }
    )
    for role in AGENT_ROLES:
        profile = moved.profile_for(role)
        assert profile.base_url == "http://127.0.0.1:8001/v1"
        assert profile.model == "Qwen/Qwen2.5-VL-3B-Instruct"  # a global model applies to captions too


def test_role_overrides(tmp_path: Path) -> None:
    profile = _profile(
        tmp_path,
        """
backbone = "vllm"
base_url = "http://127.0.0.1:9000/v1"
[roles.manager]
backbone = "anthropic"
[roles.captioner]
model = "Qwen/Qwen2.5-VL-3B-Instruct"
""",
    )
    environ = {
        "MAE_REFLECTOR_BACKBONE": "custom",
        "MAE_REFLECTOR_BASE_URL": "http://127.0.0.1:7000/v1",
        "MAE_REFLECTOR_MODEL": "judge",
        "MAE_REFLECTOR_API_KEY_ENV": "JUDGE_KEY",
    }
    settings = load_settings(profile=profile, environ=environ)
    manager = settings.profile_for("manager")
    assert manager.provider == "anthropic"
    assert manager.base_url == PRESETS["anthropic"].base_url  # its own backbone: no global URL inherited
    assert manager.model == PRESETS["anthropic"].model and manager.api_key_env == "ANTHROPIC_API_KEY"
    captioner = settings.profile_for("captioner")
    assert captioner.provider == "vllm" and captioner.model == "Qwen/Qwen2.5-VL-3B-Instruct"
    assert captioner.base_url == "http://127.0.0.1:9000/v1"
    reflector = settings.profile_for("reflector")
    assert (reflector.provider, reflector.base_url, reflector.model, reflector.api_key_env) == (
        "custom",
        "http://127.0.0.1:7000/v1",
        "judge",
        "JUDGE_KEY",
    )
    operator = settings.profile_for("operator")
    assert operator.provider == "vllm" and operator.base_url == "http://127.0.0.1:9000/v1"


def test_custom_backbone_needs_url_and_model() -> None:
    settings = load_settings(environ={"MAE_BACKBONE": "custom", "MAE_MODEL": "m"})
    with pytest.raises(ConfigError, match="needs a base URL and a model"):
        settings.profile_for("operator")
    ok = load_settings(
        environ={
            "MAE_BACKBONE": "custom",
            "MAE_MODEL": "m",
            "MAE_BASE_URL": "http://h/v1",
            "MAE_API_KEY_ENV": "MY_KEY",
        }
    )
    profile = ok.profile_for("notetaker")
    assert (profile.provider, profile.base_url, profile.model, profile.api_key_env) == (
        "custom",
        "http://h/v1",
        "m",
        "MY_KEY",
    )


def test_unknown_role_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown agent role 'planner'"):
        load_settings(environ={}).profile_for("planner")
    profile = _profile(tmp_path, '[roles.planner]\nmodel = "x"\n')
    with pytest.raises(ConfigError, match="unknown agent role 'planner'"):
        load_settings(profile=profile, environ={})


@pytest.mark.parametrize(
    "text",
    [
        'api_key = "sk-abc"\n',
        'backbone = "openai"\nOPENAI_API_KEY = "sk-abc"\n',
        '[roles.manager]\nbackbone = "anthropic"\napi_key = "sk-abc"\n',
        '[perception]\nkey = "sk-abc"\n',
    ],
)
def test_api_keys_in_profile_files_are_refused(tmp_path: Path, text: str) -> None:
    profile = _profile(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(profile=profile, environ={})
    assert "contains an API key" in str(caught.value) and "api_key_env" in str(caught.value)
    assert "sk-abc" not in str(caught.value)


def test_naming_the_key_variable_is_fine(tmp_path: Path) -> None:
    profile = _profile(tmp_path, 'api_key_env = "MY_OPENAI_KEY"\n[roles.manager]\napi_key_env = "OTHER"\n')
    settings = load_settings(profile=profile, environ={})
    assert settings.profile_for("operator").api_key_env == "MY_OPENAI_KEY"
    assert settings.profile_for("manager").api_key_env == "OTHER"


@pytest.mark.parametrize(
    ("environ", "fragment"),
    [
        ({"MAE_MAX_STEPS": "many"}, "loop.max_steps"),
        ({"MAE_MAX_STEPS": "0"}, "loop.max_steps"),
        ({"MAE_OCR": "tesseract"}, "perception.ocr"),
        ({"MAE_ICONS": "yolo"}, "perception.icons"),
        ({"MAE_BACKBONE": "gpt5-local"}, "unknown backbone 'gpt5-local'"),
    ],
)
def test_invalid_environment_values(environ: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.")):
        load_settings(environ=environ)


def test_invalid_profile_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(profile=tmp_path / "missing.toml", environ={})
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(profile=_profile(tmp_path, "backbone = \n"), environ={})
    with pytest.raises(ConfigError, match=r"loop\.max_stepz"):
        load_settings(profile=_profile(tmp_path, "[loop]\nmax_stepz = 3\n", "typo.toml"), environ={})
    with pytest.raises(ConfigError, match=r"loop\.max_steps"):
        load_settings(profile=_profile(tmp_path, "[loop]\nmax_steps = -1\n", "neg.toml"), environ={})
    with pytest.raises(ConfigError, match="unknown backbone"):
        load_settings(profile=_profile(tmp_path, 'backbone = "nope"\n', "bb.toml"), environ={})
    with pytest.raises(ConfigError, match=r"loop\.max_steps"):
        load_settings(overrides={"loop.max_steps": "lots"}, environ={})


def test_every_environment_variable_is_documented() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [name for name in ENV_FIELDS if name not in text]
    assert not missing, f"document these in docs/configuration.md: {missing}"
    assert all(f"MAE_<ROLE>_{field}" in text for field in ("BACKBONE", "BASE_URL", "MODEL", "API_KEY_ENV"))
    for name in PRESETS:
        assert f"`{name}`" in text
    for role in AGENT_ROLES:
        assert f"`{role}`" in text


# --- python -m mae config ---------------------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_config_show_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = _profile(
        tmp_path, 'backbone = "vllm"\n[roles.manager]\nbackbone = "openai"\n[loop]\nmax_steps = 12\n'
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-shown")
    monkeypatch.setenv("MAE_MAX_STEPS", "15")
    code, out, _err = _run(capsys, "config", "show", "--profile", str(profile))
    assert code == 0
    assert f"profile file: {profile}" in out
    assert "loop.max_steps = 15" in out
    assert 'backbone = "vllm"' in out and "roles.manager: backbone=openai" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ") and line.split()}
    assert "openai: gpt-6.1-sol at https://api.openai.com/v1 (key $OPENAI_API_KEY set)" in lines["manager"]
    assert (
        "vllm: Qwen/Qwen2.5-VL-7B-Instruct at http://127.0.0.1:8000/v1 (no key needed)" in lines["operator"]
    )
    assert "sk-never-shown" not in out


def test_config_show_json_and_missing_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAE_BACKBONE", "anthropic")
    monkeypatch.setenv("MAE_CAPTIONER_BACKBONE", "vllm")
    code, out, _err = _run(capsys, "config", "show", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["settings"]["backbone"] == "anthropic"
    assert set(data["roles"]) == set(AGENT_ROLES)
    assert data["roles"]["operator"]["api_key_env"] == "ANTHROPIC_API_KEY"
    assert data["roles"]["operator"]["api_key_set"] is False
    assert (
        data["roles"]["captioner"]["api_key_set"] is None and data["roles"]["captioner"]["provider"] == "vllm"
    )
    code, out, _err = _run(capsys, "config", "show")
    assert "key $ANTHROPIC_API_KEY NOT SET" in out and "note: set ANTHROPIC_API_KEY" in out


def test_config_show_reports_broken_roles(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAE_BACKBONE", "custom")
    code, out, _err = _run(capsys, "config", "show")
    assert code == 2
    assert "operator" in out and "error: the 'custom' backbone needs a base URL" in out
    monkeypatch.setenv("MAE_BACKBONE", "openai")
    monkeypatch.setenv("MAE_API_KEY_ENV", "sk-pasted-by-mistake")
    code, out, _err = _run(capsys, "config", "show")
    assert code == 2 and "must NAME an environment variable" in out and "sk-pasted-by-mistake" not in out
    monkeypatch.setenv("MAE_MAX_STEPS", "x")
    code, _out, err = _run(capsys, "config", "show")
    assert code == 2 and "loop.max_steps" in err


def test_config_presets(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, "config", "presets")
    assert code == 0
    for name, preset in PRESETS.items():
        assert name in out and preset.model in out and preset.base_url in out
    assert "MAE_BACKBONE=custom" in out
    code, out, _err = _run(capsys, "config", "presets", "--json")
    assert json.loads(out)["vllm"]["base_url"] == "http://127.0.0.1:8000/v1"


def test_parallel_notetaker_setting_from_environment_profile_and_cli(tmp_path: Path) -> None:
    from mae.cli import build_parser
    from mae.cli.run_cmd import settings_from_args

    assert load_settings(environ={}).loop.parallel_notetaker is False  # the paper's order by default
    assert load_settings(environ={"MAE_PARALLEL_NOTETAKER": "true"}).loop.parallel_notetaker is True
    profile = tmp_path / "p.toml"
    profile.write_text("[loop]\nparallel_notetaker = true\n", encoding="utf-8")
    assert load_settings(profile, environ={}).loop.parallel_notetaker is True
    parser = build_parser()
    on = parser.parse_args(["run", "task", "--parallel-notetaker"])
    off = parser.parse_args(["run", "task", "--profile", str(profile), "--no-parallel-notetaker"])
    assert settings_from_args(on).loop.parallel_notetaker is True
    assert settings_from_args(off).loop.parallel_notetaker is False
