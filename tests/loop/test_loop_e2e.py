"""End to end on the virtual phone with scripted models: a multi-app task, Shortcuts, the trajectory."""

from __future__ import annotations

import json
import re

from conftest import RunFn
from loop_scripting import Script, Step, center_of, section, tap

from mae.device.virtual import VirtualPhone
from mae.errors import ExitReason
from mae.llm import ChatClient, ModelProfile
from mae.run.trajectory import read_steps
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

TASK = "Find the price of the Ninja DZ201 air fryer on Amazon and write it in a new note in Notes."


def price_from_perception(request: RecordedRequest) -> str:
    """What a Notetaker would note: the first price listed after the Ninja DZ201 title in W_V."""
    # element lines read 'text "Ninja DZ201 ..."; coordinates: [x, y]'
    lines = [
        json.loads(m.group(1))
        for m in re.finditer(r'^\w+ (".*"); coordinates', section(request.text, "Current Screen"), re.M)
    ]
    for index, line in enumerate(lines):
        price = next((x for x in lines[index:] if x.startswith("$")), None)
        if line.startswith("Ninja DZ201") and price is not None:
            return f"Ninja DZ201 price on Amazon: {price}"
    return "None"


def test_loop_multi_app_task_reaches_expected_phone_state(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    noted: list[str] = []

    def notes(request: RecordedRequest) -> str:
        found = price_from_perception(request)
        if found != "None":
            noted.append(found)
        return noted[-1] if noted else section(request.text, "Existing Important Notes")

    def search(request: RecordedRequest) -> dict[str, object]:
        x, y = center_of(phone, "Search Amazon")
        return {"name": "Tap_Type_and_Enter", "arguments": {"x": x, "y": y, "text": "ninja air fryer 8 qt"}}

    def type_notes(request: RecordedRequest) -> dict[str, object]:
        # the Operator writes what the Notetaker recorded, as its prompt shows it
        return {"name": "Type", "arguments": {"text": section(request.text, "Important Notes")}}

    script = Script(
        [
            Step("Open Amazon", {"name": "Open_App", "arguments": {"app_name": "Amazon"}}),
            Step("Search for the air fryer", search),
            Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}}),
            Step("Create a new note", lambda r: tap(phone, "new note")),
            Step("Type the price", type_notes),
            Step("Save the note", {"name": "Back", "arguments": {}}),
        ],
        notes=notes,
    )
    fake_server.responder = script
    result, events = run(TASK)

    assert result.exit_reason is ExitReason.FINISHED and result.finished, result.message
    written = [n for n in phone.state().notes if not n.seeded]
    assert len(written) == 1
    assert "$159.99" in written[0].text and "Ninja DZ201" in written[0].text
    assert "$159.99" in result.memory.notes
    assert [a.outcome for a in result.actions] == ["A"] * 6
    shortcut = result.actions[1]
    assert shortcut.shortcut == "Tap_Type_and_Enter" and shortcut.completed_steps == 3
    assert [s.split("(")[0] for s in shortcut.atomic_steps] == ["Tap", "Type", "Enter"]
    assert result.totals.steps == 6 and result.totals.model_calls == 6 * 4 + 1
    # The Manager never sees the perception list; the Operator does.
    manager_text = fake_server.requests_for("manager")[0].text
    assert "coordinates:" not in manager_text and "Tap_Type_and_Enter(x, y, text)" in manager_text
    assert 'text "Amazon"; coordinates: [' in fake_server.requests_for("operator")[0].text
    # Reflector sees two screens, the Notetaker one.
    assert fake_server.requests_for("reflector")[0].image_count == 2
    assert fake_server.requests_for("notetaker")[0].image_count == 1
    kinds = [e.type for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert kinds.count("action") == 6 and kinds.count("outcome") == 6
    action_event = next(e for e in events if e.type == "action")
    assert action_event.image is not None and action_event.data["action"] == 'Open_App("Amazon")'


def test_loop_shortcut_runs_atomic_steps_with_a_screen_after_each(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    def search(request: RecordedRequest) -> dict[str, object]:
        x, y = center_of(phone, "Search Amazon")
        return {"name": "Tap_Type_and_Enter", "arguments": {"x": x, "y": y, "text": "ninja"}}

    fake_server.responder = Script(
        [
            Step("Open Amazon", {"name": "Open_App", "arguments": {"app_name": "Amazon"}}),
            Step("Search", search),
        ]
    )
    result, events = run("Search Amazon for ninja")
    assert result.finished
    log = [entry.action for entry in phone.state().log]
    assert log[1].startswith("Tap(") and log[2].startswith("Type(") and "ninja" in log[2]
    assert log[3] == "Enter()"
    assert phone.screen_name == "Amazon/results"
    shortcut_screens = [e for e in events if e.type == "screen" and e.data.get("shortcut_step")]
    assert [e.data["shortcut_step"] for e in shortcut_screens] == [1, 2]
    run_dir = result.run_dir
    assert run_dir is not None
    names = {p.name for p in run_dir.iterdir()}
    assert {
        "step_002_after_1.jpg",
        "step_002_after_2.jpg",
        "step_002_after.jpg",
        "step_002_before.jpg",
    } <= names


def test_loop_shortcut_stops_at_the_failing_step(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    from mae.actions.registry import Shortcut, ShortcutStep

    two_apps = Shortcut(
        name="Open_Two",
        arguments=["first", "second"],
        description="Open one app, then another.",
        atomic_action_sequence=[
            ShortcutStep(name="Open_App", arguments_map={"app_name": "first"}),
            ShortcutStep(name="Open_App", arguments_map={"app_name": "second"}),
            ShortcutStep(name="Home", arguments_map={}),
        ],
    )
    fake_server.responder = Script(
        [Step("Open apps", {"name": "Open_Two", "arguments": {"first": "Notes", "second": "Nope"}}, "A")]
    )
    result, _ = run("Open two apps", shortcuts={"Open_Two": two_apps}, loop={"max_steps": 1})
    record = result.actions[0]
    assert record.completed_steps == 1 and record.executed
    assert record.outcome == "B"  # the reflector's A is overridden: the sequence did not complete
    assert record.error is not None and "step 2 of 3" in record.error
    assert phone.screen_name == "Notes/list"
    reflector_text = fake_server.requests_for("reflector")[0].text
    assert "It stopped early: step 2 of 3" in reflector_text


def test_loop_trajectory_records_prompts_replies_and_summary(
    run: RunFn, fake_server: FakeModelServer
) -> None:
    fake_server.responder = Script(
        [Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}})]
    )
    result, _ = run("Open Notes")
    assert result.run_dir is not None
    assert re.fullmatch(r"\d{8}-\d{6}-open-notes", result.run_dir.name)
    records = read_steps(result.run_dir)
    agents = [r for r in records if r["kind"] == "agent"]
    assert [r["agent"] for r in agents] == ["manager", "operator", "reflector", "notetaker", "manager"]
    first = agents[0]
    assert "### User Request ###\nOpen Notes" in first["prompt"] and "### Plan ###" in first["raw"]
    assert (
        first["parsed"]["subgoal"] == "Open Notes" and first["input_tokens"] > 0 and first["latency_s"] >= 0
    )
    assert any(r["kind"] == "perception" for r in records) and records[-1]["kind"] == "exit"
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["status"] == "done" and summary["exit_reason"] == "finished" and summary["finished"]
    assert summary["totals"]["model_calls"] == 5 and summary["actions"][0]["text"] == 'Open_App("Notes")'
    assert summary["plan"] and "api_key" not in (result.run_dir / "steps.jsonl").read_text().lower()


