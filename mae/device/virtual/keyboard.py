"""The on-screen keyboard: shown while a text field has focus; its keys type into that field."""

from __future__ import annotations

from collections.abc import Callable

from mae.device.virtual import icons, theme
from mae.device.virtual.canvas import Canvas

LETTER_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
SYMBOL_ROWS = ("1234567890", "@#$_&-+()/", "*\"':;!?")

KEY_W = 96.0
KEY_H = 128.0
GAP = 10.0
ROW_H = KEY_H + 30


class KeyHandler:
    """What the keys do; implemented by the phone."""

    def key(self, char: str) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def key_backspace(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def key_mode(self, mode: str) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def key_enter(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError


def _key(
    c: Canvas,
    box: tuple[float, float, float, float],
    label: str,
    action: Callable[[], object],
    special: bool = False,
    glyph: str = "",
) -> None:
    left, top, right, bottom = box
    c.rect(box, theme.KEY_SPECIAL if special else theme.KEY_BG, radius=18)
    cx, cy = (left + right) / 2, (top + bottom) / 2
    if glyph:
        icons.icon(c, glyph, cx, cy, 56, theme.TEXT, label)
    elif label.strip():
        c.text(cx, cy, label, size=theme.LARGE if len(label) == 1 else theme.SMALL, anchor="mm")
    c.tap((left - GAP / 2, top - 15, right + GAP / 2, bottom + 15), action, f"key {label}")


def build(c: Canvas, handler: KeyHandler, mode: str) -> None:
    """Draw the keyboard in ``mode`` ('lower', 'upper' or 'symbols') filling the canvas."""
    c.rect((0, 0, c.dw, c.dh), theme.KEYBOARD_BG)
    rows = SYMBOL_ROWS if mode == "symbols" else LETTER_ROWS
    top = 40.0
    for index, row in enumerate(rows):
        keys = row.upper() if mode == "upper" else row
        width = len(keys) * (KEY_W + GAP) - GAP
        x = (c.dw - width) / 2
        if index == 2:
            shift_box = (10.0, top, 10 + 140, top + KEY_H)
            if mode == "symbols":
                _key(c, shift_box, "ABC", lambda: handler.key_mode("lower"), special=True)
            else:
                target = "lower" if mode == "upper" else "upper"
                _key(c, shift_box, "shift", lambda m=target: handler.key_mode(m), special=True, glyph="shift")  # type: ignore[misc]
            _key(
                c,
                (c.dw - 150, top, c.dw - 10, top + KEY_H),
                "backspace",
                handler.key_backspace,
                True,
                "backspace",
            )
        for char in keys:
            _key(c, (x, top, x + KEY_W, top + KEY_H), char, lambda ch=char: handler.key(ch))  # type: ignore[misc]
            x += KEY_W + GAP
        top += ROW_H
    switch_label, switch_mode = ("ABC", "lower") if mode == "symbols" else ("?123", "symbols")
    _key(c, (10, top, 160, top + KEY_H), switch_label, lambda: handler.key_mode(switch_mode), special=True)
    _key(c, (170, top, 266, top + KEY_H), ",", lambda: handler.key(","), special=True)
    _key(c, (276, top, 794, top + KEY_H), " ", lambda: handler.key(" "))
    _key(c, (804, top, 900, top + KEY_H), ".", lambda: handler.key("."), special=True)
    _key(c, (910, top, c.dw - 10, top + KEY_H), "enter", handler.key_enter, special=True, glyph="enter")
