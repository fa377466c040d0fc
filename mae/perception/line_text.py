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
from typing import Any, NamedTuple

import numpy as np

BULLETS = "·•●▪◦‣∙"
"""List bullets: dropped from the start of a line (they are decoration, not text to tap)."""

MARGIN_COLUMNS = 1.5
"""A CTC column peaks inside its character, not at its edge: keep about half a character of margin."""


class Reading(NamedTuple):
    """A recognised line: text, mean confidence, and the text's horizontal extent as fractions of the
    crop's width (``0.0, 1.0`` when unknown)."""

    text: str
    score: float
    start: float = 0.0
    end: float = 1.0


def reading_from_rapidocr(result: Sequence[Any]) -> Reading:
    """A ``Reading`` from one ``TextRecognizer`` result: ``(text, score)`` or, with word boxes,
    ``(text, score, [columns, words, word_columns, states, confidences])``."""
    text, score = str(result[0]), float(result[1])
    chars: list[str] = []
    columns: list[int] = []
    count = 0.0
    if len(result) > 2:
        try:
            count, words, word_columns = float(result[2][0]), result[2][1], result[2][2]
            for word, cols in zip(words, word_columns, strict=True):
                chars.extend(str(c) for c in word)
                columns.extend(int(c) for c in cols)
        except (TypeError, ValueError, IndexError):
            chars, columns = [], []
    stripped = _strip_bullet(text.strip())
    if not stripped or not chars or len(chars) != len(columns) or count <= 0:
        return Reading(stripped, score)
    visible = [i for i, c in enumerate(chars) if not c.isspace()]
    if stripped != text.strip():  # a bullet was dropped: the text starts after it
        visible = [i for i in visible if chars[i] not in BULLETS]
    if not visible:
        return Reading(stripped, score)
    start = max(0.0, (columns[visible[0]] - MARGIN_COLUMNS) / count)
    end = min(1.0, (columns[visible[-1]] + 1 + MARGIN_COLUMNS) / count)
    if end <= start:
        return Reading(stripped, score)
    return Reading(stripped, score, start, end)


def _strip_bullet(text: str) -> str:
    if len(text) > 1 and text[0] in BULLETS:
        rest = text[1:].lstrip()
        return rest if rest else text
    return text


class LineCache:
    """A thread-safe LRU map from a line crop's pixels to its ``Reading``; size 0 turns it off."""

    def __init__(self, size: int) -> None:
        self.size = max(0, size)
        self._data: OrderedDict[str, Reading] = OrderedDict()
        self._lock = threading.Lock()

    def key(self, crop: np.ndarray) -> str:
        if not self.size:
            return ""
        digest = hashlib.blake2b(repr(crop.shape).encode(), digest_size=16)
        digest.update(np.ascontiguousarray(crop).data)
        return digest.hexdigest()

    def get(self, key: str) -> Reading | None:
        if not self.size:
            return None
        with self._lock:
            found = self._data.get(key)
            if found is not None:
                self._data.move_to_end(key)
            return found

    def put(self, key: str, value: Reading) -> None:
        if not self.size:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)
