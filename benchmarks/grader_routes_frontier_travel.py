"""The grader corpus's routes for the frontier tier's travel scenarios: hotel bookings on Trips (3) and
event trips from Chrome through Trips to Notes (4).

For every task, correct routes other than its reference (the state typed with the city and Enter, the
month reached through the month list instead of ">" or the other way round, the whole list read
instead of sorting, a phone number fixed after the form rejects it, another wording
of the note) and plausible wrong ones (Enter on a bare city name lands in the more popular namesake,
the sponsored first row, May dates from a date picker never paged, filters closed instead of applied,
a nightly price swapped for the total), each with the rubric items (0-based) it must fail;
``benchmarks/grader_corpus.py`` replays and counts them.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass

from grader_routes import Plans, Route

SORT_STEPS = ("tap more options", "tap Sort by")
TODAY_DAY = 14
TODAY_YEAR = 2024
"""The phone's date is May 14, 2024: earlier days of May cannot be picked; the date picker opens on
May 2024, whose title opens the month list."""


@dataclass(frozen=True)
class Stay:
    """What a route needs to know about a task beyond its plan: the city typed, the place Enter picks
    instead, a hotel there, the sponsored row, and the guest's phone as the user wrote it."""

    typed: str
    with_state: str
    list_end: str
    wrong_hotel: str
    sponsored: str
    raw_phone: str
    cheaper_trap: str


def _swap(steps: list[str], old: str, new: list[str]) -> list[str]:
    index = steps.index(old)
    return [*steps[:index], *new, *steps[index + 1 :]]


def _hotel_step(steps: list[str]) -> str:
    """The plan's tap on the chosen hotel (the step before Reserve)."""
    return steps[steps.index("tap Reserve") - 1]


def _no_sort(steps: list[str], list_end: str) -> list[str]:
    """``steps`` without the overflow menu's sort: the whole list is read to its end instead."""
    start = steps.index(SORT_STEPS[0])
    return [*steps[:start], f"see {list_end}", *steps[start + 3 :]]


def _enter_city(steps: list[str], typed: str) -> list[str]:
    """``typed`` then Enter (the top suggestion) instead of tapping the right suggestion."""
    index = steps.index("tap Where to?") + 1
    return [*steps[:index], f"type {typed}", "enter", *steps[index + 2 :]]


def _calendar_step(step: str) -> tuple[str, int] | None:
    """``("September", 20)`` for "tap September 20" (a day), ``("September", 2024)`` for "tap September
    2024" (a choice in the month list); None for any other step."""
    words = step.split()
    if len(words) == 3 and words[0] == "tap" and words[1] in calendar.month_name[1:] and words[2].isdigit():
        return words[1], int(words[2])
    return None


def _is_month_choice(step: str) -> bool:
    found = _calendar_step(step)
    return found is not None and found[1] > 31


def _other_month_way(steps: list[str]) -> list[str]:
    """The target month reached the other way: through the month list where the plan taps ">", or,
    where the plan uses the list, the month before it from the list and then one ">" tap."""
    if "tap next month" in steps:
        start = steps.index("tap next month")
        end = start + 1
        while steps[end] == "tap next month":
            end += 1
        found = _calendar_step(steps[end])
        assert found is not None, steps[end]
        return [*steps[:start], f"tap May {TODAY_YEAR}", f"tap {found[0]} {TODAY_YEAR}", *steps[end:]]
    choice = max(i for i, s in enumerate(steps) if _is_month_choice(s))  # after the title's tap
    found = _calendar_step(steps[choice])
    assert found is not None
    earlier = calendar.month_name[list(calendar.month_name).index(found[0]) - 1]
    return [*steps[:choice], f"tap {earlier} {found[1]}", "tap next month", *steps[choice + 1 :]]


def _may_dates(steps: list[str]) -> list[str]:
    """The same days of the current month: the date picker never paged."""
    out = [s for s in steps if s != "tap next month" and not _is_month_choice(s)]
    days = [i for i, s in enumerate(out) if _calendar_step(s) is not None]
    for i in days[:2]:
        day = int(out[i].split()[-1])
        out[i] = f"tap May {day if day > TODAY_DAY else day + TODAY_DAY}"
    return out


def _form_phone(steps: list[str], raw: str) -> list[str]:
    phone = steps.index("tap Phone number")
    return [*steps[: phone + 1], f"type {raw}", *steps[phone + 2 :]]


