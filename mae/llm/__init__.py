"""Model access: one chat client over the openai SDK, provider presets, images, coordinates."""

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
