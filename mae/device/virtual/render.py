"""Pixels: the bundled TrueType font, text measurement, and painting a display list onto an image.

The font is the FreeType font that ships inside Pillow (``ImageFont.load_default(size=...)``, Pillow
10.1 or newer), so the phone renders identically on any machine without system fonts. Bold text is
the same face with a one-pixel stroke.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from PIL import Image, ImageColor, ImageDraw, ImageFont

from mae.errors import DeviceError

Op = tuple[Any, ...]
"""One drawing operation in screen pixels; the first item names it (``rect``, ``text``, ...)."""


@lru_cache(maxsize=64)
def font(px: int) -> ImageFont.FreeTypeFont:
    """The phone's font at ``px`` pixels."""
    loaded = ImageFont.load_default(size=px)
    if not isinstance(loaded, ImageFont.FreeTypeFont):
        raise DeviceError(
            "the virtual phone needs Pillow >= 10.1 built with FreeType; run `pip install -U pillow`"
        )
    return loaded


@lru_cache(maxsize=8192)
def text_bbox(text: str, px: int, anchor: str, stroke: int) -> tuple[int, int, int, int]:
    """Ink box of ``text`` relative to its anchor point, in pixels."""
    left, top, right, bottom = font(px).getbbox(text, anchor=anchor, stroke_width=stroke)
    return int(left), int(top), int(right), int(bottom)


@lru_cache(maxsize=8192)
def text_length(text: str, px: int) -> float:
    """Advance width of ``text`` in pixels."""
    return font(px).getlength(text)


@lru_cache(maxsize=2048)
def text_mask(text: str, px: int, anchor: str, stroke: int) -> tuple[Image.Image, int, int]:
    """Rendered coverage mask of ``text`` and its offset from the anchor point (cached: glyph
    rasterisation is the most expensive part of painting a screen)."""
    left, top, right, bottom = text_bbox(text, px, anchor, stroke)
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)), 0)
    ImageDraw.Draw(mask).text(
        (-left, -top), text, font=font(px), fill=255, anchor=anchor, stroke_width=stroke, stroke_fill=255
    )
    return mask, left, top


@lru_cache(maxsize=256)
def rgb(colour: str) -> tuple[int, int, int]:
    red, green, blue = ImageColor.getrgb(colour)[:3]
    return red, green, blue


@lru_cache(maxsize=1024)
def _dim_colour(colour: str, keep: float) -> str:
    red, green, blue = (round(v * keep) for v in rgb(colour))
    return f"#{red:02X}{green:02X}{blue:02X}"


_DIMMED_LAYERS: dict[tuple[int, float], tuple[Image.Image, Image.Image]] = {}


def _dim_image(image: Image.Image, keep: float) -> Image.Image:
    key = (id(image), keep)
    cached = _DIMMED_LAYERS.get(key)
    if cached is None or cached[0] is not image:  # the source is kept, so its id is not reused meanwhile
        if len(_DIMMED_LAYERS) >= 64:
            _DIMMED_LAYERS.clear()
        cached = (image, image.point([round(v * keep) for v in range(256)] * len(image.getbands())))
        _DIMMED_LAYERS[key] = cached
    return cached[1]


def dimmed(ops: list[Op], alpha: float) -> list[Op]:
    """``ops`` as seen through a black scrim of opacity ``alpha``: every colour and pasted picture
    darkened by the same factor (what blending the painted result would give, at no painting cost)."""
    keep = round(1.0 - min(max(alpha, 0.0), 1.0), 3)

    def dim(colour: object) -> object:
        return _dim_colour(colour, keep) if isinstance(colour, str) else colour

    out: list[Op] = []
    for op in ops:
        kind = op[0]
        if kind in ("rect", "ellipse"):
            out.append((kind, op[1], dim(op[2]), dim(op[3]), *op[4:]))
        elif kind == "polygon":
            out.append((kind, op[1], dim(op[2]), dim(op[3])))
        elif kind in ("text", "line"):
            out.append((*op[:4], dim(op[4]), *op[5:]) if kind == "text" else (kind, op[1], dim(op[2]), op[3]))
        elif kind in ("arc", "pieslice"):
            out.append((*op[:4], dim(op[4]), *op[5:]))
        elif kind == "paste":
            out.append((kind, _dim_image(op[1], keep), op[2]))
        elif kind == "clip":
            out.append((kind, op[1], dimmed(op[2], alpha)))
        else:  # pragma: no cover - the canvas only emits the kinds above
            raise ValueError(f"unknown drawing operation {kind!r}")
    return out


def paint(width: int, height: int, background: str, ops: list[Op]) -> Image.Image:
    """Render a display list onto a fresh RGB image."""
    image = Image.new("RGB", (width, height), background)
    _draw(image, ops)
    return image


def _draw(image: Image.Image, ops: list[Op]) -> None:
    draw = ImageDraw.Draw(image)
    for op in ops:
        kind = op[0]
        if kind == "rect":
            _, box, fill, outline, line_width, radius = op
            if radius:
                draw.rounded_rectangle(box, radius=radius, fill=fill, outline=outline, width=line_width)
            else:
                draw.rectangle(box, fill=fill, outline=outline, width=line_width)
        elif kind == "text":
            _, (x, y), text, px, fill, anchor, stroke = op
            mask, left, top = text_mask(text, px, anchor, stroke)
            image.paste(rgb(fill), (x + left, y + top, x + left + mask.width, y + top + mask.height), mask)
        elif kind == "ellipse":
            _, box, fill, outline, line_width = op
            draw.ellipse(box, fill=fill, outline=outline, width=line_width)
        elif kind == "polygon":
            _, points, fill, outline = op
            draw.polygon(points, fill=fill, outline=outline)
        elif kind == "line":
            _, points, fill, line_width = op
            draw.line(points, fill=fill, width=line_width, joint="curve")
        elif kind == "arc":
            _, box, start, end, fill, line_width = op
            draw.arc(box, start, end, fill=fill, width=line_width)
        elif kind == "pieslice":
            _, box, start, end, fill = op
            draw.pieslice(box, start, end, fill=fill)
        elif kind == "paste":
            _, layer, xy = op
            image.paste(layer, xy)
        elif kind == "clip":  # a row cut by the edge of its scroll view: only its visible part
            _, box, inner = op
            whole = image.copy()
            _draw(whole, inner)
            image.paste(whole.crop(box), (box[0], box[1]))
        else:  # pragma: no cover - the canvas only emits the kinds above
            raise ValueError(f"unknown drawing operation {kind!r}")
