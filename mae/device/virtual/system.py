"""System UI of the virtual phone: status bar, navigation buttons, home screen and app switcher."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PIL import Image

from mae.device.virtual import icons, theme
from mae.device.virtual.canvas import Canvas
from mae.device.virtual.content import AppSpec, Content


class SystemHost(Protocol):
    """What the system UI needs of the phone it draws (``VirtualPhone`` is one)."""

    content: Content
    recents: list[str]
    switcher_index: int

    def spec(self, label: str) -> AppSpec: ...
    def launch(self, label: str) -> None: ...
    def search_from_home(self) -> None: ...
    def nav_back(self) -> None: ...
    def nav_home(self) -> None: ...
    def nav_recents(self) -> None: ...
    def clear_recents(self) -> None: ...


GRID_TOP = 470.0
GRID_ROW = 300.0
ICON = 150.0
CARD_W = 720.0
CARD_TOP = 330.0


def status_bar(c: Canvas, clock: str, bg: str) -> None:
    """Time on the left; signal, Wi-Fi and battery on the right."""

    def build(s: Canvas) -> None:
        mid = theme.STATUS_H / 2
        s.text(60, mid, clock, size=theme.SMALL, anchor="lm", bold=True)
        x = s.dw - 60
        s.rect((x - 66, mid - 20, x - 6, mid + 20), None, radius=6, outline=theme.TEXT, width=3)
        s.rect((x - 60, mid - 14, x - 24, mid + 14), theme.TEXT, radius=3)
        s.rect((x - 6, mid - 8, x, mid + 8), theme.TEXT)
        s.icon_element((x - 66, mid - 22, x, mid + 22), "battery")
        x -= 100
        for i in range(3):
            r = 14 + i * 10
            s.arc((x - r, mid + 12 - r, x + r, mid + 12 + r), 225, 315, theme.TEXT, 5)
        s.icon_element((x - 36, mid - 26, x + 36, mid + 16), "wifi")
        x -= 80
        s.polygon([(x - 24, mid + 18), (x + 24, mid + 18), (x + 24, mid - 26)], theme.TEXT)
        s.icon_element((x - 24, mid - 26, x + 24, mid + 18), "mobile signal")

    c.layer(f"status:{clock}:{bg}", (0, 0, c.dw, theme.STATUS_H), build, bg)


def nav_bar(c: Canvas, phone: SystemHost) -> None:
    """Back, Home and Recent-apps buttons at the bottom."""
    top = c.dh - theme.NAV_H

    def build(s: Canvas) -> None:
        mid = theme.NAV_H / 2
        for cx, name, caption, action in (
            (s.dw * 0.2, "nav_back", "back button", phone.nav_back),
            (s.dw * 0.5, "nav_home", "home button", phone.nav_home),
            (s.dw * 0.8, "nav_recents", "recent apps button", phone.nav_recents),
        ):
            icons.icon(s, name, cx, mid, 64, theme.NAV_FG, caption)
            s.tap((cx - 130, 0, cx + 130, theme.NAV_H), action, caption)

    c.layer("nav", (0, top, c.dw, c.dh), build, theme.NAV_BG)


def _gradient(c: Canvas, top: float, bottom: float) -> None:
    steps = 48
    a = tuple(int(theme.WALLPAPER_TOP[i : i + 2], 16) for i in (1, 3, 5))
    b = tuple(int(theme.WALLPAPER_BOTTOM[i : i + 2], 16) for i in (1, 3, 5))
    height = (bottom - top) / steps
    for step in range(steps):
        t = step / (steps - 1)
        colour = "#" + "".join(f"{round(x + (y - x) * t):02X}" for x, y in zip(a, b, strict=True))
        c.rect((0, top + step * height, c.dw, top + (step + 1) * height + 1), colour)


def home(c: Canvas, phone: SystemHost) -> None:
    """The launcher: date, a search bar, a grid of labelled app icons and a dock."""
    layout = phone.content.apps.home
    specs = {spec.label: spec for spec in phone.content.apps.apps}

    def build(s: Canvas) -> None:
        bottom = s.dh
        _gradient(s, 0, bottom)
        s.text(60, 100, layout.date_line, size=theme.TITLE, bold=True)
        s.text(60, 190, layout.weather_line, size=theme.BODY, color=theme.TEXT_2)
        for index, label in enumerate(layout.grid):
            spec = specs[label]
            col, row = index % 4, index // 4
            cx = 135 + col * 270
            cy = GRID_TOP - theme.STATUS_H + row * GRID_ROW
            icons.app_icon(s, spec.icon, cx, cy, ICON, f"{label} app")
            s.text(cx, cy + ICON / 2 + 50, label, size=38, anchor="mm")
            s.tap(
                (cx - 120, cy - ICON / 2 - 20, cx + 120, cy + ICON / 2 + 90), _launcher(phone, label), label
            )
        dock_mid = bottom - 120
        search_top = dock_mid - 300
        s.rect((60, search_top, s.dw - 60, search_top + 130), theme.WHITE, radius=65)
        icons.icon(s, "search", 140, search_top + 65, 56, theme.TEXT_2, "search")
        s.text(200, search_top + 65, "Search the web", size=theme.BODY, color=theme.TEXT_2, anchor="lm")
        icons.icon(s, "mic", s.dw - 140, search_top + 65, 56, theme.TEXT_2, "voice search")
        s.tap((60, search_top, s.dw - 60, search_top + 130), phone.search_from_home, "search bar")
        for index, label in enumerate(layout.dock):
            cx = 135 + index * 270
            icons.app_icon(s, specs[label].icon, cx, dock_mid, 140, f"{label} app")
            s.tap((cx - 100, dock_mid - 90, cx + 100, dock_mid + 90), _launcher(phone, label), label)

    c.layer("home", (0, theme.STATUS_H, c.dw, c.dh - theme.NAV_H), build, theme.WALLPAPER_TOP)


def _launcher(phone: SystemHost, label: str) -> Callable[[], None]:
    return lambda: phone.launch(label)


def switcher(c: Canvas, phone: SystemHost, thumbnail: Callable[[str, int, int], Image.Image]) -> None:
    """Recent apps as cards; the focused one in the middle, its neighbours peeking at the sides."""
    c.rect((0, 0, c.dw, c.dh), theme.SWITCHER_BG)
    recents = phone.recents
    if not recents:
        c.text(c.dw / 2, c.dh / 2, "No recent items", size=theme.LARGE, color=theme.TEXT_2, anchor="mm")
        return
    focus = phone.switcher_index
    card_h = CARD_W * c.dh / c.dw
    width_px, height_px = c.px(CARD_W), c.px(card_h)
    left = (c.dw - CARD_W) / 2
    for offset in (-1, 0, 1):
        index = focus - offset
        if not 0 <= index < len(recents):
            continue
        label = recents[index]
        x = left + offset * (CARD_W + 50)
        c.image(thumbnail(label, width_px, height_px), x, CARD_TOP)
        c.rect((x, CARD_TOP, x + CARD_W, CARD_TOP + card_h), None, outline=theme.DIVIDER, width=3)
        visible = (max(0.0, x), CARD_TOP, min(c.dw, x + CARD_W), CARD_TOP + card_h)
        c.tap(visible, _launcher(phone, label), f"{label} card")
        if offset == 0:
            spec = phone.spec(label)
            icons.app_icon(c, spec.icon, left + 50, CARD_TOP - 80, 84, f"{label} app")
            c.text(left + 120, CARD_TOP - 80, label, size=theme.LARGE, anchor="lm", bold=True)
    button_top = CARD_TOP + card_h + 80
    width = c.measure("Clear all", theme.BODY) + 100
    box = (c.dw / 2 - width / 2, button_top, c.dw / 2 + width / 2, button_top + 110)
    c.rect(box, theme.WHITE, radius=55)
    c.text(c.dw / 2, button_top + 55, "Clear all", size=theme.BODY, anchor="mm")
    c.tap(box, phone.clear_recents, "Clear all")


def blurred(image: Image.Image, width: int, height: int) -> Image.Image:
    """A card thumbnail: the app's last screen, too blurred to read (as a recents preview)."""
    small = image.resize((max(1, width // 24), max(1, height // 24)), Image.Resampling.BOX)
    return small.resize((width, height), Image.Resampling.BILINEAR)
