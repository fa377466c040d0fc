"""The virtual phone's clock says morning or evening, and Maps' opening hours agree with it.

Real case (h_korean_late_night, E default, a real model as the backbone): the status bar showed a
fixed "9:41" with no AM/PM while Maps listed "Open until 3 PM" (Corner Diner) beside "Open until 1 AM"
(Seoul Express), and the task asked for a restaurant "open until at least 11 PM tonight": the model
could not tell whether it was morning or evening, nor whether a 3 PM closing was past.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from mae.device.virtual import VirtualPhone
from mae.device.virtual.apps.maps import MapsApp
from mae.device.virtual.clock import START_TIME, clock_text, opening_status
from mae.eval.virtual_suite import load_task_suite

EVENING = datetime(2024, 5, 14, 19, 41)


def test_the_status_bar_shows_an_evening_time_with_am_or_pm() -> None:
    phone = VirtualPhone()
    texts = [e.text for e in phone.ground_truth() if e.kind == "text" and e.box[3] < 100]
    assert "7:41 PM" in texts
    assert START_TIME.hour >= 17 and START_TIME.strftime("%A") == "Tuesday"  # "tonight" is still ahead
    phone.wait(3600)
    assert clock_text(phone.clock_s) == "8:41 PM"
    assert clock_text(5 * 3600) == "12:41 AM"  # past midnight, the morning


@pytest.mark.parametrize(
    ("hours", "at", "status"),
    [
        ("11 AM - 10 PM", EVENING, "Open until 10 PM"),
        ("11 AM - 11:30 PM", EVENING, "Open until 11:30 PM"),
        ("4 PM - 12 AM", EVENING, "Open until 12 AM"),
        ("11 AM to 1 AM", EVENING, "Open until 1 AM"),
        ("11 AM to 1 AM", datetime(2024, 5, 15, 0, 30), "Open until 1 AM"),  # yesterday's opening
        ("6 AM - 3 PM", EVENING, "Closed · Opens 6 AM Wed"),
        ("7 AM - 6 PM", EVENING, "Closed · Opens 7 AM Wed"),
        ("4 PM - 12 AM", datetime(2024, 5, 14, 9, 41), "Closed · Opens 4 PM"),
        ("10 AM - 8 PM", EVENING, "Open until 8 PM"),
        ("Open 24 hours", EVENING, "Open 24 hours"),
    ],
)
def test_opening_status_follows_the_hours(hours: str, at: datetime, status: str) -> None:
    assert opening_status(hours, "Open 24 hours", at) == status


def test_korean_results_tonight_agree_with_the_task() -> None:
    """At the phone's time every Korean candidate is open, and exactly the ones the task means by
    "open until at least 11 PM tonight" say so; the diner that closed at 3 PM says it is closed."""
    task = next(t for t in load_task_suite(suite="hard") if t.id == "h_korean_late_night")
    quiet = task.realism.model_copy(update={"popups": False, "sign_in_nag": False, "loading": False})
    phone = VirtualPhone(realism_settings=quiet)  # the task's sponsored and off-topic results, no dialogs
    phone.open_app("Maps")
    app = phone.current_app
    assert isinstance(app, MapsApp)
    query = "korean restaurants in champaign"
    app.search(query)
    phone.wait(3)
    statuses: dict[str, str] = {}
    for place in app.results(query):
        app.open_place(place.id)
        phone.wait(1)
        texts = [e.text for e in phone.ground_truth() if e.kind == "text"]
        statuses[place.name] = next(t for t in texts if t.startswith(("Open ", "Closed")))
        phone.back()
    late = {name for name, status in statuses.items() if status.startswith("Open until") and "AM" in status}
    late |= {
        name for name, status in statuses.items() if status in ("Open until 11 PM", "Open until 11:30 PM")
    }
    korean = {"Seoul Garden", "Kimchi Corner", "Gangnam BBQ House", "Bibim Bowl", "Han River Kitchen"}
    assert late & korean == {"Kimchi Corner", "Gangnam BBQ House"}
    assert all(statuses[name].startswith("Open until") for name in korean)  # every candidate is open now
    assert statuses["Corner Diner"] == "Closed · Opens 6 AM Wed"
    assert statuses["McDonald's"] == "Open 24 hours"
