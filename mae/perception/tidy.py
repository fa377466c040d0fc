"""Cleaning the element list a model reads: the Perceptor's last stage.

- Status-bar glyphs (clock, signal, battery) are dropped: no task taps them.
- Star-rating glyphs are not text: ``★★★★☆`` is dropped, ``4.5 ★★★★☆`` keeps ``4.5``, and so is one
  character read from a row of drawn stars (``9``). Misreads that follow from letter shapes are fixed
  by context (``mae.perception.misreads``: ``y0u``, ``Qc45``, ``webOs``, ``55inch``).
- Glyph-only OCR junk (``.`` for a magnifier, ``口`` for a bookmark) becomes an icon, or is dropped
  when the icon detector already found that icon; a stray glyph before a Latin label (``天 46 min``)
  is cut off. This runs on OCR's lines before fusion (``clean_texts``), so the tree can name the icon.
  A lone ring letter (``O``) on a detected icon is that icon's glyph (a magnifier's lens, the home
  button's ring), not text; a lone cross (``×``) is left for the close-button rule; a one- or
  two-character text lying inside a longer text's box is a fragment of it read twice (the stray ``3``
  beside ``$12.98``) and is dropped.
- With the keyboard shown, its keys collapse into one line (``Perception.keyboard_collapsed``).
- Without an accessibility tree, unnamed icons packed in a two-dimensional cluster with no text near
  them (road crossings on a map, texture) are dropped; rows of toolbar icons are kept.
- Names given without a model and duplicates collapsed (``mae.perception.screen_names``): the
  navigation bar's buttons, a lone spinner, a ring or a text cursor read as a letter, a close button's
  cross read as ``X``, the same control read twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mae.perception.elements import Box, Element
from mae.perception.geometry import box_area, holds, intersection
from mae.perception.misreads import fix_text, is_symbol_row
from mae.perception.screen_names import (
    CROSSES,
    RING_LETTERS,
    collapse_duplicates,
    is_ring_glyph,
    name_close_crosses,
    name_lone_spinner,
    name_navigation_bar,
    strip_cursor,
)

STATUS_BAR_SHARE = 0.045
"""The status bar's height as a share of the screen height (24-48 dp on phones)."""
STARS = "★☆✩✪✫✬✭✮✯⭐⯨⯪"
RING_ON_ICON = 0.5
"""A ring letter with at least this share of its box on a detected icon is that icon's glyph."""
FRAGMENT_OVERLAP = 0.7
"""A short text this much inside a longer one is a fragment of it read twice (``drop_fragments``)."""
KEY_ROW_MIN = 5
"""Elements in one row that make a keyboard row (letters, or keys as icons)."""
_LATIN = re.compile(r"[A-Za-z0-9]")


@dataclass(frozen=True)
class Tidied:
    elements: list[Element]
    keyboard_collapsed: bool


def _height(element: Element) -> int:
    return max(1, element.box[3] - element.box[1])


def in_status_bar(element: Element, height: int) -> bool:
    limit = STATUS_BAR_SHARE * height
    return element.box[3] <= limit * 1.1 and element.center[1] < limit


def _strip_stars(text: str) -> str:
    return " ".join(text.translate({ord(c): " " for c in STARS}).split())


def _is_glyph(text: str) -> bool:
    """Text no label would be: no letter or digit at all, or one non-Latin character alone. A cross
    alone (``×``, ``✕``: how OCR reads a close button as often as ``X``) is not one: it is left as text
    for the close-button rule (``name_close_crosses``)."""
    squashed = "".join(text.split())
    if not squashed:
        return True
    if squashed in CROSSES:
        return False
    if not any(ch.isalnum() for ch in squashed):
        return True
    return len(squashed) == 1 and not _LATIN.match(squashed)


def _strip_leading_glyph(text: str) -> str:
    """``天 46 min`` -> ``46 min``: a lone non-Latin character before a Latin label is an icon misread."""
    head, _, rest = text.partition(" ")
    if len(head) == 1 and not head.isascii() and rest and rest.isascii() and _LATIN.search(rest):
        return rest
    return text


