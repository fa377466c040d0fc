"""Short lines recognised side by side in strips: packing, the model input, reading each line back."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from mae.perception.line_strips import GAP, HEIGHT, STRIDE, Strip, pack, read_strip, scaled_width, strip_input
from mae.perception.ocr import RapidOcrBackend

CHARACTERS = ["blank", "a", "b", "c", " "]


def test_short_lines_share_strips_and_wide_ones_go_alone() -> None:
    widths = [300, 40, 40, 500, 100, 200]
    strips = pack(widths, limit=320, min_width=160)
    placed = sorted(i for strip in strips for i in strip.members)
    assert placed == list(range(len(widths)))  # every line once
    alone = {strip.members for strip in strips if len(strip.members) == 1}
    assert (3,) in alone and (0,) in alone  # wider than a strip; no room left beside it
    shared = [strip for strip in strips if len(strip.members) > 1]
    assert len(strips) == 4 and shared
    for strip in strips:
        assert strip.width >= 160
        assert strip.offsets[0] == 0
        for offset, width, following in zip(strip.offsets, strip.widths, strip.offsets[1:], strict=False):
            assert following % STRIDE == 0 and following >= offset + width + GAP
        if len(strip.members) > 1:
            assert strip.offsets[-1] + strip.widths[-1] <= 320
        assert strip.widths == tuple(widths[i] for i in strip.members)


def test_strip_width_zero_gives_one_line_per_call_padded_to_the_minimum() -> None:
    strips = pack([40, 400, 100], limit=0, min_width=160)
    assert [(s.members, s.offsets, s.width) for s in strips] == [
        ((1,), (0,), 400),
        ((2,), (0,), 160),
        ((0,), (0,), 160),
    ]
    assert pack([], limit=320, min_width=160) == []


def test_scaled_width_and_strip_width() -> None:
    assert scaled_width(np.zeros((40, 101, 3), np.uint8)) == 122  # 121.2 rounded up
    assert scaled_width(np.zeros((0, 0, 3), np.uint8)) == 1
    (strip,) = pack([361], limit=320, min_width=160)
    assert strip.width == 368  # padded to a whole output column


def test_strip_input_places_each_line_at_its_offset() -> None:
    white = np.full((20, 20, 3), 255, np.uint8)
    black = np.zeros((24, 12, 3), np.uint8)
    strip = Strip(members=(1, 0), offsets=(0, 32), widths=(24, 48), width=160)
    data = strip_input([white, black], strip)
    assert data.shape == (1, 3, HEIGHT, 160) and data.dtype == np.float32
    assert np.all(data[0, :, :, :24] == -1.0)  # the black line, scaled to 24 columns
    assert np.all(data[0, :, :, 24:32] == 0.0)  # the gap is what the model sees as padding
    assert np.all(data[0, :, :, 32:80] == 1.0)  # the white line, scaled to 48 columns
    assert np.all(data[0, :, :, 80:] == 0.0)


def _output(columns: int, peaks: dict[int, int], confidence: float = 0.9) -> np.ndarray:
    """A CTC output: blank everywhere except ``peaks`` (column -> class)."""
    probabilities = np.full((columns, len(CHARACTERS)), (1 - confidence) / (len(CHARACTERS) - 1), np.float32)
    probabilities[:, 0] = confidence
    for column, klass in peaks.items():
        probabilities[column] = (1 - confidence) / (len(CHARACTERS) - 1)
        probabilities[column, klass] = confidence
    return probabilities


def test_each_output_column_is_read_as_part_of_the_line_under_it() -> None:
    # Two lines: columns 0-79 (output columns 0-9) and 96-175 (12-21); the strip is 176 wide (22 columns).
    strip = Strip(members=(4, 7), offsets=(0, 96), widths=(80, 80), width=176)
    # "ab" in the first line; "cc" as two characters (a blank between) and a repeat that is one "a" in
    # the second; column 11 lies in the gap nearer the second line.
    output = _output(22, {2: 1, 3: 2, 11: 3, 13: 0, 14: 3, 16: 1, 17: 1})
    first, second = read_strip(output, strip, CHARACTERS)
    assert first.text == "ab" and first.score == pytest.approx(0.9)
    assert second.text == "cca"
    # Extents are fractions of each line's own width, from its own left edge.
    assert first.start == pytest.approx(max(0.0, (2.5 * 8 - 2 * 8) / 80))
    assert first.end == pytest.approx((3.5 * 8 + 2 * 8) / 80)
    assert second.start == pytest.approx(0.0)  # column 11 is left of the line: clamped
    assert second.end == pytest.approx((16.5 * 8 - 96 + 2 * 8) / 80)  # a repeat keeps its first column


def test_a_line_with_nothing_read_is_empty() -> None:
    strip = Strip(members=(0, 1), offsets=(0, 64), widths=(40, 40), width=160)
    empty, read = read_strip(_output(20, {9: 2}), strip, CHARACTERS)
    assert empty.text == "" and empty.score == 0.0
    assert read.text == "b"


def _keyboard() -> tuple[np.ndarray, list[str]]:
    """A phone-width image with a row of ten letter keys and a label, as a keyboard shows them."""
    image = Image.new("RGB", (1080, 400), (235, 235, 235))
    draw = ImageDraw.Draw(image)
    try:
        font: Any = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 46)
    except OSError:
        font = ImageFont.load_default(46)
    keys = list("qwertyuiop")
    for index, key in enumerate(keys):
        left = 8 + index * 107
        draw.rounded_rectangle((left, 200, left + 95, 320), 12, fill="white")
        draw.text((left + 34, 232), key, fill="black", font=font)
    draw.text((40, 60), "Search for items", fill="black", font=font)
    return np.asarray(image), keys


def test_keys_of_a_keyboard_are_read_in_a_few_calls() -> None:
    image, keys = _keyboard()
    backend = RapidOcrBackend(rec_cache=0, rec_workers=1)
    calls: list[tuple[int, ...]] = []
    recogniser = backend._recogniser

    def counting(data: np.ndarray) -> Any:
        calls.append(data.shape)
        return recogniser(data)

    backend._recogniser = counting  # type: ignore[assignment]
    found = backend.read(image)
    texts = [e.text for e in found]
    assert "Search for items" in texts
    placed = 0
    for index, key in enumerate(keys):
        left = 8 + index * 107
        inside = [e.text for e in found if left <= e.center[0] <= left + 95 and 200 <= e.center[1] <= 320]
        placed += inside == [key]  # each reading lands on its own key
    assert placed >= 8  # a lone glyph can be read in the other case
    assert len(calls) <= 4  # 11 lines, one call each before


def test_an_empty_crop_reads_as_nothing() -> None:
    backend = RapidOcrBackend(rec_cache=0, rec_workers=1)
    image, _ = _keyboard()
    line = np.ascontiguousarray(image[40:130, 30:560, ::-1])  # "Search for items", BGR
    empty, read = backend.recognize([np.zeros((0, 5, 3), np.uint8), line])
    assert empty.text == "" and empty.score == 0.0
    assert read.text == "Search for items"
