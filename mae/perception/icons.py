"""Icon grounding: where the icons are. ``contour`` (OpenCV, offline default) lives here;
``groundingdino`` (the paper's detector) is in ``mae.perception.groundingdino``.

Every detector returns icon elements without captions; ``drop_text_regions`` then removes boxes that
are really text, once the OCR result is known (detection and OCR run concurrently).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import cv2
import numpy as np
from pydantic import BaseModel, Field

from mae.errors import ConfigError
from mae.perception.elements import Element
from mae.perception.geometry import box_area, intersection, iou


class IconDetector(Protocol):
    """Finds icon boxes in a screenshot."""

    name: str

    def detect(self, image: np.ndarray) -> list[Element]:
        """Icon elements (empty captions) of an RGB ``uint8`` image of shape ``(height, width, 3)``."""
        ...


class ContourSettings(BaseModel):
    """Sizes are in screen pixels of a 1080-pixel-wide screen and scale with the screen width."""

    scale: float = Field(0.5, gt=0, le=1, description="work on a copy this much smaller (speed)")
    min_side: int = Field(16, ge=1, description="both sides at least this")
    min_long_side: int = Field(24, ge=1, description="the longer side at least this")
    max_area_fraction: float = Field(0.05, gt=0, le=1, description="drop boxes over this share of the screen")
    max_aspect: float = Field(3.0, ge=1, description="longer side / shorter side at most this")
    gap: int = Field(10, ge=1, description="strokes closer than this are one icon")
    edge_threshold: int = Field(12, ge=1, le=255, description="minimal local contrast of an edge")
    max_icons: int = Field(120, ge=1)


class ContourIconDetector:
    """Finds compact, non-text shapes: regions enclosed by strong edges, the size of an icon.

    The outermost icon-sized region wins (an app icon's tile, not the glyph drawn on it); regions as big
    as a card or photo are not icons, but icon-sized regions inside them are.
    """

    name = "contour"

    def __init__(self, settings: ContourSettings | None = None) -> None:
        self.settings = settings or ContourSettings()

    def detect(self, image: np.ndarray) -> list[Element]:
        s = self.settings
        height, width = image.shape[:2]
        unit = width / 1080.0
        scale = s.scale
        gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        if scale != 1.0:
            gray = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        kernel = np.ones((3, 3), np.uint8)
        gradient = cv2.morphologyEx(gray, cv2.MORPH_GRADIENT, kernel)
        _, mask = cv2.threshold(gradient, s.edge_threshold, 255, cv2.THRESH_BINARY)
        close = max(1, round(s.gap * unit * scale))
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((close, close), np.uint8))
        contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)

        max_area = s.max_area_fraction * width * height
        min_side, min_long = s.min_side * unit, s.min_long_side * unit
        candidates: list[tuple[int, int, int, int]] = []
        for contour in contours:
            x, y, w, h = cv2.boundingRect(contour)
            left, top = int(x / scale), int(y / scale)
            right, bottom = min(width, int((x + w) / scale)), min(height, int((y + h) / scale))
            bw, bh = right - left, bottom - top
            if min(bw, bh) < min_side or max(bw, bh) < min_long or bw * bh > max_area:
                continue
            if max(bw, bh) / max(1, min(bw, bh)) > s.max_aspect:
                continue
            candidates.append((left, top, right, bottom))
        outermost = _outermost(candidates)
        outermost.sort(key=lambda b: (b[1], b[0]))
        return [
            Element(kind="icon", box=box, source=self.name, score=1.0) for box in outermost[: s.max_icons]
        ]


def _outermost(boxes: Sequence[tuple[int, int, int, int]], slack: int = 2) -> list[tuple[int, int, int, int]]:
    """Boxes not inside another box (duplicates collapse to one)."""
    ordered = sorted(set(boxes), key=lambda b: -box_area(b))
    kept: list[tuple[int, int, int, int]] = []
    for box in ordered:
        inside = any(
            box[0] >= k[0] - slack
            and box[1] >= k[1] - slack
            and box[2] <= k[2] + slack
            and box[3] <= k[3] + slack
            for k in kept
        )
        if not inside:
            kept.append(box)
    return kept


def drop_text_regions(
    icons: Sequence[Element], texts: Sequence[Element], overlap: float = 0.5
) -> list[Element]:
    """Icons less than ``overlap`` of whose area is covered by a single text box, and that are not the
    outline of one short text (``_outlines``)."""
    kept = []
    for icon in icons:
        area = max(1, box_area(icon.box))
        if all(intersection(icon.box, t.box) / area < overlap and not _outlines(icon, t) for t in texts):
            kept.append(icon)
    return kept


def _outlines(icon: Element, text: Element) -> bool:
    """Whether ``icon`` is the edge detector's outline of ``text``: the text lies inside it and it is
    no larger than the text with a margin of about half a line's height each side. OCR boxes one letter
    tightly and the detector pads its strokes, so a one-letter label (the app called ``X``) covers less
    than half of its own icon box; a badge or button around a letter is wider than that margin."""
    left, top, right, bottom = text.box
    width, height = right - left, bottom - top
    if box_area(text.box) == 0 or intersection(icon.box, text.box) < 0.8 * box_area(text.box):
        return False
    icon_width, icon_height = icon.box[2] - icon.box[0], icon.box[3] - icon.box[1]
    return icon_width <= width + height and icon_height <= 2 * height


def make_icon_detector(name: str, **options: Any) -> IconDetector | None:
    """The detector called ``name`` (``contour``, ``groundingdino``), or ``None`` for ``none``."""
    if name == "none":
        return None
    if name == "contour":
        return ContourIconDetector(ContourSettings(**options))
    if name == "groundingdino":
        from mae.perception.groundingdino import GroundingDinoDetector

        return GroundingDinoDetector(**options)
    raise ConfigError(f"unknown icon detector {name!r}; choose contour, groundingdino or none")


__all__ = [
    "ContourIconDetector",
    "ContourSettings",
    "IconDetector",
    "drop_text_regions",
    "iou",
    "make_icon_detector",
]
