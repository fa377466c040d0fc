"""Icons drawn from shapes: UI glyphs (search, back, star...) and launcher icons of the apps.

Each glyph is drawn inside a square design box; ``icon`` also records it in the ground truth with a
caption. App icons differ in both shape and colour so that icon detection and captioning have real
work to do.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pydantic import BaseModel

from mae.device.virtual import theme
from mae.device.virtual.canvas import Canvas, DBox

Glyph = Callable[[Canvas, float, float, float, str], None]
"""Draws a glyph centred on (cx, cy) with half-size r in a colour."""


def _search(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.ellipse((cx - r * 0.75, cy - r * 0.75, cx + r * 0.35, cy + r * 0.35), outline=col, width=r * 0.2)
    c.line([(cx + r * 0.3, cy + r * 0.3), (cx + r * 0.85, cy + r * 0.85)], col, r * 0.24)


def _mic(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.rect((cx - r * 0.25, cy - r * 0.85, cx + r * 0.25, cy + r * 0.2), col, radius=r * 0.25)
    c.arc((cx - r * 0.5, cy - r * 0.45, cx + r * 0.5, cy + r * 0.45), 0, 180, col, r * 0.14)
    c.line([(cx, cy + r * 0.45), (cx, cy + r * 0.85)], col, r * 0.14)


def _back_arrow(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.line([(cx - r * 0.75, cy), (cx + r * 0.75, cy)], col, r * 0.18)
    c.line([(cx - r * 0.1, cy - r * 0.65), (cx - r * 0.75, cy), (cx - r * 0.1, cy + r * 0.65)], col, r * 0.18)


def _close(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    d = r * 0.6
    c.line([(cx - d, cy - d), (cx + d, cy + d)], col, r * 0.16)
    c.line([(cx - d, cy + d), (cx + d, cy - d)], col, r * 0.16)


def _plus(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.line([(cx - r * 0.7, cy), (cx + r * 0.7, cy)], col, r * 0.18)
    c.line([(cx, cy - r * 0.7), (cx, cy + r * 0.7)], col, r * 0.18)


def _check(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.line([(cx - r * 0.7, cy), (cx - r * 0.2, cy + r * 0.5), (cx + r * 0.75, cy - r * 0.55)], col, r * 0.18)


def star_points(cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    points = []
    for i in range(10):
        radius = r if i % 2 == 0 else r * 0.45
        angle = -math.pi / 2 + i * math.pi / 5
        points.append((cx + radius * math.cos(angle), cy + radius * math.sin(angle)))
    return points


def _star(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.polygon(star_points(cx, cy, r), col)


def _heart(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.ellipse((cx - r * 0.85, cy - r * 0.7, cx + r * 0.05, cy + r * 0.2), outline=col, width=r * 0.15)
    c.ellipse((cx - r * 0.05, cy - r * 0.7, cx + r * 0.85, cy + r * 0.2), outline=col, width=r * 0.15)
    c.line([(cx - r * 0.78, cy), (cx, cy + r * 0.8), (cx + r * 0.78, cy)], col, r * 0.15)


def _repost(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    w = r * 0.14
    c.line(
        [(cx - r * 0.6, cy + r * 0.2), (cx - r * 0.6, cy - r * 0.45), (cx + r * 0.5, cy - r * 0.45)], col, w
    )
    c.line(
        [(cx - r * 0.85, cy - r * 0.05), (cx - r * 0.6, cy + r * 0.25), (cx - r * 0.35, cy - r * 0.05)],
        col,
        w,
    )
    c.line(
        [(cx + r * 0.6, cy - r * 0.2), (cx + r * 0.6, cy + r * 0.45), (cx - r * 0.5, cy + r * 0.45)], col, w
    )
    c.line(
        [(cx + r * 0.85, cy + r * 0.05), (cx + r * 0.6, cy - r * 0.25), (cx + r * 0.35, cy + r * 0.05)],
        col,
        w,
    )


def _reply(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.rect(
        (cx - r * 0.8, cy - r * 0.6, cx + r * 0.8, cy + r * 0.4), outline=col, width=r * 0.14, radius=r * 0.3
    )
    c.line([(cx - r * 0.3, cy + r * 0.4), (cx - r * 0.5, cy + r * 0.8)], col, r * 0.14)


def _share(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    for px, py in ((cx + r * 0.5, cy - r * 0.55), (cx - r * 0.5, cy), (cx + r * 0.5, cy + r * 0.55)):
        c.ellipse((px - r * 0.22, py - r * 0.22, px + r * 0.22, py + r * 0.22), col)
    c.line([(cx + r * 0.5, cy - r * 0.55), (cx - r * 0.5, cy), (cx + r * 0.5, cy + r * 0.55)], col, r * 0.1)


def _bookmark(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.polygon(
        [
            (cx - r * 0.5, cy - r * 0.8),
            (cx + r * 0.5, cy - r * 0.8),
            (cx + r * 0.5, cy + r * 0.8),
            (cx, cy + r * 0.4),
            (cx - r * 0.5, cy + r * 0.8),
        ],
        None,
        col,
    )
    c.line(
        [
            (cx - r * 0.5, cy - r * 0.8),
            (cx + r * 0.5, cy - r * 0.8),
            (cx + r * 0.5, cy + r * 0.8),
            (cx, cy + r * 0.4),
            (cx - r * 0.5, cy + r * 0.8),
            (cx - r * 0.5, cy - r * 0.8),
        ],
        col,
        r * 0.12,
    )


def _more(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    for dy in (-0.55, 0, 0.55):
        c.ellipse((cx - r * 0.13, cy + dy * r - r * 0.13, cx + r * 0.13, cy + dy * r + r * 0.13), col)


def _menu(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    for dy in (-0.5, 0, 0.5):
        c.line([(cx - r * 0.7, cy + dy * r), (cx + r * 0.7, cy + dy * r)], col, r * 0.14)


def _cart(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.line(
        [
            (cx - r * 0.9, cy - r * 0.7),
            (cx - r * 0.6, cy - r * 0.7),
            (cx - r * 0.35, cy + r * 0.35),
            (cx + r * 0.6, cy + r * 0.35),
            (cx + r * 0.8, cy - r * 0.4),
            (cx - r * 0.5, cy - r * 0.4),
        ],
        col,
        r * 0.13,
    )
    for px in (cx - r * 0.25, cx + r * 0.5):
        c.ellipse((px - r * 0.15, cy + r * 0.55, px + r * 0.15, cy + r * 0.85), col)


def _pin(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.ellipse((cx - r * 0.6, cy - r * 0.9, cx + r * 0.6, cy + r * 0.3), col)
    c.polygon([(cx - r * 0.52, cy - r * 0.1), (cx + r * 0.52, cy - r * 0.1), (cx, cy + r * 0.95)], col)
    c.ellipse((cx - r * 0.22, cy - r * 0.52, cx + r * 0.22, cy - r * 0.08), theme.WHITE)


def _directions(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.polygon([(cx, cy - r * 0.95), (cx + r * 0.95, cy), (cx, cy + r * 0.95), (cx - r * 0.95, cy)], col)
    c.line(
        [(cx - r * 0.3, cy + r * 0.35), (cx - r * 0.3, cy - r * 0.1), (cx + r * 0.3, cy - r * 0.1)],
        theme.WHITE,
        r * 0.14,
    )
    c.polygon(
        [(cx + r * 0.25, cy - r * 0.35), (cx + r * 0.55, cy - r * 0.1), (cx + r * 0.25, cy + r * 0.15)],
        theme.WHITE,
    )


def _phone(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    ox, oy = cx + r * 0.3, cy - r * 0.3
    c.arc((ox - r * 0.85, oy - r * 0.85, ox + r * 0.85, oy + r * 0.85), 95, 175, col, r * 0.3)
    c.ellipse((cx - r * 0.78, cy - r * 0.62, cx - r * 0.3, cy - r * 0.22), col)
    c.ellipse((cx - r * 0.02, cy + r * 0.3, cx + r * 0.38, cy + r * 0.78), col)


def _globe(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.ellipse((cx - r * 0.8, cy - r * 0.8, cx + r * 0.8, cy + r * 0.8), outline=col, width=r * 0.12)
    c.ellipse((cx - r * 0.35, cy - r * 0.8, cx + r * 0.35, cy + r * 0.8), outline=col, width=r * 0.1)
    c.line([(cx - r * 0.8, cy), (cx + r * 0.8, cy)], col, r * 0.1)


def _clock(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.ellipse((cx - r * 0.8, cy - r * 0.8, cx + r * 0.8, cy + r * 0.8), outline=col, width=r * 0.12)
    c.line([(cx, cy - r * 0.5), (cx, cy), (cx + r * 0.4, cy + r * 0.2)], col, r * 0.12)


def _gear(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    for i in range(8):
        angle = i * math.pi / 4
        c.line([(cx, cy), (cx + r * 0.85 * math.cos(angle), cy + r * 0.85 * math.sin(angle))], col, r * 0.3)
    c.ellipse((cx - r * 0.62, cy - r * 0.62, cx + r * 0.62, cy + r * 0.62), col)
    c.ellipse((cx - r * 0.26, cy - r * 0.26, cx + r * 0.26, cy + r * 0.26), theme.WHITE)


def _person(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.ellipse((cx - r * 0.35, cy - r * 0.85, cx + r * 0.35, cy - r * 0.15), col)
    c.pieslice((cx - r * 0.75, cy - r * 0.05, cx + r * 0.75, cy + r * 1.4), 180, 360, col)


def _bell(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.pieslice((cx - r * 0.6, cy - r * 0.8, cx + r * 0.6, cy + r * 0.6), 180, 360, col)
    c.rect((cx - r * 0.6, cy - r * 0.12, cx + r * 0.6, cy + r * 0.45), col)
    c.rect((cx - r * 0.8, cy + r * 0.4, cx + r * 0.8, cy + r * 0.55), col)
    c.ellipse((cx - r * 0.18, cy + r * 0.55, cx + r * 0.18, cy + r * 0.85), col)


def _mail(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.rect((cx - r * 0.85, cy - r * 0.55, cx + r * 0.85, cy + r * 0.55), outline=col, width=r * 0.12)
    c.line(
        [(cx - r * 0.85, cy - r * 0.55), (cx, cy + r * 0.1), (cx + r * 0.85, cy - r * 0.55)], col, r * 0.12
    )


def _car(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.rect((cx - r * 0.85, cy - r * 0.15, cx + r * 0.85, cy + r * 0.45), col, radius=r * 0.15)
    c.polygon(
        [
            (cx - r * 0.6, cy - r * 0.15),
            (cx - r * 0.4, cy - r * 0.65),
            (cx + r * 0.4, cy - r * 0.65),
            (cx + r * 0.6, cy - r * 0.15),
        ],
        col,
    )
    for px in (cx - r * 0.5, cx + r * 0.5):
        c.ellipse((px - r * 0.2, cy + r * 0.35, px + r * 0.2, cy + r * 0.75), col)


def _walk(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.ellipse((cx - r * 0.15, cy - r * 0.95, cx + r * 0.2, cy - r * 0.6), col)
    w = r * 0.16
    c.line([(cx, cy - r * 0.45), (cx - r * 0.1, cy + r * 0.2), (cx - r * 0.45, cy + r * 0.9)], col, w)
    c.line([(cx - r * 0.1, cy + r * 0.2), (cx + r * 0.3, cy + r * 0.9)], col, w)
    c.line([(cx - r * 0.5, cy - r * 0.05), (cx, cy - r * 0.4), (cx + r * 0.45, cy - r * 0.05)], col, w)


def _bus(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.rect((cx - r * 0.6, cy - r * 0.85, cx + r * 0.6, cy + r * 0.6), col, radius=r * 0.2)
    c.rect((cx - r * 0.45, cy - r * 0.6, cx + r * 0.45, cy - r * 0.05), theme.WHITE)
    for px in (cx - r * 0.35, cx + r * 0.35):
        c.rect((px - r * 0.15, cy + r * 0.6, px + r * 0.15, cy + r * 0.9), col)


def _chevron(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.line([(cx - r * 0.25, cy - r * 0.6), (cx + r * 0.35, cy), (cx - r * 0.25, cy + r * 0.6)], col, r * 0.16)


def _shift(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.polygon(
        [
            (cx, cy - r * 0.8),
            (cx + r * 0.75, cy),
            (cx + r * 0.35, cy),
            (cx + r * 0.35, cy + r * 0.7),
            (cx - r * 0.35, cy + r * 0.7),
            (cx - r * 0.35, cy),
            (cx - r * 0.75, cy),
        ],
        col,
    )


def _backspace(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.polygon(
        [
            (cx - r * 0.9, cy),
            (cx - r * 0.4, cy - r * 0.6),
            (cx + r * 0.9, cy - r * 0.6),
            (cx + r * 0.9, cy + r * 0.6),
            (cx - r * 0.4, cy + r * 0.6),
        ],
        col,
    )
    _close(c, cx + r * 0.25, cy, r * 0.55, theme.WHITE)


def _enter(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.line(
        [(cx + r * 0.7, cy - r * 0.6), (cx + r * 0.7, cy + r * 0.2), (cx - r * 0.7, cy + r * 0.2)],
        col,
        r * 0.16,
    )
    c.line(
        [(cx - r * 0.35, cy - r * 0.15), (cx - r * 0.75, cy + r * 0.2), (cx - r * 0.35, cy + r * 0.55)],
        col,
        r * 0.16,
    )


def _note(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.rect((cx - r * 0.6, cy - r * 0.8, cx + r * 0.6, cy + r * 0.8), theme.WHITE, radius=r * 0.12)
    for dy in (-0.4, 0, 0.4):
        c.line([(cx - r * 0.38, cy + dy * r), (cx + r * 0.38, cy + dy * r)], col, r * 0.12)


def _nav_back(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.polygon([(cx - r * 0.6, cy), (cx + r * 0.5, cy - r * 0.65), (cx + r * 0.5, cy + r * 0.65)], None, col)
    c.line(
        [
            (cx - r * 0.6, cy),
            (cx + r * 0.5, cy - r * 0.65),
            (cx + r * 0.5, cy + r * 0.65),
            (cx - r * 0.6, cy),
        ],
        col,
        r * 0.14,
    )


def _nav_home(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.ellipse((cx - r * 0.6, cy - r * 0.6, cx + r * 0.6, cy + r * 0.6), outline=col, width=r * 0.14)


def _nav_recents(c: Canvas, cx: float, cy: float, r: float, col: str) -> None:
    c.rect(
        (cx - r * 0.55, cy - r * 0.55, cx + r * 0.55, cy + r * 0.55),
        outline=col,
        width=r * 0.14,
        radius=r * 0.1,
    )


GLYPHS: dict[str, Glyph] = {
    "search": _search, "mic": _mic, "back": _back_arrow, "close": _close, "plus": _plus, "check": _check,
    "star": _star, "heart": _heart, "repost": _repost, "reply": _reply, "share": _share,
    "bookmark": _bookmark, "more": _more, "menu": _menu, "cart": _cart, "pin": _pin,
    "directions": _directions, "phone": _phone,
    "globe": _globe, "clock": _clock, "gear": _gear, "person": _person, "bell": _bell, "mail": _mail,
    "car": _car, "walk": _walk, "bus": _bus, "chevron": _chevron, "shift": _shift, "backspace": _backspace,
    "enter": _enter, "note": _note, "nav_back": _nav_back, "nav_home": _nav_home, "nav_recents": _nav_recents,
}  # fmt: skip


def glyph(c: Canvas, name: str, cx: float, cy: float, size: float, color: str) -> None:
    """Draw glyph ``name`` centred on (cx, cy) inside a ``size`` square, without recording it."""
    GLYPHS[name](c, cx, cy, size / 2, color)


def icon(c: Canvas, name: str, cx: float, cy: float, size: float, color: str, caption: str) -> DBox:
    """Draw a glyph and record it as an icon in the ground truth; return its box."""
    glyph(c, name, cx, cy, size, color)
    box = (cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2)
    c.icon_element(box, caption)
    return box


def stars(c: Canvas, x: float, cy: float, rating: float, size: float = 34) -> float:
    """Five rating stars starting at ``x``; return the right edge. Recorded as one icon."""
    for i in range(5):
        col = theme.STAR if rating >= i + 0.5 else theme.DIVIDER
        _star(c, x + size / 2 + i * size, cy, size / 2 * 0.95, col)
    right = x + 5 * size
    c.icon_element((x, cy - size / 2, right, cy + size / 2), f"Rated {rating:.1f} out of 5 stars")
    return right


# ------------------------------------------------------------------------------------------ app icons


class IconSpec(BaseModel):
    """How a launcher icon looks: a background shape and colour and a drawn symbol."""

    symbol: str
    bg: str = "#FFFFFF"
    fg: str = "#1F1F1F"
    accent: str = "#EA4335"
    shape: str = "squircle"


def _sym_chrome(c: Canvas, cx: float, cy: float, r: float, spec: IconSpec) -> None:
    box = (cx - r * 0.8, cy - r * 0.8, cx + r * 0.8, cy + r * 0.8)
    c.pieslice(box, 210, 330, "#EA4335")
    c.pieslice(box, 330, 90, "#FBBC04")
    c.pieslice(box, 90, 210, "#34A853")
    c.ellipse((cx - r * 0.38, cy - r * 0.38, cx + r * 0.38, cy + r * 0.38), theme.WHITE)
    c.ellipse((cx - r * 0.28, cy - r * 0.28, cx + r * 0.28, cy + r * 0.28), "#1A73E8")


def _sym_x(c: Canvas, cx: float, cy: float, r: float, spec: IconSpec) -> None:
    d = r * 0.5
    c.polygon([(cx - d, cy - d), (cx - d * 0.55, cy - d), (cx + d, cy + d), (cx + d * 0.55, cy + d)], spec.fg)
    c.line([(cx + d * 0.85, cy - d), (cx - d * 0.85, cy + d)], spec.fg, r * 0.09)


def _sym_smile(c: Canvas, cx: float, cy: float, r: float, spec: IconSpec) -> None:
    _cart(c, cx, cy - r * 0.2, r * 0.55, spec.fg)
    c.arc((cx - r * 0.6, cy - r * 0.3, cx + r * 0.6, cy + r * 0.55), 20, 160, spec.accent, r * 0.12)
    c.polygon(
        [(cx + r * 0.5, cy + r * 0.2), (cx + r * 0.7, cy + r * 0.18), (cx + r * 0.62, cy + r * 0.38)],
        spec.accent,
    )


def _sym_spark(c: Canvas, cx: float, cy: float, r: float, spec: IconSpec) -> None:
    for i in range(6):
        angle = -math.pi / 2 + i * math.pi / 3
        c.line(
            [
                (cx + r * 0.18 * math.cos(angle), cy + r * 0.18 * math.sin(angle)),
                (cx + r * 0.62 * math.cos(angle), cy + r * 0.62 * math.sin(angle)),
            ],
            spec.fg,
            r * 0.2,
        )


def _sym_map(c: Canvas, cx: float, cy: float, r: float, spec: IconSpec) -> None:
    c.line([(cx - r * 0.8, cy + r * 0.5), (cx + r * 0.8, cy - r * 0.2)], "#4285F4", r * 0.16)
    c.line([(cx - r * 0.4, cy - r * 0.8), (cx + r * 0.1, cy + r * 0.8)], "#34A853", r * 0.16)
    _pin(c, cx + r * 0.15, cy - r * 0.15, r * 0.6, spec.accent)


def _sym_photos(c: Canvas, cx: float, cy: float, r: float, spec: IconSpec) -> None:
    colours = ["#EA4335", "#FBBC04", "#34A853", "#4285F4"]
    for i, col in enumerate(colours):
        c.pieslice((cx - r * 0.7, cy - r * 0.7, cx + r * 0.7, cy + r * 0.7), i * 90, i * 90 + 70, col)


def _sym_calendar(c: Canvas, cx: float, cy: float, r: float, spec: IconSpec) -> None:
    c.rect(
        (cx - r * 0.65, cy - r * 0.6, cx + r * 0.65, cy + r * 0.7),
        theme.WHITE,
        outline=spec.fg,
        width=r * 0.08,
    )
    c.rect((cx - r * 0.65, cy - r * 0.6, cx + r * 0.65, cy - r * 0.25), spec.accent)
    for row in range(3):
        for col in range(4):
            x = cx - r * 0.45 + col * r * 0.3
            y = cy - r * 0.05 + row * r * 0.24
            c.rect((x - r * 0.07, y - r * 0.06, x + r * 0.07, y + r * 0.06), spec.fg)


def _sym_camera(c: Canvas, cx: float, cy: float, r: float, spec: IconSpec) -> None:
    c.rect((cx - r * 0.75, cy - r * 0.45, cx + r * 0.75, cy + r * 0.55), spec.fg, radius=r * 0.15)
    c.rect((cx - r * 0.3, cy - r * 0.65, cx + r * 0.3, cy - r * 0.4), spec.fg)
    c.ellipse((cx - r * 0.35, cy - r * 0.3, cx + r * 0.35, cy + r * 0.4), spec.bg)
    c.ellipse((cx - r * 0.2, cy - r * 0.15, cx + r * 0.2, cy + r * 0.25), spec.accent)


def _sym_bubble(c: Canvas, cx: float, cy: float, r: float, spec: IconSpec) -> None:
    c.rect((cx - r * 0.7, cy - r * 0.55, cx + r * 0.7, cy + r * 0.35), spec.fg, radius=r * 0.3)
    c.polygon(
        [(cx - r * 0.45, cy + r * 0.25), (cx - r * 0.05, cy + r * 0.3), (cx - r * 0.55, cy + r * 0.7)],
        spec.fg,
    )


def _glyph_symbol(name: str) -> Callable[[Canvas, float, float, float, IconSpec], None]:
    def draw(c: Canvas, cx: float, cy: float, r: float, spec: IconSpec) -> None:
        GLYPHS[name](c, cx, cy, r * 0.75, spec.fg)

    return draw


SYMBOLS: dict[str, Callable[[Canvas, float, float, float, IconSpec], None]] = {
    "chrome": _sym_chrome, "x": _sym_x, "smile": _sym_smile, "spark": _sym_spark, "map": _sym_map,
    "photos": _sym_photos, "calendar": _sym_calendar, "camera": _sym_camera, "bubble": _sym_bubble,
}  # fmt: skip


def app_icon(c: Canvas, spec: IconSpec, cx: float, cy: float, size: float, caption: str) -> DBox:
    """Draw a launcher icon centred on (cx, cy) and record it; return its box."""
    r = size / 2
    box = (cx - r, cy - r, cx + r, cy + r)
    if spec.shape == "circle":
        c.ellipse(box, spec.bg, outline=theme.DIVIDER, width=2)
    else:
        c.rect(box, spec.bg, radius=r * 0.42, outline=theme.DIVIDER, width=2)
    draw = SYMBOLS.get(spec.symbol) or _glyph_symbol(spec.symbol if spec.symbol in GLYPHS else "globe")
    draw(c, cx, cy, r, spec)
    c.icon_element(box, caption)
    return box
