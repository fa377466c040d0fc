"""Backbone presets: every backbone is an OpenAI-compatible base URL + a model name.

A ``ModelProfile`` says everything needed to call one model; presets give sensible defaults for the
providers the paper used (GPT-4o, Claude 3.5 Sonnet, Gemini 1.5 Pro, Qwen-VL) plus a local vLLM
server and any custom endpoint.
"""

from __future__ import annotations

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
    temperature: float = 0.0
    max_tokens: int = 2048
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

    def profile(self, model: str | None = None) -> ModelProfile:
        return ModelProfile(
            provider=self.name,
            base_url=self.base_url,
            model=model or self.model,
            api_key_env=self.api_key_env,
            image=self.image.model_copy(),
            coordinate_space=self.coordinate_space,
            model_resize=self.model_resize,
        )


_QWEN = convention("qwen2.5-vl")
_QWEN_IMAGES = _QWEN.image.model_copy(update={"before_max_side": 1024, "token_rule": "qwen_patches"})

PRESETS: dict[str, ProviderPreset] = {
    preset.name: preset
    for preset in (
        ProviderPreset(
            name="openai",
            label="OpenAI (GPT-4o)",
            base_url="https://api.openai.com/v1",
            model="gpt-4o",
            caption_model="gpt-4o-mini",
            api_key_env="OPENAI_API_KEY",
            image=ImagePolicy(max_side=1536, before_max_side=1024, token_rule="openai_tiles"),
        ),
        ProviderPreset(
            name="anthropic",
            label="Anthropic (Claude 3.5 Sonnet)",
            base_url="https://api.anthropic.com/v1/",
            model="claude-3-5-sonnet-20241022",
            caption_model="claude-3-5-haiku-20241022",
            api_key_env="ANTHROPIC_API_KEY",
            image=ImagePolicy(max_side=1568, before_max_side=1024, token_rule="anthropic_pixels"),
        ),
        ProviderPreset(
            name="google",
            label="Google (Gemini 1.5 Pro)",
            base_url="https://generativelanguage.googleapis.com/v1beta/openai/",
            model="gemini-1.5-pro",
            caption_model="gemini-1.5-flash",
            api_key_env="GEMINI_API_KEY",
            image=ImagePolicy(max_side=1536, before_max_side=768, token_rule="gemini_tiles"),
        ),
        ProviderPreset(
            name="dashscope",
            label="Alibaba DashScope (Qwen-VL-Max)",
            base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
            model="qwen-vl-max",
            caption_model="qwen-vl-plus",
            api_key_env="DASHSCOPE_API_KEY",
            image=_QWEN_IMAGES,
            coordinate_space=_QWEN.space,
            model_resize=_QWEN.model_resize,
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
