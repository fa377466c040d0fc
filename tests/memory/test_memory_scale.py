"""The memory at scale: any number of Tips, size limits, bounded retrieval and reflection slices."""

from __future__ import annotations

import copy
import json
import logging
import re
from pathlib import Path

import pytest
from memory_testkit import (
    INITIAL_TIP_LINES,
    SEARCH_SHORTCUT,
    action,
    make_client,
    shortcuts_reply,
    task_result,
    tips_reply,
)

from mae.agents.experience import reflect_on_task
from mae.agents.retrieval import CANDIDATE_TIPS, RUN_SHORTCUTS_CHARS, RUN_TIPS_CHARS, retrieve
from mae.config import EvolutionSettings
from mae.errors import MemoryStoreError
from mae.memory import limits
from mae.memory.longterm import MemoryStore
from mae.memory.slices import REFLECT_SHORTCUTS, REFLECT_TIPS
from mae.memory.tips import INITIAL_TIPS, split_tips
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

APPS = ["Amazon", "Walmart", "Maps", "Chrome", "Gmail", "Calendar", "Spotify", "Uber"]


def numbered(count: int) -> str:
    return "".join(
        f"{i}. In {APPS[i % len(APPS)]}, lesson number {i} about screen {i % 13}.\n"
        for i in range(1, count + 1)
    )


def shortcuts(count: int) -> dict[str, dict[str, object]]:
    found = {}
    for i in range(count):
        item = copy.deepcopy(SEARCH_SHORTCUT)
        item["name"] = f"Search_{APPS[i % len(APPS)]}_{i}"
        item["description"] = (
            f"In {APPS[i % len(APPS)]}, tap the box at (x, y), type the text and press Enter."
        )
        found[str(item["name"])] = item
    return found


def test_memory_counts_and_exports_more_than_999_tips(tmp_path: Path) -> None:
    source = tmp_path / "tips.txt"
    source.write_text(numbered(1205), encoding="utf-8")
    store = MemoryStore(tmp_path / "memory")
    result = store.import_files(tips=source)
    assert "(1205 tips)" in result.change.changes[0]
    items = store.load().tip_items()
    assert len(items) == 1205 and items[999].startswith("In ") and "lesson number 1000 " in items[999]
    store.export(tmp_path / "out")
    assert (tmp_path / "out" / "tips.txt").read_text(encoding="utf-8") == source.read_text(encoding="utf-8")


