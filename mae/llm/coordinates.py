"""Coordinate conventions: how each model family writes a point, and the one adapter per convention.

A model sees a screenshot (perhaps resized by mae, perhaps resized again by its own processor) and
answers with points in one of three spaces:

- ``screen``: pixels of the image as sent (hosted models and generic OpenAI-compatible VLMs, told that
  image's size). When mae sends the screenshot smaller than the screen (the image policy's
  ``max_side``), the element list, the prompt's examples and the reply are all in the smaller image's
  pixels, so a model that reads a position off the picture taps where it looked; an unresized
  screenshot makes this screen pixels.
- ``image``: absolute pixels of the image the model's processor produced. Qwen2.5-VL and GUI-Owl
  7B/32B smart-resize to sides divisible by 28 within a pixel budget; UI-TARS-1.5 does the same with
  its own budget (100x28x28 to 16384x28x28 pixels). mae resizes client-side with the same rule, and
  ``ModelResize`` repeats the server's resize on the image mae sent, so a budget mismatch cannot shift
  taps.
- ``relative``: a 0-1000 grid over the image whatever its size (Qwen3-VL, GUI-Owl-1.5). Their
  processors resize with factor 32 (patch 16, merge 2), which does not matter for relative points
  but does for anyone who reads them as pixels of a factor-28 image: that is the 28-vs-32 trap.

Every point a model returns goes through ``CoordinateMapper.to_screen``; every point a prompt shows
it (element centres, the action list's examples, Shortcut arguments) goes through ``to_model``; the
sentence that tells the model the image's size and its coordinate frame is ``describe_frame``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mae.llm.images import ImagePolicy, smart_resize

CoordinateSpace = Literal["screen", "image", "relative"]
RELATIVE_SCALE = 1000
"""Relative models write points on a 0..1000 grid."""


@dataclass(frozen=True)
class CoordinateMapper:
    """Converts points between screen space and model space (a linear map per axis)."""

    screen_size: tuple[int, int]
    model_size: tuple[int, int]

    @classmethod
    def identity(cls, screen_size: tuple[int, int]) -> CoordinateMapper:
        return cls(screen_size, screen_size)

    @property
    def is_identity(self) -> bool:
        return self.screen_size == self.model_size

    def to_model(self, x: int, y: int) -> tuple[int, int]:
        sx = self.model_size[0] / self.screen_size[0]
        sy = self.model_size[1] / self.screen_size[1]
        return round(x * sx), round(y * sy)

    def to_screen(self, x: int, y: int) -> tuple[int, int]:
        sx = self.screen_size[0] / self.model_size[0]
        sy = self.screen_size[1] / self.model_size[1]
        return round(x * sx), round(y * sy)

    def x_to_model(self, x: int) -> int:
        return self.to_model(x, 0)[0]

    def y_to_model(self, y: int) -> int:
        return self.to_model(0, y)[1]


class ModelResize(BaseModel):
    """How a model's own image processor resizes what it receives (Qwen-style smart resize)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    factor: int = Field(28, ge=1, description="sides become multiples of this (patch size x merge size)")
    min_pixels: int = Field(4 * 28 * 28, ge=1)
    max_pixels: int = Field(16384 * 28 * 28, ge=1)

    def apply(self, size: tuple[int, int]) -> tuple[int, int]:
        """The ``(width, height)`` the model sees for an image of ``size``."""
        height, width = smart_resize(size[1], size[0], self.factor, self.min_pixels, self.max_pixels)
        return width, height


