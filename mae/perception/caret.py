"""The text cursor (caret) of a focused field, found in a text line's crop and painted out before OCR.

A focused field draws a thin upright bar in the accent colour where the next letter goes: after the
typed text, or over the first letter of the hint when the field is empty. OCR reads that bar as a
letter or merges it into one (``Segment Anything[``, ``pearch Best Buy`` for ``Search Best Buy``).
Cutting letters off afterwards cannot tell a merged caret from a real ``l`` or ``p``; the pixels can:
a caret is one narrow column band of strongly coloured pixels spanning most of the line's height,
while the text around it is not coloured (grey or black ink). Only then is the band painted over with
what surrounds it (``cv2.inpaint``), so a coloured word (a blue link), a coloured badge alone, a thin
black ``l``/``I``/``1`` or a ``|`` typed in the text stay as they are.
"""

from __future__ import annotations

import cv2
import numpy as np

CHROMA = 70
"""A pixel is coloured when its largest and smallest channels differ by at least this much."""
INK = 48
"""A pixel is ink when it differs from the crop's background by at least this much (any channel)."""
CARET_SPAN = 0.55
"""A caret's coloured pixels fill at least this share of the crop's height in its columns."""
CARET_WIDTH = 0.22
"""A caret band is at most this share of the crop's height wide (a 2 dp bar beside 14-20 sp text)."""
OTHER_COLOUR = 0.04
"""At most this share of the ink outside the band may be coloured: the text itself is not."""


def _background(crop: np.ndarray) -> np.ndarray:
    """The crop's background colour: the median of its border pixels."""
    border = np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]])
    return np.median(border, axis=0)


def find_caret(crop: np.ndarray) -> tuple[int, int] | None:
    """Columns ``(first, last + 1)`` of a caret in a BGR (or RGB) line crop, or None."""
    if crop.ndim != 3 or crop.shape[0] < 8 or crop.shape[1] < 8:
        return None
    height = crop.shape[0]
    pixels = crop.astype(np.int16)
    ink = np.abs(pixels - _background(crop)).max(axis=2) >= INK
    coloured = ink & ((pixels.max(axis=2) - pixels.min(axis=2)) >= CHROMA)
    columns = coloured.sum(axis=0)
    tall = np.flatnonzero(columns >= CARET_SPAN * height)
    if tall.size == 0 or tall[-1] - tall[0] + 1 > max(2, CARET_WIDTH * height):
        return None  # no bar, or coloured ink too wide for a caret (a coloured word or glyph)
    first, last = int(tall[0]), int(tall[-1]) + 1
    # Widen to the bar's soft edges: neighbouring columns that are still mostly coloured.
    while first > 0 and columns[first - 1] >= 0.25 * height:
        first -= 1
    while last < crop.shape[1] and columns[last] >= 0.25 * height:
        last += 1
    if last - first > max(3, 2 * CARET_WIDTH * height):
        return None
    outside = np.ones(crop.shape[1], dtype=bool)
    outside[max(0, first - 1) : last + 1] = False
    other_ink = int(ink[:, outside].sum())
    if other_ink < 0.05 * height * height:
        return None  # nothing but the bar: an empty field's caret, or a coloured "|" or "1" alone
    if coloured[:, outside].sum() > OTHER_COLOUR * other_ink:
        return None  # the text is coloured too: not a caret beside grey text
    return first, last


def without_caret(crop: np.ndarray) -> np.ndarray:
    """``crop`` with a caret painted over by its surroundings (the same array when there is none)."""
    found = find_caret(crop)
    if found is None:
        return crop
    first, last = found
    mask = np.zeros(crop.shape[:2], dtype=np.uint8)
    mask[:, max(0, first - 1) : last + 1] = 255
    return cv2.inpaint(np.ascontiguousarray(crop), mask, 3, cv2.INPAINT_TELEA)
