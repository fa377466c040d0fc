"""Images for models: a per-model policy (JPEG quality, size budget) and data-URL encoding.

Reasoning images may be downscaled to save tokens; the scale is returned so coordinates a model gives
in image space can be mapped back to screen pixels (``mae.llm.coordinates``).
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import Literal

from PIL import Image
from pydantic import BaseModel, Field

TokenRule = Literal[
    "openai_tiles", "anthropic_pixels", "gemini_tiles", "qwen_patches", "qwen3_patches", "unknown"
]
"""How a provider bills an image (``image_tokens``)."""


class ImagePolicy(BaseModel):
    """How images are sent to one model."""

    resize: Literal["none", "max_side", "qwen"] = "max_side"
    max_side: int = Field(1664, ge=64, description="longest side in pixels, for resize='max_side'")
    factor: int = Field(28, ge=1, description="smart_resize side multiple (28 Qwen2.5-VL, 32 Qwen3-VL)")
    before_max_side: int | None = Field(
        None,
        ge=64,
        description="longest side of the 'before' screenshot the Action Reflector compares with the new "
        "one (it saw that screen in full the step before); None: sent like every other image",
    )
    token_rule: TokenRule = Field("unknown", description="how the provider counts an image's tokens")
    min_pixels: int = Field(4 * 28 * 28, ge=1, description="Qwen smart_resize lower pixel budget")
    max_pixels: int = Field(1280 * 28 * 28, ge=1, description="Qwen smart_resize upper pixel budget")
    jpeg_quality: int = Field(85, ge=10, le=100)


def smart_resize(
    height: int, width: int, factor: int = 28, min_pixels: int = 4 * 28 * 28, max_pixels: int = 1280 * 28 * 28
) -> tuple[int, int]:
    """Qwen2-VL / Qwen2.5-VL's resize rule: sides divisible by ``factor``, area within the budget,
    aspect ratio kept as closely as possible. Returns ``(height, width)``.
    """
    if height <= 0 or width <= 0:
        raise ValueError("image sides must be positive")
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio over 200: {width}x{height}")
    new_h = max(factor, round(height / factor) * factor)
    new_w = max(factor, round(width / factor) * factor)
    if new_h * new_w > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        new_h = max(factor, math.floor(height / beta / factor) * factor)
        new_w = max(factor, math.floor(width / beta / factor) * factor)
    elif new_h * new_w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        new_h = math.ceil(height * beta / factor) * factor
        new_w = math.ceil(width * beta / factor) * factor
    return new_h, new_w


def target_size(size: tuple[int, int], policy: ImagePolicy) -> tuple[int, int]:
    """The ``(width, height)`` an image of ``size`` is sent at under ``policy``."""
    width, height = size
    if policy.resize == "qwen":
        new_h, new_w = smart_resize(
            height, width, policy.factor, min_pixels=policy.min_pixels, max_pixels=policy.max_pixels
        )
        return new_w, new_h
    if policy.resize == "max_side" and max(width, height) > policy.max_side:
        ratio = policy.max_side / max(width, height)
        return max(1, round(width * ratio)), max(1, round(height * ratio))
    return width, height


def image_tokens(size: tuple[int, int], rule: TokenRule) -> int | None:
    """Input tokens an image of ``size`` (as sent) costs under the provider's documented rule.

    - ``openai_tiles`` (GPT-4o, detail high): fit in 2048x2048, shrink so the short side is at most
      768, then 85 + 170 per 512 px tile.
    - ``anthropic_pixels`` (Claude): shrunk to a long side of at most 1568 px, then width*height/750.
    - ``gemini_tiles`` (Gemini 2.x): 258 when both sides are at most 384, else 258 per 768 px tile.
    - ``qwen_patches`` (Qwen2-VL/2.5-VL, after ``smart_resize``): one token per 28x28 patch, plus the
      two vision start/end tokens.
    - ``qwen3_patches`` (Qwen3-VL, factor 32): one token per 32x32 patch, plus the two markers.
    - ``unknown``: ``None``.
    """
    width, height = size
    if rule == "openai_tiles":
        fit = min(1.0, 2048 / max(width, height))
        w, h = width * fit, height * fit
        short = min(1.0, 768 / min(w, h))
        w, h = w * short, h * short
        return 85 + 170 * math.ceil(math.floor(w) / 512) * math.ceil(math.floor(h) / 512)
    if rule == "anthropic_pixels":
        fit = min(1.0, 1568 / max(width, height))
        return math.ceil(round(width * fit) * round(height * fit) / 750)
    if rule == "gemini_tiles":
        if width <= 384 and height <= 384:
            return 258
        return 258 * math.ceil(width / 768) * math.ceil(height / 768)
    if rule == "qwen_patches":
        return (width // 28) * (height // 28) + 2
    if rule == "qwen3_patches":
        return (width // 32) * (height // 32) + 2
    return None


def before_policy(policy: ImagePolicy, size: tuple[int, int]) -> ImagePolicy:
    """The policy for the Action Reflector's 'before' screenshot of ``size``: longest side at most
    ``before_max_side`` when it is set (for Qwen, through the pixel budget)."""
    side = policy.before_max_side
    if side is None:
        return policy
    if policy.resize == "qwen":
        ratio = min(1.0, side / max(size))
        budget = max(policy.min_pixels, int(size[0] * size[1] * ratio * ratio))
        budget = min(policy.max_pixels, budget)
        return policy.model_copy(update={"max_pixels": budget, "before_max_side": None})
    cap = min(policy.max_side, side) if policy.resize == "max_side" else side
    return policy.model_copy(update={"resize": "max_side", "max_side": cap, "before_max_side": None})


@dataclass(frozen=True)
class EncodedImage:
    """An image ready for a chat request."""

    data_url: str
    size: tuple[int, int]
    original_size: tuple[int, int]

    @property
    def scale(self) -> tuple[float, float]:
        """Factors that map image coordinates to original coordinates."""
        return self.original_size[0] / self.size[0], self.original_size[1] / self.size[1]


def encode_image(image: Image.Image, policy: ImagePolicy | None = None) -> EncodedImage:
    """Resize ``image`` per ``policy`` and encode it as a JPEG data URL."""
    policy = policy or ImagePolicy()
    original = image.size
    size = target_size(original, policy)
    rgb = image.convert("RGB") if image.mode != "RGB" else image
    if size != original:
        rgb = rgb.resize(size, Image.Resampling.BILINEAR)
    buffer = io.BytesIO()
    rgb.save(buffer, format="JPEG", quality=policy.jpeg_quality)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return EncodedImage(data_url=f"data:image/jpeg;base64,{data}", size=size, original_size=original)
