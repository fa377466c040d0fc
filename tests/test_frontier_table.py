"""The self-evolution table: arms from eval.json, places in the scenario, means over tasks 2-5."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from frontier_table import paired_change, runs_of, summary_rows, task_rows

from mae.errors import ExitReason
from mae.eval.records import ActionEntry, MemoryUse, TaskRecord, task_key
from mae.eval.virtual_suite import load_task_suite
from mae.run.results import RunTotals


def _folder(path: Path, settings: dict[str, object], records: list[TaskRecord]) -> Path:
    path.mkdir(parents=True)
    (path / "eval.json").write_text(json.dumps(settings), encoding="utf-8")
    (path / "results.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8"
    )
    return path


def _record(task_id: str, steps: int, calls: int, passed: list[bool], **extra: object) -> TaskRecord:
    return TaskRecord(
        key=task_key(task_id, 0),
        task_id=task_id,
        scenario="S",
        instruction="do it",
        exit_reason=ExitReason.FINISHED,
        rubrics=[f"item {i}" for i in range(len(passed))],
        final_passed=passed,
        reference_operations=20,
        totals=RunTotals(steps=steps, model_calls=calls),
        **extra,  # type: ignore[arg-type]
    )


def test_evolution_is_compared_with_individual_runs_on_the_later_tasks(tmp_path: Path) -> None:
    first, second, third = [t.task_id for t in load_task_suite(suite="frontier")][:3]
    shortcut = [ActionEntry(step=1, text="Untick(1, 2)", shortcut="Untick_And_Add")] * 2
    learnt = MemoryUse(tips_given=["a"] * 6, shortcuts_given=["Untick_And_Add"], tips_written=["b", "c"])
    evo = _folder(
        tmp_path / "evo",
        {"agent": "e", "setting": "evolution"},
        [
            _record(first, 20, 60, [True, True], setting="evolution", memory=MemoryUse(tips_written=["x"])),
            _record(
                second, 10, 30, [True, True], setting="evolution", order=1, actions=shortcut, memory=learnt
            ),
            _record(third, 12, 36, [True, False], setting="evolution", order=2),
        ],
    )
    single = _folder(
        tmp_path / "ind",
        {"agent": "e", "setting": "individual"},
        [_record(second, 16, 48, [True, True]), _record(third, 14, 40, [True, True])],
    )
    baseline = _folder(tmp_path / "v2", {"agent": "v2"}, [_record(second, 18, 54, [True, False])])
    runs = runs_of([evo, single, baseline])
    assert [(r.position, r.arm) for r in runs] == [
        (1, "E+Evo"),
        (2, "E individual"),
        (2, "E+Evo"),
        (2, "v2"),
        (3, "E individual"),
        (3, "E+Evo"),
    ]
    rows = task_rows(runs)
    assert "| Untick_And_Add (2×) | given 6 Tips, 1 Shortcuts; wrote 2 Tips |" in rows[4]
    assert summary_rows(runs)[2:] == [
        "| E individual | 2 | 1.000 | 15.0 | 44.0 |",
        "| E+Evo | 2 | 0.750 | 11.0 | 33.0 |",
        "| v2 | 1 | 0.500 | 18.0 | 54.0 |",
    ]
    assert paired_change(runs, "E+Evo", "E individual") == (
        "E+Evo against E individual on the 2 later task(s) both ran: steps -27%, model calls -25%, "
        "mean SS 0.750 against 1.000."
    )
