"""Trips, the hotel booking app of the frontier tier, driven through the phone's public API: the habits
its tasks are built on (city suggestions, a date picker on the current month with a month list behind
its title, filters applied by "Show results", the sort behind the overflow menu, sponsored rows, a form
that checks formats)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mae.device.virtual import VirtualPhone, content
from mae.device.virtual.content import load_content
from mae.device.virtual.realism import Realism


@pytest.fixture
def phone() -> VirtualPhone:
    return VirtualPhone()


def labels(phone: VirtualPhone) -> list[str]:
    return [name for name, _ in phone.tap_targets()]


def tap(phone: VirtualPhone, label: str) -> None:
    box = next(box for name, box in reversed(phone.tap_targets()) if name == label)
    phone.tap((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)


def events(phone: VirtualPhone, kind: str) -> list[str]:
    return [e.value for e in phone.state().events if e.app == "Trips" and e.kind == kind]


def texts(phone: VirtualPhone) -> list[str]:
    return [e.text for e in phone.ground_truth() if e.kind == "text"]


def search(phone: VirtualPhone, suggestion: str, typed: str = "Springfield", months: int = 3) -> None:
    """Choose ``suggestion`` for ``typed``, August 15-17 (``months`` pages ahead of May), and search."""
    phone.open_app("Trips")
    tap(phone, "Where to?")
    phone.type_text(typed)
    tap(phone, suggestion)
    tap(phone, "Dates")
    for _ in range(months):
        tap(phone, "next month")
    tap(phone, "August 15")
    tap(phone, "August 17")
    tap(phone, "Done")
    tap(phone, "Search")


def hotel_rows(phone: VirtualPhone) -> list[str]:
    hotels = {h.name for h in load_content().trips.hotels}
    return [name for name in labels(phone) if name in hotels]


def test_trips_sits_after_the_existing_apps_on_the_home_screen(phone: VirtualPhone) -> None:
    names = labels(phone)
    assert names.index("Trips") == names.index("Cartwell") + 1 == names.index("Best Buy") + 2
    assert names[:8] == ["Maps", "Notes", "Chrome", "X", "Amazon", "Walmart", "Calendar", "Clock"]
    assert phone.resolve_app("hotels") == "Trips"


def test_enter_takes_the_most_popular_namesake_and_a_suggestion_tap_the_one_meant(
    phone: VirtualPhone,
) -> None:
    phone.open_app("Trips")
    tap(phone, "Where to?")
    phone.type_text("Springfield")
    suggestions = [n for n in labels(phone) if n.startswith("Springfield, ")]
    assert suggestions[0] == "Springfield, Missouri, United States"
    assert "Springfield, Illinois, United States" in suggestions
    phone.enter()
    assert phone.screen_name == "Trips/home"
    assert "Springfield, Missouri, United States" in texts(phone)
    tap(phone, "Where to?")
    phone.type_text("Springfield, IL")
    assert [n for n in labels(phone) if n.startswith("Springfield, ")] == [
        "Springfield, Illinois, United States"
    ]
    phone.enter()
    assert events(phone, "destination") == ["springfield-mo", "springfield-il"]


def test_search_needs_a_destination_and_dates(phone: VirtualPhone) -> None:
    phone.open_app("Trips")
    tap(phone, "Search")
    assert phone.screen_name == "Trips/home" and "Choose a destination to search." in texts(phone)
    tap(phone, "Where to?")
    phone.type_text("Portland")
    tap(phone, "Portland, Maine, United States")
    tap(phone, "Search")
    assert "Choose your check-in and check-out dates." in texts(phone) and not events(phone, "search")


def test_the_date_picker_opens_on_the_current_month_every_time(phone: VirtualPhone) -> None:
    search(phone, "Springfield, Illinois, United States")
    assert events(phone, "search") == ["springfield-il|2024-08-15|2024-08-17"]
    phone.back()
    tap(phone, "Dates")
    assert "May 2024" in texts(phone) and "August 15" not in labels(phone)
    assert "May 13" not in labels(phone) and "May 14" in labels(phone)  # days gone by cannot be picked
    assert "previous month" not in labels(phone)
    tap(phone, "next month")
    assert "June 2024" in texts(phone)
    tap(phone, "previous month")
    assert "May 2024" in texts(phone)


def test_the_month_title_opens_a_list_of_the_next_twelve_months(phone: VirtualPhone) -> None:
    phone.open_app("Trips")
    tap(phone, "Dates")
    tap(phone, "May 2024")
    assert phone.screen_name == "Trips/months" and "Choose a month" in texts(phone)
    months = [name for name in labels(phone) if name.endswith(("2024", "2025"))]
    assert months[0] == "May 2024" and months[-1] == "April 2025" and len(months) == 12
    tap(phone, "back arrow")
    assert phone.screen_name == "Trips/calendar" and "May 2024" in texts(phone)  # leaving picks nothing
    tap(phone, "May 2024")
    tap(phone, "October 2024")
    assert phone.screen_name == "Trips/calendar" and "October 2024" in texts(phone)
    assert "October 4" in labels(phone) and "May 14" not in labels(phone)
    tap(phone, "previous month")  # ">" and "<" still turn one month from the chosen one
    assert "September 2024" in texts(phone)
    tap(phone, "September 2024")  # the title names the month shown
    assert phone.screen_name == "Trips/months"
    tap(phone, "January 2025")
    assert "January 2025" in texts(phone) and "January 10" in labels(phone)


def test_a_month_half_a_year_ahead_takes_no_action_more_than_three_times(phone: VirtualPhone) -> None:
    """The paper's loop ends a run on a fourth identical action in a row: six ">" taps would end it."""
    phone.open_app("Trips")
    tap(phone, "Where to?")
    phone.type_text("Arlington")
    tap(phone, "Arlington, Virginia, United States")
    tap(phone, "Dates")
    tap(phone, "May 2024")
    tap(phone, "October 2024")
    tap(phone, "October 30")
    tap(phone, "October 2024")  # the list keeps the check-in chosen so far
    tap(phone, "November 2024")
    assert "Wed, Oct 30 to Check-out" in texts(phone)
    tap(phone, "November 2")
    tap(phone, "Done")
    tap(phone, "Search")
    assert events(phone, "search") == ["arlington-va|2024-10-30|2024-11-02"]
    phone.back()
    tap(phone, "Dates")
    assert "May 2024" in texts(phone) and "November 2" not in labels(phone)  # still opens on May