def test_memory_import_refuses_oversized_items_with_a_sentence(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory")
    tips = tmp_path / "tips.txt"
    tips.write_text(f"1. Short.\n2. Fine.\n3. {'x' * (limits.MAX_TIP_CHARS + 1)}\n", encoding="utf-8")
    with pytest.raises(MemoryStoreError, match=r"tip 3 is 401 characters long; a tip may have at most 400"):
        store.import_files(tips=tips)
    with pytest.raises(MemoryStoreError, match="tip 1 is"):
        store.set_tips("1. " + "y" * 1000)
    assert store.versions() == [], "nothing was written"

    data = shortcuts(2)
    big = copy.deepcopy(SEARCH_SHORTCUT)
    big["name"] = "Huge_One"
    big["description"] = "z" * limits.MAX_SHORTCUT_CHARS
    data["Huge_One"] = big
    path = tmp_path / "shortcuts.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = store.import_files(shortcuts=path)
    assert [r.name for r in result.change.rejected] == ["Huge_One"]
    assert "a Shortcut may have at most 4,000" in result.change.rejected[0].reason
    assert set(store.load().shortcuts) == {"Tap_Type_and_Enter", *shortcuts(2)}


def test_memory_import_refuses_files_and_stores_past_the_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore(tmp_path / "memory")
    tips = tmp_path / "tips.txt"
    tips.write_text(numbered(30), encoding="utf-8")
    monkeypatch.setattr("mae.memory.edits.MAX_IMPORT_BYTES", 100)
    with pytest.raises(MemoryStoreError, match="a memory file may have at most 0 MiB: split it"):
        store.import_files(tips=tips)
    monkeypatch.setattr("mae.memory.edits.MAX_IMPORT_BYTES", 10_000_000)
    monkeypatch.setattr("mae.memory.limits.MAX_STORE_TIPS", 20)
    with pytest.raises(MemoryStoreError, match="it has 30 tips; the memory keeps at most 20"):
        store.import_files(tips=tips)
    monkeypatch.setattr("mae.memory.edits.MAX_STORE_SHORTCUTS", 5)
    with pytest.raises(MemoryStoreError, match="would hold 11 Shortcuts; it keeps at most 5"):
        store.put_shortcuts(shortcuts(10))
    assert store.versions() == []


def test_memory_retrieval_shows_a_bounded_ranked_list_and_falls_back_to_a_bounded_set(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips(INITIAL_TIPS + numbered(2000))
    store.put_shortcuts(shortcuts(300))
    state = store.load()
    settings = EvolutionSettings()
    picked: list[int] = []

    def answer(request: RecordedRequest) -> str:
        if "### All Tips ###" not in request.text:
            return "### Selected Shortcuts ###\nSearch_Walmart_1\n"
        picked.extend(int(n) for n in re.findall(r"^\[(\d+)\]", request.text, re.M)[2:4])
        return f"### Thought ###\nShopping.\n### Selected Tips ###\n{picked[0]}, {picked[1]}\n"

    fake_server.responder = answer
    task = "Compare the price of milk on Walmart"
    result = retrieve(
        make_client(fake_server), task, state.tips, state.shortcuts, settings, usage=state.usage
    )
    tips_prompt, shortcuts_prompt = (r.text for r in fake_server.requests_for("experience"))
    listed = [line for line in tips_prompt.splitlines() if line.startswith("[")]
    assert len(listed) <= CANDIDATE_TIPS and len(tips_prompt) < 16_000
    assert sum("Walmart" in line for line in listed) > len(listed) // 2, "ranked by the task's app"
    assert len(shortcuts_prompt) < 20_000 and "Search_Walmart_1" in shortcuts_prompt
    assert result.tips_selected == sorted(picked) and list(result.shortcuts) == ["Search_Walmart_1"]

    # a retriever whose replies are unusable: the initial memory plus a few, never everything
    fake_server.responder = lambda _request: "I cannot help with that."
    failed = retrieve(make_client(fake_server), task, state.tips, state.shortcuts, settings)
    assert (
        len(failed.tips) <= RUN_TIPS_CHARS + 100 and split_tips(failed.tips)[0] == split_tips(INITIAL_TIPS)[0]
    )
    described = "\n".join(s.describe() for s in failed.shortcuts.values())
    assert "Tap_Type_and_Enter" in failed.shortcuts and len(described) <= RUN_SHORTCUTS_CHARS
    assert any("best-matching" in p for p in failed.problems)


def test_memory_reflectors_see_a_slice_and_merge_into_the_full_store(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips(numbered(500))
    store.put_shortcuts(shortcuts(200))
    before = store.load()
    used_tip = before.tip_items()[399]
    seen: list[list[str]] = []

    def answer(request: RecordedRequest) -> str:
        if "### Current Tips ###" not in request.text:
            return shortcuts_reply()
        current = request.text.split("### Current Tips ###\n", 1)[1].split("\n\nGuidelines", 1)[0]
        items = split_tips(current)
        seen.append(items)
        return tips_reply("Fixed: " + items[0], *items[1:], "A brand new lesson.")

    fake_server.responder = answer
    result = task_result(
        "Find a route on Maps", [action(1, "Search_Maps_2(1, 2, x)", shortcut="Search_Maps_2")]
    )
    report = reflect_on_task(
        store,
        make_client(fake_server),
        result,
        used_tips=f"1. {used_tip}\n",
        used_shortcuts=["Search_Maps_10"],
    )
    assert len(seen[0]) <= REFLECT_TIPS and used_tip in seen[0]
    shortcuts_prompt = fake_server.requests_for("experience")[1].text
    shown = [line for line in shortcuts_prompt.splitlines() if line.startswith('- {"name"')]
    assert len(shown) <= REFLECT_SHORTCUTS and '"Search_Maps_2"' in shortcuts_prompt
    assert '"Search_Maps_10"' in shortcuts_prompt and "more Shortcuts, less related" in shortcuts_prompt

    after = store.load().tip_items()
    assert report.tips_after == 501 and len(after) == 501
    assert after[-1] == "A brand new lesson." and any(t.startswith("Fixed: ") for t in after)
    unseen = set(before.tip_items()) - {t.removeprefix("Fixed: ") for t in after if t.startswith("Fixed: ")}
    assert unseen <= set(after), "every Tip the reflector did not see (or left alone) is kept"
    assert len(store.load().shortcuts) == 201


def test_memory_reflector_proposals_are_trimmed_with_a_warning(
    tmp_path: Path, fake_server: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = MemoryStore(tmp_path)
    wordy = copy.deepcopy(SEARCH_SHORTCUT)
    wordy["name"] = "Wordy_Search"
    wordy["description"] = "Search. " * 400
    fake_server.add(tips_reply(*INITIAL_TIP_LINES), role="experience")
    fake_server.add(shortcuts_reply(new=[wordy]), role="experience")
    with caplog.at_level(logging.WARNING):
        report = reflect_on_task(store, make_client(fake_server), task_result("Search", []))
    assert report.added == ["Wordy_Search"]
    stored = store.load().shortcuts["Wordy_Search"]
    assert len(stored.description) == limits.MAX_SHORTCUT_TEXT_CHARS and stored.description.endswith("…")
    assert "very long description" in caplog.text


REAL_TIPS = Path(__file__).parent / "data" / "real_tips_cartwell_price_check_v3.txt"


def test_a_real_models_twelve_tip_memory_reaches_the_run_whole() -> None:
    """Relay run (Cartwell price check, evolution, task 4): a real model's 12 Tips (3,073 characters,
    up to 400 each) were cut to 3 by the 720-character run budget, leaving out the Tip that a learnt
    Shortcut's precondition needed. A memory that size is now given whole."""
    tips = REAL_TIPS.read_text(encoding="utf-8")
    assert len(split_tips(tips)) == 12
    got = retrieve(None, "Compare the Kindle's price at two stores", tips, {}, EvolutionSettings())  # type: ignore[arg-type]
    assert got.tips_selected is None and split_tips(got.tips) == split_tips(tips)
