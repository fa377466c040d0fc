"""The hard suite's graders are right both ways: the grader corpus, the note reader, the world's dates.

The corpus (``benchmarks/grader_corpus.py``) holds, for every hard task, correct routes other than the
reference and plausible wrong ones; each is replayed through ``task.prepare`` / ``task.replay`` /
``task.grade`` and must fail exactly the rubric items it names.
"""

from __future__ import annotations

import re
import sys
from datetime import date
from pathlib import Path

import pytest

from mae.device.virtual import VirtualPhone
from mae.device.virtual.apps.paging import END_TEXTS
from mae.device.virtual.content import read_json
from mae.device.virtual.state import CartItem, Event, Note, PhoneState
from mae.eval.note_text import contains, negated, normalise, owners, sentences, spoken_against, verdicts
from mae.eval.reference import compile_plan
from mae.eval.virtual_suite import Check, Fact, final_note, load_task_suite

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from grader_corpus import corpus, grade_route, summary  # the corpus, also counted by the benchmark

HARD = {task.id: task for task in load_task_suite(suite="hard")}
CORPUS = corpus(HARD)


def test_corpus_covers_every_hard_task_both_ways() -> None:
    assert set(CORPUS) == set(HARD)
    for task_id, routes in CORPUS.items():
        assert sum(r.correct for r in routes) >= 2, task_id
        assert sum(not r.correct for r in routes) >= 3, task_id
        for route in routes:
            assert all(0 <= i < len(HARD[task_id].rubrics) for i in route.fails), (task_id, route.name)


@pytest.mark.parametrize("task_id", sorted(CORPUS))
def test_every_route_gets_the_score_it_deserves(task_id: str) -> None:
    task = HARD[task_id]
    outcomes = [grade_route(task, route) for route in CORPUS[task_id]]
    wrong = [
        (o.route, o.error or f"failed {o.failed}, should fail {o.expected_fails}")
        for o in outcomes
        if o.error or o.failed != o.expected_fails
    ]
    assert not wrong
    figures = summary(outcomes)
    assert figures["false_pass_routes"] == figures["false_fail_routes"] == 0
    for o in outcomes:
        assert o.score == pytest.approx(1 - len(o.expected_fails) / len(task.rubrics))


def _state(*notes: str, events: list[Event] | None = None) -> PhoneState:
    return PhoneState(
        app="Notes",
        screen="Notes/list",
        keyboard=False,
        notes=[Note(id=i + 1, body=text) for i, text in enumerate(notes)],
        carts={},
        route=None,
        recents=[],
        clock_s=0.0,
        log=[],
        events=events or [],
        seen=[],
    )


def test_note_reader_accepts_what_a_person_accepts() -> None:
    assert normalise("Showtimes: 15:50, 00:30 and 09:05") == "showtimes: 3:50 12:30 and 9:05"
    assert normalise("$1,197.99 or $144.00") == "1197.99 or 144"
    assert contains(normalise("at 15:50"), "3:50")
    assert contains(normalise("costs $144.00"), "144")
    assert not contains(normalise("at 11:30"), "1:30")
    assert not contains(normalise("112.98"), "12.98")
    assert contains(normalise("(217) 555-0187"), "555-0187")
    assert sentences("A. B; c\nd") == ["a", "b", "c", "d"]
    items = ["ribeye", "toilet paper"]
    assert owners("Ribeye $12.98, toilet paper $21.97 and oranges", items, "21.97") == {"toilet paper"}
    assert owners("12.98 dollars - ribeye; 21.97 dollars - toilet paper", items, "21.97") == {"toilet paper"}
    assert negated("oranges are not on sale")
    assert negated("skipped sea harvest and nobu")
    assert not negated("ribeye is on sale")
    assert negated("bangkok orchid was rejected because its menu is vegetarian")


# the line a real model wrote for h_walmart_sale_items_note, copying the product's own name (issue 38)
REAL_RIBEYE_LINE = "Beef Choice Angus Ribeye Steak, per pound - $12.98"


