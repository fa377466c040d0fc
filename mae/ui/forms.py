"""The demo's settings form: backbone choices, per-agent overrides and session API keys -> ``Settings``.

API keys typed into the form are returned separately (environment-variable name -> key) for
``ChatClient(api_keys=...)``; they never enter ``Settings``, a file or a log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from mae.config import FAST_PROFILE, LoopSettings, RoleModel, Settings
from mae.errors import ConfigError
from mae.llm.providers import AGENT_ROLES, KNOWN_SHUTDOWNS, PRESETS, ModelProfile
from mae.llm.served import shutdown_note

CUSTOM = "custom"
SAME = "(same as main)"
CUSTOM_KEY_ENV = "MAE_CUSTOM_API_KEY"
"""Name under which a key typed for a custom endpoint is handed to the client (never set in os.environ)."""

KEY_ENVS: tuple[str, ...] = tuple(
    dict.fromkeys(p.api_key_env for p in PRESETS.values() if p.api_key_env is not None)
)
"""The environment variables of the presets' keys, one password field each in the UI."""


def backbone_choices() -> list[tuple[str, str]]:
    """(label, value) pairs for the backbone dropdown: every preset, then a custom endpoint."""
    return [(p.label, name) for name, p in PRESETS.items()] + [("Custom OpenAI-compatible endpoint", CUSTOM)]


def model_note(backbone: str) -> str:
    """The Model field's note for ``backbone``: the shutdown date of the model its preset calls, when the
    provider has published one ('' otherwise)."""
    chosen = PRESETS.get(backbone)
    if chosen is None:
        return ""
    return shutdown_note(chosen.model, KNOWN_SHUTDOWNS.get(chosen.model)) or ""


def role_backbone_choices() -> list[tuple[str, str]]:
    """Choices of a per-agent override: the main backbone, a preset, or the custom endpoint."""
    return [(SAME, SAME), *backbone_choices()]


class RunForm(BaseModel):
    """What the Run tab's controls hold when Run is pressed."""

    task: str = ""
    device: str = "virtual"
    backbone: str = "openai"
    base_url: str = ""
    model: str = ""
    role_backbones: dict[str, str] = Field(default_factory=dict)
    role_models: dict[str, str] = Field(default_factory=dict)
    api_keys: dict[str, str] = Field(default_factory=dict, repr=False)
    max_steps: int = 40
    evolution: bool = True
    fresh_start: bool = True
    parallel_notetaker: bool = False
    fast: bool = False
    agent: Literal["e", "v2", "v1"] = "e"
    timeout_s: float | None = Field(None, gt=0, le=3600, description="total seconds per model call")
    max_retries: int | None = Field(None, ge=0, le=10, description="retries per model call")

    @field_validator("role_backbones", "role_models", "api_keys", mode="before")
    @classmethod
    def _no_none(cls, value: Any) -> Any:
        """Empty form fields arrive as None: drop them."""
        if isinstance(value, Mapping):
            return {str(k): str(v) for k, v in value.items() if v is not None}
        return value

    def __repr__(self) -> str:  # keys must never show up in a traceback or log line
        return f"RunForm(task={self.task!r}, device={self.device!r}, backbone={self.backbone!r})"

    __str__ = __repr__


def call_defaults(settings: Settings) -> tuple[float, int]:
    """The model call timeout (s) and retries the form starts with: the server's global settings, else
    the provider defaults. (An empty number field sends 0, so the form shows the real values.)"""
    fields = ModelProfile.model_fields
    timeout = settings.timeout_s if settings.timeout_s is not None else fields["timeout_s"].default
    retries = settings.max_retries if settings.max_retries is not None else fields["max_retries"].default
    return float(timeout), int(retries)


def fast_switches(loop: LoopSettings, fast: bool) -> dict[str, Any]:
    """The loop settings the demo's fast-mode checkbox changes: none when it shows the server's own
    choice; else fast mode's switches, or the paper's order when it was unticked."""
    if fast == loop.fast:
        return {}
    switches = FAST_PROFILE if fast else {k: LoopSettings.model_fields[k].default for k in FAST_PROFILE}
    return {"fast": fast, **switches}


