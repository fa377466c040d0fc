"""A whole task through ``python -m mae run`` on a reasoning model that refuses ``max_tokens`` and
``temperature`` (as OpenAI's current models do): mae adapts on the first call and remembers it."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_scripting import Script, Step
from test_loop_cli import OPEN_NOTES, cli

from mae.cli import main
from mae.device.virtual import VirtualPhone
from mae.llm import adapt
from mae.testing.fake_model_server import FakeModelServer


@pytest.fixture
def reasoning_server() -> Iterator[FakeModelServer]:
    adapt.forget_all()
    with FakeModelServer(reasoning=True) as server:
        yield server
    adapt.forget_all()


def test_a_task_runs_through_mae_run_on_a_reasoning_model(
    cli_phone: VirtualPhone,
    reasoning_server: FakeModelServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    reasoning_server.responder = Script([Step("Open Notes", OPEN_NOTES, description="Open the Notes app")])
    with caplog.at_level(logging.WARNING, logger="mae.llm"):
        assert main(cli(reasoning_server, tmp_path)) == 0
    out = capsys.readouterr().out
    assert "finished: the Manager judged the task finished" in out and cli_phone.screen_name == "Notes/list"
    assert len(reasoning_server.refused) == 2  # max_tokens, then temperature, on the first call only
    answered = [r for r in reasoning_server.requests if r not in reasoning_server.refused]
    assert len(answered) == 5
    assert all("max_tokens" not in r.body and "temperature" not in r.body for r in answered)
    assert all(r.body["max_completion_tokens"] == 2048 for r in answered)
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "refused max_tokens" in logged and "refused temperature" in logged


def test_the_run_says_when_its_backbone_shuts_down_and_how_many_tokens_were_cached() -> None:
    from mae.cli.run_cmd import StepPrinter
    from mae.run.events import Event

    out = io.StringIO()
    printer = StepPrinter(max_steps=40, out=out)
    printer(
        Event(
            "run_started",
            step=0,
            data={"task": "t", "device": "virtual", "backbone": "openai:gpt-4o", "run_dir": "r"},
        )
    )
    printer(
        Event(
            "run_started",
            step=0,
            data={"task": "t", "device": "virtual", "backbone": "openai:gpt-6.1-sol", "run_dir": "r"},
        )
    )
    totals = {"model_calls": 5, "input_tokens": 9000, "cached_tokens": 4096, "images": 5}
    finished = {
        "finished": True,
        "steps": 1,
        "seconds": 1.0,
        "totals": totals,
        "run_dir": "r",
        "exit_reason": "finished",
    }
    printer(Event("run_finished", step=1, data=finished))
    lines = out.getvalue().splitlines()
    notes = [line for line in lines if line.startswith("note: ")]
    assert len(notes) == 1 and notes[0].startswith("note: gpt-4o shuts down on 2027-01-14 (")
    assert any("9000 input tokens (4096 cached)" in line for line in lines)
