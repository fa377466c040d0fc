"""Backbone presets: every backbone is an OpenAI-compatible base URL + a model name.

A ``ModelProfile`` says everything needed to call one model; presets give defaults for today's hosted
providers (checked against each provider's model and deprecation pages on the date in
``PRESETS_CHECKED``, see docs/configuration.md), the paper's GPT-4o as a named profile until its
shutdown date, a local vLLM server and any custom endpoint.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mae.errors import ConfigError
from mae.llm.coordinates import CoordinateSpace, ModelResize, convention
from mae.llm.images import ImagePolicy

AGENT_ROLES: tuple[str, ...] = (
    "manager",
    "operator",
    "reflector",
    "notetaker",
    "experience",
    "captioner",
    "verifier",
)
"""Roles that can each use their own model (the Experience Reflectors and Retrievers share one;
``verifier`` checks a Shortcut's precondition when ``evolution.precondition`` is ``verify``)."""


class ModelProfile(BaseModel):
    """How to call one model."""

    provider: str = "custom"
    base_url: str
    model: str
    api_key_env: str | None = Field(None, description="environment variable holding the key; None = no key")
    image: ImagePolicy = Field(default_factory=ImagePolicy)
    coordinate_space: CoordinateSpace = "screen"
    model_resize: ModelResize | None = Field(
        None, description="the model server's own resize, for coordinate_space='image' (None = as sent)"
    )
    temperature: float | None = Field(0.0, description="None = not sent (the model's default)")
    max_tokens: int = Field(2048, description="longest visible reply asked for")
    token_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens", description="the request field carrying the reply budget (reasoning models: the second)"
    )
    reasoning_effort: str | None = Field(
        None, description="sent as reasoning_effort to reasoning models (low, medium, high); None = not sent"
    )
    reasoning_tokens: int = Field(
        0, ge=0, description="budget for hidden reasoning, added to max_tokens when reasoning_effort is set"
    )
    shutdown_date: str | None = Field(None, description="YYYY-MM-DD the provider stops serving the model")
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(3, ge=0, le=10)
    retry_backoff_s: float = Field(1.0, ge=0, description="first retry delay; doubles each retry")
    max_retry_wait_s: float = Field(60.0, ge=0, description="longest wait a Retry-After header may ask for")

    def with_convention(self, name: str) -> ModelProfile:
        """This profile answering in the coordinate convention ``name`` (``mae.llm.coordinates``), with
        that convention's image policy. ``ConfigError`` for an unknown name."""
        try:
            chosen = convention(name)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        return self.model_copy(
            update={
                "coordinate_space": chosen.space,
                "model_resize": chosen.model_resize,
                "image": chosen.image.model_copy() if chosen.space != "screen" else self.image,
            }
        )


class ProviderPreset(BaseModel):
    """Defaults of one provider."""

    name: str
    label: str
    base_url: str
    model: str
    caption_model: str
    api_key_env: str | None
    image: ImagePolicy = Field(default_factory=ImagePolicy)
    coordinate_space: CoordinateSpace = "screen"
    model_resize: ModelResize | None = None
    provider: str | None = Field(None, description="the provider priced and keyed (None = name)")
    reasoning: bool = Field(False, description="the model reasons before answering (OpenAI's parameters)")
    note: str = Field("", description="shown when the preset is chosen (a shutdown date, say)")

    def profile(self, model: str | None = None) -> ModelProfile:
        chosen = model or self.model
        reasoning = self.reasoning and chosen in (self.model, self.caption_model)
        return ModelProfile(
            provider=self.provider or self.name,
            base_url=self.base_url,
            model=chosen,
            api_key_env=self.api_key_env,
            image=self.image.model_copy(),
            coordinate_space=self.coordinate_space,
            model_resize=self.model_resize,
            temperature=None if reasoning else 0.0,
            token_param="max_completion_tokens" if reasoning else "max_tokens",
            reasoning_effort=DEFAULT_REASONING_EFFORT if reasoning else None,
            reasoning_tokens=DEFAULT_REASONING_TOKENS if reasoning else 0,
            shutdown_date=KNOWN_SHUTDOWNS.get(chosen),
        )


PRESETS_CHECKED = "2026-11-28"
"""When the presets' models were checked against the providers' model and deprecation pages."""

DEFAULT_REASONING_EFFORT = "low"
"""A phone step is a short decision on a screen already described: little reasoning pays off, and
every reasoning token is paid and waited for."""

