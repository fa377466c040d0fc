"""Experience Retrievers (the store keeps everything) and the Shortcut precondition guard."""

from __future__ import annotations

import copy
from pathlib import Path

from memory_testkit import SEARCH_SHORTCUT, make_client
from PIL import Image

from mae.actions.registry import INITIAL_SHORTCUTS, Shortcut
from mae.agents.precondition import PreconditionGuard, make_guard, screen_check
from mae.agents.retrieval import RUN_TIPS, retrieve
from mae.config import EvolutionSettings
from mae.memory.longterm import MemoryStore
from mae.memory.tips import INITIAL_TIPS, split_tips
from mae.perception.elements import Element, Perception
from mae.testing.fake_model_server import FakeModelServer, FakeReply

SEARCH = Shortcut.model_validate(SEARCH_SHORTCUT)
SCREEN = Image.new("RGB", (1080, 2340), "white")


def big_store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path)
    store.set_tips("\n".join(f"{i}. Tip about app number {i}." for i in range(1, 31)))
    shortcuts = {}
    for i in range(12):
        item = copy.deepcopy(SEARCH_SHORTCUT)
        item["name"] = f"Search_App_{i}"
        shortcuts[item["name"]] = item
    store.put_shortcuts(shortcuts)
    return store


def test_memory_retrieval_selects_for_the_run_and_keeps_the_full_store(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    store = big_store(tmp_path)
    before = store.versions()
    state = store.load()
    fake_server.add("### Thought ###\nMaps task.\n### Selected Tips ###\n3, 7, 31\n", role="experience")
    fake_server.add("### Thought ###\nMaps task.\n### Selected Tips ###\n3, 7, 12\n", role="experience")
    fake_server.add(
        "### Thought ###\nx\n### Selected Shortcuts ###\nSearch_App_2, Tap_Type_and_Enter, Made_Up\n",
        role="experience",
    )
    settings = EvolutionSettings(retrieve_tips_over=25, retrieve_shortcuts_over=10)
    result = retrieve(
        make_client(fake_server), "Find a bakery on Maps", state.tips, state.shortcuts, settings
    )
    fake_server.assert_done()

    assert "tips [31] do not exist" in fake_server.requests_for("experience")[1].text
    assert result.tips_selected == [3, 7, 12]
    assert split_tips(result.tips) == [
        "Tip about app number 3.",
        "Tip about app number 7.",
        "Tip about app number 12.",
    ]
    assert list(result.shortcuts) == ["Search_App_2", "Tap_Type_and_Enter"]
    assert result.summary() == "3 of 30 Tips selected, 2 of 13 Shortcuts selected"
    assert "Find a bakery on Maps" in fake_server.requests_for("experience")[0].text
    # the store itself is untouched: same versions, every tip and Shortcut still there
    assert store.versions() == before
    after = store.load()
    assert len(split_tips(after.tips)) == 30 and len(after.shortcuts) == 13


def test_memory_retrieval_is_skipped_for_small_memory_and_survives_failures(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    state = MemoryStore(tmp_path).load()
    small = retrieve(make_client(fake_server), "task", state.tips, state.shortcuts, EvolutionSettings())
    assert fake_server.requests == [] and small.tips == state.tips and small.tips_selected is None

    state = big_store(tmp_path).load()
    fake_server.add(FakeReply(status=500, body="{}"), role="experience")
    fake_server.add("### Selected Shortcuts ###\nNone\n", role="experience")
    settings = EvolutionSettings(retrieve_tips_over=25, retrieve_shortcuts_over=10)
    result = retrieve(make_client(fake_server), "Open app 17", state.tips, state.shortcuts, settings)
    # a failed retriever gives the run a bounded set (the best-matching few), never all 30 Tips
    fallback = split_tips(result.tips)
    assert result.tips_selected is None and 0 < len(fallback) <= RUN_TIPS < 30
    assert fallback[0] == "Tip about app number 17."
    assert "Tips retriever failed" in result.problems[0] and "best-matching" in result.problems[0]
    # "None" falls back to the initial Shortcuts rather than leaving the run with none
    assert list(result.shortcuts) == ["Tap_Type_and_Enter"] and result.shortcuts_selected == [
        "Tap_Type_and_Enter"
    ]
    assert "using the initial Shortcuts" in result.problems[-1]


def test_memory_retrieval_none_falls_back_to_the_initial_tips(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    state = big_store(tmp_path).load()
    fake_server.add("### Thought ###\nNothing fits.\n### Selected Tips ###\nNone\n", role="experience")
    settings = EvolutionSettings(retrieve_tips_over=25, retrieve_shortcuts_over=0)
    result = retrieve(make_client(fake_server), "task", state.tips, state.shortcuts, settings)
    assert result.tips == INITIAL_TIPS and result.tips_selected == []
    assert "pop-up" in result.tips and "using the initial Tips" in result.problems[0]


def perception(*elements: tuple[str, tuple[int, int, int, int]], keyboard: bool = False) -> Perception:
    return Perception(
        width=1080,
        height=2340,
        elements=[Element(kind="text", text=text, box=box) for text, box in elements],
        keyboard_active=keyboard,
    )


def test_memory_screen_check_refuses_taps_on_nothing_and_typing_without_keyboard() -> None:
    screen = perception(("Search Walmart", (100, 150, 900, 250)), ("Deals", (100, 600, 300, 650)))
    assert screen_check(SEARCH, {"x": 500, "y": 200, "text": "milk"}, screen) is None
    wide_bar = perception(("Search here", (168, 166, 384, 197)))
    assert screen_check(SEARCH, {"x": 1000, "y": 181, "text": "milk"}, wide_bar) is None, (
        "far end of a wide box"
    )
    refusal = screen_check(SEARCH, {"x": 500, "y": 1500, "text": "milk"}, screen)
    assert refusal is not None and "where it taps first" in refusal and "An empty search box" in refusal
    assert "(500, 1500)" not in refusal  # screen pixels: the model wrote its point in another frame
    type_first = Shortcut(
        name="Type_And_Enter",
        arguments=["text"],
        precondition="A text box has focus.",
        atomic_action_sequence=[{"name": "Type", "arguments_map": {"text": "text"}}, {"name": "Enter"}],  # type: ignore[list-item]
    )
    assert "keyboard is hidden" in (screen_check(type_first, {"text": "a"}, screen) or "")
    keyboard_screen = perception(("Search", (0, 0, 50, 50)), keyboard=True)
    assert screen_check(type_first, {"text": "a"}, keyboard_screen) is None
    assert screen_check(SEARCH, {"x": 500, "y": 1500, "text": "m"}, perception()) is None, (
        "nothing seen: no claim"
    )


def test_memory_guard_modes_and_refusal_counts(fake_server: FakeModelServer) -> None:
    assert make_guard("off") is None
    guard = make_guard("operator")
    assert isinstance(guard, PreconditionGuard)
    screen = perception(("Search Walmart", (100, 150, 900, 250)))
    assert guard(SEARCH, {"x": 500, "y": 200, "text": "m"}, screen, SCREEN) is None
    assert guard(SEARCH, {"x": 500, "y": 2000, "text": "m"}, screen, SCREEN) is not None
    assert guard.refused == {"Search_In_App": 1}
    assert fake_server.requests == [], "the operator mode makes no model call"


def test_memory_verify_mode_asks_the_verifier_with_the_screenshot(fake_server: FakeModelServer) -> None:
    guard = PreconditionGuard("verify", make_client(fake_server))
    screen = perception(("Walmart", (100, 150, 900, 250)), ("Amazon", (100, 1150, 900, 1250)))
    fake_server.add(
        "### Verdict ###\nNo\n\n### Reason ###\nThe app switcher is shown, not Walmart's search page.\n",
        role="verifier",
    )
    reason = guard(
        INITIAL_SHORTCUTS["Tap_Type_and_Enter"], {"x": 500, "y": 200, "text": "oranges"}, screen, SCREEN
    )
    assert reason is not None and "app switcher is shown" in reason
    request = fake_server.requests_for("verifier")[0]
    assert request.image_count == 1
    assert "no previously entered content" in request.text and '"text": "oranges"' in request.text
    # the verifier sees the 768x1664 image it is sent: the list and the call's point are in its pixels
    assert "768 pixels wide and 1664 pixels high" in request.text
    assert 'text "Walmart"; coordinates: [356, 142]' in request.text and '"x": 356, "y": 142' in request.text

    fake_server.add("### Verdict ###\nYes\n### Reason ###\nThe search box is empty.\n", role="verifier")
    assert (
        guard(INITIAL_SHORTCUTS["Tap_Type_and_Enter"], {"x": 500, "y": 200, "text": "x"}, screen, SCREEN)
        is None
    )

    fake_server.add(FakeReply(status=500, body="{}"), role="verifier")
    assert (
        guard(INITIAL_SHORTCUTS["Tap_Type_and_Enter"], {"x": 500, "y": 200, "text": "x"}, screen, SCREEN)
        is None
    )
    assert guard.refused == {"Tap_Type_and_Enter": 1}
    assert len(guard.checks) == 3 and "allowed" in guard.problems[0]
    fake_server.assert_done()
