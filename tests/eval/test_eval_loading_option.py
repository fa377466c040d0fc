"""``mae eval --skip-planning-while-loading``: the loop option on the eval suite, recorded in the eval
folder (``eval.json``, every result line, the report) so that ``mae eval compare`` of an eval with it
and one without shows both the option and what it changed. The virtual phone, the reference-action
agent on the fake model server, and a Perceptor that shows a spinner on the screen after step 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_testkit import TruthPerceptor
from PIL import Image

import mae.cli.eval_cmd as eval_cmd
from mae.cli import main
from mae.config import Settings
from mae.device.virtual import VirtualPhone
from mae.eval.records import read_results
from mae.eval.virtual_suite import load_task_suite
from mae.perception.elements import Element, Perception
from mae.run.runtime import Runtime, build_runtime
from mae.testing.fake_model_server import FakeModelServer
from mae.testing.reference_agent import ReferenceAgent


class SpinnerAfterStepOne(TruthPerceptor):
    """The phone's own elements, except that the screen after the first action shows only a spinner
    (a page still loading)."""

    def __init__(self, phone: VirtualPhone) -> None:
        super().__init__(phone)
        self.calls = 0

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
        self.calls += 1
        if self.calls == 2:  # 1: the first screen; 2: the screen after step 1
            spinner = Element(kind="icon", text="loading", box=(470, 1100, 610, 1240), source="test")
            return Perception(width=image.width, height=image.height, elements=[spinner])
        return super().perceive(image, keyboard_active)


@pytest.fixture
def loading_phone(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
        phone = VirtualPhone()
        return build_runtime(settings, api_keys, device=phone, perceptor=SpinnerAfterStepOne(phone))

    monkeypatch.setattr(eval_cmd, "build_runtime", fake_build_runtime)


def _shortest_task() -> str:
    tasks = [t for t in load_task_suite() if len(t.reference_actions) >= 2]
    return min(tasks, key=lambda t: len(t.reference_actions)).task_id


def _eval(server: FakeModelServer, out: Path, task: str, *flags: str) -> list[str]:
    agent = ReferenceAgent()
    server.responder = agent
    argv = ["eval", "--suite", "virtual:basic", "--tasks", task, "--backbone", "custom", "--quiet"]
    argv += ["--base-url", server.base_url, "--model", "fake-vlm", "--out", str(out), *flags]
    assert main(argv) == 0
    return [str(r.role) for r in agent.requests]


def test_eval_flag_skips_planning_on_loading_screens_and_is_recorded_for_compare(
    loading_phone: None,
    fake_server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("MAE_SKIP_PLANNING_WHILE_LOADING", raising=False)
    task = _shortest_task()
    plain = _eval(fake_server, tmp_path / "plain", task, "--no-skip-planning-while-loading")  # the paper's
    skipping = _eval(fake_server, tmp_path / "skip", task)  # the default: on, and recorded as on
    # the screen after step 1 is a spinner: no Notetaker after step 1, no Manager before step 2
    assert plain[:5] == ["manager", "operator", "reflector", "notetaker", "manager"]
    assert skipping[:4] == ["manager", "operator", "reflector", "operator"]
    (off,), (on,) = read_results(tmp_path / "plain"), read_results(tmp_path / "skip")
    assert off.skip_planning_while_loading is False and on.skip_planning_while_loading is True
    assert off.finished and on.finished and off.curve[-1] == on.curve[-1] == 1.0
    assert json.loads((tmp_path / "skip" / "eval.json").read_text())["skip_planning_while_loading"] is True
    assert json.loads((tmp_path / "plain" / "eval.json").read_text())["skip_planning_while_loading"] is False
    assert "Loop option: skip planning while loading on." in (tmp_path / "skip" / "report.md").read_text()
    assert "skip planning while loading off" in (tmp_path / "plain" / "report.md").read_text()

    capsys.readouterr()
    assert main(["eval", "compare", str(tmp_path / "plain"), str(tmp_path / "skip")]) == 0
    text = capsys.readouterr().out
    assert "| skip planning while loading | off | on | differs |" in text
    assert "| agent | Mobile-Agent-E | Mobile-Agent-E | same |" in text
    calls = off.totals.model_calls, on.totals.model_calls
    assert calls == (len(plain), len(skipping))
    assert f"| model calls per task | {calls[0]:.1f} | {calls[1]:.1f} | {calls[1] - calls[0]:+.1f} |" in text

    # a resumed eval keeps its option: the environment does not change it, a different flag is refused
    monkeypatch.setenv("MAE_SKIP_PLANNING_WHILE_LOADING", "0")
    resume = ["eval", "--out", str(tmp_path / "skip"), "--resume", "--backbone", "custom"]
    resume += ["--base-url", fake_server.base_url, "--model", "fake-vlm", "--quiet"]
    assert main([*resume, "--no-skip-planning-while-loading"]) == 2
    assert "was started with other --skip-planning-while-loading" in capsys.readouterr().err
    assert main(resume) == 0
    assert json.loads((tmp_path / "skip" / "eval.json").read_text())["skip_planning_while_loading"] is True


def test_eval_flag_reaches_the_settings_and_the_default_stays_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mae.errors import ConfigError

    monkeypatch.delenv("MAE_SKIP_PLANNING_WHILE_LOADING", raising=False)
    seen: list[Settings] = []

    def capture(settings: Settings, api_keys: Any = None) -> Any:
        seen.append(settings)
        raise ConfigError("settings captured")

    monkeypatch.setattr(eval_cmd, "build_runtime", capture)
    for n, flags in enumerate(([], ["--skip-planning-while-loading"], ["--no-skip-planning-while-loading"])):
        assert main(["eval", "--suite", "virtual", "--out", str(tmp_path / str(n)), *flags]) == 2
    assert [s.loop.skip_planning_while_loading for s in seen] == [True, True, False]  # on by default
    monkeypatch.setenv("MAE_SKIP_PLANNING_WHILE_LOADING", "1")  # the variable still works; the flag wins
    assert main(["eval", "--suite", "virtual", "--out", str(tmp_path / "env")]) == 2
    off = ["eval", "--suite", "virtual", "--out", str(tmp_path / "f"), "--no-skip-planning-while-loading"]
    assert main(off) == 2
    assert [s.loop.skip_planning_while_loading for s in seen[3:]] == [True, False]
