"""Merging wrapped OCR lines (unit level)."""

from __future__ import annotations

from mae.perception.elements import Element
from mae.perception.merge import merge_lines


def text(label: str, box: tuple[int, int, int, int]) -> Element:
    return Element(kind="text", text=label, box=box, source="test")


def test_wrapped_line_merges() -> None:
    lines = [text("Ninja DZ201 Foodi 8 Quart 2-Basket Air", (320, 570, 1000, 610)),
             text("Fryer with DualZone", (320, 625, 640, 665))]  # fmt: skip
    merged = merge_lines(lines)
    assert [e.text for e in merged] == ["Ninja DZ201 Foodi 8 Quart 2-Basket Air Fryer with DualZone"]
    assert merged[0].box == (320, 570, 1000, 665)


def test_fields_in_a_row_stay_apart() -> None:
    lines = [
        text("A long product title that wraps", (320, 570, 1000, 610)),
        text("4.7", (320, 625, 370, 665)),
        text("(38,214)", (660, 625, 820, 665)),
    ]
    assert [e.text for e in merge_lines(lines)] == ["A long product title that wraps", "4.7", "(38,214)"]


def test_far_apart_or_misaligned_lines_stay_apart() -> None:
    far = [text("A title line that is long", (100, 100, 700, 140)), text("next", (100, 260, 300, 300))]
    shifted = [text("A title line that is long", (100, 100, 700, 140)), text("next", (180, 150, 400, 190))]
    bigger = [
        text("Short header", (100, 100, 400, 140)),
        text("Body text that is long", (100, 150, 900, 230)),
    ]
    for case in (far, shifted, bigger):
        assert len(merge_lines(case)) == 2


def test_icons_pass_through() -> None:
    icon = Element(kind="icon", box=(0, 0, 50, 50))
    assert merge_lines([icon]) == [icon]
