"""``python -m mae run --agent v1|v2`` end to end, and the baselines leave the long-term memory alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from baseline_scripting import V1Script, V2Script
from test_loop_cli import cli

from mae.cli import main
from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer


def test_cli_runs_v1(
    cli_phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.responder = V1Script(["Open app (Notes)", "Stop"])
    assert main([*cli(fake_server, tmp_path, "--agent", "v1")]) == 0
    out = capsys.readouterr().out
    assert "step 1/40  thought: Next operation." in out
    assert 'action: Open app (Notes) -> Open_App("Notes")' in out and "outcome: A" in out
    assert cli_phone.screen_name == "Notes/list"
    summary = json.loads(next((tmp_path / "runs").iterdir()).joinpath("summary.json").read_text())
    assert summary["exit_reason"] == "finished" and summary["agent"] == "v1"
    assert not (tmp_path / "memory").exists()  # neither read nor written


def test_cli_runs_v2_and_the_environment_can_choose_it(
    cli_phone: VirtualPhone,
    fake_server: FakeModelServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MAE_AGENT", "v2")
    fake_server.responder = V2Script(['{"name": "Open_App", "arguments": {"app_name": "Notes"}}', "Stop"])
    args = cli(fake_server, tmp_path)
    args.remove("--no-evolve")  # evolution is on, yet a baseline never evolves the memory
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "step 1/40  thought: Deciding." in out and "progress: 1 operation(s) done." in out
    assert {r.role for r in fake_server.requests} == {"operator", "reflector", "manager"}
    assert not (tmp_path / "memory").exists()


def test_cli_rejects_an_unknown_agent_and_evolving_baselines(
    fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(cli(fake_server, tmp_path, "--agent", "v3"))
    assert "invalid choice: 'v3'" in capsys.readouterr().err
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"task_id": "t1", "instruction": "Open Notes"}]))
    args = [
        a
        for a in cli(fake_server, tmp_path, "--agent", "v2")
        if a not in ("Open the Notes app", "--no-evolve")
    ]
    assert main([*args, "--tasks", str(tasks)]) == 2
    assert "no long-term memory to evolve: add --setting individual" in capsys.readouterr().err


def test_cli_runs_a_task_list_with_a_baseline(
    cli_phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps(["Open Notes", "Open Notes again"]))
    fake_server.responder = V1Script(["Open app (Notes)", "Stop"] * 2)
    dropped = ("Open the Notes app", "--no-evolve")
    args = [a for a in cli(fake_server, tmp_path, "--agent", "v1") if a not in dropped]
    assert main([*args, "--tasks", str(tasks), "--setting", "individual", "--between", "none"]) == 0
    runs = sorted((tmp_path / "runs").glob("*-open-notes*"))
    assert len(runs) == 2
    assert all(json.loads((r / "summary.json").read_text())["agent"] == "v1" for r in runs)
    assert not any(r.role == "experience" for r in fake_server.requests)  # nothing evolved
