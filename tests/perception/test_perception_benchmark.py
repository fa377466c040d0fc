"""``benchmarks/perception.py``: the smaller-text copies ``--dense`` adds, and their recall report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from mae.perception import Element

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from perception import DENSER, denser  # noqa: E402


def test_dense_copies_draw_the_screen_smaller_with_its_ground_truth_scaled() -> None:
    screen = Image.new("RGB", (1080, 2340), (250, 250, 250))
    screen.paste((0, 0, 0), (200, 1000, 600, 1100))  # a dark bar the ground truth calls a line
    truth = [Element(kind="text", text="Total", box=(200, 1000, 600, 1100))]
    copies = denser(screen, truth)
    assert [name for _, _, name in copies] == [f"content-x{scale}" for scale in DENSER]
    for (image, (label,), _), scale in zip(copies, DENSER, strict=True):
        assert image.size == screen.size
        assert label.box == tuple(round(v * scale) for v in truth[0].box) and label.text == "Total"
        assert image.getpixel(label.center) == (0, 0, 0)  # the bar is where its label says
        assert image.getpixel((1070, 2330)) == (250, 250, 250)  # the rest is the screen's background
    assert truth[0].box == (200, 1000, 600, 1100)  # the original is not changed


def _benchmark(*options: str) -> subprocess.CompletedProcess[str]:
    """``benchmarks/perception.py`` run with ``options``; it must succeed."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "perception.py"), *options],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow
def test_dense_recall_is_reported_per_scale() -> None:
    done = _benchmark("--screens", "1", "--repeat", "1", "--dense", "--accuracy", "--no-tidy", "--json")
    report = json.loads(done.stdout)
    assert report["screens"] == 1 + len(DENSER)
    accuracy = report["accuracy"]
    assert set(accuracy) == {"virtual", *(f"content-x{scale}" for scale in DENSER)}
    assert accuracy["content-x0.75"]["text_lines"] == accuracy["virtual"]["text_lines"] > 0
    assert accuracy["content-x0.75"]["text_recall"] > 0.5  # smaller text is still read


@pytest.mark.slow
def test_options_that_need_ground_truth_say_they_are_ignored_for_image_files(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    Image.new("RGB", (540, 1170), (255, 255, 255)).save(shot)
    done = _benchmark(str(shot), "--dense", "--repeat", "1", "--json")
    assert "ignored for image files" in done.stderr
    assert json.loads(done.stdout)["screens"] == 1  # no copies were added