def test_a_value_belongs_to_its_item_across_a_comma_in_the_items_name() -> None:
    items = ["ribeye", "toilet paper", "charmin"]
    assert owners(REAL_RIBEYE_LINE, items, "12.98") == {"ribeye"}
    headings = "## Ribeye steak\n- Beef Choice Angus, per pound\n- Now $12.98\n## Toilet paper\n- Now $21.97"
    assert owners(headings, items, "12.98") == {"ribeye"}
    assert owners(headings, items, "21.97") == {"toilet paper"}
    table = "| Item | Price |\n|---|---|\n| Charmin Ultra Soft Toilet Paper, 18 Mega Rolls | $21.97 |"
    assert owners(table, items, "21.97") == {"toilet paper"}


def test_a_mention_is_spoken_against_by_its_sentence_the_next_one_or_its_heading() -> None:
    assert spoken_against("Bangkok Orchid (4.8). Rejected: vegetarian menu.", "bangkok") == [True]
    assert spoken_against("Ruled out:\n- Bangkok Orchid, 4.8 stars\n\nChosen: Lemongrass", "bangkok") == [
        True
    ]
    assert spoken_against("Ruled out:\n- Prairie Motel\n\nBangkok Orchid 4.8", "bangkok") == [False]
    assert spoken_against("Also great: Bangkok Orchid (4.8).", "bangkok") == [False]
    assert spoken_against("Bangkok Orchid (4.8):\n- vegetarian menu, no duck\n\nLemongrass:", "bangkok") == [
        True
    ]
    assert spoken_against(
        "Bangkok Orchid (4.8):\n- vegetarian menu\nLemongrass:\n- no parking", "bangkok"
    ) == [False]


def test_the_overall_sentiment_is_read_from_the_verdict_or_the_words() -> None:
    assert verdicts("General sentiment: mostly negative. 'Good headphones but expensive.'") == {"negative"}
    assert verdicts("Overall sentiment: Positive (4.5 stars)\nCons: expensive") == {"positive"}
    assert verdicts("Reviews are mixed.") == {"mixed"}
    assert verdicts("Reviewers love the comfort.") == {"positive"}
    assert verdicts("Reviewers love the comfort; some complain about the price.") == {"mixed"}
    assert verdicts("The sound is not great.") == {"negative"}
    assert verdicts("Released recently, rated R.") == set()


def test_note_check_ties_facts_to_items_and_reads_negations() -> None:
    check = Check(
        kind="note",
        facts=[Fact(item=["ribeye"], values=["12.98"]), Fact(item=["toilet paper"], values=["21.97"])],
        exclude=["orange"],
    )
    assert check.passed(_state("Ribeye $12.98; toilet paper $21.97. Oranges aren't on sale."))
    assert check.passed(
        _state(f"{REAL_RIBEYE_LINE}\nCharmin Ultra Soft Toilet Paper, 18 Mega Rolls - $21.97")
    )
    assert check.passed(
        _state("Ribeye $12.98\nToilet paper $21.97\nFresh oranges were rejected: regular price.")
    )
    assert not check.passed(_state("Ribeye $21.97; toilet paper $12.98"))
    assert not check.passed(_state("Ribeye $12.98; toilet paper $21.97; oranges $5.47"))
    assert not check.passed(_state())  # no note at all


def test_the_final_note_is_judged_not_a_scratch_note() -> None:
    check = Check(kind="note", groups=[["last orchard"]])
    scratch_then_wrong = _state(
        "The Last Orchard",
        "Quantum Heist",
        events=[
            Event(step=1, app="Notes", kind="create_note", value="1"),
            Event(step=2, app="Notes", kind="create_note", value="2"),
        ],
    )
    assert not check.passed(scratch_then_wrong)
    reopened = scratch_then_wrong.model_copy(
        update={
            "events": [*scratch_then_wrong.events, Event(step=3, app="Notes", kind="open_note", value="1")]
        }
    )
    assert check.passed(reopened)
    seeded = _state("The Last Orchard")
    seeded.notes[0].seeded = True
    assert final_note(seeded) is None


