"""Text detection on a copy of the screen without its long blank bands (``mae.perception.blank_rows``)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from mae.perception.blank_rows import blank_rows, rows_to_keep, shorten, unshorten
from mae.perception.ocr import RapidOcrBackend

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype(FONT, size)
    except OSError:
        return ImageFont.load_default(size)


def test_flat_rows_and_smooth_gradients_are_blank() -> None:
    gray = np.full((6, 50), 200, np.uint8)
    gray[1] = np.linspace(100, 140, 50).astype(np.uint8)  # a gentle gradient: steps under 8
    gray[3, 10] = 30  # one dark pixel is ink
    assert blank_rows(gray).tolist() == [True, True, True, False, True, True]


def test_long_blank_bands_keep_rows_beside_the_ink() -> None:
    blank = np.array([True] * 10 + [False] * 3 + [True] * 40 + [False] * 2 + [True] * 5)
    kept = rows_to_keep(blank, keep=4).tolist()
    # At the screen's edges only the side beside the ink keeps rows; inside, both sides do.
    assert kept == [*range(6, 17), *range(49, 60)]
    middle = np.array([False] + [True] * 12 + [False])  # not longer than three times ``keep``: whole
    assert rows_to_keep(middle, keep=4).tolist() == list(range(14))
    assert rows_to_keep(np.array([True] * 11 + [False]), keep=4).tolist() == [7, 8, 9, 10, 11]
    assert shorten(np.full((200, 30), 255, np.uint8), keep=4).tolist() == []  # all blank: no text
    assert shorten(np.tile(np.arange(0, 250, 10, dtype=np.uint8), (200, 1)), keep=4) is None  # all ink
    one_line = np.full((200, 30), 255, np.uint8)
    one_line[100:110, 5] = 0
    assert shorten(one_line, keep=4) is None  # 18 rows would be left: the detector gets them all


def test_boxes_map_back_from_their_centre_row() -> None:
    kept = np.array([*range(100, 120), *range(300, 320)])
    # A box around ink rows 105-115 whose grown bottom edge reaches past the kept rows (row 24 of the copy)
    quad = np.array([[0, 2], [50, 2], [50, 24], [0, 24]], np.float32)
    mapped = unshorten(quad, kept)
    assert mapped[:, 1].tolist() == [102, 102, 124, 124]  # into the blank band, not across it
    assert mapped[:, 0].tolist() == quad[:, 0].tolist()
    below = unshorten(np.array([[0, 22], [9, 22], [9, 30], [0, 30]], np.float32), kept)
    assert below[:, 1].tolist() == [302, 302, 310, 310]


@pytest.fixture(scope="module")
def sparse_screen() -> np.ndarray:
    """Lines far apart on a tall white screen, as settings pages and empty lists are."""
    image = Image.new("RGB", (1080, 2340), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 1080, 160), fill=(230, 236, 245))  # a flat app bar
    draw.text((60, 60), "Notifications", fill=(20, 20, 20), font=_font(48))
    for index, text in enumerate(["Battery saver", "Do not disturb", "Screen timeout 30 s"]):
        draw.text((60, 500 + index * 520), text, fill=(30, 30, 30), font=_font(44))
    return np.asarray(image)


def test_detection_on_the_shortened_copy_finds_the_same_lines(sparse_screen: np.ndarray) -> None:
    whole = RapidOcrBackend(rec_cache=0, det_blank_keep=0).read(sparse_screen)
    short = RapidOcrBackend(rec_cache=0, det_blank_keep=6).read(sparse_screen)
    assert [e.text for e in short] == [e.text for e in whole]
    assert len(short) == 4
    for a, b in zip(whole, short, strict=True):
        assert max(abs(p - q) for p, q in zip(a.box, b.box, strict=True)) <= 8
