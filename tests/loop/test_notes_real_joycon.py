"""A real model's consolidation that the fact check misjudged (issue #38).

Relay run, task h_joycon_three_stores, E default, requests 73 and 74: the model consolidated 1,726
characters of notes on three stores' Joy-Con results correctly, naming under ``### Dropped ###`` the
"Ratings and review counts of all items", yet was retried for 19 facts (review counts, heading phrases
such as "Joy-Con on Amazon", "$52.00" written as "Amazon Renewed $52.00"). Its retry quoted every
rating with its count ("4.6 stars (220)") and was still said to have lost "220" and "5,120", so the
repair pasted old lines back beside the model's own. Both replies keep every fact; a fact truly lost
from them is still caught.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mae.agents.notes_budget import ConsolidatedNotes, keep_facts, parse_consolidated
from mae.agents.notes_facts import extract_facts, find_losses, repair
from mae.agents.parsing import ReplyProblem

DATA = Path(__file__).parent / "data" / "real_replies"
PROMPT = Path(__file__).parents[2] / "prompts" / "notetaker_consolidate.md"


def _old() -> str:
    return (DATA / "notes_consolidation_joycon_old.txt").read_text(encoding="utf-8")


def _reply(name: str) -> ConsolidatedNotes:
    return parse_consolidated((DATA / name).read_text(encoding="utf-8"), _old())


def _lost(notes: str, dropped: str) -> list[str]:
    return [fact.text for fact in find_losses(_old(), notes, dropped).lost]


@pytest.mark.parametrize(
    "name", ["notes_consolidation_joycon_reply.txt", "notes_consolidation_joycon_retry.txt"]
)
def test_the_real_consolidation_and_its_retry_keep_every_fact(name: str) -> None:
    reply = _reply(name)
    assert _lost(reply.notes, reply.dropped) == []
    assert keep_facts(reply, _old(), last_try=False) == reply, "no retry, no repair"


def test_review_counts_dropped_by_kind_or_quoted_with_their_rating_are_accounted_for() -> None:
    first, retry = (
        _reply("notes_consolidation_joycon_reply.txt"),
        _reply("notes_consolidation_joycon_retry.txt"),
    )
    counts = ["40,210", "8,120", "412", "9,120", "5,311", "220", "5,120", "388"]
    # "Ratings" alone names the ratings, not the counts behind them
    assert _lost(first.notes, first.dropped.replace("Ratings and review counts", "Ratings")) == counts
    # a count quoted with its rating is named; one left out of the quote is lost
    assert _lost(retry.notes, retry.dropped.replace('"4.6 stars (220)"', '"4.6 stars"')) == ["220"]
    assert _lost(retry.notes, retry.dropped.replace(', "4.7 stars (5,120)"', "")) == ["5,120"]


def test_a_reason_that_mentions_prices_does_not_drop_a_price() -> None:
    """ "Ratings and review counts ...: not needed for the price comparison" drops no price: a Best Buy
    price the notes no longer hold is lost."""
    first = _reply("notes_consolidation_joycon_reply.txt")
    notes = first.notes.replace(" - $72.99 (Was $79.99, Sale)", "")
    assert set(_lost(notes, first.dropped)) == {"$72.99"}


def test_heading_phrases_are_not_facts_but_the_names_in_them_still_tie_values() -> None:
    line = (
        "Cheapest brand-new Joy-Con at Best Buy so far: Nintendo Switch Joy-Con (L/R), Pastel Pink, $72.99."
    )
    names = [fact.text for fact in extract_facts(line) if fact.kind == "name"]
    assert "Joy-Con at Best Buy" not in names and {"Best Buy", "Pastel Pink"} <= set(names)
    # a name that starts its label is one name, "on" and all; so is a name after a value
    assert "Pizza on Green" in [f.text for f in extract_facts("Pizza on Green: open until 9 PM")]
    assert "Pizza on Green" in [f.text for f in extract_facts("Near 5,120 Pizza on Green: closed")]
    before = "Pizza on Green: open until 9 PM\nBean Bar: open until 10 PM"
    lost = find_losses(before, "Bean Bar: open until 10 PM").lost
    assert sorted(f.text for f in lost) == ["9 PM", "Pizza on Green"]


def test_an_item_named_by_a_shorter_form_keeps_its_value_but_a_swap_is_still_caught() -> None:
    first = _reply("notes_consolidation_joycon_reply.txt")
    assert "Amazon Renewed $52.00" in first.notes
    swapped = first.notes.replace(
        "Amazon Renewed $52.00 and Best Buy Refurbished $49.99",
        "Best Buy Refurbished $52.00 and Amazon Renewed $49.99",
    )
    loss = find_losses(_old(), swapped, first.dropped)
    assert [fact.text for fact in loss.moved] == ["$52.00"]
    # an item "<head> for <use>" is named by its head, shortened from both ends only
    old = "- PowerA Enhanced Wireless Controller for Nintendo Switch: $39.99"
    assert not find_losses(old, "PowerA controller $39.99")
    assert [f.text for f in find_losses(old, "Wireless Controller $39.99").lost] == [
        "PowerA Enhanced Wireless Controller for Nintendo Switch"
    ]


def test_the_retry_asks_for_what_the_check_needs_in_the_first_request_s_words() -> None:
    first = _reply("notes_consolidation_joycon_reply.txt")
    dropped = first.dropped.replace("Ratings and review counts", "Ratings")
    with pytest.raises(ReplyProblem) as refused:
        keep_facts(ConsolidatedNotes(notes=first.notes, dropped=dropped), _old(), last_try=False)
    message = refused.value.message
    assert "named, briefly, under ### Dropped ###" in PROMPT.read_text(encoding="utf-8")
    assert "name it briefly under ### Dropped ###" in message and "its kind of value" in message
    assert "copy each one exactly" not in message
    assert '"40,210"' in message and '"Joy-Con on Amazon"' not in message and '"$52.00"' not in message


def test_a_repair_of_the_real_reply_keeps_the_model_s_lines_and_adds_no_duplicate() -> None:
    first = _reply("notes_consolidation_joycon_reply.txt")
    notes = first.notes.replace(" - $72.99 (Was $79.99, Sale)", "")
    repaired = repair(_old(), notes, find_losses(_old(), notes, first.dropped))
    lines = repaired.splitlines()
    assert notes.splitlines() == lines[: len(notes.splitlines())], "the model's lines stay, in order"
    added = lines[len(notes.splitlines()) :]
    assert added and all("$72.99" in line and line in _old() for line in added)
    assert len(lines) == len(set(lines))
