"""The Experience Reflectors on the fake model server: Tips, Shortcut proposals, failures, flagging."""

from __future__ import annotations

import copy
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
from mae.errors import ExitReason
from mae.llm import Message, ModelProviderError
from mae.memory.longterm import MemoryStore, UsagePolicy
from mae.memory.tips import INITIAL_TIPS, split_tips
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest

TASK = "Search for ribeye steak on Walmart and note its price"


def failed_task() -> object:
    return task_result(
        TASK,
        [
            action(1, 'Open_App("Walmart")'),
            action(2, 'Tap_Type_and_Enter(540, 200, "ribeye")', shortcut="Tap_Type_and_Enter", atomic=3),
            action(3, "Tap(540, 900)", outcome="B", error="Opened an ad instead of the product."),
            action(4, "Back()", outcome="C", error="Nothing changed."),
            action(5, "Back()", outcome="C", error="Still nothing changed."),
        ],
        exit_reason=ExitReason.CONSECUTIVE_ERRORS,
        progress="Searched for ribeye; no price yet.",
    )


def test_memory_tips_are_updated_after_a_failed_task(tmp_path: Path, fake_server: FakeModelServer) -> None:
    store = MemoryStore(tmp_path)
    new_tip = "Sponsored results open ads: look for the product title before tapping."
    fake_server.add(tips_reply(*INITIAL_TIP_LINES, new_tip), role="experience")
    fake_server.add(shortcuts_reply(), role="experience")
    future = ["Check whether fresh oranges are on sale at Walmart"]
    report = reflect_on_task(store, make_client(fake_server), failed_task(), future_tasks=future)  # type: ignore[arg-type]
    fake_server.assert_done()

    assert report.tips_updated and (report.tips_before, report.tips_after) == (4, 5)
    assert report.version == 1 and report.problems == [] and report.rejected == []
    state = store.load()
    assert new_tip in state.tips and state.author == "experience reflector" and state.task == TASK
    assert state.usage["Tap_Type_and_Enter"].successes == 1

    tips_request, shortcuts_request = fake_server.requests_for("experience")
    assert "did NOT complete" in tips_request.text and "consecutive_errors" in tips_request.text
    assert "Opened an ad instead of the product." in tips_request.text
    assert "fresh oranges" in tips_request.text and "fresh oranges" in shortcuts_request.text
    assert INITIAL_TIPS.splitlines()[0] in tips_request.text
    assert "Tap_Type_and_Enter" in shortcuts_request.text


def test_memory_valid_and_invalid_shortcut_proposals(tmp_path: Path, fake_server: FakeModelServer) -> None:
    store = MemoryStore(tmp_path)
    unknown_op = {**copy.deepcopy(SEARCH_SHORTCUT), "name": "Search_By_Voice"}
    unknown_op["atomic_action_sequence"][0] = {"name": "Speak", "arguments_map": {"text": "text"}}
    unmapped = {**copy.deepcopy(SEARCH_SHORTCUT), "name": "Search_Half_Mapped"}
    unmapped["atomic_action_sequence"][0] = {"name": "Tap", "arguments_map": {"x": "x"}}
    literal = {**copy.deepcopy(SEARCH_SHORTCUT), "name": "Search_Bad_Literal"}
    literal["atomic_action_sequence"][0] = {"name": "Tap", "arguments_map": {"x": "x", "y": "top"}}
    duplicate = {**copy.deepcopy(SEARCH_SHORTCUT), "name": "Tap_Type_and_Enter"}
    fake_server.add(tips_reply(*INITIAL_TIP_LINES), role="experience")
    fake_server.add(
        shortcuts_reply([SEARCH_SHORTCUT, unknown_op, unmapped, literal, duplicate, "not an object"]),
        role="experience",
    )
    report = reflect_on_task(store, make_client(fake_server), failed_task())  # type: ignore[arg-type]
    fake_server.assert_done()

    assert report.added == ["Search_In_App"]
    reasons = {r.name: r.reason for r in report.rejected}
    assert "unknown operation 'Speak'" in reasons["Search_By_Voice"]
    assert "argument 'y' is not mapped" in reasons["Search_Half_Mapped"]
    assert "'top' is neither a Shortcut argument" in reasons["Search_Bad_Literal"]
    assert "duplicate name" in reasons["Tap_Type_and_Enter"]
    assert "must be a JSON object" in reasons["(unnamed Shortcut)"]
    state = store.load()
    assert set(state.shortcuts) == {"Tap_Type_and_Enter", "Search_In_App"}
    assert state.shortcuts["Tap_Type_and_Enter"].atomic_action_sequence[0].arguments_map == {
        "x": "x",
        "y": "y",
    }
    logged = store.history()[-1]
    assert {r.name for r in logged.rejected} == set(reasons)
    assert "added Search_In_App" in logged.changes


