"""Recognising short lines together: line crops laid side by side in one strip per recogniser call.

Most lines on a phone screen are short: 43 % of the virtual suite's lines are under 60 px wide once
scaled to the recogniser's 48 px height (keyboard keys, prices, tab labels), and one call per line pads
each to at least 160 px. PP-OCR's recogniser reads a line left to right into a CTC output (one column
per ``STRIDE`` input columns), so lines can share a call: each sits at a column that is a multiple of
the stride, ``GAP`` blank columns from the one before (zeros after normalisation, what the model sees
as padding), and each output column is read as part of the line it lies over. A line as wide as a
strip goes alone.

The recogniser's attention layers look along the whole strip, so a line's strip mates can change its
reading: 12-17 % of lines read differently from one call per line, mostly the case of a lone letter
or a space. On the virtual suite's screens and their JPEG, dark and upscaled copies, text recall
stays within half a point of one line per call and icon recall rises, for about 14 % less CPU time
per screen (``benchmarks/perception.py --compare rec_strip=0 rec_strip=320 --accuracy --hard``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from mae.perception.line_text import Reading, reading_from_columns

HEIGHT = 48
"""The recogniser's input height."""
STRIDE = 8
"""Input columns per output column of PP-OCR's recogniser (PP-OCRv3/v4)."""
GAP = 16
"""Blank columns between two lines of a strip."""


@dataclass(frozen=True)
class Strip:
    """Crops recognised in one call: ``members`` (indexes into the crop list) from left to right, the
    column each starts at, the width each is scaled to, and the strip's width."""

    members: tuple[int, ...]
    offsets: tuple[int, ...]
    widths: tuple[int, ...]
    width: int


def scaled_width(crop: np.ndarray) -> int:
    """The crop's width once scaled to ``HEIGHT`` rows (rounded up)."""
    height, width = crop.shape[:2]
    return max(1, math.ceil(HEIGHT * width / max(1, height)))


def _aligned(column: int) -> int:
    return -(-column // STRIDE) * STRIDE


class _Open:
    """A strip being filled."""

    def __init__(self, index: int, width: int) -> None:
        self.members, self.offsets, self.widths = [index], [0], [width]
        self.end = width

    def place(self, index: int, width: int, limit: int) -> bool:
        start = _aligned(self.end + GAP)
        if start + width > limit:
            return False
        self.members.append(index)
        self.offsets.append(start)
        self.widths.append(width)
        self.end = start + width
        return True


def pack(widths: Sequence[int], *, limit: int, min_width: int) -> list[Strip]:
    """Strips for lines of the given scaled ``widths``: lines narrower than ``limit`` share strips at
    most ``limit`` columns wide (widest line first, each into the first strip with room); wider lines
    go alone. Every strip is at least ``min_width`` wide and padded to a multiple of ``STRIDE`` (its
    last output column then covers whole input columns)."""
    strips: list[_Open] = []
    for index in sorted(range(len(widths)), key=lambda i: -widths[i]):
        width = widths[index]
        if width >= limit or not any(strip.place(index, width, limit) for strip in strips):
            strips.append(_Open(index, width))
    return [
        Strip(tuple(s.members), tuple(s.offsets), tuple(s.widths), _aligned(max(min_width, s.end)))
        for s in strips
    ]


def strip_input(crops: Sequence[np.ndarray], strip: Strip) -> np.ndarray:
    """The recogniser's input for ``strip``: a float32 ``(1, 3, HEIGHT, width)`` array of the BGR crops
    scaled to ``HEIGHT`` rows and normalised to ``[-1, 1]``, zeros elsewhere."""
    canvas = np.zeros((HEIGHT, strip.width, 3), np.float32)
    for index, offset, width in zip(strip.members, strip.offsets, strip.widths, strict=True):
        scaled = cv2.resize(crops[index], (width, HEIGHT))
        canvas[:, offset : offset + width] = scaled.astype(np.float32) / 127.5 - 1.0
    return canvas.transpose(2, 0, 1)[np.newaxis]


def read_strip(probabilities: np.ndarray, strip: Strip, characters: Sequence[str]) -> list[Reading]:
    """Each member's reading from the recogniser's ``(columns, classes)`` output for ``strip`` (class 0
    is CTC's blank, class ``i`` is ``characters[i]``): an output column belongs to the line under its
    centre, or in a gap to the nearer line."""
    best = probabilities.argmax(axis=1)
    confidence = probabilities.max(axis=1)
    scale = strip.width / max(1, len(best))  # input columns per output column
    centres = (np.arange(len(best)) + 0.5) * scale
    ends = [offset + width for offset, width in zip(strip.offsets, strip.widths, strict=True)]
    cuts = np.asarray([(end + start) / 2 for end, start in zip(ends[:-1], strip.offsets[1:], strict=True)])
    owner = np.searchsorted(cuts, centres, side="right")
    readings = []
    for slot, (offset, width) in enumerate(zip(strip.offsets, strip.widths, strict=True)):
        mine = np.flatnonzero(owner == slot)
        ids = best[mine]
        keep = ids != 0
        keep[1:] &= ids[1:] != ids[:-1]  # CTC: a class repeated in adjacent columns is one character
        text = "".join(characters[i] for i in ids[keep])
        positions = ((mine[keep] + 0.5) * scale - offset).tolist()
        score = float(np.mean(confidence[mine][keep])) if keep.any() else 0.0
        readings.append(reading_from_columns(text, score, positions, width, scale))
    return readings
