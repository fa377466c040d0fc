"""The real-model table's figures: sequential calls count overlapping calls once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from real_model_table import rows_of, sequential_calls


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_overlapping_calls_count_once_and_steps_are_actions(tmp_path: Path) -> None:
    steps = tmp_path / "steps.jsonl"
    _write(
        steps,
        [
            {"kind": "agent", "agent": "manager", "time": 10.0, "latency_s": 10.0},  # 0-10
            {"kind": "agent", "agent": "operator", "time": 20.0, "latency_s": 10.0},  # 10-20
            {"kind": "action", "step": 1},
            {"kind": "agent", "agent": "reflector", "time": 30.0, "latency_s": 10.0},  # 20-30
            {"kind": "agent", "agent": "operator", "time": 28.0, "latency_s": 7.0},  # 21-28: beside it
            {"kind": "action", "step": 2},
        ],
    )
    assert sequential_calls(steps) == (3, 2)


def test_a_row_names_the_lost_rubric_items(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "20261128-task"
    run.mkdir(parents=True)
    _write(run / "steps.jsonl", [{"kind": "agent", "time": 5.0, "latency_s": 5.0}, {"kind": "action"}])
    (tmp_path / "eval.json").write_text(json.dumps({"agent": "e", "fast": True}), encoding="utf-8")
    record = {
        "task_id": "h_task",
        "totals": {"steps": 1, "model_calls": 1, "input_tokens": 1234},
        "rubrics": ["Opened Maps", "Stopped at the page"],
        "final_passed": [True, False],
        "reference_operations": 2,
        "exit_reason": "finished",
        "run_dir": "/elsewhere/runs/20261128-task",
    }
    _write(tmp_path / "results.jsonl", [record])
    assert rows_of(tmp_path) == [
        "| h_task | E fast | 0.50 | 1 | 0.50 | 1 | 1.00 | 1.00 | finished | 1,234 | 2. Stopped at the page |"
    ]