def _hotel_routes(steps: list[str], stay: Stay) -> list[Route]:
    hotel = _hotel_step(steps)
    fixed = steps.index("tap Phone number") + 1
    correct_phone = steps[fixed]
    routes = [
        Route(
            "types the state with the city and lets Enter take the top suggestion",
            _enter_city(steps, stay.with_state),
        ),
        Route(
            "reads the whole list instead of sorting; fixes the phone after the form rejects it",
            [
                *_form_phone(_no_sort(steps, stay.list_end), stay.raw_phone),
                "tap Phone number",
                "tap clear text",
                correct_phone,
                "tap Complete booking",
            ],
        ),
        Route('reaches the month the other way (the month list or ">")', _other_month_way(steps)),
        Route(
            "opens the sponsored row first, backs out",
            _swap(steps, hotel, [f"tap {stay.sponsored}", "back", hotel]),
        ),
        Route(
            "Enter on the bare city name: books in the more popular namesake",
            _swap(_enter_city(steps, stay.typed), hotel, [f"tap {stay.wrong_hotel}"]),
            {1, 4, 5},
        ),
        Route("books the sponsored first row", _swap(steps, hotel, [f"tap {stay.sponsored}"]), {4, 5}),
        Route("never pages the date picker: books the same days in May", _may_dates(steps), {1, 5}),
        Route(
            "leaves the phone number as the user wrote it: the form refuses, nothing is booked",
            _form_phone(steps, stay.raw_phone),
            {5, 6},
        ),
    ]
    start = steps.index("tap Filters")
    closed = [*steps[:start], "tap Filters", steps[start + 1], "tap close filters"]
    closed += steps[steps.index("tap Show results") + 1 :]
    routes.append(
        Route(
            "closes the filter sheet without Show results, books a hotel that breaks a condition",
            _swap(closed, hotel, [f"tap {stay.cheaper_trap}"]),
            {2, 4, 5},
        )
    )
    return routes


HOTELS: dict[str, Stay] = {
    "f_hotel_springfield": Stay(
        "Springfield",
        "Springfield, IL",
        "trips:list_end:springfield-il",
        "Queen City Capitol Suites",
        "Lincoln Plaza Hotel",
        "217-555-0134",
        "Route 66 Hotel & Conference Center",
    ),
    "f_hotel_portland": Stay(
        "Portland",
        "Portland, Maine",
        "trips:list_end:portland-me",
        "Pearl District Hotel",
        "Old Port Waterfront Hotel",
        "2175550134",
        "Harborview Inn & Suites",
    ),
    "f_hotel_columbus": Stay(
        "Columbus",
        "Columbus GA",
        "trips:list_end:columbus-ga",
        "Short North Hotel",
        "Amber Hotel & Suites",
        "+1 312 555 0188",
        "The Chattahoochee Hotel",
    ),
    "f_hotel_arlington": Stay(
        "Arlington",
        "Arlington, VA",
        "trips:list_end:arlington-va",
        "Clarendon Inn Arlington",
        "Pentagon City Suites",
        "703-555-0147",
        "Ballston Park Hotel",
    ),
    "f_hotel_cambridge": Stay(
        "Cambridge",
        "Cambridge, Massachusetts",
        "trips:list_end:cambridge-ma",
        "Kendall House Cambridge",
        "Charles River Grand",
        "217.555.0134",
        "Cambridge Riverside Hotel",
    ),
}


@dataclass(frozen=True)
class Trip:
    """An event trip's alternatives: another note that states the same facts, one that gets a fact
    wrong, the namesake city's hotel a careless search finds, and a hotel the filters rule out."""

    typed: str
    with_state: str
    list_end: str
    hotel: str
    other_note: str
    wrong_fact_note: str
    wrong_city_note: str
    unfiltered_note: str


def _note_step(steps: list[str]) -> str:
    return next(s for s in reversed(steps) if s.startswith("type "))


GUEST = [
    "tap Full name",
    "type Dana Whitfield",
    "tap Email address",
    "type dana.whitfield@example.com",
    "tap Phone number",
    "type (217) 555-0134",
    "tap ZIP code",
    "type 62704",
    "tap Complete booking",
]


def _typed(text: str) -> list[str]:
    """Plan steps that type ``text`` into a note, Enter between its lines."""
    out: list[str] = []
    for index, line in enumerate(text.split("\n")):
        out.extend(["enter"] * bool(index) + [f"type {line}"])
    return out


