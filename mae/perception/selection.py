"""Selected text in an input box, read from the picture (the accessibility tree does not say it).

Android draws a selection as a tinted band behind the text: the text of a field whose whole content is
selected (a search box focused again after a search) sits on another colour than the rest of the box.
The element list says so, so that the agent types over it instead of clearing the box by hand (real
runs spent two extra steps a search doing that).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mae.perception.elements import Element

MARGIN = (6, 30)
"""Columns beside the text compared with those behind it: from 6 to 30 pixels off its box."""
MIN_DIFFERENCE = 24
"""Colour distance (sum over RGB) between the band behind the text and the box around it."""


def _background(pixels: np.ndarray) -> np.ndarray | None:
    """The lightest common colour of ``pixels`` (rows x columns x RGB): the ground the text is on."""
    if pixels.size == 0:
        return None
    flat = pixels.reshape(-1, 3).astype(int)
    light = flat[flat.sum(axis=1) >= np.percentile(flat.sum(axis=1), 60)]
    return np.median(light, axis=0) if len(light) else None


def is_selected(rgb: np.ndarray, element: Element) -> bool:
    """Whether ``element``'s text lies on a band of another colour than the box beside it."""
    left, top, right, bottom = element.box
    height, width = rgb.shape[:2]
    top, bottom = max(0, top), min(height, bottom)
    if bottom - top < 4 or right - left < 8:
        return False
    behind = _background(rgb[top:bottom, max(0, left) : min(width, right)])
    beside = [
        rgb[top:bottom, max(0, left - MARGIN[1]) : max(0, left - MARGIN[0])],
        rgb[top:bottom, min(width, right + MARGIN[0]) : min(width, right + MARGIN[1])],
    ]
    around = [b for b in (_background(p) for p in beside) if b is not None]
    if behind is None or not around:
        return False
    return all(int(np.abs(behind - colour).sum()) >= MIN_DIFFERENCE for colour in around)


def mark_selected(elements: Sequence[Element], rgb: np.ndarray) -> list[Element]:
    """``elements`` with the texts of input boxes that are selected marked so."""
    return [
        e.model_copy(update={"selected": True})
        if e.kind == "text" and e.role == "field" and e.text and is_selected(rgb, e)
        else e
        for e in elements
    ]