def test_loop_parallel_notetaker_keeps_notes(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.responder = Script(
        [Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}})],
        notes=lambda request: "Groceries note exists.",
    )
    result, events = run("Open Notes", parallel_notetaker=True)
    assert result.finished and result.memory.notes == "Groceries note exists."
    stages = [e.data["stage"] for e in events if e.type == "stage_finished"]
    assert stages.index("reflector") < stages.index("notetaker")
    # the Notetaker ran on a snapshot taken before the Reflector updated the progress
    assert "No progress yet." in fake_server.requests_for("notetaker")[0].text


def test_loop_never_writes_the_api_key(run: RunFn, fake_server: FakeModelServer) -> None:
    sentinel = "sk-sentinel-4f9d2c"
    fake_server.responder = Script(
        [Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}})]
    )
    client = ChatClient(
        ModelProfile(
            provider="test", base_url=fake_server.base_url, model="fake-vlm", api_key_env="MAE_TEST_KEY"
        ),
        api_keys={"MAE_TEST_KEY": sentinel},
    )
    result, events = run("Open Notes", client=client)
    assert result.finished
    assert fake_server.requests[0].headers["authorization"] == f"Bearer {sentinel}"  # the key was in use
    assert result.run_dir is not None
    for path in result.run_dir.rglob("*"):
        if path.is_file():
            assert sentinel.encode() not in path.read_bytes(), path
    assert all(sentinel not in json.dumps(e.to_json(), default=str) for e in events)


def test_steps_jsonl_outcomes_agree_with_the_summary(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.responder = Script(
        [
            Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}}, "A"),
            Step("Wait for it", {"name": "Wait", "arguments": {}}, "C", error="Nothing changed."),
            Step("Go home", {"name": "Home", "arguments": {}}, "B", error="Left the app."),
            Step("Open Notes again", {"name": "Open_App", "arguments": {"app_name": "Notes"}}, "A"),
        ]
    )
    result, _ = run("Open Notes")
    assert result.run_dir is not None
    records = read_steps(result.run_dir)
    summary = json.loads((result.run_dir / "summary.json").read_text())
    actions = [r for r in records if r["kind"] == "action"]
    outcomes = {r["step"]: r for r in records if r["kind"] == "outcome"}
    # an action is written when it runs, without an outcome; its outcome only once it is judged
    assert actions and all("outcome" not in r and "error" not in r for r in actions)
    assert [(a["step"], a["outcome"], a["error"]) for a in summary["actions"]] == [
        (step, outcomes[step]["outcome"], outcomes[step]["error"]) for step in sorted(outcomes)
    ]
    assert [outcomes[s]["outcome"] for s in sorted(outcomes)][:3] == ["A", "C", "B"]
    kinds = [(r["kind"], r.get("agent")) for r in records if r["step"] == 2]
    assert kinds.index(("agent", "reflector")) < kinds.index(("outcome", None))