def _trip_routes(steps: list[str], trip: Trip) -> list[Route]:
    note = _note_step(steps)
    sorted_at, notes_at = steps.index(SORT_STEPS[1]) + 2, steps.index("open Notes")
    checkout = steps.index("tap Done") - 1
    month, _, day = steps[checkout].rpartition(" ")
    filters_start, filters_end = steps.index("tap Filters"), steps.index("tap Show results")
    return [
        Route(
            "Enter takes the right suggestion; the note in other words",
            _swap(_enter_city(steps, trip.with_state), note, _typed(trip.other_note)),
        ),
        Route(
            "reads the whole list instead of sorting; a scratch note first, the real one last",
            [
                *_swap(_no_sort(steps, trip.list_end), note, [f"type {trip.wrong_fact_note}"]),
                "back",
                "back",
                "tap new note",
                *_typed(trip.other_note),
            ],
        ),
        Route(
            "Enter on the bare city name: notes a hotel in the namesake city",
            [
                *_enter_city(steps, trip.typed)[:sorted_at],
                *steps[notes_at:-1],
                f"type {trip.wrong_city_note}",
            ],
            {1, 4, 5},
        ),
        Route(
            "skips the filters, notes the top hotel of the unfiltered list",
            _swap(
                [*steps[:filters_start], *steps[filters_end + 1 :]], note, [f"type {trip.unfiltered_note}"]
            ),
            {2, 5},
        ),
        Route(
            "checks out a day late",
            [*steps[:checkout], f"{month} {int(day) + 1}", *steps[checkout + 1 :]],
            {1},
        ),
        Route(
            "books the hotel though only a note was asked for",
            [
                *steps[:notes_at],
                *([] if f"tap {trip.hotel}" in steps else [f"tap {trip.hotel}"]),
                "tap Reserve",
                *GUEST,
                *steps[notes_at:],
            ],
            {5},
        ),
        Route('reaches the month the other way (the month list or ">")', _other_month_way(steps)),
        Route("gets a fact wrong in the note", _swap(steps, note, [f"type {trip.wrong_fact_note}"]), {5}),
        Route("finds the hotel but stops before writing the note", steps[:notes_at], {5}),
    ]


TRIPS: dict[str, Trip] = {
    "f_trip_folk_festival": Trip(
        "Burlington",
        "Burlington VT",
        "trips:list_end:burlington-vt",
        "Lake Champlain Inn",
        "Harvest Folk Fest: Sept 13-15 in Burlington, Vermont.\nStay: Lake Champlain Inn - $184/night",
        "Harvest Folk Festival Sep 13-15: Lake Champlain Inn, $368 per night",
        "Harvest Folk Festival Sep 13-15: Lakeshore Road Hotel, $199 per night",
        "Harvest Folk Festival Sep 13-15: Lakeview Champlain Hotel, $215 per night",
    ),
    "f_trip_health_summit": Trip(
        "Rochester",
        "Rochester, Minnesota",
        "trips:list_end:rochester-mn",
        "Silver Lake Motor Inn",
        "Summit 6/24 - 6/26. Silver Lake Motor Inn: 105 a night, 210 for both nights.",
        "Summit June 24-26: Silver Lake Motor Inn, $105 per night, $315 total",
        "Summit June 24-26: Bear Creek Inn Rochester, $99 per night, $198 total",
        "Summit June 24-26: Kahler Street Hotel, $98 per night, $196 total",
    ),
    "f_trip_half_marathon": Trip(
        "Athens",
        "Athens, GA",
        "trips:list_end:athens-ga",
        "Classic City Inn",
        "Race: Sunday Jul 7 (Athens, Georgia). Night of Jul 6 at Classic City Inn - 225 W Clayton St.",
        "Race July 7. Hotel: Classic City Inn, 100 College Ave",
        "Race July 7. Hotel: Plaka Acropolis Hotel, 12 Kydathineon",
        "Race July 7. Hotel: Classic City Suites, 150 E Broad St",
    ),
    "f_trip_lantern_walk": Trip(
        "Salem",
        "Salem MA",
        "trips:list_end:salem-ma",
        "Derby Wharf Inn",
        "Lantern Walk, 25-27 October.\nDerby Wharf Inn: $174.00 per night, $348.00 in total.",
        "Lantern Walk Oct 25-27: Derby Wharf Inn, $174 per night, $522 total",
        "Lantern Walk Oct 25-27: Capitol Mall Hotel, $129 per night, $258 total",
        "Lantern Walk Oct 25-27: Derby House Hotel, $159 per night, $318 total",
    ),
    "f_trip_comic_expo": Trip(
        "Aurora",
        "Aurora, Colorado",
        "trips:list_end:aurora-co",
        "Cherry Creek Lodge",
        "Comic Expo 8/9 to 8/11 in Aurora CO. Cherry Creek Lodge at 128 per night = 256 total.",
        "Comic Expo Aug 9-11: Cherry Creek Lodge, $114 per night, $228 total",
        "Comic Expo Aug 9-11: Fox River Hotel, $119 per night, $238 total",
        "Comic Expo Aug 9-11: Havana Street Inn, $99 per night, $198 total",
    ),
}


def routes(plan: Plans) -> dict[str, list[Route]]:
    """This part's routes for the tasks in ``plan`` (every task's plan by id; the frontier tasks are
    absent when only the hard suite is graded)."""
    out = {
        task_id: _hotel_routes(list(plan[task_id]), stay)
        for task_id, stay in HOTELS.items()
        if task_id in plan
    }
    for task_id, trip in TRIPS.items():
        if task_id in plan:
            out[task_id] = _trip_routes(list(plan[task_id]), trip)
    return out