class CoordinateConvention(BaseModel):
    """One model family's way of writing points, plus how mae should send it images."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    space: CoordinateSpace
    label: str
    model_resize: ModelResize | None = Field(
        None, description="the server-side resize whose pixels 'image' points are in; None = as sent"
    )
    image: ImagePolicy = Field(default_factory=ImagePolicy, description="how mae sends screenshots")

    def mapper(self, screen_size: tuple[int, int], sent_size: tuple[int, int]) -> CoordinateMapper:
        """The adapter for a screen of ``screen_size`` whose screenshot was sent at ``sent_size``."""
        return mapper_for(self.space, screen_size, sent_size, self.model_resize)


def mapper_for(
    space: CoordinateSpace,
    screen_size: tuple[int, int],
    sent_size: tuple[int, int],
    model_resize: ModelResize | None = None,
) -> CoordinateMapper:
    """The screen <-> model adapter for one convention."""
    if space == "screen":
        return CoordinateMapper(screen_size, sent_size)
    if space == "relative":
        return CoordinateMapper(screen_size, (RELATIVE_SCALE, RELATIVE_SCALE))
    frame = model_resize.apply(sent_size) if model_resize is not None else sent_size
    return CoordinateMapper(screen_size, frame)


_QWEN25_BUDGET = 1280 * 28 * 28
_QWEN3_BUDGET = 1280 * 32 * 32
_QWEN25_SERVER = ModelResize(factor=28, min_pixels=4 * 28 * 28, max_pixels=_QWEN25_BUDGET)
_QWEN25_IMAGES = ImagePolicy(resize="qwen", factor=28, max_pixels=_QWEN25_BUDGET)
_QWEN3_IMAGES = ImagePolicy(resize="qwen", factor=32, min_pixels=64 * 32 * 32, max_pixels=_QWEN3_BUDGET)

CONVENTIONS: dict[str, CoordinateConvention] = {
    c.name: c
    for c in (
        CoordinateConvention(
            name="screen",
            space="screen",
            label="pixels of the image as sent (hosted APIs, generic OpenAI-compatible VLMs)",
        ),
        CoordinateConvention(
            name="qwen2.5-vl",
            space="image",
            label="absolute pixels of the smart-resized image, factor 28 (Qwen2.5-VL)",
            model_resize=_QWEN25_SERVER,
            image=_QWEN25_IMAGES,
        ),
        CoordinateConvention(
            name="gui-owl",
            space="image",
            label="absolute pixels of the smart-resized image, factor 28 (GUI-Owl 7B/32B, on Qwen2.5-VL)",
            model_resize=_QWEN25_SERVER,
            image=_QWEN25_IMAGES,
        ),
        CoordinateConvention(
            name="ui-tars-1.5",
            space="image",
            label="absolute pixels of its own resize, factor 28, 100x28x28..16384x28x28 (UI-TARS-1.5)",
            model_resize=ModelResize(factor=28, min_pixels=100 * 28 * 28, max_pixels=16384 * 28 * 28),
            image=ImagePolicy(resize="qwen", factor=28, min_pixels=100 * 28 * 28, max_pixels=_QWEN25_BUDGET),
        ),
        CoordinateConvention(
            name="qwen3-vl",
            space="relative",
            label="relative 0-1000 grid; images resized with factor 32 (Qwen3-VL)",
            image=_QWEN3_IMAGES,
        ),
        CoordinateConvention(
            name="gui-owl-1.5",
            space="relative",
            label="relative 0-1000 grid; images resized with factor 32 (GUI-Owl-1.5, on Qwen3-VL)",
            image=_QWEN3_IMAGES,
        ),
    )
}
"""Every convention mae knows, by name (``MAE_COORDINATES`` / ``coordinates`` in the settings)."""

_FAMILY_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"ui-?tars", "ui-tars-1.5"),
    (r"gui-?owl-?1\.5", "gui-owl-1.5"),
    (r"gui-?owl", "gui-owl"),
    (r"qwen3-?vl", "qwen3-vl"),
    (r"qwen2(\.5)?-?vl", "qwen2.5-vl"),
)


def convention(name: str) -> CoordinateConvention:
    """The convention called ``name``; ``ValueError`` listing the known ones otherwise."""
    try:
        return CONVENTIONS[name.strip().lower()]
    except KeyError:
        raise ValueError(
            f"unknown coordinate convention {name!r}; choose one of {', '.join(CONVENTIONS)}"
        ) from None


def family_convention(model: str) -> str | None:
    """The convention a model name's family documents (``None`` when the family is not known)."""
    lowered = model.lower()
    for pattern, name in _FAMILY_PATTERNS:
        if re.search(pattern, lowered):
            return name
    return None


