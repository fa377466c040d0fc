"""Names the element list can give without a model, and the duplicates it should not show twice.

Part of the tidy-up (``mae.perception.tidy``), for screens read by vision alone (a WebView, a game, a
phone without an accessibility tree) as much as for fused ones:

- the system navigation bar's three buttons are named by their place (``back``, ``home``,
  ``recent apps``), since every phone with three-button navigation draws them in that order;
- a ring read as a letter (``O``, ``o``, ``0``, ``Q`` in a square box: a spinner, a magnifier) is an
  icon, not text; alone on an otherwise empty screen it is named ``loading``;
- a text cursor read as a letter at either end of a word (``|Search``, ``Search|``) is cut off (a
  caret merged into a letter is painted out before OCR: ``mae.perception.caret``);
- a close button's cross read as the letter ``X`` (a pop-up's corner, a field's clear button) is an
  icon named ``close``, unless it is a label under an icon (the app called X on the home screen);
- the same control found twice (accessibility tree, OCR and icon detection disagreeing on case or
  on a suffix such as ``Amazon`` / ``Amazon app``) is listed once, when the two lie close together
  and came from different readers or were written differently; two equal texts from one reader stay
  (two rows of a list).
"""

from __future__ import annotations

from collections.abc import Sequence

from mae.perception.elements import CONTENT_BAND, Element, is_loading_indicator

NAV_BAND = 0.94
"""Below this share of the screen height lies the system navigation bar."""
NAV_NAMES = ("back", "home", "recent apps")
RING_LETTERS = frozenset("OoQ0Cc°")
CURSORS = "|¦│"
DUPLICATE_REACH = 0.07
"""Two mentions of one control lie at most this share of the screen height apart (centres)."""
_SUFFIXES = (" app", " icon", " button", " tab")
CROSSES = frozenset("Xx×✕✖✗")


def strip_cursor(text: str) -> str:
    """``text`` without a text cursor read at its start or end (``|Search`` -> ``Search``)."""
    return text.strip(CURSORS + " ") if text[:1] in CURSORS or text[-1:] in CURSORS else text


def _squarish(element: Element) -> bool:
    left, top, right, bottom = element.box
    width, height = max(1, right - left), max(1, bottom - top)
    return 0.7 <= width / height <= 1.4


def is_ring_glyph(element: Element) -> bool:
    """A single ring-shaped letter in a near-square box: a spinner or a magnifier read as text."""
    text = "".join(element.text.split())
    return len(text) == 1 and text in RING_LETTERS and _squarish(element)


def name_navigation_bar(elements: Sequence[Element], width: int, height: int) -> list[Element]:
    """``elements`` with the three unnamed icons of a three-button navigation bar named, left to right,
    ``back``, ``home`` and ``recent apps`` (only when there are exactly three, one in each third)."""
    bar = [e for e in elements if e.kind == "icon" and not e.text and e.center[1] >= NAV_BAND * height]
    if len(bar) != 3 or any(e.text for e in elements if e.center[1] >= NAV_BAND * height and e not in bar):
        return list(elements)
    ordered = sorted(bar, key=lambda e: e.center[0])
    if [min(2, 3 * e.center[0] // max(1, width)) for e in ordered] != [0, 1, 2]:
        return list(elements)
    names = {id(e): name for e, name in zip(ordered, NAV_NAMES, strict=True)}
    return [
        e.model_copy(update={"text": names[id(e)], "named_by": "layout"}) if id(e) in names else e
        for e in elements
    ]


def _under_an_icon(element: Element, icons: Sequence[Element]) -> bool:
    """Whether ``element`` sits right under a larger icon, as an app's name under its icon."""
    left, top, right, _ = element.box
    for icon in icons:
        size = icon.box[3] - icon.box[1]
        if (
            size > element.box[3] - top
            and icon.box[0] - size / 2 <= (left + right) / 2 <= icon.box[2] + size / 2
            and icon.box[3] - 0.2 * size <= top <= icon.box[3] + 0.8 * size
        ):
            return True
    return False


def name_close_crosses(elements: Sequence[Element]) -> list[Element]:
    """``elements`` with a cross read as the letter ``X`` turned into an icon named ``close``; none
    when no icon was found at all (no detector ran: an app's label ``X`` could not be told apart)."""
    icons = [e for e in elements if e.kind == "icon"]
    if not icons:
        return list(elements)
    renamed = []
    for element in elements:
        letter = "".join(element.text.split())
        left, top, right, bottom = element.box
        if (
            element.kind == "text"
            and element.named_by != "a11y"
            and len(letter) == 1
            and letter in CROSSES
            and 0.6 <= (right - left) / max(1, bottom - top) <= 1.6
            and not _under_an_icon(element, icons)
        ):
            element = element.model_copy(update={"kind": "icon", "text": "close", "named_by": "layout"})
        renamed.append(element)
    return renamed


def name_lone_spinner(elements: Sequence[Element], height: int) -> list[Element]:
    """``elements`` with an unnamed ring alone in the content area named ``loading``."""
    top, bottom = CONTENT_BAND[0] * height, CONTENT_BAND[1] * height
    content = [e for e in elements if top <= e.center[1] <= bottom]
    rings = [e for e in content if e.kind == "icon" and not e.text and _squarish(e)]
    if len(rings) != 1 or len(content) > 1:
        return list(elements)
    spinner = rings[0].model_copy(update={"text": "loading", "named_by": "layout"})
    return [spinner if e is rings[0] else e for e in elements]


def _key(text: str) -> str:
    key = " ".join(text.casefold().split())
    for suffix in _SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)]
    return key


def _rank(element: Element) -> tuple[int, int, int]:
    """Which of two mentions of one control to keep: a role from the tree, then a name from the tree,
    then text over icon."""
    return (bool(element.role), element.named_by == "a11y", element.kind == "text")


def collapse_duplicates(elements: Sequence[Element], height: int) -> list[Element]:
    """``elements`` with each control mentioned twice nearby listed once (see the module docstring)."""
    reach = DUPLICATE_REACH * height
    dropped: set[int] = set()
    named = [(i, e, _key(e.text)) for i, e in enumerate(elements) if e.text and not is_loading_indicator(e)]
    by_key: dict[str, list[tuple[int, Element]]] = {}
    for index, element, key in named:
        by_key.setdefault(key, []).append((index, element))
    for group in by_key.values():
        for a, (i, first) in enumerate(group):
            for j, second in group[a + 1 :]:
                if i in dropped or j in dropped:
                    continue
                near = abs(first.center[0] - second.center[0]) <= reach
                near = near and abs(first.center[1] - second.center[1]) <= reach
                same_reader = (first.source, first.named_by, first.kind) == (
                    second.source,
                    second.named_by,
                    second.kind,
                )
                if not near or (same_reader and first.text == second.text):
                    continue
                dropped.add(j if _rank(first) >= _rank(second) else i)
    return [e for i, e in enumerate(elements) if i not in dropped]
