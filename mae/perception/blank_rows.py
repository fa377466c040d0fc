"""Text detection without the empty bands of a screen.

Phone screens are roughly half blank rows: padding between list items, empty panes, flat app bars.
The text detector's cost grows with the pixels it is given, so it can be given a copy of the screen
with the long blank bands shortened (``shorten``), and the boxes it finds are mapped back to the full
screen (``unshorten``).

A row is blank when no two neighbouring pixels in it differ by more than ``tolerance`` grey levels
(flat colour and smooth gradients both count). A band of blank rows keeps ``keep`` rows next to the ink
on either side, enough for the detector to see where a line of text ends; bands not longer than three
times that stay whole (see ``rows_to_keep`` for the screen's top and bottom). The detector grows each
box by most of a line's height, so a box can reach past the kept rows into the other side of a
shortened band. Each box is therefore mapped back from its centre row, which is ink: its edges extend
into the blank band of the full screen by the same number of rows, as they would have had the band
been there.
"""

from __future__ import annotations

import numpy as np


def blank_rows(gray: np.ndarray, tolerance: int = 8) -> np.ndarray:
    """Whether each row of a greyscale ``uint8`` image is blank (no neighbour step above ``tolerance``)."""
    if gray.shape[1] < 2:
        return np.ones(gray.shape[0], dtype=bool)
    steps = np.abs(np.diff(gray.astype(np.int16), axis=1))
    return np.asarray(steps.max(axis=1) <= tolerance)


def rows_to_keep(blank: np.ndarray, keep: int) -> np.ndarray:
    """Indices (ascending) of the rows a shortened copy keeps: every row of ink, and ``keep`` blank rows
    beside the ink at each end of every blank band longer than ``3 * keep`` (a band at the image's
    top or bottom keeps them on its inner side only, and goes when longer than ``2 * keep``)."""
    kept = np.ones(len(blank), dtype=bool)
    flips = np.flatnonzero(np.diff(blank.astype(np.int8))) + 1
    starts = [0, *flips.tolist()]
    ends = [*flips.tolist(), len(blank)]
    for start, end in zip(starts, ends, strict=True):
        if not blank[start]:
            continue
        top = keep if start > 0 else 0
        bottom = keep if end < len(blank) else 0
        if end - start > top + bottom + keep:
            kept[start + top : end - bottom] = False
    return np.flatnonzero(kept)


MIN_ROWS = 32
"""The detector's smallest input side: a shorter copy would be scaled up whole."""


def shorten(gray: np.ndarray, keep: int, tolerance: int = 8) -> np.ndarray | None:
    """The rows of ``gray`` to give the detector (``rows_to_keep``): empty when no row has ink (there is
    no text to find), ``None`` when the whole image should be given (nothing to remove, or too little
    would be left)."""
    blank = blank_rows(gray, tolerance)
    if blank.all():
        return np.zeros(0, dtype=np.int64)
    kept = rows_to_keep(blank, keep)
    return None if len(kept) == gray.shape[0] or len(kept) < MIN_ROWS else kept


def unshorten(quad: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """A box's corners (``(n, 2)`` x, y in the shortened copy) in the full image, mapped from the box's
    centre row (see the module docstring)."""
    centre = int(np.clip(round(float(quad[:, 1].mean())), 0, len(kept) - 1))
    mapped = np.array(quad, dtype=np.float32)
    mapped[:, 1] += kept[centre] - centre
    return mapped
