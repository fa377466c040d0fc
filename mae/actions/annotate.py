"""Draw an action on a screenshot: a circle at a tap, an arrow for a swipe, a banner for typed text.

Used for the trajectory's ``*_before`` images and the UI's live view. Pure Pillow; the input image is
never modified.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

from mae.actions.registry import AtomicAction, OpenApp, Swipe, Tap, Type

MARK = (230, 40, 60)
BANNER_BG = (20, 20, 20, 200)
BANNER_FG = (255, 255, 255, 255)

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@lru_cache(maxsize=8)
def _font(size: int) -> Font:
    for name in ("DejaVuSans-Bold.ttf", "DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def _banner(draw: ImageDraw.ImageDraw, text: str, width: int, top: int, size: int) -> int:
    """A full-width dark strip with ``text``; returns its bottom edge."""
    font = _font(size)
    pad = size // 2
    line = text if len(text) <= 60 else text[:57] + "..."
    height = size + 2 * pad
    draw.rectangle((0, top, width, top + height), fill=BANNER_BG)
    draw.text((pad, top + pad), line, font=font, fill=BANNER_FG)
    return top + height


def _arrow(draw: ImageDraw.ImageDraw, start: tuple[int, int], end: tuple[int, int], width: int) -> None:
    draw.line((start, end), fill=MARK, width=width)
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    head = width * 4
    for side in (-0.45, 0.45):
        tip = (end[0] - head * math.cos(angle + side), end[1] - head * math.sin(angle + side))
        draw.line((end, tip), fill=MARK, width=width)
    radius = width * 2
    draw.ellipse((start[0] - radius, start[1] - radius, start[0] + radius, start[1] + radius), fill=MARK)


def annotate(image: Image.Image, steps: Sequence[AtomicAction], label: str = "") -> Image.Image:
    """A copy of ``image`` with ``steps`` drawn on it (numbered when several) and ``label`` on top."""
    canvas = image.convert("RGBA")
    overlay = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    width, height = canvas.size
    unit = max(2, width // 180)
    text_size = max(12, width // 30)
    banners: list[str] = []
    numbered = len(steps) > 1
    for index, step in enumerate(steps, 1):
        prefix = f"{index}. " if numbered else ""
        if isinstance(step, Tap):
            radius = unit * 9
            box = (step.x - radius, step.y - radius, step.x + radius, step.y + radius)
            draw.ellipse(box, outline=MARK, width=unit * 2)
            draw.ellipse(
                (step.x - unit * 2, step.y - unit * 2, step.x + unit * 2, step.y + unit * 2), fill=MARK
            )
            if numbered:
                draw.text(
                    (step.x + radius, step.y - radius - text_size),
                    str(index),
                    font=_font(text_size),
                    fill=MARK,
                )
        elif isinstance(step, Swipe):
            _arrow(draw, (step.x1, step.y1), (step.x2, step.y2), unit * 2)
        elif isinstance(step, Type):
            banners.append(f'{prefix}Type: "{step.text}"')
        elif isinstance(step, OpenApp):
            banners.append(f"{prefix}Open app: {step.app_name}")
        else:
            banners.append(f"{prefix}{step}")
    top = 0
    if label:
        top = _banner(draw, label, width, 0, text_size)
    bottom_start = height - len(banners) * (2 * text_size) - text_size
    for offset, text in enumerate(banners):
        _banner(draw, text, width, max(top, bottom_start + offset * 2 * text_size), text_size)
    return Image.alpha_composite(canvas, overlay).convert("RGB")
