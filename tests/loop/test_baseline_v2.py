"""Mobile-Agent-v2 on the shared loop: a multi-app task end to end, the memory unit, A/B/C reflection."""

from __future__ import annotations

import json
from collections.abc import Callable

from baseline_scripting import V2Script, decision_reply, price_on_screen
from conftest import RunFn
from loop_scripting import center_of

from mae.device.virtual import VirtualPhone
from mae.errors import ExitReason
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

TASK = "Find the price of the Ninja DZ201 air fryer on Amazon and write it in a new note in Notes."


def act(name: str, **arguments: object) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def test_v2_completes_a_multi_app_task_with_its_memory_unit(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    def tap(text: str) -> Callable[[RecordedRequest], str]:
        return lambda request: act("Tap", **dict(zip("xy", center_of(phone, text), strict=True)))

    def note(request: RecordedRequest) -> str:
        memory = request.text.split("### Memory ###")[1]
        price = next(line for line in memory.splitlines() if "$" in line)
        return act("Type", text=price.strip())

    def memory(request: RecordedRequest) -> str:
        price = price_on_screen(request)
        return f"Ninja DZ201 price on Amazon: {price}" if price else "None"

    script = V2Script(
        [
            act("Open_App", app_name="Amazon"),
            tap("Search Amazon"),
            act("Type", text="ninja air fryer 8 qt"),
            act("Enter"),
            act("Open_App", app_name="Notes"),
            tap("new note"),
            note,
            act("Back"),
            act("Stop"),
        ],
        memory=memory,
    )
    fake_server.responder = script
    result, events = run(TASK, agent="v2")

    assert result.exit_reason is ExitReason.FINISHED, result.message
    written = [n for n in phone.state().notes if not n.seeded]
    assert len(written) == 1 and "$159.99" in written[0].text and "Ninja DZ201" in written[0].text
    assert "Ninja DZ201 price on Amazon: $159.99" in result.memory.notes  # the memory unit (FC)
    assert [a.outcome for a in result.actions] == ["A"] * 8
    assert result.memory.progress == "8 operation(s) done."  # the planning agent's task progress
    # planning after each correct operation (text only), a decision per step, a reflection per action
    calls = {role: len(requests) for role, requests in script.requests.items()}
    assert calls == {"operator": 9, "reflector": 8, "manager": 8}
    assert all(r.image_count == 0 for r in script.requests["manager"])
    assert all(r.image_count == 2 for r in script.requests["reflector"])
    assert all(r.image_count == 1 for r in script.requests["operator"])
    last_decision = script.requests["operator"][-1].text
    assert "### Task Progress ###\n8 operation(s) done." in last_decision
    # the same initial Tips as Mobile-Agent-E (the E paper's comparison, §4)
    assert "### Tips ###" in last_decision and "sign in as a guest" in last_decision
    assert "Close any pop-up windows" in script.requests["operator"][0].text
    planning = script.requests["manager"][0].text
    assert 'Open_App("Amazon")' in planning and "coordinates:" not in planning
    roles = [e.data["role"] for e in events if e.type == "model_call"]
    assert roles[:3] == ["decision", "reflection", "planning"]
    assert {"manager", "operator", "reflector", "notetaker"}.isdisjoint(roles)


def test_v2_wrong_page_is_undone_with_back(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    phone.open_app("Notes")

    def open_groceries(request: RecordedRequest) -> str:
        return act("Tap", **dict(zip("xy", center_of(phone, "Groceries"), strict=True)))

    script = V2Script([open_groceries, act("Stop")], answers=["B"])
    fake_server.responder = script
    result, events = run("Open the note about the landlord", agent="v2")

    assert result.exit_reason is ExitReason.FINISHED
    record = result.actions[0]
    assert record.outcome == "B" and record.error == "Compared the screens."
    assert phone.screen_name == "Notes/list"  # Back undid the wrong page
    assert [entry.action for entry in phone.state().log][-1] == "Back()"
    second = script.requests["operator"][1].text
    assert "was wrong" in second and "It was undone with Back" in second
    assert "Groceries; coordinates" not in second.split("### Screen ###")[0]
    assert "manager" not in script.requests  # a wrong operation does not enter the history: no planning
    stages = [e.data["stage"] for e in events if e.type == "stage_finished"]
    assert stages == [
        *("perceive", "decision", "execute", "perceive", "reflection", "undo", "perceive", "decision")
    ]


def test_v2_no_change_is_recorded_as_an_error(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    phone.open_app("Notes")
    script = V2Script(
        [lambda r: act("Tap", **dict(zip("xy", center_of(phone, "Notes"), strict=True))), act("Stop")],
        answers=["C"],
    )
    fake_server.responder = script
    result, _ = run("Do nothing", agent="v2")
    assert result.exit_reason is ExitReason.FINISHED
    assert result.actions[0].outcome == "C" and result.errors[0].description == "Compared the screens."
    assert "was invalid: the screen did not change" in script.requests["operator"][1].text
    assert phone.state().log[-1].action.startswith("Tap(")  # nothing undone


def test_v2_replies_in_other_styles_are_read(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    fenced = decision_reply("```json\n" + act("Open_App", app_name="Notes") + "\n```")
    stop = "Sure! Here is my answer.\n\n## Thought\nDone.\n\n## Action:\nStop\n"
    fake_server.responder = V2Script([fenced, stop], answers=["**A**"])
    result, _ = run("Open Notes", agent="v2")
    assert result.exit_reason is ExitReason.FINISHED and phone.screen_name == "Notes/list"


def test_v2_unusable_reflection_ends_the_run(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    fake_server.responder = V2Script([act("Open_App", app_name="Notes")], answers=["A or B", "maybe"])
    result, _ = run("Open Notes", agent="v2")
    assert result.exit_reason is ExitReason.UNUSABLE_REPLY
    assert result.message.startswith("Reflection agent:")


def test_v2_trajectory_replays_with_its_own_agents(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    from mae.run.trajectory import read_steps
    from mae.ui.history import steps_from_records
    from mae.ui.views import step_html

    fake_server.responder = V2Script([act("Open_App", app_name="Notes"), act("Stop")])
    result, _ = run("Open Notes", agent="v2")
    assert result.run_dir is not None
    summary = json.loads((result.run_dir / "summary.json").read_text())
    steps = steps_from_records(read_steps(result.run_dir), summary)
    assert set(steps[1].stages) >= {"decision", "reflection"} and steps[1].outcome == "A"
    assert set(steps[2].stages) >= {"planning", "decision"}
    html = step_html(steps[2])
    assert "Planning Agent" in html and "Task progress" in html and "1 operation(s) done." in html