def clean_text(element: Element) -> Element | None:
    """A text element with rating stars and stray glyphs removed; an icon for glyph-only junk."""
    if element.kind != "text" or element.named_by == "a11y":
        return element
    text = fix_text(strip_cursor(_strip_leading_glyph(_strip_stars(element.text))))
    if is_symbol_row(element.model_copy(update={"text": text})):
        return None  # five rating stars read as "9"
    if is_ring_glyph(element.model_copy(update={"text": text})):
        return element.model_copy(update={"kind": "icon", "text": "", "named_by": ""})
    if _is_glyph(text):
        left, top, right, bottom = element.box
        width, height = right - left, bottom - top
        if any(ch in STARS for ch in element.text) or min(width, height) < 12:
            return None
        if max(width, height) > 2.5 * min(width, height):
            return None  # a stroke or a row of dots, not an icon
        return element.model_copy(update={"kind": "icon", "text": "", "named_by": ""})
    if text != element.text:
        return element.model_copy(update={"text": text})
    return element


def clean_texts(texts: Sequence[Element], icons: Sequence[Element]) -> tuple[list[Element], list[Element]]:
    """OCR's ``texts`` cleaned (``clean_text``) and the icons: ``icons`` plus glyph-only junk turned into
    icons, except junk whose centre lies inside a detected icon (the arrow read as ``↑``)."""
    kept: list[Element] = []
    found = list(icons)
    for element in texts:
        cleaned = clean_text(element)
        if cleaned is None:
            continue
        if cleaned.kind == "text" and not _ring_in_icon(cleaned, icons):
            kept.append(cleaned)
        elif cleaned.kind == "icon" and not any(holds(icon.box, cleaned.center) for icon in icons):
            found.append(cleaned)
    return drop_fragments(kept), found


def _ring_in_icon(text: Element, icons: Sequence[Element]) -> bool:
    """A lone ring letter (``O``) read off a detected icon: a magnifier's lens, or a ring drawn as the
    whole glyph (the navigation bar's home button). Its centre lies in the icon and most of its box on
    it: OCR pads a line's box above and below the glyph, so a ring that fills its icon can read as a
    box a little taller than the icon's (the home button, 36 x 55 px on a 44 x 44 px icon)."""
    letter = "".join(text.text.split())
    area = max(1, box_area(text.box))
    return (
        len(letter) == 1
        and letter in RING_LETTERS
        and any(
            holds(i.box, text.center) and intersection(i.box, text.box) >= RING_ON_ICON * area for i in icons
        )
    )


def _overlap(inner: Box, outer: Box) -> float:
    """The share of ``inner``'s area that lies inside ``outer``."""
    left, top = max(inner[0], outer[0]), max(inner[1], outer[1])
    right, bottom = min(inner[2], outer[2]), min(inner[3], outer[3])
    if right <= left or bottom <= top:
        return 0.0
    return box_area((left, top, right, bottom)) / max(1, box_area(inner))


def drop_fragments(texts: Sequence[Element]) -> list[Element]:
    """``texts`` without re-read fragments: a one- or two-character text whose box lies mostly
    (``FRAGMENT_OVERLAP``) inside a longer text's box is a piece of it read again (the ``3`` of
    ``$12.98``); a lone digit beside other text (a quantity, a page number) overlaps nothing."""
    kept = []
    for text in texts:
        short = len("".join(text.text.split())) <= 2
        if short and any(
            other is not text
            and len("".join(other.text.split())) > len("".join(text.text.split()))
            and _overlap(text.box, other.box) >= FRAGMENT_OVERLAP
            for other in texts
        ):
            continue
        kept.append(text)
    return kept


