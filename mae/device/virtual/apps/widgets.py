"""Reusable pieces of app screens: app bars, text fields, buttons, chips, list dividers."""

from __future__ import annotations

from collections.abc import Callable

from mae.device.virtual import icons, theme
from mae.device.virtual.apps.base import Host, TextField
from mae.device.virtual.canvas import Canvas, DBox, ScrollView

Action = Callable[[], object]


def app_bar(
    c: Canvas,
    top: float,
    title: str,
    back: Action | None = None,
    actions: list[tuple[str, str, Action]] | None = None,
    bg: str = theme.WHITE,
    size: float = theme.TITLE,
) -> float:
    """A top app bar with an optional back arrow and action icons; return its bottom."""
    bottom = top + theme.APPBAR_H
    c.rect((0, top, c.dw, bottom), bg)
    mid = top + theme.APPBAR_H / 2
    x = 48.0
    if back is not None:
        icons.icon(c, "back", 84, mid, 60, theme.TEXT, "back")
        c.tap((24, mid - 70, 144, mid + 70), back, "back arrow")
        x = 168
    c.text(x, mid, title, size=size, anchor="lm", bold=True)
    right = c.dw - 84
    for glyph_name, caption, action in actions or []:
        icons.icon(c, glyph_name, right, mid, 60, theme.TEXT, caption)
        c.tap((right - 60, mid - 70, right + 60, mid + 70), action, caption)
        right -= 120
    return bottom


def fit_tail(c: Canvas, text: str, size: float, width: float) -> str:
    """The longest tail of ``text`` that fits in ``width`` (what a text box shows while typing)."""
    shown = text
    while shown and c.measure(shown, size) > width:
        shown = shown[1:]
    return shown.lstrip()


def text_field(
    c: Canvas,
    host: Host,
    field: TextField,
    box: DBox,
    glyph: str | None = "search",
    size: float = theme.BODY,
    bg: str = theme.FIELD_BG,
    on_tap: Action | None = None,
) -> None:
    """A one-line text box; tapping focuses it (or runs ``on_tap``)."""
    left, top, right, bottom = box
    height = bottom - top
    mid = (top + bottom) / 2
    focused = host.focused() is field
    c.rect(box, bg, radius=height / 2, outline=theme.ACCENT if focused else None, width=3)
    x = left + height * 0.45
    if glyph:
        icons.icon(c, glyph, left + height / 2, mid, height * 0.45, theme.TEXT_2, glyph)
        x = left + height
    clear_w = 0.0
    if focused and field.value:
        clear_w = height
        cx = right - height / 2
        icons.icon(c, "close", cx, mid, height * 0.4, theme.TEXT_2, "clear text")

        def clear() -> None:
            field.value = ""
            field.selected = False
            host.focus(field)

        c.tap((right - height, top, right, bottom), clear, "clear text")
    avail = right - x - clear_w - height * 0.3
    if field.value:
        shown = fit_tail(c, field.value, size, avail)
        ink = c.ink(x, mid, shown, size=size, anchor="lm")
        if field.selected and focused:
            c.rect((x - 4, mid - size * 0.7, ink[2] + 4, mid + size * 0.7), theme.SELECTION)
        c.text(x, mid, shown, size=size, anchor="lm")
        end = ink[2] if shown else x
    else:
        c.text(x, mid, field.placeholder, size=size, color=theme.TEXT_2, anchor="lm")
        end = x
    if focused:
        c.rect((end + 4, mid - size * 0.6, end + 8, mid + size * 0.6), theme.ACCENT)

    def focus() -> None:
        host.focus(field, select=field.select_on_focus)

    c.tap(
        (left, top, right - clear_w, bottom), on_tap or focus, field.placeholder, role="edit", focused=focused
    )


def button(
    c: Canvas,
    box: DBox,
    label: str,
    action: Action,
    filled: bool = True,
    glyph: str | None = None,
    size: float = theme.BODY,
) -> None:
    """A pill button: tonal (dark text on light blue) or outlined."""
    left, top, right, bottom = box
    mid = (top + bottom) / 2
    if filled:
        c.rect(box, theme.ACCENT_BG, radius=(bottom - top) / 2)
    else:
        c.rect(box, theme.WHITE, radius=(bottom - top) / 2, outline=theme.DIVIDER, width=3)
    width = c.measure(label, size)
    x = (left + right) / 2 - width / 2
    if glyph:
        x += 30
        icons.icon(c, glyph, x - 40, mid, 44, theme.ACCENT, glyph)
    c.text(x, mid, label, size=size, color=theme.ACCENT if not filled else "#062E6F", anchor="lm")
    c.tap(box, action, label)


def chip(c: Canvas, x: float, y: float, label: str, action: Action, height: float = 92) -> float:
    """An outlined chip with its top-left at (x, y); return its right edge."""
    width = c.measure(label, theme.SMALL) + 64
    box = (x, y, x + width, y + height)
    c.rect(box, theme.WHITE, radius=height / 2, outline=theme.DIVIDER, width=3)
    c.text(x + 32, y + height / 2, label, size=theme.SMALL, anchor="lm")
    c.tap(box, action, label)
    return x + width


def list_end(c: Canvas, view: ScrollView, y: float, seen: str, text: str = "End of results") -> float:
    """The marker under the last row of a list (``seen`` is recorded when it is on screen); returns the
    y below it. Graders use it: a list seen to its end was seen whole, whatever query made it."""
    with view.row(y, 120):
        c.text(c.dw / 2, y + 60, text, size=theme.BODY, color=theme.TEXT_2, anchor="mm")
        c.mark_seen(seen)
    return y + 120


def divider(c: Canvas, y: float, left: float = 0, right: float | None = None) -> None:
    c.rect((left, y, c.dw if right is None else right, y + 2), theme.DIVIDER)


def avatar(c: Canvas, cx: float, cy: float, size: float, color: str, caption: str) -> None:
    """A coloured circle with a person glyph (profile pictures)."""
    c.ellipse((cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2), color)
    icons.glyph(c, "person", cx, cy + size * 0.06, size * 0.62, theme.WHITE)
    c.icon_element((cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2), caption)


def color_for(key: str) -> str:
    """A stable colour for ``key`` (avatars, product pictures)."""
    palette = ["#1E88E5", "#8E24AA", "#43A047", "#F4511E", "#00897B", "#6D4C41", "#3949AB", "#C0CA33"]
    return palette[sum(key.encode()) % len(palette)]
