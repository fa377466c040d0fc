"""What the recogniser read in one line crop, where in the crop the text lies, and a cache of readings.

PP-OCR's recogniser is a CTC model: each output column covers a slice of the crop, so the columns of
the first and last characters tell where the text starts and ends. Detected boxes often include an
icon before the text (a cart before "Add to cart", a magnifier before a search hint) or a list bullet;
trimming the box to the characters keeps the element's centre on the text.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

BULLETS = "·•●▪◦‣∙"
"""List bullets: dropped from the start of a line (they are decoration, not text to tap)."""

_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
"""Full-width ASCII forms (``？``, ``１``, ``Ａ``) and the ideographic space, to their ASCII characters."""

MARGIN_COLUMNS = 1.5
"""A CTC column peaks inside its character, not at its edge: keep about half a character of margin."""


class Reading(NamedTuple):
    """A recognised line: text, mean confidence, and the text's horizontal extent as fractions of the
    crop's width (``0.0, 1.0`` when unknown)."""

    text: str
    score: float
    start: float = 0.0
    end: float = 1.0


def reading_from_columns(
    text: str, score: float, positions: Sequence[float], width: float, column: float
) -> Reading:
    """A ``Reading`` from a CTC decode: ``text`` (one character per entry of ``positions``), its mean
    confidence, each character's output-column centre from the crop's left edge, the crop's ``width``
    and one output column's width, all in columns of the crop as the recogniser saw it (scaled to its
    input height)."""
    text = ascii_forms(text)
    stripped = _strip_bullet(text.strip())
    if not stripped or len(positions) != len(text) or width <= 0:
        return Reading(stripped, score)
    visible = [i for i, c in enumerate(text) if not c.isspace()]
    if stripped != text.strip():  # a bullet was dropped: the text starts after it
        visible = [i for i in visible if text[i] not in BULLETS]
    if not visible:
        return Reading(stripped, score)
    margin = (0.5 + MARGIN_COLUMNS) * column
    start = max(0.0, (positions[visible[0]] - margin) / width)
    end = min(1.0, (positions[visible[-1]] + margin) / width)
    if end <= start:
        return Reading(stripped, score)
    return Reading(stripped, score, start, end)


def ascii_forms(text: str) -> str:
    """``？123`` -> ``?123``: the recogniser (trained mostly on Chinese) often reads Latin punctuation as
    its full-width form. Only lines with nothing but ASCII besides such forms are mapped (a Chinese
    sentence keeps its punctuation)."""
    if text.isascii() or not all(ch.isascii() or ord(ch) in _FULL_WIDTH for ch in text):
        return text
    return text.translate(_FULL_WIDTH)


def _strip_bullet(text: str) -> str:
    if len(text) > 1 and text[0] in BULLETS:
        rest = text[1:].lstrip()
        return rest if rest else text
    return text


class LineKey(NamedTuple):
    """Where a line crop's ink lies (``left``/``right`` columns of the crop, ``width`` the crop's width)
    and a digest of the ink's pixels with the background colour."""

    digest: str
    left: int = 0
    right: int = 1
    width: int = 1


INK_CONTRAST = 40
"""A pixel is ink when one of its channels differs from the crop's background by more than this."""


def line_key(image: np.ndarray, box: tuple[int, int, int, int] | None = None) -> LineKey:
    """A content key for the line ``box`` of ``image`` (default: all of it) that does not depend on
    where the box's edges fall.

    The detector's boxes move by a pixel or two between screens (they are found on a downscaled copy
    and mapped back), they often cut through the first or last character, and after a scroll every
    line sits at a new place: hashing the box's pixels misses. The key looks at the box grown by half
    its height on each side and by a quarter above and below, and hashes only the ink there (pixels
    that differ from the background, the median of the region's border) cropped to its bounding box,
    plus the background colour. A region without ink is hashed whole. ``left``/``right`` are the ink's
    columns relative to the box.
    """
    pixels = image if image.ndim == 3 else image[:, :, None]
    full_h, full_w = pixels.shape[:2]
    left, top, right, bottom = box if box is not None else (0, 0, full_w, full_h)
    grow = max(0, bottom - top)
    x0, x1 = max(0, left - grow // 2), min(full_w, right + grow // 2)
    y0, y1 = max(0, top - grow // 4), min(full_h, bottom + grow // 4)
    region = pixels[y0:y1, x0:x1]
    height, width = region.shape[:2]
    ink_left, ink_top, ink_right, ink_bottom = 0, 0, width, height
    background = np.zeros(pixels.shape[2], np.uint8)
    if height >= 3 and width >= 3:
        border = np.concatenate([region[0], region[-1], region[:, 0], region[:, -1]])
        background = np.median(border, axis=0).astype(np.uint8)
        ink = (np.abs(region.astype(np.int16) - background.astype(np.int16)) > INK_CONTRAST).any(axis=2)
        rows, columns = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
        if rows.size and columns.size:
            ink_top, ink_bottom = int(rows[0]), int(rows[-1]) + 1
            ink_left, ink_right = int(columns[0]), int(columns[-1]) + 1
    core = np.ascontiguousarray(region[ink_top:ink_bottom, ink_left:ink_right])
    digest = hashlib.blake2b(repr(core.shape).encode(), digest_size=16)
    digest.update(background.tobytes())
    digest.update(core.data)
    return LineKey(digest.hexdigest(), x0 + ink_left - left, x0 + ink_right - left, max(1, right - left))


class LineCache:
    """A thread-safe LRU map from a line's ink (``line_key``) to its ``Reading``; size 0 turns it off.

    Readings are stored with the text's extent relative to the ink, and given back relative to the
    crop that asks, so a line found again at another place or in a looser box keeps an exact extent.
    """

    def __init__(self, size: int) -> None:
        self.size = max(0, size)
        self._data: OrderedDict[str, Reading] = OrderedDict()
        self._lock = threading.Lock()

    def key(self, image: np.ndarray, box: tuple[int, int, int, int] | None = None) -> LineKey:
        """``line_key(image, box)``; nothing to compute when the cache is off."""
        return line_key(image, box) if self.size else LineKey("")

    def get(self, key: LineKey) -> Reading | None:
        if not self.size:
            return None
        with self._lock:
            found = self._data.get(key.digest)
            if found is not None:
                self._data.move_to_end(key.digest)
        if found is None:
            return None
        span = max(1, key.right - key.left)
        start = min(1.0, max(0.0, (key.left + found.start * span) / key.width))
        end = min(1.0, max(start, (key.left + found.end * span) / key.width))
        return found._replace(start=start, end=end)

    def put(self, key: LineKey, value: Reading) -> None:
        if not self.size:
            return
        span = max(1, key.right - key.left)
        stored = value._replace(
            start=(value.start * key.width - key.left) / span, end=(value.end * key.width - key.left) / span
        )
        with self._lock:
            self._data[key.digest] = stored
            self._data.move_to_end(key.digest)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)
