"""Mobile-Agent v1 on the shared loop: a multi-app task end to end, its operations, its exits."""

from __future__ import annotations

import pytest
from baseline_scripting import V1Script, price_on_screen, v1_reply
from conftest import RunFn
from PIL import Image

from mae.agents.base import Screen
from mae.agents.parsing import ReplyProblem
from mae.agents.v1 import screen_changed
from mae.agents.v1_actions import find_icon, find_text, parse_v1_action
from mae.device.virtual import VirtualPhone
from mae.errors import ExitReason
from mae.perception.elements import Element, Perception
from mae.run.loop import DECLINED
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

TASK = "Find the price of the Ninja DZ201 air fryer on Amazon and write it in a new note in Notes."


def test_v1_completes_a_multi_app_task(run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer) -> None:
    seen: list[str] = []

    def note_price(request: RecordedRequest) -> str:
        return f"Type (Ninja DZ201 price on Amazon: {seen[-1]})"

    def remember(request: RecordedRequest) -> str:
        price = price_on_screen(request)
        assert price is not None, "the results page lists the Ninja DZ201 with a price"
        seen.append(price)
        return "Open app (Notes)"

    script = V1Script(
        [
            "Open app (Amazon)",
            "Click text (Search Amazon)",
            "Type (ninja air fryer 8 qt)",
            '{"name": "Enter", "arguments": {}}',
            remember,
            "Click icon (new note, bottom right)",
            note_price,
            "Back",
            "Stop",
        ]
    )
    fake_server.responder = script
    result, events = run(TASK, agent="v1")

    assert result.exit_reason is ExitReason.FINISHED, result.message
    written = [n for n in phone.state().notes if not n.seeded]
    assert len(written) == 1 and "$159.99" in written[0].text and "Ninja DZ201" in written[0].text
    assert [a.outcome for a in result.actions] == ["A"] * 8
    assert result.actions[1].text.startswith("Click text (Search Amazon) -> Tap(")
    assert result.actions[5].text.startswith("Click icon (new note, bottom right) -> Tap(")
    # one model call per step plus the completion check; one image per call
    assert result.totals.model_calls == 9 + 1 and result.totals.images == 10
    # self-planning from its own history: the last prompt lists every earlier step in O/T/A form
    last = script.agent_requests[-1].text
    assert "Step 8:\nObservation: The screen.\nThought: Next operation.\nAction: Back (done)" in last
    assert "Action: Open app (Amazon) (done)" in last and "Search Amazon; coordinates: [" not in last
    assert script.agent_requests[-1].image_count == 1
    assert "Texts and icons recognised on the screen" in last
    assert "### Tips ###" in last and "sign in as a guest" in last  # E's initial Tips (E paper, §4)
    roles = {e.data["role"] for e in events if e.type == "model_call"}
    assert roles == {"v1_agent", "v1_check"}
    stages = {e.data["stage"] for e in events if e.type == "stage_started"}
    assert stages == {"perceive", "v1_agent", "execute", "v1_check"}


