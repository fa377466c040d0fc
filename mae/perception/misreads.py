"""OCR misreads that follow from how letters look, fixed by shape and context (never a word list).

Seen in real runs of the virtual suite with a real model reading the element list:

- a zero between lowercase letters is the letter o (``y0u`` -> ``you``);
- a model code in capitals and digits with one small letter whose capital looks the same is all
  capitals (``Qc45`` -> ``QC45``), and so is such a letter closing a capitalised tail after a small
  prefix (``webOs`` -> ``webOS``, ``iOs`` -> ``iOS``; ``TVs`` and ``PCs`` keep theirs);
- a number run into a word of four or more letters had a space (``55inch`` -> ``55 inch``; ``16GB``,
  ``1080p`` and ``2nd`` stay);
- one digit read from a box much wider than a glyph is a row of drawn symbols (five rating stars read
  as ``9``), not text.
"""

from __future__ import annotations

import re

from mae.perception.elements import Element

LOOK_ALIKE = "cosvwxz"
"""Letters whose small and capital forms differ only in size."""
GLYPH_ASPECT = 2.5
"""A single character's box is at most this many times as wide as it is high."""

_ZERO_IN_WORD = re.compile(r"(?<=[a-z])0(?=[a-z])")
_CODE = re.compile(
    rf"\b(?=[A-Z0-9{LOOK_ALIKE}]*[0-9])(?=[A-Z0-9{LOOK_ALIKE}]*[A-Z])[A-Z0-9{LOOK_ALIKE}]{{3,}}\b"
)
_CAPS_TAIL = re.compile(rf"\b([a-z]+[A-Z]+)([{LOOK_ALIKE}])\b")
_NUMBER_WORD = re.compile(r"\b(\d+)([a-z]{4,})\b")


def fix_text(text: str) -> str:
    """``text`` with the misreads above fixed."""
    text = _ZERO_IN_WORD.sub("o", text)
    text = _CODE.sub(lambda m: m.group(0).upper(), text)
    text = _CAPS_TAIL.sub(lambda m: m.group(1) + m.group(2).upper(), text)
    return _NUMBER_WORD.sub(r"\1 \2", text)


def is_symbol_row(element: Element) -> bool:
    """Whether ``element`` is one digit read from a box far wider than a glyph."""
    left, top, right, bottom = element.box
    digit = element.text.strip()
    return len(digit) == 1 and digit.isdigit() and (right - left) > GLYPH_ASPECT * max(1, bottom - top)
