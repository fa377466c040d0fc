"""The Trips app's date picker: a calendar that always opens on the current month, and a month list.

Like real travel apps, the calendar opens on the phone's current month whatever dates a trip needs
(the habit to discover). From there a later month is reached in one of two ways:

- ">" and "<" beside the month title turn one month at a time;
- the month title itself ("May 2024 ▾") opens a list of the next twelve months, as Material's date
  picker opens a year/month selection from its header and Booking.com or Airbnb list the months.

The list matters to agents built on Mobile-Agent-E: the paper ends a run when the very same action
would run more than three times in a row, so a month four or more ">" taps away would be out of reach.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from datetime import date
from functools import partial

from mae.device.virtual import icons, theme
from mae.device.virtual.apps import widgets
from mae.device.virtual.apps.base import App, Screen
from mae.device.virtual.canvas import Canvas

TODAY = date(2024, 5, 14)
"""The virtual phone's date (``phone.START_TIME``): the month the date picker opens on."""
MONTHS_LISTED = 12
"""How many months the month list offers, the current one first."""
HEADER = "#003B95"
HEADER_TEXT = "#FFFFFF"
MONTH_ROW_H = 150.0


def nights(check_in: date, check_out: date) -> int:
    return (check_out - check_in).days


def fmt_day(day: date) -> str:
    return f"{day:%a}, {day:%b} {day.day}"


def month_title(year: int, month: int) -> str:
    return f"{calendar.month_name[month]} {year}"