DEFAULT_REASONING_TOKENS = 6144
"""Hidden reasoning allowed on top of the visible reply (the reply budget counts both)."""

KNOWN_SHUTDOWNS: dict[str, str] = {
    "gpt-4o": "2027-01-14",
    "gpt-4o-2024-08-06": "2027-01-14",
    "gpt-4o-2024-11-20": "2027-01-14",
    "gpt-4o-mini": "2027-01-14",
    "gpt-4.1": "2027-01-14",
    "gpt-4.1-mini": "2027-01-14",
    "gpt-5": "2026-12-11",
    "gpt-5-mini": "2026-12-11",
    "gpt-5-nano": "2026-12-11",
    "gemini-3.1-flash-lite": "2027-05-07",
}
"""Shutdown dates published on the providers' deprecation pages (checked on ``PRESETS_CHECKED``); an
endpoint's own ``GET /models`` (OpenAI's ``shutdown_date``) is asked too, by ``mae models check``."""


_QWEN = convention("qwen2.5-vl")
_QWEN_IMAGES = _QWEN.image.model_copy(update={"before_max_side": 1024, "token_rule": "qwen_patches"})
_QWEN3 = convention("qwen3-vl")

PRESETS: dict[str, ProviderPreset] = {
    preset.name: preset
    for preset in (
        ProviderPreset(
            name="openai",
            label="OpenAI (GPT-6.1 Sol)",
            base_url="https://api.openai.com/v1",
            model="gpt-6.1-sol",
            caption_model="gpt-6-luna",
            api_key_env="OPENAI_API_KEY",
            image=ImagePolicy(max_side=1536, before_max_side=1024, token_rule="openai_tiles"),
            reasoning=True,
        ),
        ProviderPreset(
            name="openai-gpt4o",
            label="OpenAI GPT-4o (the paper's backbone, until 2027-01-14)",
            base_url="https://api.openai.com/v1",
            model="gpt-4o",
            caption_model="gpt-4o-mini",
            api_key_env="OPENAI_API_KEY",
            image=ImagePolicy(max_side=1536, before_max_side=1024, token_rule="openai_tiles"),
            provider="openai",
            note="GPT-4o reproduces the paper; OpenAI shuts it down on 2027-01-14: choose 'openai' then",
        ),
        ProviderPreset(
            name="anthropic",
            label="Anthropic (Claude Sonnet 5.5)",
            base_url="https://api.anthropic.com/v1/",
            model="claude-sonnet-5-5",
            caption_model="claude-haiku-5-5",
            api_key_env="ANTHROPIC_API_KEY",
            image=ImagePolicy(max_side=1568, before_max_side=1024, token_rule="anthropic_pixels"),
        ),
        ProviderPreset(
            name="google",
            label="Google (Gemini 3.5 Flash)",
            base_url="https://generativelanguage.googleapis.com/v1beta/openai/",
            model="gemini-3.5-flash",
            caption_model="gemini-3.1-flash-lite",
            api_key_env="GEMINI_API_KEY",
            image=ImagePolicy(max_side=1536, before_max_side=768, token_rule="gemini_tiles"),
        ),
        ProviderPreset(
            name="dashscope",
            label="Alibaba DashScope (Qwen3-VL-Plus)",
            base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
            model="qwen3-vl-plus",
            caption_model="qwen3-vl-flash",
            api_key_env="DASHSCOPE_API_KEY",
            image=_QWEN3.image.model_copy(update={"before_max_side": 1024, "token_rule": "qwen3_patches"}),
            coordinate_space=_QWEN3.space,
            model_resize=_QWEN3.model_resize,
        ),
        ProviderPreset(
            name="vllm",
            label="Local vLLM server (Qwen2.5-VL)",
            base_url="http://127.0.0.1:8000/v1",
            model="Qwen/Qwen2.5-VL-7B-Instruct",
            caption_model="Qwen/Qwen2.5-VL-7B-Instruct",
            api_key_env=None,
            image=_QWEN_IMAGES,
            coordinate_space=_QWEN.space,
            model_resize=_QWEN.model_resize,
        ),
    )
}


def preset(name: str) -> ProviderPreset:
    """The preset called ``name``; ``ConfigError`` listing the known ones otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(
            f"unknown backbone {name!r}; choose one of {', '.join(PRESETS)} or 'custom' with a base URL and "
            "model"
        ) from None
