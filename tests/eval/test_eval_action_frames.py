"""Eval records and the Judge view show each action in screen pixels, as the annotated screenshots are,
and keep what the model wrote (in the frame of the image it was sent) beside it, labelled. An eval of a
short virtual task runs on the fake model server with the reference-action agent, which answers in the
frame its prompt states (a custom endpoint: the 768x1664 image of the 1080x2340 screen)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from eval_testkit import TruthPerceptor, record

import mae.cli.eval_cmd as eval_cmd
from mae.cli import main
from mae.config import Settings
from mae.device.virtual import VirtualPhone
from mae.eval.judge import action_label, trajectory_frames, verdict_label
from mae.eval.records import ActionEntry, read_results
from mae.eval.virtual_suite import load_task_suite
from mae.llm.coordinates import CoordinateMapper
from mae.run.runtime import Runtime, build_runtime
from mae.testing.fake_model_server import FakeModelServer
from mae.testing.reference_agent import ReferenceAgent

TAP = re.compile(r"^Tap\((\d+), (\d+)\)$")


@pytest.fixture
def phone(monkeypatch: pytest.MonkeyPatch) -> VirtualPhone:
    phone = VirtualPhone()

    def fake_build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
        return build_runtime(settings, api_keys, device=phone, perceptor=TruthPerceptor(phone))

    monkeypatch.setattr(eval_cmd, "build_runtime", fake_build_runtime)
    return phone


def test_eval_records_and_judge_view_show_screen_pixels_and_label_the_models_text(
    phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    tapping = [t for t in load_task_suite() if any(a.startswith("Tap(") for a in t.reference_actions)]
    task = min(tapping, key=lambda t: len(t.reference_actions))
    fake_server.responder = ReferenceAgent()
    out = tmp_path / "eval"
    argv = ["eval", "--suite", "virtual:basic", "--tasks", task.task_id, "--backbone", "custom", "--quiet"]
    assert main([*argv, "--base-url", fake_server.base_url, "--model", "fake-vlm", "--out", str(out)]) == 0
    (run,) = read_results(out)
    assert run.curve[-1] == 1.0
    mapper = CoordinateMapper(phone.screen_size(), (768, 1664))
    taps = [a for a in run.actions if a.written and TAP.match(a.written)]
    assert taps, [a.text for a in run.actions]
    for action in taps:
        model = TAP.match(action.written or "")
        assert model is not None
        on_screen = mapper.to_screen(int(model.group(1)), int(model.group(2)))
        assert action.text == f"Tap({on_screen[0]}, {on_screen[1]})"  # screen pixels
        assert action.frame == "in its 768×1664 image"
        assert action.shown == f"{action.text} · model wrote {action.written} in its 768×1664 image"
    opened = [a for a in run.actions if a.text.startswith("Open_App")]
    assert all(a.written is None and a.shown == a.text for a in opened)  # no point: nothing to explain

    # the Judge view: captions give both, labelled; the checkboxes name the action in screen pixels
    index = run.actions.index(taps[0])
    captions = dict((Path(p).name, caption) for p, caption in trajectory_frames(run))
    caption = captions[f"step_{taps[0].step:03d}_before.jpg"]
    assert caption.startswith(f"step {taps[0].step}: {taps[0].shown}")
    assert action_label(index, run) == f"{taps[0].step}: {taps[0].text}"
    assert verdict_label(index, run).endswith(f"for {taps[0].text}")


def test_old_records_without_the_models_text_read_as_before() -> None:
    old = ActionEntry.model_validate({"step": 1, "text": "Tap(5, 6)", "outcome": "A"})
    assert old.shown == "Tap(5, 6)" and old.written is None
    item = record(outcomes="A")
    assert action_label(0, item) == "1: Tap(0, 0)"
