"""The Trips app's booking form and confirmation: fields checked for their format on submit.

Like most booking sites, the form says nothing about formats until "Complete booking" is tapped;
then each field that is not in the expected form gets a red message under it, and nothing is booked
until every field passes: a full name (two words or more), an email address, a phone number written
as (217) 555-0134 and a 5-digit ZIP code.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from datetime import date

from mae.device.virtual import theme
from mae.device.virtual.apps import widgets
from mae.device.virtual.apps.base import Host, Screen, TextField
from mae.device.virtual.canvas import Canvas
from mae.device.virtual.content import Hotel

FIELDS: dict[str, str] = {
    "name": "Full name",
    "email": "Email address",
    "phone": "Phone number",
    "zip": "ZIP code",
}
RULES: dict[str, tuple[str, str]] = {
    "name": (r"[A-Za-z][A-Za-z.'-]*( +[A-Za-z][A-Za-z.'-]*)+", "Enter your first and last name."),
    "email": (r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", "Enter an email address like name@example.com."),
    "phone": (r"\(\d{3}\) \d{3}-\d{4}", "Enter the phone number as (555) 555-5555."),
    "zip": (r"\d{5}", "Enter a 5-digit ZIP code."),
}
"""Each field's accepted form (the whole value, spaces at the ends ignored) and its error message."""
FIELD_H = 250.0


def form_screen(hotel_id: str) -> Screen:
    """A fresh booking form for ``hotel_id``; Enter in a field moves to the next one."""
    screen = Screen("book", item=hotel_id, data={"errors": {}})
    keys = list(FIELDS)
    for key in keys:
        screen.fields[key] = TextField(key, FIELDS[key])
    return screen


def validate(screen: Screen) -> bool:
    """Check every field; keep the errors on the screen (shown under the fields). True when all pass."""
    errors = {}
    for key, (pattern, message) in RULES.items():
        if not re.fullmatch(pattern, screen.fields[key].value.strip()):
            errors[key] = message
    screen.data["errors"] = errors
    return not errors


def guest_value(screen: Screen) -> str:
    """The guest's details as graders read them: ``name|email|phone|zip``, name and email lower-cased
    and spaces collapsed (the form only accepts one way of writing the phone number and the ZIP)."""
    name = " ".join(screen.fields["name"].value.split()).lower()
    values = [name, screen.fields["email"].value.strip().lower()]
    values += [screen.fields[key].value.strip() for key in ("phone", "zip")]
    return "|".join(values)


def confirmation_number(hotel: Hotel, stay: tuple[date, date]) -> str:
    """A booking's confirmation number, the same for the same hotel and dates."""
    key = f"{hotel.id}|{stay[0].isoformat()}|{stay[1].isoformat()}"
    return f"TR-{zlib.crc32(key.encode()) % 900000 + 100000}"


def _focuser(host: Host, field: TextField) -> Callable[[str], None]:
    """What Enter in a field does: move to ``field``, the next one."""
    return lambda _value: host.focus(field)


def draw_form(
    c: Canvas,
    host: Host,
    screen: Screen,
    hotel: Hotel,
    stay: tuple[date, date],
    top: float,
    bottom: float,
    submit: Callable[[], None],
) -> None:
    nights = (stay[1] - stay[0]).days
    errors: dict[str, str] = screen.data["errors"]
    keys = list(FIELDS)
    for index, key in enumerate(keys):
        following = keys[index + 1] if index + 1 < len(keys) else ""
        screen.fields[key].on_submit = _focuser(host, screen.fields[following]) if following else None
    with c.scroll_view(screen, top, bottom) as view:
        with view.row(0, 250):
            c.rect((48, 30, c.dw - 48, 230), theme.SURFACE, radius=20)
            c.text(80, 80, hotel.name, size=theme.LARGE, bold=True, anchor="lm")
            when = f"{stay[0]:%b} {stay[0].day} - {stay[1]:%b} {stay[1].day}, {nights} nights"
            c.text(80, 140, when, size=theme.BODY, anchor="lm")
            c.text(80, 195, f"Total ${hotel.price * nights}", size=theme.BODY, bold=True, anchor="lm")
        y = 270.0
        with view.row(y, 90):
            c.text(48, y + 45, "Who's the lead guest?", size=theme.LARGE, bold=True, anchor="lm")
        y += 90
        for key in keys:
            with view.row(y, FIELD_H):
                c.text(48, y + 35, FIELDS[key], size=theme.SMALL, color=theme.TEXT_2, anchor="lm")
                widgets.text_field(
                    c, host, screen.fields[key], (48, y + 70, c.dw - 48, y + 185), glyph=None, bg=theme.WHITE
                )
                if key in errors:
                    c.text(48, y + 220, errors[key], size=theme.SMALL, color=theme.RED_TEXT, anchor="lm")
            y += FIELD_H
        with view.row(y, 180):
            widgets.button(c, (48, y + 20, c.dw - 48, y + 160), "Complete booking", submit)
        y += 180
        if errors:
            with view.row(y, 90):
                c.text(
                    48,
                    y + 45,
                    "Fix the fields marked in red.",
                    size=theme.BODY,
                    color=theme.RED_TEXT,
                    anchor="lm",
                )
            y += 90
        view.end(y + 40)


def draw_confirmation(
    c: Canvas, hotel: Hotel, stay: tuple[date, date], top: float, done: Callable[[], None]
) -> None:
    nights = (stay[1] - stay[0]).days
    y = top + 60
    c.text(48, y, "You're booked!", size=theme.HEADLINE, bold=True, color=theme.GREEN_TEXT, anchor="lm")
    lines = [
        hotel.name,
        hotel.address,
        f"Check-in: {stay[0]:%a}, {stay[0]:%b} {stay[0].day}, {stay[0].year}",
        f"Check-out: {stay[1]:%a}, {stay[1]:%b} {stay[1].day}, {stay[1].year}",
        f"{nights} nights · Total ${hotel.price * nights}",
        f"Confirmation number: {confirmation_number(hotel, stay)}",
    ]
    y += 110
    for index, line in enumerate(lines):
        c.text(48, y, line, size=theme.LARGE if index == 0 else theme.BODY, bold=index in (0, 5), anchor="lm")
        y += 80
    c.mark_seen(f"trips:confirmation:{hotel.id}")
    widgets.button(c, (48, y + 40, c.dw - 48, y + 180), "Done", done)
