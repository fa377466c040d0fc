"""Settings: defaults, then a profile file, then ``MAE_*`` environment variables, then CLI flags.

A profile file is TOML whose keys are the fields of ``Settings`` (tables for ``perception``, ``loop``
and ``roles.<role>``). ``MAE_PROFILE`` names one; ``--profile`` overrides it. API keys are never read
from profile files: a profile names the *environment variable* that holds the key.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from platformdirs import user_cache_dir, user_data_dir
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mae.errors import ConfigError
from mae.llm.coordinates import family_convention
from mae.llm.providers import AGENT_ROLES, PRESETS, ModelProfile, preset

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


REASONING_EFFORT = r"^(off|none|minimal|low|medium|high|xhigh|max)$"
REASONING_HELP = (
    "reasoning effort sent to reasoning models (minimal, low, medium, high, ...); 'off' sends none; "
    "empty = the preset's (low for OpenAI's reasoning models)"
)


class RoleModel(BaseModel):
    """Per-agent override of the backbone: any field left empty falls back to the global one."""

    model_config = ConfigDict(extra="forbid")

    backbone: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout_s: float | None = Field(None, gt=0, le=3600, description="total seconds one model call may take")
    max_retries: int | None = Field(None, ge=0, le=10, description="retries after a provider failure")
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1, le=200_000, description="longest reply asked for")
    reasoning_effort: str | None = Field(None, pattern=REASONING_EFFORT, description=REASONING_HELP)


CALL_FIELDS = ("timeout_s", "max_retries", "temperature", "max_tokens", "reasoning_effort")
"""Model call settings a role may override (else the global value, else the provider default)."""


class PerceptionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ocr: Literal["rapidocr", "paddleocr"] = "rapidocr"
    ocr_device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="where rapidocr runs: the GPU when onnxruntime-gpu is installed (auto), or forced"
    )
    ocr_mem_arena: bool = Field(
        True,
        description="keep onnxruntime's memory arena for rapidocr on the CPU (5 to 10 % less OCR CPU "
        "time); off returns memory after each screen, the default of a public demo",
    )
    icons: Literal["contour", "groundingdino", "none"] = "contour"
    captions: str = Field(
        "auto",
        description="'auto' (on when the preset's caption model is cheap), 'none', 'backbone' (the "
        "captioner role's model) or a model name",
    )
    a11y: Literal["auto", "on", "off"] = Field(
        "auto", description="use the phone's accessibility tree (names icons, marks buttons and fields)"
    )
    keyboard_keys: bool = Field(
        False, description="list the keyboard's keys one by one instead of one 'keyboard shown' line"
    )
    groundingdino_model: str = "IDEA-Research/grounding-dino-tiny"
    cache_dir: Path = Field(default_factory=lambda: Path(user_cache_dir("mae")))


FAST_PROFILE: dict[str, Any] = {
    "manager_every": 4,
    "notes_in_reflector": True,
    "dismiss_popups": True,
    "speculative_operator": True,
}
"""What ``loop.fast`` turns on (each switch can still be set on its own; an explicit value wins)."""


class LoopSettings(BaseModel):
    """The paper's constants, as configurable defaults."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(40, ge=1)
    max_consecutive_errors: int = Field(3, ge=1)
    max_repeated_actions: int = Field(3, ge=1, description="exit when the same action repeats more than this")
    escalate_after_errors: int = Field(2, ge=1, description="k: failures before the Manager sees the errors")
    operator_history: int = Field(5, ge=1, description="m: recent actions shown to the Operator")
    settle_timeout_s: float = Field(3.0, ge=0)
    parallel_notetaker: bool = Field(
        False,
        description="run the Notetaker beside the Action Reflector (one model round trip less per step; "
        "the Notetaker then sees the progress of the step before). The paper runs it after.",
    )
    skip_planning_while_loading: bool = Field(
        True,
        description="Mobile-Agent-E only: on a screen that is still loading (blank, or a spinner), keep the "
        "plan and the notes instead of asking the Manager and the Notetaker (two model calls less on such "
        "steps). On by default (issue 38: with a real model, every such Manager reply only said to wait and "
        "no such Notetaker reply changed the notes; docs/agents.md); off gives the paper's order exactly.",
    )
    agent: Literal["e", "v2", "v1"] = Field(
        "e", description="the agent: e (Mobile-Agent-E), v2 (Mobile-Agent-v2) or v1 (Mobile-Agent v1)"
    )
    fast: bool = Field(
        False,
        description="Mobile-Agent-E's fast mode: turns on every switch below that is not set explicitly "
        "(docs/agents.md, 'Fast mode'). Off by default: the paper's order.",
    )
    manager_every: int = Field(
        1,
        ge=1,
        le=40,
        description="Mobile-Agent-E: ask the Manager at the start, after a failed action, when the Action "
        "Reflector says the subgoal is done, and otherwise every N steps; 1 = every step (the paper)",
    )
    notes_in_reflector: bool = Field(
        False,
        description="Mobile-Agent-E: the Action Reflector writes the notes in the same request (one model "
        "call less per step) instead of a separate Notetaker call",
    )
    dismiss_popups: bool = Field(
        False,
        description="Mobile-Agent-E: on a screen showing a pop-up with a known dismiss button, the "
        "Operator dismisses it without a Manager round",
    )
    speculative_operator: bool = Field(
        False,
        description="Mobile-Agent-E: start the next step's Operator while the Action Reflector judges; its "
        "action is used only on outcome A with the screen unchanged (needs manager_every > 1: with the "
        "Manager asked every step it would always be discarded)",
    )

    @model_validator(mode="after")
    def _fast_profile(self) -> LoopSettings:
        if self.fast:
            for name, value in FAST_PROFILE.items():
                if name not in self.model_fields_set:
                    setattr(self, name, value)
        return self


