"""``mae eval --fast --backbone custom``: fast mode on the eval suite through an OpenAI-compatible base URL
(the fake model server playing the reference actions), recorded in ``eval.json`` and kept on resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_testkit import TruthPerceptor

import mae.cli.eval_cmd as eval_cmd
from mae.cli import main
from mae.config import Settings
from mae.device.virtual import VirtualPhone
from mae.eval.records import read_results
from mae.eval.virtual_suite import load_task_suite
from mae.run.runtime import Runtime, build_runtime
from mae.testing.fake_model_server import FakeModelServer
from mae.testing.reference_agent import ReferenceAgent


@pytest.fixture
def truth_phone(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
        phone = VirtualPhone()
        return build_runtime(settings, api_keys, device=phone, perceptor=TruthPerceptor(phone))

    monkeypatch.setattr(eval_cmd, "build_runtime", fake_build_runtime)


def test_eval_fast_runs_with_a_custom_backbone_and_is_kept_on_resume(
    truth_phone: None,
    fake_server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("MAE_FAST", raising=False)
    tasks = [t for t in load_task_suite() if len(t.reference_actions) >= 2]
    task = min(tasks, key=lambda t: len(t.reference_actions)).task_id
    agent = ReferenceAgent()
    fake_server.responder = agent
    model = ["--backbone", "custom", "--base-url", fake_server.base_url, "--model", "fake-vlm", "--quiet"]
    out = tmp_path / "fast"
    start = ["eval", "--suite", "virtual:basic", "--tasks", task, "--out", str(out), "--fast"]
    assert main([*start, *model]) == 0
    (result,) = read_results(out)
    assert result.finished and result.curve[-1] == 1.0
    roles = [r.role for r in agent.requests]
    assert "notetaker" not in roles  # the notes came in the Action Reflector's reply
    assert "### Subgoal Done ###" in next(r.text for r in agent.requests if r.role == "reflector")
    assert json.loads((out / "eval.json").read_text())["fast"] is True

    capsys.readouterr()
    resume = ["eval", "--out", str(out), "--resume", *model]
    assert main([*resume, "--no-fast"]) == 2
    assert "was started with other --fast" in capsys.readouterr().err
    assert main(resume) == 0
    assert json.loads((out / "eval.json").read_text())["fast"] is True