def test_any_all_negate_and_only_checks() -> None:
    state = _state("x", events=[Event(step=1, app="Maps", kind="directions", value="golden-loaf")])
    opened = Check(kind="event", app="Maps", event="view_place", values=["golden-loaf"])
    routed = Check(kind="event", app="Maps", event="directions", values=["golden-loaf"])
    assert not opened.passed(state)
    assert Check(kind="any", checks=[opened, routed]).passed(state)
    assert not Check(kind="all", checks=[opened, routed]).passed(state)
    assert not Check(kind="all").passed(state)
    assert Check(kind="event", app="Maps", event="view_place", values=["golden-loaf"], negate=True).passed(
        state
    )


def test_side_effects_the_task_did_not_ask_for_fail() -> None:
    check = Check(kind="no_side_effects")
    assert check.passed(_state())
    carted = _state().model_copy(
        update={"carts": {"walmart": [CartItem(product_id="joycon-gray", title="x", price=1)]}}
    )
    assert not check.passed(carted)
    emptied = _state().model_copy(update={"carts": {"walmart": []}})
    assert check.passed(emptied)

    def maps(*kinds: str) -> PhoneState:
        return _state(
            events=[Event(step=i, app="Maps", kind=k, value="gangnam-bbq") for i, k in enumerate(kinds)]
        )

    assert not check.passed(maps("start_navigation"))
    assert not check.passed(maps("save_place"))
    assert check.passed(maps("save_place", "save_place")), "saved, then unsaved"
    assert Check(kind="no_side_effects", values=["add_to_cart"]).passed(maps("start_navigation"))


def test_films_in_theaters_were_released_before_the_phones_date() -> None:
    today_line = read_json(Path(__file__).resolve().parents[2] / "mae/device/virtual/data/apps.json")
    assert "Tuesday, May 14" in str(today_line) and date(2024, 5, 14).strftime("%A") == "Tuesday"
    pages = read_json(Path(__file__).resolve().parents[2] / "mae/device/virtual/data/suite/browser.json")[
        "web"
    ]
    months = {"April": 4, "May": 5, "June": 6}
    released = {}
    for page in pages:
        for line in page.get("body", []):
            found = re.search(r"Released (April|May|June) (\d+)", line)
            if found:
                released[page["id"]] = date(2024, months[found.group(1)], int(found.group(2)))
    assert len(released) >= 7
    assert all(day <= date(2024, 5, 14) for day in released.values()), released
    # the horror task's answer is still the latest horror film
    assert released["fd-night-harbor"] > released["fd-hollow-pines"]


@pytest.mark.parametrize(
    "plan",
    [
        ["open Amazon", "tap Search Amazon", "type laptop", "enter", "see amazon:list_end:laptop"],
        ["open Maps", "tap Search here", "type korean", "enter", "see maps:list_end:korean"],
    ],
    ids=["shop", "maps"],
)
def test_result_lists_show_where_they_end(plan: list[str]) -> None:
    phone = VirtualPhone()
    HARD["h_laptop_nvidia_cart"].prepare(phone)
    compile_plan(plan, phone)  # fails when the end-of-list row never comes on screen
    assert set(END_TEXTS) & {e.text for e in phone.ground_truth()}


def test_the_citing_list_says_how_much_of_it_is_shown() -> None:
    task = HARD["h_segment_anything_most_cited"]
    phone = VirtualPhone()
    task.prepare(phone)
    compile_plan([*task.plan[:9], "see scholar:list_end:citations:segment-anything"], phone)
    texts = " ".join(e.text for e in phone.ground_truth())
    assert "4 most relevant of 9,412 citing articles shown" in texts  # "Cited by 9,412" lists 4