class EvolutionSettings(BaseModel):
    """Long-term memory: self-evolution after tasks, Shortcut safety, and retrieval (docs/memory.md)."""

    model_config = ConfigDict(extra="forbid")

    evolve: bool = Field(default=True, description="run the Experience Reflectors after every task")
    precondition: Literal["operator", "verify", "off"] = Field(
        default="operator", description="how a Shortcut's precondition is checked before it runs"
    )
    flag_after_failures: int = Field(
        default=2, ge=1, description="consecutive failures before a Shortcut is flagged"
    )
    withhold_after_failures: int = Field(
        default=3, ge=1, description="consecutive failures before it is withheld"
    )
    retrieve_tips_over: int = Field(
        default=25, ge=0, description="select relevant Tips above this many; 0 = never"
    )
    retrieve_shortcuts_over: int = Field(
        default=10, ge=0, description="select relevant Shortcuts above this; 0 = never"
    )


class Settings(BaseModel):
    """Everything a run needs besides the task."""

    model_config = ConfigDict(extra="forbid")

    backbone: str = Field("openai", description="a preset name (see mae.llm.providers) or 'custom'")
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    coordinates: str | None = Field(
        None,
        description="coordinate convention (mae.llm.coordinates); None = the model family's own for "
        "'vllm'/'custom' backbones, the preset's otherwise",
    )
    roles: dict[str, RoleModel] = Field(default_factory=dict)
    timeout_s: float | None = Field(None, gt=0, le=3600, description="total seconds one model call may take")
    max_retries: int | None = Field(None, ge=0, le=10, description="retries after a provider failure")
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1, le=200_000, description="longest reply asked for")
    reasoning_effort: str | None = Field(None, pattern=REASONING_EFFORT, description=REASONING_HELP)
    max_retry_wait_s: float | None = Field(None, ge=0, le=3600, description="cap on a Retry-After wait")
    device: str | None = Field(None, description="ADB serial, 'virtual', or None for auto")
    log_dir: Path = Path("runs")
    memory_dir: Path = Field(default_factory=lambda: Path(user_data_dir("mae")) / "memory")
    perception: PerceptionSettings = Field(default_factory=PerceptionSettings)
    loop: LoopSettings = Field(default_factory=LoopSettings)
    evolution: EvolutionSettings = Field(default_factory=EvolutionSettings)

    def profile_for(self, role: str) -> ModelProfile:
        """The model profile an agent role uses: its override, else the global backbone."""
        if role not in AGENT_ROLES:
            raise ConfigError(f"unknown agent role {role!r}; roles are {', '.join(AGENT_ROLES)}")
        override = self.roles.get(role, RoleModel())
        backbone = override.backbone or self.backbone
        base_url = override.base_url or (self.base_url if not override.backbone else None)
        model = override.model or (self.model if not override.backbone else None)
        key_env = override.api_key_env or (self.api_key_env if not override.backbone else None)
        if backbone == "custom":
            if not base_url or not model:
                raise ConfigError(
                    "the 'custom' backbone needs a base URL and a model: set MAE_BASE_URL and MAE_MODEL "
                    "(or --base-url/--model)"
                )
            profile = ModelProfile(provider="custom", base_url=base_url, model=model, api_key_env=key_env)
        else:
            chosen = preset(backbone)
            if role == "captioner" and not model:
                model = chosen.caption_model
            profile = chosen.profile(model)
            if base_url:
                profile.base_url = base_url
            if key_env:
                profile.api_key_env = key_env
        _check_base_url(profile.base_url)
        local = profile.provider in ("vllm", "custom")
        convention = self.coordinates or (family_convention(profile.model) if local else None)
        if convention:
            profile = profile.with_convention(convention)
        calls = {name: getattr(override, name) for name in CALL_FIELDS}
        calls |= {n: getattr(self, n) for n in CALL_FIELDS if calls[n] is None}
        if self.max_retry_wait_s is not None:
            calls["max_retry_wait_s"] = self.max_retry_wait_s
        profile = profile.model_copy(update={k: v for k, v in calls.items() if v is not None})
        if profile.reasoning_effort == "off":
            profile.reasoning_effort = None
        return profile


