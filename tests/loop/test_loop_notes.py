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