def test_v1_reflects_when_the_screen_does_not_change(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    phone.open_app("Notes")
    script = V1Script(["Click text (Notes)", "Open app (Amazon)", "Stop"])
    fake_server.responder = script
    result, events = run("Open Amazon", agent="v1")

    assert result.exit_reason is ExitReason.FINISHED
    first = result.actions[0]
    assert first.outcome == "C" and first.error == "the screen did not change after this operation"
    second_prompt = script.agent_requests[1].text
    assert "### Reflection ###" in second_prompt
    assert "Click text (Notes), did not change the screen" in second_prompt
    assert "### Reflection ###" not in script.agent_requests[2].text  # only right after the unchanged step
    assert [e.data["outcome"] for e in events if e.type == "outcome"] == ["C", "A"]


def test_v1_stop_is_checked_and_an_unfinished_task_goes_on(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    script = V1Script(["Stop", "Open app (Notes)", "Stop"], checks=[False, True])
    fake_server.responder = script
    result, _ = run("Open Notes", agent="v1")

    assert result.exit_reason is ExitReason.FINISHED and phone.screen_name == "Notes/list"
    refused = result.actions[0]
    assert refused.text == "Stop" and not refused.executed and refused.outcome == "C"
    assert refused.error is not None and "unfinished" in refused.error
    assert "Action: Stop (not done yet: The note is not written yet.)" in script.agent_requests[1].text
    assert len(script.check_requests) == 2


def test_v1_unchanged_screens_end_the_run_after_three_failures(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    phone.open_app("Notes")
    fake_server.responder = V1Script(["Click text (Notes)"])
    result, _ = run("Do something", agent="v1", loop={"max_repeated_actions": 5})
    assert result.exit_reason is ExitReason.CONSECUTIVE_ERRORS
    assert [a.outcome for a in result.actions] == ["C", "C", "C"]


def test_v1_unknown_text_is_sent_back_and_then_recorded_invalid(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    fake_server.responder = V1Script(["Click text (No such button)", "Click text (No such button)", "Stop"])
    result, _ = run("Open Notes", agent="v1", loop={"max_steps": 1})
    assert result.exit_reason is ExitReason.MAX_STEPS
    record = result.actions[0]
    assert record.name == "invalid" and record.text == "Click text (No such button)"
    assert record.error is not None and "is not on the screen" in record.error
    corrective = fake_server.requests_for("operator")[1].text
    assert 'the text "No such button" is not on the screen' in corrective


def _screen(*elements: Element) -> Screen:
    image = Image.new("RGB", (1080, 2340), "white")
    return Screen(image, Perception(width=1080, height=2340, elements=list(elements)))


def _text(text: str, box: tuple[int, int, int, int], kind: str = "text") -> Element:
    return Element(kind=kind, text=text, box=box)


def test_v1_operations_map_onto_atomic_operations() -> None:
    screen = _screen(
        _text("Settings", (100, 300, 300, 340)),
        _text("Wi-Fi settings", (100, 500, 400, 540)),
        _text("blue plus button", (900, 2000, 1000, 2100), "icon"),
        _text("search magnifier", (900, 100, 1000, 200), "icon"),
    )
    cases = {
        "Open app (Google Maps)": 'Open_App("Google Maps")',
        "Click text (Settings)": "Tap(200, 320)",
        'click text ("wi-fi")': "Tap(250, 520)",
        "Click icon (plus, bottom right)": "Tap(950, 2050)",
        "Tap icon (magnifier, top)": "Tap(950, 150)",
        "Type (hello world)": 'Type("hello world")',
        "Page down": "Swipe(540, 1638, 540, 702)",
        "Page up": "Swipe(540, 702, 540, 1638)",
        "Back": "Back()",
        "Exit": "Home()",
    }
    for written, expected in cases.items():
        mapped = parse_v1_action(written, screen)
        assert mapped is not None and [str(s) for s in mapped.steps] == [expected], written
    stop = parse_v1_action("Stop.", screen)
    assert stop is not None and stop.is_stop
    assert parse_v1_action('{"name": "Tap", "arguments": {"x": 1, "y": 2}}', screen) is None
    assert parse_v1_action("Swipe(1, 2, 3, 4)", screen) is None


def test_v1_text_and_icon_lookups_explain_what_to_do() -> None:
    few = _screen(_text("Buy", (0, 900, 100, 940)), _text("Buy", (0, 300, 100, 340)))
    with pytest.raises(ReplyProblem, match=r"appears 2 times on the screen, at \[50, 320\]; \[50, 920\]"):
        find_text(few, "Buy")
    halved = lambda x, y: (x // 2, y // 2)  # noqa: E731  (a model answering in a half-size image)
    with pytest.raises(ReplyProblem, match=r"at \[25, 160\]; \[25, 460\]: pick the one you mean"):
        find_text(few, "buy", halved)
    many = _screen(*(_text("Buy", (0, 100 * i, 100, 100 * i + 40)) for i in range(6)))
    with pytest.raises(ReplyProblem, match="appears 6 times"):
        find_text(many, "Buy")
    with pytest.raises(ReplyProblem, match="not on the screen"):
        find_text(many, "Sell")
    with pytest.raises(ReplyProblem, match="no icons were recognised"):
        find_icon(many, "plus, top")
    icons = _screen(_text("plus", (900, 2000, 1000, 2100), "icon"), _text("gear", (0, 0, 50, 50), "icon"))
    with pytest.raises(ReplyProblem, match="no recognised icon matches"):
        find_icon(icons, "red heart")
    assert find_icon(icons, "something, bottom right").text == "plus"  # the only icon in that corner
    blank = _screen(_text("", (900, 2000, 1000, 2100), "icon"), _text("", (900, 2200, 1000, 2300), "icon"))
    with pytest.raises(ReplyProblem, match="have no descriptions"):
        find_icon(blank, "plus, bottom right")
    corner = _screen(_text("", (900, 2000, 1000, 2100), "icon"), _text("", (0, 0, 50, 50), "icon"))
    assert find_icon(corner, "plus, bottom right").box == (900, 2000, 1000, 2100)  # position alone decides


def test_screen_changed_ignores_the_status_bar() -> None:
    before = Image.new("RGB", (1080, 2340), "white")
    clock = before.copy()
    clock.paste((0, 0, 0), (10, 10, 200, 60))
    assert not screen_changed(before, clock)
    typed = before.copy()
    typed.paste((0, 0, 0), (100, 500, 110, 510))
    assert screen_changed(before, typed)


def test_v1_reads_replies_the_way_models_write_them(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    styled = (
        "Sure! Let me look at the screen.\n\n## Observation:\nThe home screen.\n\n**Thought**\n\n"
        '## Thought\nOpen Notes.\n\n## Action\n`Open app ("Notes")`\n'
    )
    fake_server.add(styled, "I'm sorry, I can't help with that.", role="operator")
    fake_server.add(
        "### Observation ###\nNotes.\n### Thought ###\nDone.\n### Action ###\n**Stop**", role="operator"
    )
    fake_server.add("### Completed ###\nyes.", role="operator")
    result, _ = run("Open Notes", agent="v1")
    assert result.exit_reason is ExitReason.FINISHED and phone.screen_name == "Notes/list"
    corrective = fake_server.requests_for("operator")[2].text
    assert "the reply has no sections" in corrective


def test_v1_says_how_to_write_an_operation(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.add(*["### Action ###\nPress the blue button"] * 2, role="operator")
    result, _ = run("Open Notes", agent="v1", loop={"max_steps": 1})
    assert result.exit_reason is ExitReason.MAX_STEPS
    assert result.actions[0].error is not None
    assert "write one operation as listed, e.g. Click text (Settings)" in result.actions[0].error


def test_v1_refusals_and_empty_replies_end_the_run_clearly(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.add("I'm sorry, I can't help with that.", "", role="operator")
    result, _ = run("Open Notes", agent="v1")
    assert result.exit_reason is ExitReason.UNUSABLE_REPLY
    assert result.message.startswith("Mobile-Agent v1: the reply was empty")


@pytest.mark.parametrize("agent", ["v1", "v2"])
def test_baselines_share_the_loop_exits(
    agent: str, run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    """Repeating the same action ends a baseline like it ends E; a declined sensitive action does not."""
    phone.open_app("Notes")
    x, y = next(e.center for e in phone.ground_truth() if e.text == "Notes")
    tap = f'{{"name": "Tap", "arguments": {{"x": {x}, "y": {y}}}}}'
    if agent == "v1":
        fake_server.responder = V1Script([tap])
    else:
        from baseline_scripting import V2Script

        fake_server.responder = V2Script([tap], answers=["A"] * 10)
    result, _ = run("Tap the title", agent=agent, loop={"max_consecutive_errors": 10})
    assert result.exit_reason is ExitReason.REPEATED_ACTION
    assert len(result.actions) == 3

    fake_server.responder = None
    for _ in range(2):
        if agent == "v1":
            fake_server.add(
                "### Thought ###\nEnter the card.\n### Action ###\nType (4111 1111 1111 1111)",
                role="operator",
            )
        else:
            fake_server.add(
                "### Thought ###\nGo.\n### Action ###\n"
                '{"name": "Type", "arguments": {"text": "4111 1111 1111 1111"}}\n'
                "### Operation ###\nEnter the card number.",
                role="operator",
            )
    result, events = run(
        "Pay", agent=agent, approver=lambda call, description, step: False, loop={"max_steps": 2}
    )
    assert result.exit_reason is ExitReason.MAX_STEPS  # the refusal is the user's answer, not an exit
    assert not result.actions[0].executed and result.actions[0].error == DECLINED
    assert DECLINED in fake_server.requests_for("operator")[-1].text  # the agent's own history says so
    assert any(e.type == "approval" and e.data["approved"] is False for e in events)


def test_v1_picks_among_repeated_texts_by_coordinates(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    """Two texts alike: the corrective turn lists where they are and the agent taps the one it means."""
    phone.open_app("Notes")
    duplicate = next(e for e in phone.ground_truth() if e.text == "Notes")
    perceptor_elements = [*phone.ground_truth(), duplicate.model_copy(update={"box": (40, 700, 240, 760)})]

    class Doubled:
        def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
            return Perception(width=image.width, height=image.height, elements=perceptor_elements)

    x, y = duplicate.center
    fake_server.add(
        v1_reply("Click text (Notes)"),
        v1_reply(f'{{"name": "Tap", "arguments": {{"x": {x}, "y": {y}}}}}'),
        role="operator",
    )
    result, _ = run("Tap the title", agent="v1", perceptor=Doubled(), loop={"max_steps": 1})
    assert result.exit_reason is ExitReason.MAX_STEPS
    assert result.actions[0].text == f"Tap({x}, {y})"
    corrective = fake_server.requests_for("operator")[1].text
    assert f'"Notes" appears 2 times on the screen, at [{x}, {y}]; [140, 730]' in corrective