def keyboard_band(elements: Sequence[Element], height: int) -> tuple[int, int] | None:
    """Top and bottom of the on-screen keyboard, found as rows of one-character keys in the lower half."""
    keys = [
        e
        for e in elements
        if e.center[1] > height * 0.45 and (e.kind == "icon" or len("".join(e.text.split())) <= 1)
    ]
    rows: list[list[Element]] = []
    for key in sorted(keys, key=lambda e: e.center[1]):
        if rows and abs(key.center[1] - rows[-1][0].center[1]) <= _height(rows[-1][0]) * 0.6:
            rows[-1].append(key)
        else:
            rows.append([key])
    full = [row for row in rows if len(row) >= KEY_ROW_MIN]
    if len(full) < 2:
        return None
    centres = [sum(e.center[1] for e in row) / len(row) for row in full]
    pitch = (centres[-1] - centres[0]) / (len(full) - 1)
    top = int(centres[0] - 0.6 * pitch)
    bottom = int(centres[-1] + 1.4 * pitch)  # the space-bar row, not the navigation bar below it
    return top, bottom


def _labelled_below(icon: Element, texts: Sequence[Element]) -> bool:
    """Whether a text sits right under (or inside) ``icon``: an app or tab label, so not texture."""
    size = max(_height(icon), icon.box[2] - icon.box[0])
    left, _, right, bottom = icon.box
    for t in texts:
        x = t.center[0]
        if holds(icon.box, t.center):
            return True
        if (
            left - size / 2 <= x <= right + size / 2
            and bottom - 0.2 * size <= t.box[1] <= bottom + 0.8 * size
        ):
            return True
    return False


def _map_clutter(elements: Sequence[Element], height: int) -> set[int]:
    """Indexes of small unnamed icons laid out in a 2-D grid with no labels (road crossings, texture).

    A toolbar is one row and a settings list one column, so neither counts; an app grid has labels.
    """
    icons = [
        (i, e)
        for i, e in enumerate(elements)
        if e.kind == "icon"
        and not e.text
        and not e.role
        and max(_height(e), e.box[2] - e.box[0]) <= 0.06 * height
    ]
    texts = [e for e in elements if e.kind == "text"]
    icons = [(i, e) for i, e in icons if not _labelled_below(e, texts)]
    clutter: set[int] = set()
    for index, icon in icons:
        size = max(_height(icon), icon.box[2] - icon.box[0])
        x, y = icon.center
        reach_y, reach_x = max(4 * size, 0.12 * height), max(4 * size, 0.15 * height)
        neighbours = [
            other
            for j, other in icons
            if j != index and abs(other.center[1] - y) <= reach_y and abs(other.center[0] - x) <= reach_x
        ]
        other_rows = [o for o in neighbours if abs(o.center[1] - y) > size]
        other_columns = [o for o in neighbours if abs(o.center[0] - x) > size]
        if len(other_rows) >= 2 and len(other_columns) >= 2:
            clutter.add(index)
    return clutter


def tidy(
    elements: Sequence[Element],
    height: int,
    *,
    keyboard_active: bool,
    keep_keys: bool = False,
    has_tree: bool = False,
    width: int | None = None,
) -> Tidied:
    """The element list without noise; see the module docstring. ``width`` (the screen's) lets the
    navigation bar's buttons be named."""
    kept: list[Element] = []
    for element in elements:
        if not in_status_bar(element, height) and box_area(element.box) > 0:
            kept.append(element)
    collapsed = False
    if keyboard_active and not keep_keys:
        band = keyboard_band(kept, height)
        if band is not None:
            top, bottom = band
            kept = [e for e in kept if not (top <= e.center[1] <= bottom) or e.role == "field"]
            collapsed = True  # only when keys were left out: the list then says the keyboard is shown
    if not has_tree:
        clutter = _map_clutter(kept, height)
        kept = [e for i, e in enumerate(kept) if i not in clutter]
    if width is not None:
        kept = name_navigation_bar(kept, width, height)
    kept = collapse_duplicates(name_close_crosses(name_lone_spinner(kept, height)), height)
    return Tidied(kept, collapsed)
