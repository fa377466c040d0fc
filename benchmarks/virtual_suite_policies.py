"""Score three scripted policies on a virtual suite, to show that the suite separates them.

No model is involved: each policy is a fixed sequence of operations derived from a task's reference:

- ``reference``: the task's reference actions (with its realism: pop-ups closed, spinners waited out);
- ``halfway``: the first half of the reference actions, then it stops;
- ``no-dismiss``: the reference actions without the taps that dismiss pop-ups (a tap meant for the
  app lands on the scrim: it closes a card or a sheet and does nothing over a permission dialog; Back
  still closes a dialog, as on a real phone).

Each task runs on a fresh phone prepared for the task, graded after every operation (the SSS curve's
input) and at the end. Prints per task the reference operation count and the three scores.

    python benchmarks/virtual_suite_policies.py                 # the hard suite, realism as stored
    python benchmarks/virtual_suite_policies.py --seed 7        # realism on for every task, seed 7
    python benchmarks/virtual_suite_policies.py --json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mae.device.virtual import VirtualPhone
from mae.device.virtual.realism import Realism
from mae.errors import ActionError
from mae.eval.virtual_suite import VirtualTask, load_task_suite

POLICIES = ("reference", "halfway", "no-dismiss")


def policy_actions(task: VirtualTask, policy: str) -> list[str]:
    compiled = task.compile_reference()
    if policy == "halfway":
        return [a.text for a in compiled[: len(compiled) // 2]]
    if policy == "no-dismiss":
        return [a.text for a in compiled if a.reason != "dismiss"]
    return [a.text for a in compiled]


def run_policy(task: VirtualTask, actions: list[str]) -> dict[str, Any]:
    """Replay ``actions`` on a fresh phone, grading after each; return the final score and the curve."""
    phone = VirtualPhone()
    task.prepare(phone)
    curve = []
    grade_ms = []
    for action in actions:
        with contextlib.suppress(ActionError):  # an operation the phone refuses is a wasted step
            task.replay(phone, [action])
        start = time.perf_counter()
        curve.append(task.grade(phone).score)
        grade_ms.append((time.perf_counter() - start) * 1000)
    final = task.grade(phone)
    return {"score": final.score, "steps": len(actions), "curve": curve, "grade_ms": grade_ms}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", choices=["basic", "hard"], default="hard")
    parser.add_argument("--seed", type=int, default=None, help="realism on for every task with this seed")
    parser.add_argument("--no-realism", action="store_true", help="realism off for every task")
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    args = parser.parse_args(argv)
    override = None
    if args.no_realism:
        override = Realism()
    elif args.seed is not None:
        override = Realism(enabled=True, seed=args.seed)
    tasks = load_task_suite(suite=args.suite, realism=override)
    rows = []
    grade_ms: list[float] = []
    for task in tasks:
        if not task.plan:
            continue
        row: dict[str, Any] = {"task_id": task.task_id, "reference_ops": len(task.compile_reference())}
        for policy in POLICIES:
            result = run_policy(task, policy_actions(task, policy))
            row[policy] = round(result["score"], 3)
            grade_ms += result["grade_ms"]
        rows.append(row)
    summary = {
        "tasks": len(rows),
        "mean_reference_ops": round(statistics.fmean(r["reference_ops"] for r in rows), 1),
        **{f"mean_{p}": round(statistics.fmean(r[p] for r in rows), 3) for p in POLICIES},
        "grade_ms_median": round(statistics.median(grade_ms), 3),
    }
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=2))
        return 0
    print(f"{'task':32} {'ops':>4} {'reference':>10} {'halfway':>8} {'no-dismiss':>11}")
    for r in rows:
        scores = f"{r['reference']:>10.2f} {r['halfway']:>8.2f} {r['no-dismiss']:>11.2f}"
        print(f"{r['task_id']:32} {r['reference_ops']:>4} {scores}")
    print(
        f"{'mean':32} {summary['mean_reference_ops']:>4} {summary['mean_reference']:>10.3f} "
        f"{summary['mean_halfway']:>8.3f} {summary['mean_no-dismiss']:>11.3f}"
    )
    print(f"grading one state: median {summary['grade_ms_median']} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
