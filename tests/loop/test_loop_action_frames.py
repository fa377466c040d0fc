"""What people read of an action is in screen pixels, as the phone and the annotated screenshots are,
with what the model wrote (in the frame of the image it was sent) beside it, labelled: the action event,
the step card (live and replayed), ``steps.jsonl`` and ``summary.json``, the CLI's progress line.

The fake model taps the Groceries note at its centre in the image it received (768x1664 for a
1080x2340 screen with the default image policy; the 0-1000 grid for a relative model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loop_scripting import GroundTruthPerceptor, Script, Step

from mae.config import LoopSettings, Settings
from mae.device.virtual import VirtualPhone
from mae.llm import ChatClient
from mae.llm.coordinates import CoordinateMapper, shown_action
from mae.run.events import Event
from mae.run.loop import run_task
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest
from mae.ui.history import load_replay
from mae.ui.views import fold, step_html

SCREEN = (1080, 2340)
# convention -> (the frame the model writes points in, its words for people)
FRAMES: dict[str, tuple[tuple[int, int], str]] = {
    "screen": ((768, 1664), "in its 768×1664 image"),
    "qwen3-vl": ((1000, 1000), "on its 0-1000 grid"),
}


def _client(server: FakeModelServer, convention: str, **image: Any) -> ChatClient:
    settings = Settings(backbone="custom", base_url=server.base_url, model="fake-vlm", coordinates=convention)
    profile = settings.profile_for("operator").model_copy(update={"max_retries": 0, "api_key_env": None})
    if image:
        profile = profile.model_copy(update={"image": profile.image.model_copy(update=image)})
    return ChatClient(profile)


def _run(
    phone: VirtualPhone, server: FakeModelServer, client: ChatClient, frame: tuple[int, int], tmp_path: Path
) -> tuple[list[Event], tuple[int, int]]:
    written: list[int] = []

    def tap(request: RecordedRequest) -> dict[str, Any]:  # the note's centre, in the model's frame
        groceries = next(e for e in phone.ground_truth() if e.text == "Groceries")
        written[:] = CoordinateMapper(SCREEN, frame).to_model(*groceries.center)
        return {"name": "Tap", "arguments": {"x": written[0], "y": written[1]}}

    server.responder = Script(
        [
            Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}}),
            Step("Open the Groceries note", tap),
        ]
    )
    events: list[Event] = []
    result = run_task(
        "Open the groceries note",
        device=phone,
        client=client,
        perceptor=GroundTruthPerceptor(phone),
        settings=LoopSettings(),
        listener=events.append,
        log_dir=tmp_path / "runs",
    )
    assert result.finished, result.message
    assert any(e.text == "Milk" for e in phone.ground_truth())  # the tap opened the note
    return events, (written[0], written[1])


@pytest.mark.parametrize("convention", list(FRAMES))
def test_people_read_the_action_in_screen_pixels_with_the_models_text_labelled(
    convention: str, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    phone = VirtualPhone(*SCREEN)
    frame, words = FRAMES[convention]
    events, written = _run(phone, fake_server, _client(fake_server, convention), frame, tmp_path)
    on_screen = CoordinateMapper(SCREEN, frame).to_screen(*written)
    screen_text, model_text = f"Tap({on_screen[0]}, {on_screen[1]})", f"Tap({written[0]}, {written[1]})"
    assert screen_text != model_text
    full = f"{screen_text} · model wrote {model_text} {words}"

    first, second = [e for e in events if e.type == "action"]
    assert second.data["action"] == screen_text  # the title, the annotated screenshot, the CLI
    assert (second.data["written"], second.data["frame"]) == (model_text, words)
    assert first.data["action"] == first.data["written"] == 'Open_App("Notes")'  # no point: nothing to say

    # the step card: the title in screen pixels; the Operator's Action row gives both, labelled
    card = step_html(fold(events).steps[2])
    assert f"Step 2 — <code>{screen_text}</code>" in card
    assert full in card
    assert "model wrote" not in step_html(fold(events).steps[1])

    # the trajectory keeps the model's text for the model's history, and the screen pixels for people
    run_dir = Path(next(e.data["run_dir"] for e in events if e.type == "run_started"))
    records = [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    (tap_record,) = [r for r in records if r["kind"] == "action" and r["step"] == 2]
    assert tap_record["text"] == model_text and tap_record["screen_text"] == screen_text
    assert tap_record["frame"] == words
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["actions"][1]["screen_text"] == screen_text

    # a replay shows what the live run showed
    replay = load_replay(run_dir)
    assert replay is not None
    replayed = step_html(replay.steps[2])
    assert f"<code>{screen_text}</code>" in replayed and full in replayed
    assert shown_action(screen_text, model_text, words) == full


def test_a_model_sent_the_screen_unresized_has_nothing_to_explain(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    phone = VirtualPhone(*SCREEN)
    client = _client(fake_server, "screen", resize="none")
    events, written = _run(phone, fake_server, client, SCREEN, tmp_path)
    tap = [e for e in events if e.type == "action"][1]
    assert tap.data["action"] == tap.data["written"] == f"Tap({written[0]}, {written[1]})"
    assert tap.data["frame"] == ""
    assert "model wrote" not in step_html(fold(events).steps[2])


def test_the_v2_decision_agents_card_reads_in_screen_pixels_too(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    from baseline_scripting import V2Script

    phone = VirtualPhone(*SCREEN)
    written: list[int] = []

    def tap(request: RecordedRequest) -> str:
        groceries = next(e for e in phone.ground_truth() if e.text == "Groceries")
        written[:] = CoordinateMapper(SCREEN, (768, 1664)).to_model(*groceries.center)
        return json.dumps({"name": "Tap", "arguments": {"x": written[0], "y": written[1]}})

    fake_server.responder = V2Script(
        [json.dumps({"name": "Open_App", "arguments": {"app_name": "Notes"}}), tap, "Stop"]
    )
    events: list[Event] = []
    result = run_task(
        "Open the groceries note",
        device=phone,
        client=_client(fake_server, "screen"),
        perceptor=GroundTruthPerceptor(phone),
        settings=LoopSettings(agent="v2"),
        listener=events.append,
        log_dir=tmp_path / "runs",
    )
    assert result.finished, result.message
    on_screen = CoordinateMapper(SCREEN, (768, 1664)).to_screen(written[0], written[1])
    screen_text = f"Tap({on_screen[0]}, {on_screen[1]})"
    card = step_html(fold(events).steps[2])
    assert f"Step 2 — <code>{screen_text}</code>" in card
    assert f"{screen_text} · model wrote Tap({written[0]}, {written[1]}) in its 768×1664 image" in card


def test_shortcut_expansion_reaches_the_reflector_in_the_models_frame(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Real case (five runs with a real model): after a Shortcut the Action Reflector read
    ``Shortcut Tap_Type_and_Enter ran: Tap(540, 319)`` in screen pixels under a line saying every
    coordinate is in the 768x1664 image, where (540, 319) lies below the search box."""
    phone = VirtualPhone(*SCREEN)
    frame = FRAMES["screen"][0]
    mapper = CoordinateMapper(SCREEN, frame)
    written: list[int] = []

    def search(request: RecordedRequest) -> dict[str, Any]:  # Maps' search box, in the model's frame
        box = next(e for e in phone.ground_truth() if e.text == "Search here")
        written[:] = mapper.to_model(*box.center)
        arguments = {"x": written[0], "y": written[1], "text": "korean restaurants"}
        return {"name": "Tap_Type_and_Enter", "arguments": arguments}

    fake_server.responder = Script(
        [
            Step("Open Maps", {"name": "Open_App", "arguments": {"app_name": "Maps"}}),
            Step("Search for korean restaurants", search),
        ]
    )
    result = run_task(
        "Find korean restaurants",
        device=phone,
        client=_client(fake_server, "screen"),
        perceptor=GroundTruthPerceptor(phone),
        settings=LoopSettings(),
        log_dir=tmp_path / "runs",
    )
    assert result.finished, result.message
    screen_tap = "Tap({}, {})".format(*mapper.to_screen(*written))
    model_tap = f"Tap({written[0]}, {written[1]})"
    assert screen_tap != model_tap
    reflector = fake_server.requests_for("reflector")[1].text
    assert f"Shortcut Tap_Type_and_Enter ran: {model_tap}; Type(" in reflector
    assert screen_tap not in reflector
    record = result.actions[1]
    assert record.atomic_steps[0] == screen_tap and record.written_steps[0] == model_tap
