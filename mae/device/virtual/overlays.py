"""Drawing what the virtual phone puts over an app: spinners, splash screens and dialogs.

A card or a bottom sheet is drawn over the app itself, dimmed by a translucent black scrim (the app's
pixels only: its texts are not in the ground truth and nothing of it is tappable, as on a real phone
where the dialog window has the focus). A full-screen interstitial and a busy screen hide the app.
"""

from __future__ import annotations

from mae.device.virtual import icons, theme
from mae.device.virtual.canvas import Canvas, DBox
from mae.device.virtual.realism import DIALOG_BG, Dialog

SCRIM_ALPHA = {"card": 0.6, "sheet": 0.32}
"""Opacity of the black scrim behind a dialog: Android's default dim (0.6) for a centred dialog,
Material's 32 % for a bottom sheet."""
BUTTON_H = 110
BUTTON_GAP = 20
ON_ACCENT_BG = "#062E6F"


def scrim_alpha(dialog: Dialog) -> float:
    """How dark the scrim behind ``dialog`` is (1.0: the app is hidden)."""
    return SCRIM_ALPHA.get(dialog.style, 1.0)


def draw_busy(c: Canvas, kind: str, top: float, bottom: float) -> None:
    """A blank splash screen or a loading spinner (nothing tappable)."""
    c.rect((0, top, c.dw, bottom), theme.WHITE)
    if kind == "spinner":
        cx, cy = c.dw / 2, (top + bottom) / 2
        c.arc((cx - 70, cy - 70, cx + 70, cy + 70), 200, 470, theme.ACCENT, 14)
        c.icon_element((cx - 70, cy - 70, cx + 70, cy + 70), "loading spinner")


def draw_dialog(c: Canvas, dialog: Dialog, top: float, bottom: float) -> DBox:
    """Draw ``dialog`` (over a scrim drawn by the caller, or full screen); return its box."""
    if dialog.style == "fullscreen":
        return _fullscreen(c, dialog, top, bottom)
    width = c.dw - 2 * 90 if dialog.style == "card" else c.dw
    lines = c.wrap(dialog.body, theme.BODY, width - 120) if dialog.body else []
    title_lines = c.wrap(dialog.title, theme.LARGE, width - 200)
    stacked = dialog.kind == "permission"
    buttons_h = len(dialog.buttons) * 130 if stacked else (130 if dialog.buttons else 0)
    handle = 40 if dialog.style == "sheet" else 0
    height = handle + 80 + len(title_lines) * 66 + len(lines) * 58 + 50 + buttons_h + 40
    if dialog.style == "sheet":
        box = (0.0, bottom - height, c.dw, bottom + 48)  # rounded top corners only
    else:
        mid = (top + bottom) / 2
        box = (90.0, mid - height / 2, c.dw - 90, mid + height / 2)
    left, y0, right, _ = box
    c.rect(box, DIALOG_BG, radius=48)
    if handle:
        c.rect((c.dw / 2 - 48, y0 + 22, c.dw / 2 + 48, y0 + 32), theme.DIVIDER, radius=5)
    y = y0 + handle + 80
    for line in title_lines:
        c.text(left + 60, y, line, size=theme.LARGE, bold=True, anchor="lm")
        y += 66
    for line in lines:
        c.text(left + 60, y, line, size=theme.BODY, color=theme.TEXT_2, anchor="lm")
        y += 58
    y += 30
    if dialog.on_close is not None:
        _close(c, dialog, right - 75, y0 + handle + 75)
    if stacked:
        for button in dialog.buttons:
            box_b = (left + 60, y, right - 60, y + BUTTON_H)
            c.rect(box_b, theme.ACCENT_BG, radius=55)
            c.text((left + right) / 2, y + 55, button.label, size=theme.BODY, color=ON_ACCENT_BG, anchor="mm")
            c.tap(box_b, button.action, button.label)
            y += 130
    else:
        x = right - 60
        for button in reversed(dialog.buttons):
            w = c.measure(button.label, theme.BODY) + 90
            _button(c, (x - w, y, x, y + BUTTON_H), button.label, button.primary)
            c.tap((x - w, y, x, y + BUTTON_H), button.action, button.label)
            x -= w + 30
    return (left, y0, right, min(box[3], bottom))


def _fullscreen(c: Canvas, dialog: Dialog, top: float, bottom: float) -> DBox:
    """A full-screen interstitial: the app is hidden; title in the middle, buttons at the bottom."""
    c.rect((0, top, c.dw, bottom), theme.WHITE)
    mid = top + (bottom - top) * 0.38
    c.ellipse((c.dw / 2 - 150, mid - 360, c.dw / 2 + 150, mid - 60), theme.ACCENT_BG)
    c.text(
        c.dw / 2, mid - 210, dialog.app[:1].upper(), size=theme.HEADLINE * 2, color=theme.ACCENT, anchor="mm"
    )
    y = mid + 40
    for line in c.wrap(dialog.title, theme.TITLE, c.dw - 180):
        c.text(c.dw / 2, y, line, size=theme.TITLE, bold=True, anchor="mm")
        y += 78
    for line in c.wrap(dialog.body, theme.BODY, c.dw - 200) if dialog.body else []:
        c.text(c.dw / 2, y + 10, line, size=theme.BODY, color=theme.TEXT_2, anchor="mm")
        y += 58
    if dialog.on_close is not None:
        _close(c, dialog, c.dw - 90, top + 90)
    y = bottom - 60 - len(dialog.buttons) * (BUTTON_H + BUTTON_GAP)
    for button in sorted(dialog.buttons, key=lambda b: not b.primary):
        box_b = (90, y, c.dw - 90, y + BUTTON_H)
        _button(c, box_b, button.label, button.primary)
        c.tap(box_b, button.action, button.label)
        y += BUTTON_H + BUTTON_GAP
    return (0.0, top, c.dw, bottom)


def _close(c: Canvas, dialog: Dialog, cx: float, cy: float) -> None:
    assert dialog.on_close is not None
    icons.icon(c, "close", cx, cy, 48, theme.TEXT_2, "close")
    c.tap((cx - 60, cy - 60, cx + 60, cy + 60), dialog.on_close, "close")


def _button(c: Canvas, box: DBox, label: str, primary: bool) -> None:
    left, top, right, bottom = box
    if primary:
        c.rect(box, theme.ACCENT, radius=55)
    c.text(
        (left + right) / 2,
        (top + bottom) / 2,
        label,
        size=theme.BODY,
        color=theme.WHITE if primary else theme.ACCENT,
        anchor="mm",
    )
