"""Sensitive actions in an eval: approved by default on the virtual phone, every answer recorded;
``--sensitive deny`` tells the agent the user declined and the task goes on; the flags' defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from eval_testkit import TruthPerceptor

import mae.cli.eval_cmd as eval_cmd
from mae.actions.registry import ActionCall
from mae.cli import main
from mae.config import Settings
from mae.device.virtual import VirtualPhone
from mae.errors import ConfigError
from mae.eval.approvals import choose_policy, policy_approver
from mae.eval.records import read_results
from mae.eval.runner import read_options
from mae.eval.virtual_suite import load_task_suite
from mae.run.loop import DECLINED
from mae.run.runtime import Runtime, build_runtime
from mae.testing.fake_model_server import FakeModelServer
from mae.testing.reference_agent import ReferenceAgent

CARD = 'Type("4111 1111 1111 1111")'
"""Gated by the card-number rule wherever it is typed."""


@pytest.fixture
def phone(monkeypatch: pytest.MonkeyPatch) -> VirtualPhone:
    phone = VirtualPhone()

    def fake_build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
        return build_runtime(settings, api_keys, device=phone, perceptor=TruthPerceptor(phone))

    monkeypatch.setattr(eval_cmd, "build_runtime", fake_build_runtime)
    return phone


def run_eval(server: FakeModelServer, out: Path, *extra: str) -> int:
    task = min((t for t in load_task_suite() if t.reference_actions), key=lambda t: len(t.reference_actions))
    # a sensitive action first, then the task's reference actions
    server.responder = ReferenceAgent({task.instruction: [CARD, *task.reference_actions]})
    args = ["eval", "--backbone", "custom", "--base-url", server.base_url, "--model", "fake-vlm"]
    return main([*args, "--out", str(out), "--suite", "virtual:all", "--tasks", task.task_id, *extra])


def test_eval_on_the_virtual_phone_approves_and_records_it(
    phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_eval(fake_server, tmp_path / "eval") == 0
    (record,) = read_results(tmp_path / "eval")
    assert record.finished and record.curve[-1] == 1.0
    (approval,) = record.approvals
    assert approval.approved and approval.step == 1 and "card number" in approval.reason
    assert approval.action == CARD and record.actions[0].executed
    options = read_options(tmp_path / "eval")
    assert options is not None and options.sensitive == "allow"
    assert "sensitive actions: approved without asking" in capsys.readouterr().err


def test_eval_sensitive_deny_tells_the_agent_and_goes_on(
    phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    assert run_eval(fake_server, tmp_path / "eval", "--sensitive", "deny") == 0
    (record,) = read_results(tmp_path / "eval")
    assert record.finished and record.curve[-1] == 1.0  # the task went on after the refusal
    assert [a.approved for a in record.approvals] == [False]
    assert not record.actions[0].executed and record.actions[0].text == CARD
    assert not any("4111" in entry.action for entry in phone.log)
    operator_prompts = [r.text for r in fake_server.requests_for("operator")]
    assert DECLINED in operator_prompts[1]


def test_eval_sensitive_policy_defaults_and_conflicts() -> None:
    assert choose_policy(None, False, virtual_phone=True) == "allow"
    assert choose_policy(None, False, virtual_phone=False) == "ask"
    assert choose_policy(None, True, virtual_phone=False) == "allow"
    assert choose_policy("deny", False, virtual_phone=True) == "deny"
    with pytest.raises(ConfigError, match="keep one"):
        choose_policy("deny", True, virtual_phone=True)
    asked: list[int] = []

    def ask(_call: ActionCall, _description: str, step: int) -> bool:
        asked.append(step)
        return True

    call = ActionCall(name="Back")
    assert policy_approver("allow", ask)(call, "", 1) and not policy_approver("deny", ask)(call, "", 2)
    assert policy_approver("ask", ask)(call, "", 3) and asked == [3]
