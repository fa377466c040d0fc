"""Full CLI runs against a faulty local model server end cleanly, in bounded time, memory intact.

Three of the faults of ``benchmarks/provider_faults.py`` (which runs them all and reports figures).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from provider_faults import run_fault


@pytest.mark.parametrize(
    ("fault", "exit_code", "message"),
    [
        ("trickle", 7, "Experience Reflectors skipped: the provider timed out"),
        ("auth-401", 7, "refused the API key"),
        ("model-404", 7, "Experience Reflectors skipped: the provider refused the request"),
        ("bad-usage", 0, "log:"),
    ],
)
def test_fault_run_ends_cleanly(tmp_path: Path, fault: str, exit_code: int, message: str) -> None:
    row = run_fault(fault, tmp_path)
    assert row["exit_code"] == exit_code, row
    assert message in str(row["message"]), row
    assert row["summary_json"] and not row["traceback"], row
    assert row["memory_unchanged"] is (exit_code != 0), row
    assert float(str(row["wall_s"])) < 90, row


@pytest.mark.parametrize("quiet", [True, False])
def test_a_refused_model_name_skips_the_reflectors_with_one_line(tmp_path: Path, quiet: bool) -> None:
    row = run_fault("model-404", tmp_path, quiet=quiet)
    assert row["exit_code"] == 7, row
    assert row["requests"] == 1, row  # the Manager's call; no reflector call follows a refused request
    assert row["skipped_lines"] == 1, row
    assert row["memory_unchanged"] and not row["traceback"], row
