"""The virtual phone's wall clock, and the opening status a place shows at that time.

The phone's day is Tuesday, May 14, 2024 (the home screen's date line), and its clock starts at 7:41 PM:
the hard suite's tasks speak of "tonight" (a Korean restaurant "open until at least 11 PM tonight"), so
the evening is the time they make sense at. The status bar shows the time with AM/PM, and Maps says
whether a place is open now from its hours ("Open until 10 PM", or "Closed · Opens 7 AM Wed" for a
bakery that closed at 6 PM): a real model met a fixed "9:41" beside "Open until 3 PM" and could not tell
morning from evening.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

START_TIME = datetime(2024, 5, 14, 19, 41)
"""When a fresh phone's clock starts (the clock then moves with every action and wait)."""

_TIME = r"(\d{1,2})(?::(\d{2}))?\s*(AM|PM)"
_RANGE = re.compile(rf"^\s*{_TIME}\s*(?:-|–|to)\s*{_TIME}\s*$", re.IGNORECASE)
DAY = 24 * 60


def now(clock_s: float) -> datetime:
    """The phone's wall time ``clock_s`` seconds after it started."""
    return START_TIME + timedelta(seconds=clock_s)


def clock_text(clock_s: float) -> str:
    """The status bar's time: ``"7:41 PM"`` (with AM/PM, so that morning and evening differ)."""
    at = now(clock_s)
    return f"{at.hour % 12 or 12}:{at.minute:02d} {'PM' if at.hour >= 12 else 'AM'}"


def _minutes(hour: str, minute: str | None, half: str) -> int:
    value = int(hour) % 12 + (12 if half.upper() == "PM" else 0)
    return value * 60 + int(minute or 0)


def _time_text(minutes: int) -> str:
    hour, minute = divmod(minutes % DAY, 60)
    text = str(hour % 12 or 12) + (f":{minute:02d}" if minute else "")
    return f"{text} {'PM' if hour >= 12 else 'AM'}"


def opening_status(hours: str, fallback: str, at: datetime) -> str:
    """What a place's listing says at ``at`` given its daily ``hours`` (``"11 AM - 10 PM"``, ``"8 AM to
    8 PM"``; a closing time past midnight such as ``"4 PM - 1 AM"`` runs into the next day). Hours in
    another form (``"Open 24 hours"``) leave the place's own ``fallback`` status."""
    match = _RANGE.match(hours)
    if match is None:
        return fallback
    opens = _minutes(*match.group(1, 2, 3))
    closes = _minutes(*match.group(4, 5, 6))
    if closes <= opens:
        closes += DAY
    minute = at.hour * 60 + at.minute
    for start in (opens - DAY, opens):  # yesterday's opening running past midnight, then today's
        if start <= minute < closes - (opens - start):
            return f"Open until {_time_text(closes)}"
    if minute < opens:
        return f"Closed · Opens {_time_text(opens)}"
    tomorrow = (at + timedelta(days=1)).strftime("%a")
    return f"Closed · Opens {_time_text(opens)} {tomorrow}"