def test_memory_non_json_proposal_gets_one_correction_then_is_logged(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    store = MemoryStore(tmp_path)
    fake_server.add(
        tips_reply(*INITIAL_TIP_LINES, "Check the app before calling a Shortcut."), role="experience"
    )
    fake_server.add(shortcuts_reply(raw_new='{"name": "Broken", "arguments": ['), role="experience")
    fake_server.add(shortcuts_reply(raw_new="Create_Note(text) taps the plus button"), role="experience")
    report = reflect_on_task(store, make_client(fake_server), failed_task())  # type: ignore[arg-type]
    fake_server.assert_done()

    retry = fake_server.requests_for("experience")[2]
    assert "could not be used" in retry.text and "not valid JSON" in retry.text
    assert report.tips_updated, "the Tips reflector's result is kept when the other one fails"
    assert any("Shortcuts reflector gave no usable reply" in p for p in report.problems)
    assert set(store.load().shortcuts) == {"Tap_Type_and_Enter"}
    assert any("Shortcuts reflector" in p for p in store.history()[-1].problems)


def test_memory_corrected_proposal_is_accepted(tmp_path: Path, fake_server: FakeModelServer) -> None:
    store = MemoryStore(tmp_path)
    fake_server.add(tips_reply(*INITIAL_TIP_LINES), role="experience")
    fake_server.add("I would add a search Shortcut.", role="experience")
    fake_server.add(shortcuts_reply([SEARCH_SHORTCUT]), role="experience")
    report = reflect_on_task(store, make_client(fake_server), failed_task())  # type: ignore[arg-type]
    assert report.added == ["Search_In_App"] and report.problems == []


def test_memory_reflector_model_errors_never_lose_memory(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips("1. Keep me.\n2. And me.\n")
    store.put_shortcuts({"Search_In_App": SEARCH_SHORTCUT})
    fake_server.add(FakeReply(status=500, body='{"error": {"message": "down"}}'), role="experience")
    result = task_result(TASK, [action(1, "Back()")], exit_reason=ExitReason.MODEL_ERROR)
    report = reflect_on_task(store, make_client(fake_server), result)
    fake_server.assert_done()  # the Shortcuts reflector does not call the failing provider again

    assert len(report.problems) == 2 and "memory it updates was kept" in report.problems[0]
    assert "Shortcuts reflector skipped" in report.problems[1]
    assert report.version is None
    state = store.load()
    assert state.version == 2 and state.tips == "1. Keep me.\n2. And me.\n"
    assert set(state.shortcuts) == {"Tap_Type_and_Enter", "Search_In_App"}
    last = store.history()[-1]
    assert last.version is None and len(last.problems) == 2


def test_memory_tips_reply_dropping_most_tips_is_corrected(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    store = MemoryStore(tmp_path)
    many = [f"Tip number {i}." for i in range(1, 11)]
    store.set_tips("\n".join(f"{i}. {t}" for i, t in enumerate(many, 1)))
    fake_server.add(tips_reply("Only one tip survives."), role="experience")
    fake_server.add(tips_reply("Only one tip survives."), role="experience")
    fake_server.add(shortcuts_reply(), role="experience")
    report = reflect_on_task(store, make_client(fake_server), failed_task())  # type: ignore[arg-type]
    fake_server.assert_done()
    assert "has 1 tips but there were 10" in fake_server.requests_for("experience")[1].text
    assert not report.tips_updated
    assert len(split_tips(store.load().tips)) == 10


def test_memory_failing_shortcut_is_flagged_shown_for_revision_and_withheld(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    store = MemoryStore(tmp_path)
    store.put_shortcuts({"Search_In_App": SEARCH_SHORTCUT})
    policy = UsagePolicy(flag_after=2, withhold_after=3)
    client = make_client(fake_server)

    def failing_run(number: int) -> object:
        return task_result(
            f"Task {number}",
            [
                action(
                    1,
                    'Search_In_App(540, 200, "milk")',
                    shortcut="Search_In_App",
                    outcome="B",
                    error=f"failure {number}: the app switcher was open, not the search page",
                    atomic=3,
                ),
            ],
            exit_reason=ExitReason.CONSECUTIVE_ERRORS,
        )

    for number in (1, 2):
        fake_server.add(tips_reply(*INITIAL_TIP_LINES), role="experience")
        fake_server.add(shortcuts_reply(), role="experience")
        report = reflect_on_task(store, client, failing_run(number), policy=policy)  # type: ignore[arg-type]
    assert report.usage == ["Search_In_App: failure -> flagged"]
    state = store.load()
    assert state.status("Search_In_App", policy) == "flagged"
    assert "Search_In_App" in state.usable_shortcuts(policy)
    prompt = fake_server.requests_for("experience")[-1].text
    assert "Search_In_App(x, y, text) is FLAGGED: 2 failure(s) in 2 call(s)" in prompt
    assert "failure 1: the app switcher was open" in prompt and "failure 2:" in prompt

    fake_server.add(tips_reply(*INITIAL_TIP_LINES), role="experience")
    fake_server.add(shortcuts_reply(), role="experience")
    report = reflect_on_task(store, client, failing_run(3), policy=policy)  # type: ignore[arg-type]
    state = store.load()
    assert report.usage == ["Search_In_App: failure -> withheld"]
    assert state.status("Search_In_App", policy) == "withheld"
    assert "Search_In_App" not in state.usable_shortcuts(policy)
    assert "Search_In_App" in state.shortcuts, "withheld, never deleted"

    revised = copy.deepcopy(SEARCH_SHORTCUT)
    revised["precondition"] = "The app's own search page is in front (not the app switcher)."
    fake_server.add(tips_reply(*INITIAL_TIP_LINES), role="experience")
    fake_server.add(shortcuts_reply(revised=[revised]), role="experience")
    report = reflect_on_task(store, client, task_result("Task 4", []), policy=policy)
    assert report.revised == ["Search_In_App"]
    state = store.load()
    assert state.shortcuts["Search_In_App"].precondition.startswith("The app's own search page")
    assert state.status("Search_In_App", policy) == "ok", "a revision starts its usage afresh"
    assert (
        store.load_version(state.version - 1).shortcuts["Search_In_App"].precondition
        == (SEARCH_SHORTCUT["precondition"])
    )


def test_memory_revision_of_unknown_shortcut_is_refused(tmp_path: Path, fake_server: FakeModelServer) -> None:
    store = MemoryStore(tmp_path)
    fake_server.add(tips_reply(*INITIAL_TIP_LINES), role="experience")
    fake_server.add(shortcuts_reply(revised=[SEARCH_SHORTCUT]), role="experience")
    report = reflect_on_task(store, make_client(fake_server), task_result(TASK, []))
    assert [r.name for r in report.rejected] == ["Search_In_App"]
    assert "unknown Shortcut" in report.rejected[0].reason


def test_memory_usage_only_without_reflection(tmp_path: Path, fake_server: FakeModelServer) -> None:
    store = MemoryStore(tmp_path)
    result = task_result(
        TASK,
        [action(1, 'Tap_Type_and_Enter(1, 2, "x")', shortcut="Tap_Type_and_Enter", atomic=3)],
    )
    report = reflect_on_task(
        store, make_client(fake_server), result, reflect=False, refused={"Tap_Type_and_Enter": 2}
    )
    assert fake_server.requests == []
    usage = store.load().usage["Tap_Type_and_Enter"]
    assert (usage.calls, usage.successes, usage.refused) == (1, 1, 2)
    assert report.usage == ["Tap_Type_and_Enter: success, 2 refused by the precondition check"]


def test_memory_reflectors_are_skipped_when_the_run_ended_on_a_dead_provider(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips("1. Keep me.\n")
    client = make_client(fake_server)
    fake_server.add(FakeReply(status=503, body='{"error": {"message": "down"}}'), role="operator")
    with pytest.raises(ModelProviderError):
        client.complete("operator", [Message("user", "act")])
    before = store.load().version
    result = task_result(TASK, [action(1, "Back()")], exit_reason=ExitReason.MODEL_ERROR)
    report = reflect_on_task(store, client, result)
    fake_server.assert_done()  # no reflector request reached the dead provider
    assert report.version is None and "Experience Reflectors skipped" in report.problems[0]
    assert store.load().version == before and store.load().tips == "1. Keep me.\n"


def test_memory_two_runs_sharing_a_folder_both_keep_their_tips(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips("1. Old tip one.\n2. Old tip two.\n")
    other_run = MemoryStore(tmp_path)

    def respond(request: RecordedRequest) -> str:
        if "Updated Tips" in request.text:  # while this reflector thinks, another run stores its update
            other_run.set_tips("1. Old tip one.\n2. Old tip two.\n3. Tip from the other run.\n")
            return tips_reply("Old tip one.", "Tip from this run.")  # this run dropped tip two
        return shortcuts_reply()

    fake_server.responder = respond
    report = reflect_on_task(store, make_client(fake_server), task_result(TASK, [action(1, "Back()")]))
    assert report.tips_updated and not report.problems
    assert split_tips(store.load().tips) == ["Old tip one.", "Tip from the other run.", "Tip from this run."]


def test_memory_oversized_model_output_is_trimmed_not_stored_whole() -> None:
    from mae.agents import experience_replies, notetaker
    from mae.memory.limits import MAX_TIP_CHARS

    huge_tips = tips_reply(*[f"Tip {i}: " + "word " * 200 for i in range(200)])
    tips = split_tips(experience_replies.parse_tips_reply(huge_tips).tips)
    assert len(tips) == experience_replies.MAX_TIPS and all(len(t) <= MAX_TIP_CHARS for t in tips)
    notes = notetaker.parse_reply("### Important Notes ###\n" + "price 5 EUR; " * 100_000).notes
    assert len(notes) < notetaker.MAX_NOTES_CHARS + 100


def test_memory_a_refused_reflector_request_skips_the_rest_in_plain_words(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    store = MemoryStore(tmp_path)
    refused = FakeReply(status=404, body='{"error": {"message": "The model `m` does not exist."}}')
    fake_server.add(refused, role="experience")
    report = reflect_on_task(store, make_client(fake_server), task_result(TASK, [action(1, "Back()")]))
    fake_server.assert_done()  # the Shortcuts reflector did not call the endpoint that refused the Tips one
    assert len(report.problems) == 2, report.problems
    assert report.problems[0].startswith("Tips reflector failed (") and "Error" not in report.problems[0]
    assert report.problems[1].startswith("Shortcuts reflector skipped: the provider refused the request")


def test_the_shortcuts_reflector_sees_the_swipe_example_in_the_frame_the_model_wrote(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Relay runs (Cartwell, evolution): the Shortcuts reflector read "x1 = x2 = 540, y1 = 1500, y2 = 500"
    (a 1080×2340 screen) after a run whose every prompt said the screen was a 768×1664 image."""
    result = failed_task()
    for record in result.memory.actions:  # type: ignore[attr-defined]
        record.frame = "in its 768×1664 image"
    fake_server.add(tips_reply(*INITIAL_TIP_LINES), role="experience")
    fake_server.add(shortcuts_reply(), role="experience")
    reflect_on_task(MemoryStore(tmp_path), make_client(fake_server), result)  # type: ignore[arg-type]
    _, shortcuts_request = fake_server.requests_for("experience")
    assert "x1 = x2 = 384, y1 = 1067, y2 = 356" in shortcuts_request.text
    assert "1500" not in shortcuts_request.text


def test_the_tips_reflector_is_told_the_length_limits_before_it_writes(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Relay run (Cartwell, evolution, task 2): a real model wrote a 427-character Tip that was cut at
    400 characters, a limit its prompt never stated."""
    fake_server.add(tips_reply(*INITIAL_TIP_LINES), role="experience")
    fake_server.add(shortcuts_reply(), role="experience")
    reflect_on_task(MemoryStore(tmp_path), make_client(fake_server), failed_task())  # type: ignore[arg-type]
    tips_request, _ = fake_server.requests_for("experience")
    text = " ".join(tips_request.text.split())
    assert "at most 400 characters (a longer tip is cut there)" in text and "at most 40 tips" in text
