"""``benchmarks/perception_ab.py``: two checkouts' Perceptors timed on the same screens, interleaved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "perception_ab.py"


@pytest.mark.slow
def test_both_checkouts_are_timed_on_every_screen() -> None:
    # Checkouts named relative to where the command runs, as in ``perception_ab.py ../before .``
    done = subprocess.run(
        [sys.executable, str(SCRIPT), ROOT.name, f"./{ROOT.name}", "--screens", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT.parent,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["screens"] == 2
    for side in ("before", "after"):
        assert report[side]["checkout"] == str(ROOT)
        assert report[side]["wall"]["n"] == report[side]["cpu"]["n"] == 2
        assert 0 < report[side]["wall"]["min"] <= report[side]["wall"]["max"] < 60


def test_a_folder_that_is_not_a_checkout_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 2
    assert "is not a mae checkout" in done.stderr
    assert "Traceback" not in done.stderr
