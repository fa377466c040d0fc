"""Line splitting at wide gaps, and reading the recogniser's character columns (no models)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from mae.perception.line_split import split_line
from mae.perception.line_text import Reading, reading_from_columns

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _line(*parts: tuple[int, str], width: int = 900) -> np.ndarray:
    """A grey crop 60 px tall with each text drawn at its x offset."""
    image = Image.new("L", (width, 60), 245)
    draw = ImageDraw.Draw(image)
    try:
        font: ImageFont.FreeTypeFont | ImageFont.ImageFont = ImageFont.truetype(FONT, 36)
    except OSError:
        font = ImageFont.load_default(36)
    for x, text in parts:
        draw.text((x, 10), text, fill=20, font=font)
    return np.asarray(image)


def test_fields_far_apart_are_split() -> None:
    crop = _line((10, "$229.00"), (230, "Was $329.00"))
    parts = split_line(crop, (100, 500, 1000, 560))
    assert len(parts) == 2
    (l1, t1, r1, b1), (l2, t2, r2, b2) = parts
    assert (t1, b1) == (t2, b2) == (500, 560)
    assert 100 <= l1 < 115 and r1 < l2 and 320 < l2 < 335 and r2 < 1000


def test_words_of_a_sentence_stay_together() -> None:
    crop = _line((10, "Add to cart and keep shopping"))
    assert split_line(crop, (0, 0, 900, 60)) == [(0, 0, 900, 60)]


def test_blank_or_tiny_crops_are_left_alone() -> None:
    assert split_line(np.full((60, 300), 245, np.uint8), (0, 0, 300, 60)) == [(0, 0, 300, 60)]
    assert split_line(np.zeros((2, 2), np.uint8), (0, 0, 2, 2)) == [(0, 0, 2, 2)]


COLUMN = 8.0
"""Input pixels per output column in these tests."""


def _read(text: str, columns: list[int], total: int, score: float = 0.97) -> Reading:
    """The reading of ``text`` whose characters peak at output ``columns`` of a crop ``total`` columns
    wide."""
    positions = [(c + 0.5) * COLUMN for c in columns]
    return reading_from_columns(text, score, positions, total * COLUMN, COLUMN)


def test_reading_trims_to_the_characters() -> None:
    # " Add " over 20 columns: an icon (read as a space) at column 2, the word at columns 8-12
    reading = _read(" Add ", [2, 8, 10, 12, 16], 20)
    assert reading.text == "Add"
    assert reading.start == pytest.approx((8 - 1.5) / 20)
    assert reading.end == pytest.approx((12 + 2.5) / 20)


def test_reading_drops_a_leading_bullet() -> None:
    reading = _read("· Duck", [1, 3, 6, 7, 8, 9], 12)
    assert reading.text == "Duck"
    assert reading.start == pytest.approx((6 - 1.5) / 12)
    assert _read("•", [3], 12).text == "•"  # a lone bullet stays what it is


def test_reading_without_usable_positions() -> None:
    assert reading_from_columns(" Settings ", 0.9, [], 100.0, COLUMN) == Reading("Settings", 0.9, 0.0, 1.0)
    assert reading_from_columns("abc", 0.9, [4.0], 100.0, COLUMN) == Reading("abc", 0.9)  # one position
    assert reading_from_columns("abc", 0.9, [4.0, 12.0, 20.0], 0.0, COLUMN) == Reading("abc", 0.9)
    assert reading_from_columns("", 0.1, [], 100.0, COLUMN) == Reading("", 0.1)
    assert _read("   ", [1, 2, 3], 10, 0.4) == Reading("", 0.4)


def test_full_width_forms_in_a_latin_line_become_ascii() -> None:
    assert _read("？123", [2, 4, 6, 8], 10).text == "?123"
    assert _read("Ｓave（2）", [1, 2, 3, 4, 5, 6, 7], 10).text == "Save(2)"
    assert _read("你好？", [1, 3, 5], 10).text == "你好？"  # a Chinese line keeps its punctuation
    reading = _read("？123", [2, 4, 6, 8], 10)
    assert reading.text == "?123" and reading.start == pytest.approx((2 - 1.5) / 10)