def _check_base_url(url: str) -> None:
    """``ConfigError`` unless ``url`` is an http(s) address with a host (caught now, not after retries)."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        shown = url.strip()[:80]
        raise ConfigError(
            f"the base URL {shown!r} is not a web address: write it like http://127.0.0.1:8000/v1 "
            "(with http:// or https://)"
        )


ENV_FIELDS: dict[str, str] = {
    "MAE_BACKBONE": "backbone",
    "MAE_BASE_URL": "base_url",
    "MAE_MODEL": "model",
    "MAE_API_KEY_ENV": "api_key_env",
    "MAE_COORDINATES": "coordinates",
    "MAE_DEVICE": "device",
    "MAE_LOG_DIR": "log_dir",
    "MAE_MEMORY_DIR": "memory_dir",
    "MAE_OCR": "perception.ocr",
    "MAE_OCR_DEVICE": "perception.ocr_device",
    "MAE_OCR_MEM_ARENA": "perception.ocr_mem_arena",
    "MAE_ICONS": "perception.icons",
    "MAE_CAPTIONS": "perception.captions",
    "MAE_A11Y": "perception.a11y",
    "MAE_GROUNDINGDINO_MODEL": "perception.groundingdino_model",
    "MAE_CACHE_DIR": "perception.cache_dir",
    "MAE_MAX_STEPS": "loop.max_steps",
    "MAE_PARALLEL_NOTETAKER": "loop.parallel_notetaker",
    "MAE_SKIP_PLANNING_WHILE_LOADING": "loop.skip_planning_while_loading",
    "MAE_AGENT": "loop.agent",
    "MAE_FAST": "loop.fast",
    "MAE_MANAGER_EVERY": "loop.manager_every",
    "MAE_NOTES_IN_REFLECTOR": "loop.notes_in_reflector",
    "MAE_DISMISS_POPUPS": "loop.dismiss_popups",
    "MAE_SPECULATIVE_OPERATOR": "loop.speculative_operator",
    "MAE_EVOLVE": "evolution.evolve",
    "MAE_PRECONDITION": "evolution.precondition",
    "MAE_TIMEOUT": "timeout_s",
    "MAE_MAX_RETRIES": "max_retries",
    "MAE_TEMPERATURE": "temperature",
    "MAE_MAX_TOKENS": "max_tokens",
    "MAE_REASONING_EFFORT": "reasoning_effort",
    "MAE_MAX_RETRY_WAIT": "max_retry_wait_s",
}
"""Environment variables and the setting each one sets. Per-role: ``MAE_<ROLE>_MODEL`` etc."""

ROLE_ENV_FIELDS = ("backbone", "base_url", "model", "api_key_env")
ROLE_CALL_ENV = {"TIMEOUT": "timeout_s", "MAX_RETRIES": "max_retries", "TEMPERATURE": "temperature"}
ROLE_CALL_ENV["MAX_TOKENS"] = "max_tokens"
ROLE_CALL_ENV["REASONING_EFFORT"] = "reasoning_effort"
"""``MAE_<ROLE>_TIMEOUT`` etc. and the role field each sets."""


def _set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    keys = dotted.split(".")
    for key in keys[:-1]:
        data = data.setdefault(key, {})
    data[keys[-1]] = value


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_profile(path: Path) -> dict[str, Any]:
    """Read a TOML profile file; ``ConfigError`` saying where it is broken."""
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"profile file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"profile file {path} is not valid TOML: {exc}") from None
    except IsADirectoryError:
        raise ConfigError(f"profile file {path} is a folder: name a .toml file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"profile file {path} is not UTF-8 text: save it as UTF-8") from None
    except RecursionError:
        raise ConfigError(f"profile file {path} is nested too deeply to be a settings profile") from None
    except OSError as exc:
        raise ConfigError(f"cannot read profile file {path}: {exc.strerror or exc}") from None
    if any(k.lower() == "key" or k.lower().endswith("api_key") for k in _all_keys(data)):
        raise ConfigError(
            f"profile file {path} contains an API key: name the environment variable instead (api_key_env)"
        )
    return data


def _all_keys(data: Mapping[str, Any]) -> list[str]:
    keys: list[str] = []
    for key, value in data.items():
        keys.append(key)
        if isinstance(value, Mapping):
            keys.extend(_all_keys(value))
    return keys


def env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    """Settings from ``MAE_*`` environment variables."""
    data: dict[str, Any] = {}
    for name, dotted in ENV_FIELDS.items():
        if environ.get(name):
            _set_path(data, dotted, environ[name])
    for role in AGENT_ROLES:
        for field in ROLE_ENV_FIELDS:
            value = environ.get(f"MAE_{role.upper()}_{field.upper()}")
            if value:
                _set_path(data, f"roles.{role}.{field}", value)
        for suffix, field in ROLE_CALL_ENV.items():
            value = environ.get(f"MAE_{role.upper()}_{suffix}")
            if value:
                _set_path(data, f"roles.{role}.{field}", value)
    return data


def load_settings(
    profile: Path | str | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Defaults < profile file (``profile`` or ``$MAE_PROFILE``) < ``MAE_*`` variables < ``overrides``.

    ``overrides`` uses dotted keys for nested settings (``{"loop.max_steps": 10}``); ``None`` values are
    ignored, so CLI flags that were not given change nothing.
    """
    environ = os.environ if environ is None else environ
    data: dict[str, Any] = {}
    profile_path = profile or environ.get("MAE_PROFILE")
    if profile_path:
        data = read_profile(Path(profile_path))
    data = _merge(data, env_overrides(environ))
    flat: dict[str, Any] = {}
    for dotted, value in (overrides or {}).items():
        if value is not None:
            _set_path(flat, dotted, value)
    data = _merge(data, flat)
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid settings: {problems}") from None
    if settings.backbone != "custom" and settings.backbone not in PRESETS:
        preset(settings.backbone)  # raises with the list of known backbones
    for role in settings.roles:
        if role not in AGENT_ROLES:
            raise ConfigError(f"unknown agent role {role!r} in settings; roles are {', '.join(AGENT_ROLES)}")
    return settings
