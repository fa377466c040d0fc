"""Model access: one chat client over the openai SDK, provider presets, images, coordinates.

The names below are loaded on first use (PEP 562), so importing ``mae.llm.providers`` or
``mae.config`` does not import the ``openai`` SDK (about 0.6 s); ``mae.llm.client`` imports it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mae.llm.client import ROLE_HEADER, CallRecord, ChatClient, ChatReply, Message
    from mae.llm.errors import (
        ModelAuthError,
        ModelError,
        ModelProviderError,
        ModelRateLimitError,
        ModelRequestError,
        ModelResponseError,
        ModelTimeoutError,
    )
    from mae.llm.images import EncodedImage, ImagePolicy, encode_image, smart_resize
    from mae.llm.providers import AGENT_ROLES, PRESETS, ModelProfile

_HOMES: dict[str, str] = {
    **dict.fromkeys(("ROLE_HEADER", "CallRecord", "ChatClient", "ChatReply", "Message"), "client"),
    **dict.fromkeys(
        (
            "ModelAuthError",
            "ModelError",
            "ModelProviderError",
            "ModelRateLimitError",
            "ModelRequestError",
            "ModelResponseError",
            "ModelTimeoutError",
        ),
        "errors",
    ),
    **dict.fromkeys(("EncodedImage", "ImagePolicy", "encode_image", "smart_resize"), "images"),
    **dict.fromkeys(("AGENT_ROLES", "PRESETS", "ModelProfile"), "providers"),
}

__all__ = [
    "AGENT_ROLES",
    "PRESETS",
    "ROLE_HEADER",
    "CallRecord",
    "ChatClient",
    "ChatReply",
    "EncodedImage",
    "ImagePolicy",
    "Message",
    "ModelAuthError",
    "ModelError",
    "ModelProfile",
    "ModelProviderError",
    "ModelRateLimitError",
    "ModelRequestError",
    "ModelResponseError",
    "ModelTimeoutError",
    "encode_image",
    "smart_resize",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mae.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"mae.llm.{home}"), name)
    globals()[name] = value
    return value
