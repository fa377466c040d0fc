"""Every benchmark script starts from a checkout without installing mae: ``--help`` works from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
LIBRARIES = {
    "bench_common.py",
    "grader_routes.py",
    "grader_routes_cartwell.py",
    "grader_routes_frontier_prices.py",
    "grader_routes_frontier_shop.py",
    "grader_routes_frontier_travel.py",
    "grader_routes_places.py",
    "grader_routes_real_notes.py",
    "grader_routes_research.py",
    "grader_routes_shopping.py",
    "profiles.py",
    "rubric_texts.py",
}
"""Modules the scripts import (helpers, the grader corpus's routes), not scripts themselves."""
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if p.name not in LIBRARIES)


def test_every_benchmark_script_answers_help_from_another_folder(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    runs = {
        script.name: subprocess.Popen(
            [sys.executable, str(script), "--help"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for script in SCRIPTS
    }
    failed = {}
    for name, run in runs.items():
        output, _ = run.communicate(timeout=120)
        if run.returncode != 0 or "usage:" not in output:
            failed[name] = output[-300:]
    assert len(runs) >= 10 and not failed, failed
