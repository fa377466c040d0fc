"""The self-evolution table (``benchmarks/frontier_runs.md``) from eval folders of the frontier tier.

Each eval folder is one arm's run of some frontier tasks with a real model as the backbone: E in the
individual setting, E in the evolution setting (E+Evo: one shared memory per scenario, tasks in
order) or v2. This prints, per task and arm, the Satisfaction Score, steps, steps per reference
operation, model calls, the Shortcuts called and what the Experience Reflectors wrote after the task,
then the means over the scenarios' later tasks (2 to 5, where experience can pay), and the change of
E+Evo against E individual on the tasks both ran. ``--copy DIR`` keeps each folder's summary files
(``eval.json``, ``results.jsonl``, ``report.md``; no screenshots or prompts) under ``DIR/<name>``.

    python benchmarks/frontier_table.py /tmp/relay/ind-*/eval /tmp/relay/evo-*/eval /tmp/relay/v2-*/eval
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_model_table import copy_summary  # the same summary files, kept the same way

from mae.eval.records import TaskRecord, read_results
from mae.eval.virtual_suite import load_task_suite

ARMS = ("E individual", "E+Evo", "v2")


@dataclass
class Run:
    arm: str
    position: int
    """1-based place of the task in its scenario."""
    record: TaskRecord

    @property
    def score(self) -> float:
        passed = self.record.final_passed
        return sum(passed) / max(1, len(passed))

    @property
    def steps(self) -> int:
        return self.record.totals.steps

    @property
    def calls(self) -> int:
        return self.record.totals.model_calls


def arm_of(settings: dict[str, object]) -> str:
    agent = str(settings.get("agent", "e"))
    if agent != "e":
        return agent
    return "E+Evo" if settings.get("setting") == "evolution" else "E individual"


def positions() -> dict[str, int]:
    """Each frontier task's 1-based place in its scenario."""
    seen: dict[str, int] = {}
    out = {}
    for task in load_task_suite(suite="frontier"):
        seen[task.scenario] = seen.get(task.scenario, 0) + 1
        out[task.task_id] = seen[task.scenario]
    return out


def runs_of(folders: list[Path], labels: dict[Path, str] | None = None) -> list[Run]:
    """The runs of ``folders``; ``labels`` names the arm of a folder (default: from its ``eval.json``)."""
    places = positions()
    runs = []
    for folder in folders:
        settings = json.loads((folder / "eval.json").read_text(encoding="utf-8"))
        arm = (labels or {}).get(folder) or arm_of(settings)
        for record in read_results(folder):
            runs.append(Run(arm, places.get(record.task_id, record.order + 1), record))
    return sorted(
        runs, key=lambda r: (r.record.scenario, r.position, ARMS.index(r.arm) if r.arm in ARMS else 9)
    )


def memory_cells(run: Run) -> tuple[str, str]:
    memory = run.record.memory
    if memory is None:
        return "–", "–"
    used = ", ".join(f"{name} ({n}×)" for name, n in memory.used(run.record.actions).items()) or "none"
    if run.record.setting != "evolution":
        return used, "–"
    written = []
    if memory.tips_written:
        written.append(f"{len(memory.tips_written)} Tips")
    written += [f"Shortcut {name}" for name in memory.shortcuts_added]
    written += [f"revised {name}" for name in memory.shortcuts_revised]
    given = f"given {len(memory.tips_given)} Tips, {len(memory.shortcuts_given)} Shortcuts"
    return used, f"{given}; wrote " + (", ".join(written) or "nothing")


def task_rows(runs: list[Run]) -> list[str]:
    rows = [
        "| scenario | # | task | arm | SS | steps | steps/ref ops | calls | Shortcuts used | memory |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        record = run.record
        used, memory = memory_cells(run)
        rows.append(
            f"| {record.scenario} | {run.position} | {record.task_id} | {run.arm} | {run.score:.2f} "
            f"| {run.steps} | {run.steps / max(1, record.reference_operations):.2f} | {run.calls} "
            f"| {used} | {memory} |"
        )
    return rows


def summary_rows(runs: list[Run]) -> list[str]:
    later = [r for r in runs if r.position >= 2]
    rows = ["| arm | tasks (2–5) | mean SS | mean steps | mean calls |", "|---|---|---|---|---|"]
    for arm in ARMS:
        group = [r for r in later if r.arm == arm]
        if group:
            rows.append(
                f"| {arm} | {len(group)} | {mean(r.score for r in group):.3f} "
                f"| {mean(r.steps for r in group):.1f} | {mean(r.calls for r in group):.1f} |"
            )
    return rows


def paired_change(runs: list[Run], arm: str, base: str) -> str:
    """``arm`` against ``base`` on the later tasks both ran: steps, calls and SS."""
    by_arm: dict[str, dict[str, Run]] = {}
    for run in runs:
        if run.position >= 2:
            by_arm.setdefault(run.arm, {})[run.record.task_id] = run
    common = sorted(set(by_arm.get(arm, {})) & set(by_arm.get(base, {})))
    if not common:
        return f"{arm} against {base}: no later task ran in both."
    a = [by_arm[arm][t] for t in common]
    b = [by_arm[base][t] for t in common]
    steps = sum(r.steps for r in a) / max(1, sum(r.steps for r in b)) - 1
    calls = sum(r.calls for r in a) / max(1, sum(r.calls for r in b)) - 1
    return (
        f"{arm} against {base} on the {len(common)} later task(s) both ran: steps {steps:+.0%}, "
        f"model calls {calls:+.0%}, mean SS {mean(r.score for r in a):.3f} against "
        f"{mean(r.score for r in b):.3f}."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "folders", nargs="+", help="eval folders (each with eval.json), or ARM=FOLDER to name a folder's arm"
    )
    parser.add_argument("--copy", type=Path, default=None, help="keep each folder's summary files here")
    args = parser.parse_args()
    labels = {Path(a.split("=", 1)[1]): a.split("=", 1)[0] for a in args.folders if "=" in a}
    given = [Path(a.split("=", 1)[-1]) for a in args.folders]
    folders = [f for f in given if (f / "results.jsonl").exists()]
    for skipped in sorted(set(given) - set(folders)):
        print(f"<!-- {skipped}: no results.jsonl (no task finished) -->")
    runs = runs_of(folders, labels)
    print("\n".join(task_rows(runs)))
    print()
    print("\n".join(summary_rows(runs)))
    print()
    print(paired_change(runs, "E+Evo", "E individual"))
    print(paired_change(runs, "E individual", "v2"))
    if args.copy is not None:
        for folder in folders:
            copy_summary(folder, args.copy)


if __name__ == "__main__":
    main()
