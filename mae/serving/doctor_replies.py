"""Reading the one point a model gave for a grounding request, in whatever form it wrote it.

Real models answer a "where would you tap" question in many ways: mae's action JSON, a call
(``Tap(540, 1200)``, ``click(x=540, y=1200)``), Qwen's ``{"point_2d": [x, y]}`` or ``{"bbox_2d": [x1,
y1, x2, y2]}``, ``<point>x y</point>``, ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>``, a bare ``[x1, y1,
x2, y2]`` box, ``(x, y)`` or ``x=540, y=1200`` in prose. Actions go through mae's own reader
(``mae.actions.reading``); the other forms are read here, most specific first. A box counts as its centre.
Numbers are kept as written (fractions like ``0.42`` stay fractions: the doctor decides what they mean).
Reading is linear in the text.
"""

from __future__ import annotations

import re

from mae.actions.reading import parse_action_text
from mae.agents import parsing
from mae.errors import ActionError

Point = tuple[float, float]

_NUM = r"(-?\d{1,6}(?:\.\d{1,8})?)"
_SEP = r"\s*[,;\s]\s*"
_PAIR = rf"\(?\s*{_NUM}{_SEP}{_NUM}\s*\)?"
_PATTERNS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (re.compile(rf"<\|box_start\|>\s*{_PAIR}\s*,?\s*{_PAIR}\s*<\|box_end\|>"), True),
    (
        re.compile(
            rf"<(?:bbox|box)>\s*\[?\s*{_NUM}{_SEP}{_NUM}{_SEP}{_NUM}{_SEP}{_NUM}\s*\]?\s*</(?:bbox|box)>"
        ),
        True,
    ),
    (re.compile(rf"<point>\s*\[?\s*{_PAIR}\s*\]?\s*</point>"), False),
    (re.compile(rf"<\|point_start\|>\s*{_PAIR}\s*<\|point_end\|>"), False),
    (
        re.compile(
            rf"[\"']?(?:bbox_2d|bbox|box|bounding_box)[\"']?\s*[:=]\s*\[\s*{_NUM}{_SEP}{_NUM}{_SEP}{_NUM}{_SEP}{_NUM}\s*\]",
            re.I,
        ),
        True,
    ),
    (
        re.compile(
            rf"[\"']?(?:point_2d|point|coordinates?|position|location|click_point|start_box)[\"']?\s*[:=]\s*"
            rf"[\[(]\s*{_NUM}{_SEP}{_NUM}\s*[\])]",
            re.I,
        ),
        False,
    ),
    (re.compile(rf"\bx[\"']?\s*[:=]\s*{_NUM}\s*[,;]?\s*[\"']?y[\"']?\s*[:=]\s*{_NUM}", re.I), False),
    (re.compile(rf"\[\s*{_NUM}\s*,\s*{_NUM}\s*,\s*{_NUM}\s*,\s*{_NUM}\s*\]"), True),
    (re.compile(rf"[\[(]\s*{_NUM}\s*,\s*{_NUM}\s*[\])]"), False),
)
"""(pattern, whether it is a box): tried in this order; the first that matches anywhere wins."""


def read_point(text: str) -> Point | None:
    """The point ``text`` gives, or None when it gives none (a refusal, an empty reply, prose only)."""
    body = parsing.normalize_reply(text[: parsing.MAX_REPLY_CHARS])
    action = parsing.extract_sections(body).get("action") or body
    point = _tap_point(action)
    if point is not None:
        return point
    for pattern, is_box in _PATTERNS:
        match = pattern.search(action)
        if match is None:
            continue
        numbers = [float(value) for value in match.groups()]
        if is_box:
            return (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
        return numbers[0], numbers[1]
    return None


def _tap_point(text: str) -> Point | None:
    """The point of a tap written as mae's action JSON or as a call, through mae's action reader."""
    try:
        call = parse_action_text(text)
    except ActionError:
        return None
    if call.name != "Tap":
        return None
    x, y = call.arguments.get("x"), call.arguments.get("y")
    try:
        return float(x), float(y)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
