"""Calibration screens for the coordinate doctor: screenshots whose tap targets are known to the pixel.

Two kinds, in portrait and landscape sizes:

- real app screens of the built-in virtual phone (home screen, Notes, Amazon), each target's box read
  from the phone's own widget tree, so the box is exactly what a tap there would hit;
- plain targets: coloured discs with a letter on a quiet background, at positions chosen to spread
  over the whole screen (far corners separate coordinate conventions best).

``calibration_cases`` orders them so that any prefix mixes sizes and orientations: a doctor run with
few requests still sees a portrait app screen, a landscape screen and targets far from the origin.
Descriptions are unique across the set, so a reply can always be traced back to its target.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageDraw

from mae.device.virtual import VirtualPhone
from mae.device.virtual.render import font

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class CalibrationScreen:
    """One screenshot and what it shows."""

    name: str
    image: Image.Image

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size


@dataclass(frozen=True)
class CalibrationCase:
    """One target on one calibration screen: ask the model for it, check the reply against ``box``."""

    screen: CalibrationScreen
    description: str
    """How the request names the target: ``the Settings app icon``."""
    box: Box
    """The target's box in screen pixels (left, top, right, bottom)."""

    @property
    def center(self) -> tuple[int, int]:
        left, top, right, bottom = self.box
        return (left + right) // 2, (top + bottom) // 2

    def contains(self, x: float, y: float) -> bool:
        left, top, right, bottom = self.box
        return left <= x <= right and top <= y <= bottom


_APP_TARGETS: tuple[tuple[str, tuple[int, int], str, tuple[tuple[str, str], ...]], ...] = (
    (
        "home-1080x2340",
        (1080, 2340),
        "",
        (
            ("Settings", "the Settings app icon"),
            ("Maps", "the Maps app icon"),
            ("Best Buy", "the Best Buy app icon"),
            ("Clock", "the Clock app icon"),
        ),
    ),
    ("notes-1080x2340", (1080, 2340), "Notes", (("new note", 'the round "new note" button'),)),
    ("amazon-1080x2340", (1080, 2340), "Amazon", (("cart", "the shopping cart icon"),)),
    (
        "home-720x1600",
        (720, 1600),
        "",
        (("Photos", "the Photos app icon"), ("Walmart", "the Walmart app icon")),
    ),
)
"""(screen name, size, app to open ('' = home screen), ((widget label, description), ...))."""

_COLOURS: tuple[tuple[str, str], ...] = (
    ("#d93025", "red"),
    ("#1a73e8", "blue"),
    ("#188038", "green"),
    ("#e37400", "orange"),
)
_PLAIN_SCREENS: tuple[tuple[str, tuple[int, int], str, tuple[tuple[float, float], ...]], ...] = (
    ("targets-2400x1080", (2400, 1080), "ABCD", ((0.88, 0.8), (0.12, 0.2), (0.62, 0.3), (0.35, 0.75))),
    ("targets-1080x2400", (1080, 2400), "EFGH", ((0.82, 0.9), (0.18, 0.12), (0.7, 0.45), (0.3, 0.65))),
    ("targets-1600x720", (1600, 720), "JK", ((0.9, 0.75), (0.2, 0.3))),
)
"""(screen name, size, the discs' letters, centre of each disc as fractions of the width and height)."""

_ORDER: tuple[tuple[str, int], ...] = (
    ("home-1080x2340", 0),
    ("targets-2400x1080", 0),
    ("notes-1080x2340", 0),
    ("targets-1080x2400", 0),
    ("amazon-1080x2340", 0),
    ("targets-2400x1080", 1),
    ("home-720x1600", 0),
    ("targets-1600x720", 0),
    ("home-1080x2340", 1),
    ("targets-1080x2400", 1),
    ("targets-2400x1080", 2),
    ("home-1080x2340", 2),
    ("targets-1080x2400", 2),
    ("home-720x1600", 1),
    ("targets-1600x720", 1),
    ("home-1080x2340", 3),
    ("targets-2400x1080", 3),
    ("targets-1080x2400", 3),
)
"""Which target of which screen comes n-th: sizes and orientations alternate."""


def _app_screen(
    name: str, size: tuple[int, int], app: str, labels: tuple[tuple[str, str], ...]
) -> list[CalibrationCase]:
    phone = VirtualPhone(*size)
    if app:
        phone.open_app(app)
    boxes = {node.label: node.bounds for node in phone.ui_tree().nodes if node.clickable and node.label}
    screen = CalibrationScreen(name, phone.screenshot())
    phone.close()
    return [
        CalibrationCase(screen, description, boxes[label]) for label, description in labels if label in boxes
    ]


def _plain_screen(
    name: str, size: tuple[int, int], letters: str, centres: tuple[tuple[float, float], ...]
) -> list[CalibrationCase]:
    width, height = size
    image = Image.new("RGB", size, "#f1f3f4")
    draw = ImageDraw.Draw(image)
    radius = round(min(width, height) * 0.06)
    letter_font = font(round(radius * 1.1))
    targets = []
    for index, (letter, (fx, fy)) in enumerate(zip(letters, centres, strict=True)):
        colour, colour_name = _COLOURS[index % len(_COLOURS)]
        cx, cy = round(fx * width), round(fy * height)
        box = (cx - radius, cy - radius, cx + radius, cy + radius)
        draw.ellipse(box, fill=colour)
        draw.text((cx, cy), letter, fill="white", font=letter_font, anchor="mm")
        targets.append((f'the {colour_name} circle marked "{letter}"', box))
    screen = CalibrationScreen(name, image)
    return [CalibrationCase(screen, description, box) for description, box in targets]


@lru_cache(maxsize=1)
def _all_cases() -> dict[str, tuple[CalibrationCase, ...]]:
    by_screen: dict[str, tuple[CalibrationCase, ...]] = {}
    for name, size, app, labels in _APP_TARGETS:
        by_screen[name] = tuple(_app_screen(name, size, app, labels))
    for name, size, letters, centres in _PLAIN_SCREENS:
        by_screen[name] = tuple(_plain_screen(name, size, letters, centres))
    return by_screen


def calibration_cases(count: int | None = None) -> list[CalibrationCase]:
    """The first ``count`` calibration cases (all of them when None), sizes and orientations mixed."""
    by_screen = _all_cases()
    ordered = [by_screen[name][index] for name, index in _ORDER if index < len(by_screen[name])]
    return ordered if count is None else ordered[:count]
