"""Malformed replies get one corrective retry that says what was wrong, and never crash the run."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import RunFn
from loop_scripting import Script, Step, notes_reply, operator_reply, reflector_reply

from mae.actions.registry import Shortcut
from mae.device.virtual import VirtualPhone
from mae.errors import ExitReason
from mae.perception.elements import Perception
from mae.testing.fake_model_server import FakeModelServer

OPEN_NOTES = {"name": "Open_App", "arguments": {"app_name": "Notes"}}

BAD_OPERATOR_REPLIES = {
    "no sections": ("I will tap the Notes icon now.", "no sections"),
    "bad json": (operator_reply('{"name": "Tap", "arguments": {"x": 5 "y": 6}}'), "not valid JSON"),
    "unknown action": (operator_reply({"name": "Fly", "arguments": {}}), "unknown action 'Fly'"),
    "off screen": (operator_reply({"name": "Tap", "arguments": {"x": 5000, "y": 100}}), "off screen"),
    "missing argument": (operator_reply({"name": "Tap", "arguments": {"x": 5}}), "Field required"),
    "missing description": ("### Action ###\n" + '{"name": "Back", "arguments": {}}', "### Description ###"),
}


def correction(server: FakeModelServer, role: str, index: int) -> str:
    messages: list[dict[str, Any]] = server.requests_for(role)[index].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    return str(messages[-1]["content"])


@pytest.mark.parametrize("case", list(BAD_OPERATOR_REPLIES))
def test_loop_bad_operator_reply_is_corrected(
    case: str, run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    bad, problem = BAD_OPERATOR_REPLIES[case]
    fake_server.add(bad, role="operator")
    fake_server.responder = Script([Step("Open Notes", OPEN_NOTES)])
    result, _ = run("Open Notes")
    assert result.finished, result.message
    assert problem in correction(fake_server, "operator", 1)
    assert len(result.actions) == 1 and result.actions[0].outcome == "A"
    assert phone.screen_name == "Notes/list"


@pytest.mark.parametrize(
    "case", [c for c in BAD_OPERATOR_REPLIES if c not in ("no sections", "missing description")]
)
def test_loop_invalid_action_twice_is_an_error_step(
    case: str, run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    bad, problem = BAD_OPERATOR_REPLIES[case]
    fake_server.add(bad, bad, role="operator")
    fake_server.responder = Script([Step("Open Notes", OPEN_NOTES), Step("Open Notes", OPEN_NOTES)])
    result, _ = run("Open Notes")
    first = result.actions[0]
    assert not first.executed and first.outcome == "C" and first.error and problem in first.error
    assert result.errors[0].step == 1
    # the next Operator prompt tells the model what went wrong
    assert problem in fake_server.requests_for("operator")[2].text
    assert not fake_server.requests_for("reflector")[1:]  # the invalid step needed no reflection
    assert result.finished and phone.screen_name == "Notes/list"


def test_loop_operator_without_sections_twice_ends_the_run(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.add("Tap Notes.", "Tap Notes, really.", role="operator")
    fake_server.responder = Script([Step("Open Notes", OPEN_NOTES)])
    result, _ = run("Open Notes")
    assert result.exit_reason is ExitReason.UNUSABLE_REPLY and result.message.startswith("Operator:")


@pytest.mark.parametrize(
    ("outcome", "problem"),
    [
        ("A, B", "one outcome only"),
        ("A (or maybe B)", "one outcome only"),
        ("A or B", "one outcome only"),
        ("D", "must start with exactly one letter"),
    ],
)
def test_loop_reflector_outcome_is_parsed_strictly(
    outcome: str, problem: str, run: RunFn, fake_server: FakeModelServer
) -> None:
    fake_server.add(reflector_reply(outcome), role="reflector")
    fake_server.responder = Script([Step("Open Notes", OPEN_NOTES)])
    result, _ = run("Open Notes")
    assert result.finished
    assert problem in correction(fake_server, "reflector", 1)


def test_loop_reflector_failure_needs_an_error_description(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.add(reflector_reply("B", error="None"), reflector_reply("B", error="None"), role="reflector")
    fake_server.responder = Script([Step("Open Notes", OPEN_NOTES)])
    result, _ = run("Open Notes")
    assert result.exit_reason is ExitReason.UNUSABLE_REPLY and "Action Reflector" in result.message
    assert "Error Description" in correction(fake_server, "reflector", 1)


def test_loop_notetaker_without_section_is_corrected(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.add("Notes: none", notes_reply("Notes app is open."), role="notetaker")
    fake_server.responder = Script([Step("Open Notes", OPEN_NOTES)])
    result, _ = run("Open Notes")
    assert result.finished and result.memory.notes == "Notes app is open."
    assert "Important Notes" in correction(fake_server, "notetaker", 1)


def test_an_executed_action_counts_when_the_notetaker_reply_is_unusable(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    fake_server.add("", "", role="notetaker")  # empty twice: the corrective retry does not help
    fake_server.responder = Script([Step("Open Notes", OPEN_NOTES)])
    result, events = run("Open Notes")
    assert result.exit_reason is ExitReason.UNUSABLE_REPLY and "Notetaker" in result.message
    assert phone.screen_name == "Notes/list" and len(result.actions) == 1 and result.actions[0].executed
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["totals"]["steps"] == 1 and len(summary["actions"]) == 1 and result.totals.steps == 1
    assert next(e for e in events if e.type == "run_finished").data["steps"] == 1


def test_loop_shortcut_guard_refusal_is_fed_back(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    seen: list[tuple[str, dict[str, Any], int]] = []

    def guard(
        shortcut: Shortcut, arguments: dict[str, Any], perception: Perception, image: Any
    ) -> str | None:
        seen.append((shortcut.name, arguments, len(perception.elements)))
        return "there is no text box with focus on this screen"

    call = {"name": "Tap_Type_and_Enter", "arguments": {"x": 540, "y": 300, "text": "hello"}}
    fake_server.add(operator_reply(call), role="operator")
    fake_server.responder = Script([Step("Open Notes", OPEN_NOTES)])
    result, _ = run("Open Notes", shortcut_guard=guard)
    assert result.finished
    assert seen[0][0] == "Tap_Type_and_Enter" and seen[0][1] == {"x": 540, "y": 300, "text": "hello"}
    text = correction(fake_server, "operator", 1)
    assert "cannot be used on this screen" in text and "no text box" in text
    assert all(not e.startswith("Type") for e in (entry.action for entry in phone.state().log))
