"""A scripted run: the Notetaker's "None" (nothing new on this screen) keeps the notes taken so far."""

from __future__ import annotations

from conftest import RunFn
from loop_scripting import Script, Step

from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

OPEN = {"name": "Open_App", "arguments": {"app_name": "Notes"}}
HOME = {"name": "Home", "arguments": {}}


def test_loop_notes_survive_a_nothing_new_reply(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    replies = iter(["Price of the Ninja DZ201: $159.99", "None", "none.", "None"])
    seen_by_notetaker: list[str] = []

    def notes(request: RecordedRequest) -> str:
        seen_by_notetaker.append(request.text)
        return next(replies)

    fake_server.responder = Script(
        [Step("Open Notes", OPEN), Step("Go home", HOME), Step("Open Notes again", OPEN), Step("Home", HOME)],
        notes=notes,
    )
    result, _ = run("Note the air fryer price")
    assert result.finished, result.message
    assert result.memory.notes == "Price of the Ninja DZ201: $159.99"
    # every later Notetaker call still sees the note as existing
    assert all("$159.99" in text for text in seen_by_notetaker[1:])
    assert "$159.99" in fake_server.requests_for("manager")[-1].text


def test_failed_action_keeps_progress_adds_what_it_showed_and_notetaker_sees_its_subgoal(
    run: RunFn, fake_server: FakeModelServer
) -> None:
    from loop_scripting import reflector_reply

    script = Script(
        [Step("Open Notes", OPEN), Step("Scroll the list", {"name": "Wait", "arguments": {}}, "C")]
    )
    judged: list[str] = []

    def respond(request: RecordedRequest) -> str | None:
        if request.role != "reflector":
            return script(request)
        judged.append(request.text)
        if len(judged) == 1:
            return reflector_reply("A", "Notes is open.")
        # a C that keeps the progress word for word and adds what the attempt showed
        return reflector_reply("C", "Notes is open. The list has no more notes below.", "Nothing moved.")

    fake_server.responder = respond
    result, _ = run("Look through the notes")
    assert result.memory.progress == "Notes is open. The list has no more notes below."
    assert "first repeat the previous progress word for word" in " ".join(judged[0].split())
    notetaker = fake_server.requests_for("notetaker")
    assert "### Subgoal of the Last Action ###\nOpen Notes" in notetaker[0].text
    assert '### Last Action ###\nOpen_App("Notes")' in notetaker[0].text
    assert "### Subgoal of the Last Action ###\nScroll the list" in notetaker[1].text
    assert "screen after the last action" in notetaker[1].text


def test_failed_action_that_rewrites_the_progress_keeps_the_old_progress() -> None:
    from mae.agents.reflector import progress_after

    assert (
        progress_after("A", "Opened Notes.", "Opened Notes. Created a note.")
        == "Opened Notes. Created a note."
    )
    assert progress_after("C", "Opened Notes.", "Opened Notes.  The list ends here.") == (
        "Opened Notes.  The list ends here."
    )
    assert progress_after("B", "Opened Notes.", "Created a note and typed the list.") == "Opened Notes."
    assert progress_after("C", "", "Created the note.") == ""  # nothing to keep: no progress claimed
    assert progress_after("C", "Opened Notes.", "Opened Notes.") == "Opened Notes."