def settings_from_form(base: Settings, form: RunForm) -> Settings:
    """``base`` with the form's choices applied; ``ConfigError`` saying what to fix."""
    if form.backbone != CUSTOM and form.backbone not in PRESETS:
        raise ConfigError(f"unknown backbone {form.backbone!r}; pick one from the list")
    custom_key = bool(form.api_keys.get(CUSTOM_KEY_ENV, "").strip())
    update: dict[str, Any] = {
        "backbone": form.backbone,
        "base_url": form.base_url.strip() or None,
        "model": form.model.strip() or None,
        "device": form.device or None,
    }
    # A Base URL typed in the page gets a key only when a key is typed with it (never the server's).
    typed_url = bool(update["base_url"]) and update["base_url"] != (base.base_url or None)
    if form.backbone == CUSTOM:
        if not update["base_url"] or not update["model"]:
            raise ConfigError("the custom backbone needs a base URL (ending in /v1) and a model name")
        server_key = None if typed_url or base.backbone != CUSTOM else base.api_key_env
        update["api_key_env"] = CUSTOM_KEY_ENV if custom_key else server_key
    elif form.backbone != base.backbone or typed_url:
        update["api_key_env"] = CUSTOM_KEY_ENV if custom_key and typed_url else None
    roles: dict[str, RoleModel] = {}
    for role in AGENT_ROLES:
        backbone = (form.role_backbones.get(role) or SAME).strip()
        model = (form.role_models.get(role) or "").strip() or None
        if backbone == SAME and model is None:
            continue
        if backbone == SAME:
            roles[role] = RoleModel(model=model)
        elif backbone == CUSTOM:
            if not update["base_url"] or not model:
                raise ConfigError(
                    f"the {role} override uses the custom endpoint: fill in the main base URL and a model "
                    f"for the {role}"
                )
            roles[role] = RoleModel(
                backbone=CUSTOM,
                base_url=update["base_url"],
                model=model,
                api_key_env=CUSTOM_KEY_ENV if custom_key else None,
            )
        elif backbone in PRESETS:
            roles[role] = RoleModel(backbone=backbone, model=model)
        else:
            raise ConfigError(f"unknown backbone {backbone!r} for the {role}")
    update["roles"] = roles
    loop = base.loop.model_copy(
        update={
            "max_steps": max(1, int(form.max_steps)),
            "agent": form.agent,
            "parallel_notetaker": bool(form.parallel_notetaker),
            **fast_switches(base.loop, bool(form.fast)),
        }
    )
    update["loop"] = loop
    evolve = bool(form.evolution) and form.agent == "e"  # the baselines have no long-term memory
    update["evolution"] = base.evolution.model_copy(update={"evolve": evolve})
    if form.timeout_s is not None:
        update["timeout_s"] = float(form.timeout_s)
    if form.max_retries is not None:
        update["max_retries"] = int(form.max_retries)
    settings = base.model_copy(update=update)
    try:
        settings = Settings.model_validate(settings.model_dump())
        for role in AGENT_ROLES:
            settings.profile_for(role)
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(f"invalid settings: {exc}") from None
    return settings


def session_keys(values: Mapping[str, str | None]) -> dict[str, str]:
    """Non-empty keys typed in the form, by environment-variable name (stripped of spaces).

    ``ConfigError`` (naming the field, never the key) for a key with inner spaces or non-ASCII
    characters, which no provider issues and which would fail later with a misleading message.
    """
    keys: dict[str, str] = {}
    for name, value in values.items():
        key = (value or "").strip()
        if not key:
            continue
        if any(ch.isspace() for ch in key) or not key.isascii():
            raise ConfigError(
                f"the key entered for {name} contains spaces, line breaks or non-ASCII characters: paste "
                "it again"
            )
        keys[name] = key
    return keys


def missing_keys(settings: Settings, keys: Mapping[str, str], environ: Mapping[str, str]) -> list[str]:
    """Environment variables some role needs a key from that neither the form nor the environment has."""
    needed: list[str] = []
    for role in AGENT_ROLES:
        if role == "captioner" and settings.perception.captions == "none":
            continue
        if role == "experience" and not settings.evolution.evolve:
            continue
        env = settings.profile_for(role).api_key_env
        if env and not keys.get(env) and not environ.get(env) and env not in needed:
            needed.append(env)
    return needed


REMEMBERED = [
    "task",
    "backbone",
    "base_url",
    "model",
    "max_steps",
    "evolve",
    "fresh_start",
    "rules",
    *(f"backbone:{role}" for role in AGENT_ROLES),
    *(f"model:{role}" for role in AGENT_ROLES),
]
"""Run-form fields the browser remembers between visits (in this order; API keys never)."""


def restorable(name: str, value: Any, rule_names: list[str]) -> bool:
    """Whether a remembered ``value`` for the field ``name`` may be put back in the form (a stored
    value can be stale or edited by hand)."""
    if value is None:
        return False
    if name == "backbone":
        return value in [v for _, v in backbone_choices()]
    if name.startswith("backbone:"):
        return value in [v for _, v in role_backbone_choices()]
    if name == "rules":
        return isinstance(value, list) and all(v in rule_names for v in value)
    if name == "max_steps":
        return isinstance(value, int | float) and 1 <= value <= 100
    if name in ("evolve", "fresh_start"):
        return isinstance(value, bool)
    return isinstance(value, str)