def listed_months() -> list[tuple[int, int]]:
    """The months the month list offers: the current month and the eleven after it."""
    out = []
    for step in range(MONTHS_LISTED):
        index = TODAY.month - 1 + step
        out.append((TODAY.year + index // 12, index % 12 + 1))
    return out


def title_bar(c: Canvas, top: float, title: str, back: Callable[[], object] | None) -> float:
    """The app's blue title bar, with a back arrow when ``back`` is given; return its bottom."""
    bottom = top + theme.APPBAR_H
    c.rect((0, top, c.dw, bottom), HEADER)
    mid = top + theme.APPBAR_H / 2
    x = 48.0
    if back is not None:
        icons.icon(c, "back", 84, mid, 60, HEADER_TEXT, "back")
        c.tap((24, mid - 70, 144, mid + 70), back, "back arrow")
        x = 168
    c.text(x, mid, title, size=theme.TITLE, bold=True, color=HEADER_TEXT, anchor="lm")
    return bottom


class DatePicker(App):
    """The trip's dates (kept on the home screen's data) and the screens that choose them."""

    @property
    def trip(self) -> dict[str, object]:
        return self.stack[0].data

    def dates(self) -> tuple[date, date] | None:
        check_in, check_out = self.trip["check_in"], self.trip["check_out"]
        if isinstance(check_in, date) and isinstance(check_out, date):
            return check_in, check_out
        return None

    # ---------------------------------------------------------------- behaviour
    def open_calendar(self) -> None:
        picked = self.dates()
        data: dict[str, object] = {"month": (TODAY.year, TODAY.month)}
        data["check_in"], data["check_out"] = picked if picked else (None, None)
        self.push(Screen("calendar", data=data))

    def turn_month(self, step: int) -> None:
        year, month = self.screen.data["month"]
        month += step
        year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
        if (year, month) >= (TODAY.year, TODAY.month):
            self.screen.data["month"] = (year, month)

    def open_months(self) -> None:
        self.push(Screen("months", data={"month": self.screen.data["month"]}))

    def choose_month(self, year: int, month: int) -> None:
        self.back()
        self.screen.data["month"] = (year, month)

    def pick_day(self, day: date) -> None:
        data = self.screen.data
        check_in, check_out = data["check_in"], data["check_out"]
        if isinstance(check_in, date) and check_out is None and day > check_in:
            data["check_out"] = day
        else:
            data["check_in"], data["check_out"] = day, None

    def confirm_dates(self) -> None:
        data = self.screen.data
        if data["check_in"] is None or data["check_out"] is None:
            return
        self.trip["check_in"], self.trip["check_out"] = data["check_in"], data["check_out"]
        self.trip["error"] = ""
        self.back()

    # ---------------------------------------------------------------- screens
    def screen_calendar(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = title_bar(c, top, "Select dates", self.back)
        data = screen.data
        check_in, check_out = data["check_in"], data["check_out"]
        left = fmt_day(check_in) if isinstance(check_in, date) else "Check-in"
        right = fmt_day(check_out) if isinstance(check_out, date) else "Check-out"
        c.text(c.dw / 2, bar + 70, f"{left} to {right}", size=theme.LARGE, bold=True, anchor="mm")
        year, month = data["month"]
        y = bar + 170
        title = month_title(year, month)
        c.text(c.dw / 2, y + 60, title, size=theme.TITLE, bold=True, anchor="mm")
        half = c.measure(title, theme.TITLE) / 2
        caret = c.dw / 2 + half + 45
        c.polygon([(caret - 22, y + 48), (caret + 22, y + 48), (caret, y + 74)], theme.TEXT)
        c.tap((c.dw / 2 - half - 30, y, caret + 50, y + 120), self.open_months, title)
        if (year, month) > (TODAY.year, TODAY.month):
            c.text(100, y + 60, "<", size=theme.TITLE, bold=True, color=theme.ACCENT, anchor="mm")
            c.tap((24, y, 180, y + 120), lambda: self.turn_month(-1), "previous month")
        c.text(c.dw - 100, y + 60, ">", size=theme.TITLE, bold=True, color=theme.ACCENT, anchor="mm")
        c.tap((c.dw - 180, y, c.dw - 24, y + 120), lambda: self.turn_month(1), "next month")
        cell = c.dw / 7
        y += 150
        for col, name in enumerate(("S", "M", "T", "W", "T", "F", "S")):
            c.text(cell * col + cell / 2, y + 30, name, size=theme.SMALL, color=theme.TEXT_2, anchor="mm")
        y += 80
        for week in calendar.Calendar(firstweekday=6).monthdatescalendar(year, month):
            for col, day in enumerate(week):
                if day.month == month:
                    self._day(c, cell * col + cell / 2, y + 60, cell, day, data)
            y += 130
        if isinstance(check_in, date) and isinstance(check_out, date):
            stay = nights(check_in, check_out)
            noun = "night" if stay == 1 else "nights"
            c.text(c.dw / 2, bottom - 240, f"{stay} {noun}", size=theme.BODY, color=theme.TEXT_2, anchor="mm")
            widgets.button(c, (48, bottom - 190, c.dw - 48, bottom - 50), "Done", self.confirm_dates)
        else:
            hint = "Select your check-out date" if isinstance(check_in, date) else "Select your check-in date"
            c.text(c.dw / 2, bottom - 120, hint, size=theme.BODY, color=theme.TEXT_2, anchor="mm")

    def _day(self, c: Canvas, cx: float, cy: float, cell: float, day: date, data: dict[str, object]) -> None:
        check_in, check_out = data["check_in"], data["check_out"]
        chosen = day in (check_in, check_out)
        inside = isinstance(check_in, date) and isinstance(check_out, date) and check_in < day < check_out
        if chosen:
            c.ellipse((cx - 55, cy - 55, cx + 55, cy + 55), theme.ACCENT)
        elif inside:
            c.rect((cx - cell / 2, cy - 55, cx + cell / 2, cy + 55), theme.ACCENT_BG)
        past = day < TODAY
        ink = theme.WHITE if chosen else (theme.DIVIDER if past else theme.TEXT)
        c.text(cx, cy, str(day.day), size=theme.BODY, color=ink, anchor="mm")
        if not past:
            label = f"{calendar.month_name[day.month]} {day.day}"
            c.tap((cx - cell / 2, cy - 60, cx + cell / 2, cy + 60), partial(self.pick_day, day), label)

    def screen_months(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = title_bar(c, top, "Choose a month", self.back)
        shown = screen.data["month"]
        with c.scroll_view(screen, bar, bottom) as view:
            y = 0.0
            for year, month in listed_months():
                with view.row(y, MONTH_ROW_H):
                    title = month_title(year, month)
                    current = (year, month) == shown
                    if current:
                        c.rect((0, y, c.dw, y + MONTH_ROW_H), theme.ACCENT_BG)
                    colour = theme.ACCENT if current else theme.TEXT
                    c.text(
                        80,
                        y + MONTH_ROW_H / 2,
                        title,
                        size=theme.LARGE,
                        bold=current,
                        color=colour,
                        anchor="lm",
                    )
                    c.tap((0, y, c.dw, y + MONTH_ROW_H), partial(self.choose_month, year, month), title)
                    widgets.divider(c, y + MONTH_ROW_H - 2, left=80)
                y += MONTH_ROW_H
            view.end(y)
