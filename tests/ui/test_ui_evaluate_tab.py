"""The Evaluate tab's checks before an eval starts, and the tab in the app (no browser)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from ui_testkit import make_backend, settings_for

from mae.device.virtual import VirtualPhone
from mae.errors import MaeError
from mae.eval.runner import EvalRunner
from mae.ui.evaluate_tab import EvalJob, progress_markdown, start_eval


def _start(tmp_path: Path, **changes: Any) -> EvalJob:
    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    choices: dict[str, Any] = {
        "setting": "individual",
        "agent": "e",
        "repeat": 1,
        "max_steps": 5,
        "backbone": "custom",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "m",
    }
    choices.update(changes)
    task_ids = choices.pop("task_ids", ["v_korean_late_night"])
    return start_eval(backend, task_ids, **choices)


def test_ui_evaluate_tab_refuses_what_cannot_run(tmp_path: Path) -> None:
    with pytest.raises(MaeError, match="pick at least one task"):
        _start(tmp_path, task_ids=[])
    with pytest.raises(MaeError, match="only Mobile-Agent-E has a long-term memory"):
        _start(tmp_path, setting="evolution", agent="v1")
    with pytest.raises(MaeError, match="matches no task"):
        _start(tmp_path, task_ids=["no_such_task"])
    assert "Start evaluation" in progress_markdown(None)
    assert not list((tmp_path / "runs").glob("eval-*/results.jsonl"))


def test_ui_evaluate_tab_worker_count_is_checked_and_private_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(MaeError, match="between 1 and 8 workers"):
        _start(tmp_path, workers=0)
    with pytest.raises(MaeError, match="between 1 and 8 workers"):
        _start(tmp_path, workers=9)
    monkeypatch.setenv("SPACE_ID", "someone/mae")
    with pytest.raises(MaeError, match="parallel evals run only on a private demo"):
        _start(tmp_path, workers=2)
    assert not list((tmp_path / "runs").glob("eval-*/results.jsonl"))


def test_ui_evaluate_tab_progress_has_a_line_per_worker(tmp_path: Path) -> None:
    from mae.eval.workers import WorkerBoard
    from mae.ui.evaluate_tab import EvalJob

    board = WorkerBoard()
    board.add("w1", "virtual")
    board.add("w2", "virtual")
    board.update("w1", state="running", task="v_korean_late_night#r0", step=3)
    job = EvalJob(folder=tmp_path, total=4, board=board)
    text = progress_markdown(job)
    assert "Running** on 2 workers" in text
    assert "`w1 (virtual): v_korean_late_night#r0 step 3 · 0 done`" in text
    assert "`w2 (virtual): waiting · 0 done`" in text


def test_ui_evaluate_tab_says_an_unexpected_failure_in_a_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug inside an eval reaches the page as a sentence; the traceback goes to the demo's log."""

    def broken(self: EvalRunner) -> None:
        raise KeyError("records")

    monkeypatch.setattr(EvalRunner, "run", broken)
    job = _start(tmp_path)
    deadline = time.monotonic() + 120
    while not job.done and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.done
    error = job.error or ""
    assert "unexpected problem" in error and "log" in error
    assert "KeyError" not in error and "records" not in error
    assert "KeyError" in caplog.text


def _code_graded_run(folder: Path) -> None:
    from mae.errors import ExitReason
    from mae.eval.records import ActionEntry, TaskRecord, append_result
    from mae.run.results import RunTotals

    actions = [ActionEntry(step=i + 1, text=f"Tap({i}, {i})", outcome="A", operations=1) for i in range(4)]
    append_result(
        folder,
        TaskRecord(
            key="v_notes#r0",
            task_id="v_notes",
            instruction="write a note",
            exit_reason=ExitReason.FINISHED,
            finished=True,
            rubrics=["a", "b"],
            grader="code",
            rubric_steps=[1, 3],
            final_passed=[True, True],
            actions=actions,
            action_correct=[True, True, False, True],
            reflection_correct=[True, False, True, True],
            correctness_source="code",
            totals=RunTotals(steps=4, seconds=12.0, model_calls=17, input_tokens=23456),
            reference_operations=2,
        ),
    )


def test_ui_evaluate_tab_rows_show_the_code_proxies_and_efficiency_as_the_report_does(tmp_path: Path) -> None:
    from mae.eval.report import write_reports
    from mae.ui.judge_view import RESULT_COLUMNS, results_rows

    _code_graded_run(tmp_path)
    (row,) = results_rows(tmp_path)
    cells = dict(zip(RESULT_COLUMNS, row, strict=True))
    assert cells["AA"] == cells["RA"] == "not judged"  # the paper's AA/RA: nobody marked this run
    assert cells["AA (code proxy) ↑"] == "75.0" and cells["RA (code proxy) ↑"] == "75.0"
    assert cells["steps"] == "4.0" and cells["steps/ref ops"] == "2.00"
    assert cells["model calls"] == "17.0" and cells["input tokens"] == "23456"
    assert cells["s/task"] == "12.0" and cells["SS"] == "100.0" and cells["graded by"] == "code"
    write_reports(tmp_path)  # the report's per-task row shows the same figures under the same names
    report = (tmp_path / "report.md").read_text()
    per_task = report.split("## Per task", 1)[1]
    header, _, line = per_task.strip().splitlines()[:3]
    report_cells = dict(zip(header.strip("| ").split(" | "), line.strip("| ").split(" | "), strict=True))
    for name in ("SS", "AA", "RA", "AA (code proxy) ↑", "RA (code proxy) ↑", "steps", "steps/ref ops"):
        assert report_cells[name] == cells[name], name
    for name in ("model calls", "input tokens", "s/task"):
        assert report_cells[name] == cells[name], name
