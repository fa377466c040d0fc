"""``python -m mae run`` end to end (virtual phone, fake server), and a model that answers in image pixels."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import RunFn
from loop_scripting import Script, Step, make_client, section

from mae.cli import main
from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

OPEN_NOTES = {"name": "Open_App", "arguments": {"app_name": "Notes"}}


def cli(server: FakeModelServer, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "run",
        "Open the Notes app",
        "--device",
        "virtual",
        "--backbone",
        "custom",
        "--base-url",
        server.base_url,
        "--model",
        "fake-vlm",
        "--log-dir",
        str(tmp_path / "runs"),
        "--memory-dir",
        str(tmp_path / "memory"),
        "--no-evolve",
        *extra,
    ]


def test_loop_cli_run_prints_steps_and_exits_zero(
    cli_phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.responder = Script([Step("Open Notes", OPEN_NOTES, description="Open the Notes app")])
    assert main(cli(fake_server, tmp_path)) == 0
    out = capsys.readouterr().out
    assert "step 1/40  subgoal: Open Notes" in out
    assert 'action: Open_App("Notes")' in out and "outcome: A" in out
    finished = r"finished: the Manager judged the task finished\n1 step in [\d.]+ s; 5 model calls"
    assert re.search(finished, out)
    assert cli_phone.screen_name == "Notes/list"
    assert len(list((tmp_path / "runs").iterdir())) == 1


def test_loop_cli_exit_code_tells_the_reason(
    cli_phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.responder = Script(
        [Step("Scroll", {"name": "Swipe", "arguments": {"x1": 5, "y1": 900, "x2": 5, "y2": 500}})],
        finish=False,
    )
    assert main(cli(fake_server, tmp_path, "--max-steps", "2", "--quiet")) == 3
    out = capsys.readouterr().out
    assert "stopped: reached the step limit (max_steps)" in out and "step 1/" not in out
    assert "time:" not in out  # --quiet prints the result only


def test_loop_cli_refuses_sensitive_action_without_a_terminal(
    cli_phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # nothing named there (in the 768x1664 image the CLI sends): the description says what it does
    post = {"name": "Tap", "arguments": {"x": 569, "y": 356}}
    fake_server.responder = Script([Step("Post", post, description="Tap Post to publish the reply")])
    assert main(cli(fake_server, tmp_path)) == 0  # the agent is told the user declined, and goes on
    out = capsys.readouterr().out
    assert "refused sensitive action Tap(800, 501) (Tap Post to publish the reply)" in out
    assert "rerun with --yes" in out and "outcome: C  the user declined this action" in out
    fake_server.responder = Script([Step("Post", post, description="Tap Post to publish the reply")])
    assert main(cli(fake_server, tmp_path, "--yes")) == 0
    # the progress line reads in screen pixels, as the approval does, with the model's own text labelled
    shown = "action: Tap(800, 501) · model wrote Tap(569, 356) in its 768×1664 image"
    assert shown in capsys.readouterr().out
    # an ordinary action whose description merely mentions a sensitive word is not gated
    fake_server.responder = Script(
        [Step("Open", OPEN_NOTES, description="Open Notes to post the list later")]
    )
    assert main(cli(fake_server, tmp_path)) == 0


def test_loop_cli_without_task_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run"]) == 2
    assert "give the task" in capsys.readouterr().err


def test_loop_image_space_model_gets_and_gives_image_coordinates(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    """A Qwen-style model sees W_V in its resized image's pixels; its tap is mapped back to the screen."""

    def tap_new_note(request: RecordedRequest) -> dict[str, Any]:
        screen = section(request.text, "Screen")
        x, y = re.search(r"^\w+ \"new note\"; coordinates: \[(\d+), (\d+)\]", screen, re.M).groups()  # type: ignore[union-attr]
        return {"name": "Tap", "arguments": {"x": int(x), "y": int(y)}}

    fake_server.responder = Script([Step("Open Notes", OPEN_NOTES), Step("New note", tap_new_note)])
    client = make_client(
        fake_server, coordinate_space="image", image={"resize": "qwen", "max_pixels": 1280 * 28 * 28}
    )
    result, _ = run("Start a new note", client=client)
    assert result.finished and phone.screen_name == "Notes/edit"
    operator_text = fake_server.requests_for("operator")[1].text
    width, height = re.search(
        r"current screen, (\d+) pixels wide and (\d+) pixels high", operator_text
    ).groups()  # type: ignore[union-attr]
    assert (int(width), int(height)) != (1080, 2340)
    tap = result.actions[1]
    assert tap.atomic_steps[0] != tap.text  # screen pixels differ from what the model wrote
