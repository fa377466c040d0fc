"""Measure ``skip_planning_while_loading`` on the virtual suite with realism on (spinners, splash
screens): the same tasks run with the option off and on, the model answered by the scripted
reference agent (``mae.testing.reference_agent``, not a model) through the fake model server.

    python benchmarks/loading_skip.py                         # the hard suite's first 6 tasks, seed 1
    python benchmarks/loading_skip.py --tasks '*' --seed 3    # every task

Prints per setting: tasks finished, mean satisfaction score (graded by code), steps, and the model
calls of the Manager and the Notetaker. The reference agent replays fixed actions, so this measures
what the option saves and that the scripted runs still reach the same states; whether a real model
plans better or worse with it needs the same comparison with that model (``mae eval`` with
``MAE_SKIP_PLANNING_WHILE_LOADING=0`` and ``=1``). The option is on by default since issue 38, from the
real-model runs (docs/agents.md); the scripted agent waits where E's subgoal says the screen is loading.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mae.cli import main as mae_main
from mae.eval.records import read_results
from mae.testing.fake_model_server import FakeModelServer
from mae.testing.reference_agent import ReferenceAgent


def run_eval(tasks: str, seed: int, skip: bool, out: Path) -> dict[str, Any]:
    agent = ReferenceAgent()
    os.environ["MAE_SKIP_PLANNING_WHILE_LOADING"] = "1" if skip else "0"
    with FakeModelServer(responder=agent) as server:
        argv = ["eval", "--suite", "virtual", "--backbone", "custom", "--base-url", server.base_url]
        argv += ["--model", "fake-vlm", "--out", str(out), "--realism", "on", "--seed", str(seed), "--quiet"]
        argv += ["--agent", "e", "--log-dir", str(out / "runs")]
        if tasks != "*":
            argv += ["--tasks", tasks]
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            code = mae_main(argv)
        roles = [r.role for r in agent.requests]
    records = read_results(out)
    scores = [r.curve[-1] if r.curve else 0.0 for r in records]
    return {
        "skip_planning_while_loading": skip,
        "exit_code": code,
        "tasks": len(records),
        "finished": sum(r.finished for r in records),
        "mean_ss": round(100 * sum(scores) / max(1, len(scores)), 1),
        "steps": sum(len(r.actions) for r in records),
        "manager_calls": roles.count("manager"),
        "notetaker_calls": roles.count("notetaker"),
        "all_calls": len(roles),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="", help="task ids or scenarios (default: the first 6 tasks)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tasks = args.tasks
    if not tasks:
        from mae.eval.tasks import virtual_tasks

        tasks = ",".join(t.task_id for t in virtual_tasks("hard")[:6])
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for skip in (False, True):
            rows.append(run_eval(tasks, args.seed, skip, Path(folder) / f"skip-{int(skip)}"))
    if args.json:
        print(json.dumps(rows))
        return
    keys = list(rows[0])
    print("  ".join(f"{k:>28}" if i == 0 else f"{k:>15}" for i, k in enumerate(keys)))
    for row in rows:
        print("  ".join(f"{row[k]!s:>28}" if i == 0 else f"{row[k]!s:>15}" for i, k in enumerate(keys)))


if __name__ == "__main__":
    main()