def describe_swipe_example(mapper: CoordinateMapper) -> tuple[int, int, int, int]:
    """The action list's scroll example and smallest App switcher swipe, in the model's space: on a
    1080x2340 screen, x = 540 from y = 1500 to y = 500, and 500 pixels sideways; scaled to other screens."""
    width, height = mapper.screen_size
    x = mapper.x_to_model(width // 2)
    y1 = mapper.y_to_model(round(height * 1500 / 2340))
    y2 = mapper.y_to_model(round(height * 500 / 2340))
    switch = mapper.x_to_model(round(width * 500 / 1080))
    return x, y1, y2, switch


def swipe_example_in_frame(frame: str) -> tuple[int, int, int, int] | None:
    """The scroll example of ``describe_swipe_example`` for a frame told in words ("in its 768×1664
    image", "on its 0-1000 grid"), for prompts written after the run (the Shortcuts reflector's);
    None for screen pixels (the 1080×2340 example stands)."""
    grid = re.search(r"0-(\d+) grid", frame)
    image = re.search(r"(\d+)×(\d+) image", frame)
    if grid:
        width = height = int(grid.group(1))
    elif image:
        width, height = int(image.group(1)), int(image.group(2))
    else:
        return None
    return width // 2, round(height * 1500 / 2340), round(height * 500 / 2340), round(width * 500 / 1080)


def describe_tap_example(mapper: CoordinateMapper) -> tuple[int, int]:
    """The prompts' format-example tap, in the model's space: (540, 1200) on a 1080x2340 screen, scaled."""
    width, height = mapper.screen_size
    return mapper.x_to_model(round(width / 2)), mapper.y_to_model(round(height * 1200 / 2340))


def describe_model_frame(space: CoordinateSpace, mapper: CoordinateMapper) -> str:
    """Words for people on the frame a model wrote its points in ("in its 768×1664 image", "on its
    0-1000 grid"); empty when that frame is screen pixels (nothing to explain)."""
    if space == "relative":
        return f"on its 0-{RELATIVE_SCALE} grid"
    if mapper.is_identity:
        return ""
    width, height = mapper.model_size
    return f"in its {width}×{height} image"


def shown_action(screen_text: str, written: str | None, frame: str) -> str:
    """An action as people read it: in screen pixels (as the phone and the annotated screenshots are),
    followed by what the model wrote when that was in another frame, e.g. "Tap(900, 399) · model wrote
    Tap(640, 284) in its 768×1664 image"."""
    if not frame or not written or written == screen_text:
        return screen_text
    return f"{screen_text} · model wrote {written} {frame}"


def describe_frame(space: CoordinateSpace, mapper: CoordinateMapper, sent_size: tuple[int, int]) -> str:
    """What a prompt says about the attached image and the coordinates: the size of the image actually
    sent, and the one frame the element list, the examples and the reply share. It follows "The
    attached image is the current screen, "."""
    width, height = sent_size
    size = f"{width} pixels wide and {height} pixels high"
    if space == "relative":
        return (
            f"{size}. Every coordinate (in element lists and in actions) is on a relative 0-1000 "
            f"grid over this image: (0, 0) is the top left corner, ({RELATIVE_SCALE}, {RELATIVE_SCALE}) "
            "the bottom right, whatever the image's size."
        )
    model_w, model_h = mapper.model_size
    if (model_w, model_h) != (width, height):
        return (
            f"{size}, which your image processor resizes to {model_w}x{model_h}. Every coordinate (in "
            f"element lists and in actions) is in pixels of that {model_w}x{model_h} image; (0, 0) is "
            "the top left corner."
        )
    return (
        f"{size}; (0, 0) is the top left corner. Every coordinate (in element lists and in actions) is in "
        "pixels of this image."
    )
