"""Rows of the real-model table (``benchmarks/real_model_runs.md``) from eval folders.

A run with a real multimodal model as the backbone (the relay in ``../shared/tools/``) leaves an eval
folder; this prints one markdown row per task run in it: SS, steps, steps per reference operation, model
calls, calls per step, sequential calls per step (calls whose time spans overlap, as fast mode's
speculative Operator and parallel Notetaker do, count once), the exit, input tokens and the rubric items
lost. ``--copy DIR`` also keeps each folder's summary (``eval.json``, ``results.jsonl``, ``report.md``; no
screenshots or prompts) under ``DIR/<folder name>``.

    python benchmarks/real_model_table.py /tmp/relay/*/eval
    python benchmarks/real_model_table.py /tmp/relay/*/eval --copy benchmarks/real_model_runs
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

HEADER = (
    "| task | agent | SS | steps | steps/ref ops | calls | calls/step | sequential/step | exit "
    "| input tokens | lost rubric items |\n|---|---|---|---|---|---|---|---|---|---|---|"
)
SUMMARY_FILES = ("eval.json", "results.jsonl", "report.md")
OVERLAP_SLACK_S = 0.05


def sequential_calls(steps_file: Path) -> tuple[int, int]:
    """(sequential model calls, executed actions) of one run's ``steps.jsonl``."""
    rows = [json.loads(line) for line in steps_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    spans = sorted(
        (row["time"] - row["latency_s"], row["time"])
        for row in rows
        if row.get("kind") == "agent" and row.get("latency_s")
    )
    waves, end = 0, float("-inf")
    for start, stop in spans:
        if start >= end - OVERLAP_SLACK_S:
            waves += 1
            end = stop
        else:
            end = max(end, stop)
    return waves, sum(1 for row in rows if row.get("kind") == "action")


def copy_summary(folder: Path, into: Path) -> Path:
    """Keep an eval folder's summary files (no screenshots or prompts) under ``into/<run name>`` (the
    run's folder name when the eval folder is called ``eval``); returns that folder."""
    name = folder.parent.name if folder.name == "eval" else folder.name
    target = into / name
    target.mkdir(parents=True, exist_ok=True)
    for file in SUMMARY_FILES:
        if (folder / file).exists():
            shutil.copyfile(folder / file, target / file)
    return target


def rows_of(folder: Path) -> list[str]:
    """One markdown row per task run recorded in the eval ``folder``."""
    settings: dict[str, Any] = json.loads((folder / "eval.json").read_text(encoding="utf-8"))
    mode = "fast" if settings.get("fast") else "default"
    rows = []
    for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        totals, passed = record["totals"], record["final_passed"]
        steps = max(1, totals["steps"])
        items = zip(record["rubrics"], passed, strict=False)
        lost = [f"{i + 1}. {item}" for i, (item, ok) in enumerate(items) if not ok]
        steps_file = folder / "runs" / Path(str(record.get("run_dir") or "-")).name / "steps.jsonl"
        sequential = "–"
        if steps_file.exists():
            waves, actions = sequential_calls(steps_file)
            sequential = f"{waves / max(1, actions):.2f}"
        rows.append(
            f"| {record['task_id']} | {str(settings.get('agent', 'e')).upper()} {mode} "
            f"| {sum(passed) / max(1, len(passed)):.2f} | {totals['steps']} "
            f"| {totals['steps'] / max(1, record['reference_operations']):.2f} | {totals['model_calls']} "
            f"| {totals['model_calls'] / steps:.2f} | {sequential} | {record['exit_reason']} "
            f"| {totals['input_tokens']:,} | {'; '.join(lost) or '–'} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="eval folders (each with eval.json)")
    parser.add_argument("--copy", type=Path, default=None, help="keep each folder's summary files here")
    args = parser.parse_args()
    print(HEADER)
    for folder in args.folders:
        if not (folder / "results.jsonl").exists():
            print(f"<!-- {folder}: no results.jsonl (the eval has not finished a task) -->")
            continue
        for row in rows_of(folder):
            print(row)
        if args.copy is not None:
            copy_summary(folder, args.copy)


if __name__ == "__main__":
    main()