def test_filters_apply_only_when_show_results_is_tapped(phone: VirtualPhone) -> None:
    search(phone, "Springfield, Illinois, United States")
    everything = hotel_rows(phone)
    assert "Route 66 Hotel & Conference Center" in everything
    tap(phone, "Filters")
    tap(phone, "Free cancellation")
    tap(phone, "close filters")
    assert hotel_rows(phone) == everything and not events(phone, "filter")
    tap(phone, "Filters")
    tap(phone, "Free cancellation")
    tap(phone, "Show results")
    kept = hotel_rows(phone)
    assert "Route 66 Hotel & Conference Center" not in kept and events(phone, "filter") == [
        "free_cancellation"
    ]
    assert "Filters (1)" in texts(phone)


def test_sort_is_behind_the_overflow_menu_and_the_ad_stays_on_top() -> None:
    phone = VirtualPhone(
        realism_settings=Realism(enabled=True, seed=11, popups=False, sign_in_nag=False, loading=False)
    )
    search(phone, "Springfield, Illinois, United States")
    assert not any(label.startswith("Price") for label in labels(phone))
    tap(phone, "more options")
    assert {"Sort by", "Clear filters", "New search"} <= set(labels(phone))
    tap(phone, "Sort by")
    tap(phone, "Price (lowest first)")
    rows = hotel_rows(phone)
    assert rows[0] == "Lincoln Plaza Hotel" and "Ad" in texts(phone)  # sponsored, whatever the sort
    prices = {h.name: h.price for h in load_content().trips.hotels}
    assert [prices[r] for r in rows[1:]] == sorted(prices[r] for r in rows[1:])
    assert events(phone, "sort") == ["price"]


def test_the_sponsored_row_shows_only_with_realism(phone: VirtualPhone) -> None:
    search(phone, "Springfield, Illinois, United States")
    assert "Lincoln Plaza Hotel" not in hotel_rows(phone)


def fill(phone: VirtualPhone, values: dict[str, str]) -> None:
    for label, value in values.items():
        tap(phone, label)
        phone.type_text(value)
        phone.back()  # close the keyboard


def test_the_form_books_nothing_until_every_format_is_right(phone: VirtualPhone) -> None:
    search(phone, "Springfield, Illinois, United States")
    tap(phone, "Capitol Suites")
    tap(phone, "Reserve")
    fill(
        phone,
        {
            "Full name": "Dana Whitfield",
            "Email address": "dana.whitfield@example.com",
            "Phone number": "217-555-0134",
            "ZIP code": "62704-1234",
        },
    )
    tap(phone, "Complete booking")
    assert phone.screen_name == "Trips/book" and not events(phone, "book")
    shown = texts(phone)
    assert "Enter the phone number as (555) 555-5555." in shown and "Enter a 5-digit ZIP code." in shown
    assert events(phone, "booking_rejected") == ["phone,zip"]
    tap(phone, "Phone number")
    tap(phone, "clear text")
    phone.type_text("(217) 555-0134")
    phone.back()
    tap(phone, "ZIP code")
    tap(phone, "clear text")
    phone.type_text("62704")
    phone.back()
    tap(phone, "Complete booking")
    assert phone.screen_name == "Trips/confirmed"
    assert events(phone, "book") == ["sil-capitol-suites|2024-08-15|2024-08-17"]
    assert events(phone, "guest") == ["dana whitfield|dana.whitfield@example.com|(217) 555-0134|62704"]
    assert any(t.startswith("Confirmation number: TR-") for t in texts(phone))
    tap(phone, "Done")
    assert phone.screen_name == "Trips/home"


def test_frontier_content_parts_merge_in_name_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.b.json").write_text(json.dumps({"notes": [{"title": "second"}]}))
    (tmp_path / "notes.a.json").write_text(json.dumps({"notes": [{"title": "first"}]}))
    (tmp_path / "notebook.json").write_text(json.dumps({"notes": [{"title": "not a notes file"}]}))
    monkeypatch.setattr(content, "FRONTIER_DATA_DIR", tmp_path)
    titles = [n["title"] for n in content.load_raw("notes")["notes"]]
    assert titles[-2:] == ["first", "second"] and "not a notes file" not in titles
