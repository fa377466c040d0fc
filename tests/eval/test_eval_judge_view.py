"""The Judge view's logic: eval folders, a trajectory's frames, and marks from the form."""

from __future__ import annotations

import os
from pathlib import Path

from eval_testkit import record
from PIL import Image

from mae.eval.judge import (
    action_label,
    list_eval_folders,
    marks_from_form,
    parse_step_label,
    step_choices,
    step_label,
    trajectory_frames,
    verdict_label,
)
from mae.eval.records import append_result


def test_eval_judge_lists_folders_newest_first(tmp_path: Path) -> None:
    old, new = tmp_path / "eval-old", tmp_path / "eval-new"
    for folder in (old, new):
        folder.mkdir()
        append_result(folder, record())
    (tmp_path / "not-an-eval").mkdir()
    os.utime(old / "results.jsonl", (1, 1))
    assert list_eval_folders(tmp_path) == [new, old]
    assert list_eval_folders(tmp_path / "missing") == []


def test_eval_judge_frames_and_step_labels(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    for name in ("step_001_before", "step_002_before", "step_003_before", "step_003_after"):
        Image.new("RGB", (4, 8)).save(run / f"{name}.jpg")
    item = record(outcomes="ABC", run_dir=str(run))
    frames = trajectory_frames(item)
    assert [Path(p).name for p, _ in frames][-1] == "step_003_after.jpg" and len(frames) == 4
    assert frames[1][1] == "step 2: Tap(1, 1) · reflector: B"
    assert trajectory_frames(record(run_dir=str(tmp_path / "gone"))) == []
    assert step_choices(2) == ["never", "at the start", "after step 1", "after step 2"]
    for step in (None, 0, 2):
        assert parse_step_label(step_label(step)) == step


def test_eval_judge_marks_from_the_form() -> None:
    item = record(outcomes="AAC", rubric_steps=[1, None])
    item.actions[2].executed = False
    marks = marks_from_form(
        item,
        ["after step 2", "never", None],
        [action_label(0, item), action_label(2, item)],
        [verdict_label(1, item)],
    )
    assert marks.judge == "person" and marks.key == item.key
    assert marks.rubric_steps == [2, None]
    assert marks.action_correct == [True, False, True]
    assert marks.reflection_correct == [False, True, None]  # an action that never ran has no verdict


def test_eval_judge_marks_of_mobile_agent_v1_have_no_verdicts() -> None:
    item = record(outcomes="AA", agent="v1")
    marks = marks_from_form(item, ["after step 1", None, None], [action_label(0, item)], [])
    assert marks.reflection_correct == [None, None]  # no Action Reflector: RA stays "-", as in the paper
