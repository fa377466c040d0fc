"""Splitting a detected text line where it has a wide blank gap.

Text detectors join words of one row into a line, and sometimes join separate fields too: a price and
the struck-out old price next to it, a label and its value. A blank gap much wider than a space (about a
line height) separates fields, never words, so the line is cut there and each part is read on its own:
each then gets its own box and centre to tap.
"""

from __future__ import annotations

import numpy as np

from mae.perception.elements import Box


def ink_mask(gray: np.ndarray, contrast: int = 48) -> np.ndarray:
    """Pixels that differ from the crop's background (the median of its border) by ``contrast``."""
    border = np.concatenate([gray[0], gray[-1], gray[:, 0], gray[:, -1]])
    background = int(np.median(border))
    return np.abs(gray.astype(np.int16) - background) > contrast


def split_line(gray: np.ndarray, box: Box, min_gap: float = 0.8, contrast: int = 48) -> list[Box]:
    """Parts of the line ``box`` (``gray`` is its crop) separated by blank runs of at least ``min_gap``
    times the ink height; ``[box]`` when there is no such gap. Parts keep the line's top and bottom and
    a margin of a quarter of the ink height on each side."""
    if gray.ndim != 2 or gray.shape[0] < 4 or gray.shape[1] < 4:
        return [box]
    ink = ink_mask(gray, contrast)
    rows = np.flatnonzero(ink.any(axis=1))
    columns = np.asarray(ink.any(axis=0))
    if rows.size == 0 or not columns.any():
        return [box]
    ink_height = int(rows[-1] - rows[0] + 1)
    gap = max(4, round(min_gap * ink_height))
    runs = _ink_runs(columns, gap)
    if len(runs) < 2:
        return [box]
    left, top, _, bottom = box
    margin = max(2, ink_height // 4)
    width = gray.shape[1]
    return [
        (left + max(0, start - margin), top, left + min(width, end + margin), bottom) for start, end in runs
    ]


def _ink_runs(columns: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """``(start, end)`` column spans of ink, merging spans separated by fewer than ``gap`` blank columns."""
    inked = np.flatnonzero(columns)
    runs: list[tuple[int, int]] = []
    start = previous = int(inked[0])
    for column in inked[1:]:
        column = int(column)
        if column - previous - 1 >= gap:
            runs.append((start, previous + 1))
            start = column
        previous = column
    runs.append((start, previous + 1))
    return runs
