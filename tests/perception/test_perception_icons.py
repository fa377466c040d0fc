"""Contour icon detection, detection filtering and box geometry (no OCR, no models)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from mae.errors import ConfigError
from mae.perception.elements import Element
from mae.perception.geometry import (
    clip_box,
    dedupe,
    filter_detections,
    iou,
    quad_to_box,
    reading_order,
    union_box,
)
from mae.perception.icons import (
    ContourIconDetector,
    ContourSettings,
    drop_text_regions,
    make_icon_detector,
)


def _screen() -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """A 1080x2340 screen: four app tiles with a glyph on each, a faint photo tile, a card, a divider."""
    image = Image.new("RGB", (1080, 2340), (248, 249, 250))
    draw = ImageDraw.Draw(image)
    tiles = [(80 + i * 250, 1900, 80 + i * 250 + 160, 2060) for i in range(4)]
    colours = [(219, 68, 55), (15, 157, 88), (244, 160, 0), (66, 133, 244)]
    for colour, (left, top, right, bottom) in zip(colours, tiles, strict=True):
        draw.rounded_rectangle((left, top, right - 1, bottom - 1), radius=36, fill=colour)
        draw.ellipse((left + 50, top + 50, left + 110, top + 110), fill="white")  # the glyph on the tile
    draw.rounded_rectangle((40, 300, 1040, 1500), radius=30, fill="white", outline=(200, 200, 200), width=3)
    photo = (100, 400, 340, 640)  # a light grey product photo on the white card: low contrast edges
    draw.rectangle((photo[0], photo[1], photo[2] - 1, photo[3] - 1), fill=(238, 240, 243))
    draw.ellipse((190, 490, 250, 550), fill=(60, 64, 67))
    draw.line((0, 1700, 1080, 1700), fill=(180, 180, 180), width=3)
    return np.asarray(image), [*tiles, photo]


def test_contour_finds_tiles_not_cards_or_lines_or_glyphs() -> None:
    image, tiles = _screen()
    icons = ContourIconDetector().detect(image)
    assert all(e.kind == "icon" and e.text == "" and e.source == "contour" for e in icons)
    for tile in tiles:
        assert any(iou(tile, e.box) > 0.8 for e in icons), tile
    assert len(icons) == len(tiles)  # no card, no divider, no glyph inside a tile


def test_contour_scales_with_screen_width() -> None:
    image, tiles = _screen()
    half = np.asarray(Image.fromarray(image).resize((540, 1170)))
    assert len(ContourIconDetector().detect(half)) == len(tiles)


def test_contour_settings_bound_sizes() -> None:
    image, _ = _screen()
    assert ContourIconDetector(ContourSettings(min_side=300)).detect(image) == []
    assert len(ContourIconDetector(ContourSettings(max_icons=2)).detect(image)) == 2


def test_text_boxes_drop_icons_they_cover() -> None:
    icon_on_text = Element(kind="icon", box=(100, 100, 200, 140))
    icon_apart = Element(kind="icon", box=(300, 100, 360, 160))
    text = Element(kind="text", text="Search", box=(90, 95, 260, 145))
    assert drop_text_regions([icon_on_text, icon_apart], [text]) == [icon_apart]


def test_filter_detections_drops_big_boxes_and_duplicates() -> None:
    big = Element(kind="icon", box=(0, 0, 600, 600), score=0.9)  # > 5% of 1080x2340
    best = Element(kind="icon", box=(10, 10, 110, 110), score=0.8)
    duplicate = Element(kind="icon", box=(15, 15, 115, 115), score=0.5)
    other = Element(kind="icon", box=(500, 900, 600, 1000), score=0.3)
    assert filter_detections([big, duplicate, other, best], 1080, 2340) == [best, other]


def test_make_icon_detector() -> None:
    assert make_icon_detector("none") is None
    assert isinstance(make_icon_detector("contour", gap=6), ContourIconDetector)
    with pytest.raises(ConfigError, match="contour, groundingdino or none"):
        make_icon_detector("yolo")


def test_geometry() -> None:
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert iou((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0
    assert union_box([(0, 5, 10, 10), (3, 0, 20, 8)]) == (0, 0, 20, 10)
    assert clip_box((-3.5, 2.2, 1200.1, 50.5), 1080, 2340) == (0, 2, 1080, 51)
    assert quad_to_box([[10.2, 5], [50, 5.5], [50.4, 30], [10, 29.9]], 40, 100) == (10, 5, 40, 30)
    a = Element(kind="icon", box=(0, 0, 10, 10), score=0.2)
    b = Element(kind="icon", box=(1, 1, 11, 11), score=0.9)
    assert dedupe([a, b]) == [b]
    right = Element(kind="text", text="right", box=(500, 102, 600, 140))
    left = Element(kind="text", text="left", box=(10, 100, 100, 138))
    below = Element(kind="text", text="below", box=(10, 200, 100, 240))
    assert [e.text for e in reading_order([below, right, left])] == ["left", "right", "below"]


def test_contour_finds_the_small_icons_of_a_phone_set_to_a_small_display_size() -> None:
    """Navigation-bar glyphs about 20 px across on a 1080-pixel-wide screen (the virtual phone's at 60 %)."""
    image = Image.new("RGB", (1080, 2340), (248, 249, 250))
    draw = ImageDraw.Draw(image)
    glyphs = [(300, 2250, 320, 2270), (530, 2250, 550, 2270), (760, 2250, 780, 2270)]
    draw.polygon([(320, 2250), (300, 2260), (320, 2270)], outline=(60, 64, 67), width=3)  # back
    draw.ellipse(glyphs[1], outline=(60, 64, 67), width=3)  # home
    draw.rectangle(glyphs[2], outline=(60, 64, 67), width=3)  # recent apps
    found = ContourIconDetector().detect(np.asarray(image))
    for glyph in glyphs:
        assert any(iou(glyph, e.box) > 0.5 for e in found), glyph
    old_limits = ContourIconDetector(ContourSettings(min_side=24, min_long_side=36))
    assert old_limits.detect(np.asarray(image)) == []  # what the earlier size limits missed
