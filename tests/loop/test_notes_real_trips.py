"""A real model's hotel consolidation that the fact check misjudged (issue #38, again).

Relay run, Trips hotel task (Springfield, Illinois), requests 53 and 54: the model consolidated 1,545
characters of notes on seven hotels and named what it dropped by kind: "Star ratings, distances, review
scores/counts ... of the non-chosen hotels". It was retried for "1,204 reviews", "8.6", "2,110 reviews"
and "9.0" (and, rightly, for a quoted results header it had rephrased). Its retry named the scores and
counts by value and "Star ratings and distances from downtown of all hotels except Capitol Suites'
3-star", and was still said to have lost "0.3 mi", "4-star" and "0.5 mi", so old lines were pasted
back. A drop named by its kind now accounts for every value of that kind; a price or a name truly lost
is still caught.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mae.agents.notes_budget import ConsolidatedNotes, keep_facts, parse_consolidated
from mae.agents.notes_facts import find_losses

DATA = Path(__file__).parent / "data" / "real_replies"


def _old() -> str:
    return (DATA / "notes_consolidation_trips_old.txt").read_text(encoding="utf-8")


def _reply(name: str) -> ConsolidatedNotes:
    return parse_consolidated((DATA / f"notes_consolidation_trips_{name}.txt").read_text("utf-8"), _old())


def _lost(notes: str, dropped: str, old: str | None = None) -> list[str]:
    return [fact.text for fact in find_losses(_old() if old is None else old, notes, dropped).lost]


def test_the_retry_keeps_every_fact_and_is_neither_retried_nor_repaired() -> None:
    retry = _reply("retry")
    assert _lost(retry.notes, retry.dropped) == []
    assert keep_facts(retry, _old(), last_try=False) == retry


def test_the_first_reply_lost_only_the_quoted_header_it_rephrased() -> None:
    """Scores, counts, star classes and distances are named by kind; the results header, quoted in the
    old notes and neither copied nor named, is the one fact the first reply really lost."""
    first = _reply("reply")
    assert _lost(first.notes, first.dropped) == ['"Aug 15 - Aug 17 · 2 adults"']


@pytest.mark.parametrize(
    ("named", "lost"),
    [
        ("review scores/counts", []),
        ("scores/counts", []),
        ("review scores and counts", []),
        ("guest scores, review counts", []),
        ("ratings, review counts", []),
        ("review counts", ["8.6", "9.0"]),
        ("review scores", ["1,204 reviews", "2,110 reviews"]),
        ("star ratings", ["1,204 reviews", "8.6", "2,110 reviews", "9.0"]),
    ],
)
def test_each_kind_a_model_writes_accounts_for_its_own_values_only(named: str, lost: list[str]) -> None:
    first = _reply("reply")
    header = '"Aug 15 - Aug 17 · 2 adults"'
    assert "review scores/counts" in first.dropped
    dropped = first.dropped.replace("review scores/counts", named)
    assert [f for f in _lost(first.notes, dropped) if f != header] == lost


def test_star_classes_and_distances_need_their_own_kind() -> None:
    first = _reply("reply")
    dropped = first.dropped.replace("Star ratings, distances,", "Distances,")
    assert "4-star" in _lost(first.notes, dropped)
    dropped = first.dropped.replace("Star ratings, distances,", "Star ratings,")
    assert {"0.3 mi", "0.5 mi"} <= set(_lost(first.notes, dropped))


def test_a_price_or_a_name_truly_lost_is_still_caught() -> None:
    """The kinds named ("per-night prices of the non-chosen hotels" among them) drop no total price of
    a hotel named nowhere else, nor its name."""
    retry = _reply("retry")
    notes = retry.notes.replace(" State House Inn $284;", "")
    assert set(_lost(notes, retry.dropped)) == {"State House Inn", "$284"}
    first = _reply("reply")
    notes = first.notes.replace(" Springfield Grand Hotel $350.", "")
    assert {"Springfield Grand Hotel", "$350"} <= set(_lost(notes, first.dropped))


def test_an_item_excepted_from_a_kind_keeps_its_values_of_that_kind() -> None:
    old = "State House Inn: 0.3 mi\nCapitol Suites: 0.8 mi, 3-star, near Old State Capitol\n"
    new = "Chosen: Capitol Suites, near Old State Capitol. Also seen: State House Inn"
    assert _lost(new, "Distances and star ratings of all hotels", old) == []
    assert _lost(new, "Distances and star ratings of all hotels except Capitol Suites", old) == [
        "0.8 mi",
        "3-star",
    ]
    # an exception that names one value of the item keeps only that value: its distance is dropped
    assert _lost(new, "Distances and star ratings of all hotels except Capitol Suites' 3-star", old) == []
