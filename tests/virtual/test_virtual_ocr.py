"""The virtual phone's text is real, OCR-readable pixels: RapidOCR recovers the ground-truth labels.

One main screen per app (OCR of a full screen costs about a second here). A label counts as recovered
when RapidOCR returns exactly its text (ignoring whitespace, which PP-OCR drops or inserts freely) with
a box centre within 12 px of the ground-truth centre.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from mae.device.virtual import VirtualPhone
from mae.eval.virtual_suite import load_task_suite

pytestmark = pytest.mark.slow

TASKS = {task.id: task for task in load_task_suite()}


def _after(task_id: str, steps: int) -> Callable[[VirtualPhone], None]:
    def run(phone: VirtualPhone) -> None:
        task = TASKS[task_id]
        task.replay(phone, task.reference_actions[:steps])

    return run


def _open(app: str) -> Callable[[VirtualPhone], None]:
    return lambda phone: phone.open_app(app)


SCREENS: dict[str, Callable[[VirtualPhone], None]] = {
    "home": lambda phone: None,
    "maps results": _after("v_korean_late_night", 4),
    "notes list": _open("Notes"),
    "amazon results": _after("v_air_fryer_compare_note", 4),
    "walmart home": _open("Walmart"),
    "scholar citations": _after("v_segment_anything_most_cited", 6),
    "x explore": _after("v_x_trending_note", 2),
    "settings": _open("Settings"),
}


def _squash(text: str) -> str:
    return "".join(text.split())


@pytest.fixture(scope="module")
def ocr() -> object:
    rapidocr = pytest.importorskip("rapidocr_onnxruntime")
    return rapidocr.RapidOCR()


def test_rapidocr_recovers_ground_truth_labels(ocr: Callable[..., tuple[list | None, object]]) -> None:
    total = recovered = 0
    missed: list[str] = []
    for name, setup in SCREENS.items():
        phone = VirtualPhone()
        setup(phone)
        result, _ = ocr(np.asarray(phone.screenshot()))
        found = []
        for polygon, text, _score in result or []:
            xs = [p[0] for p in polygon]
            ys = [p[1] for p in polygon]
            found.append((_squash(text), (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2))
        labels = [e for e in phone.ground_truth() if e.kind == "text"]
        assert labels, name
        for element in labels:
            cx = (element.box[0] + element.box[2]) / 2
            cy = (element.box[1] + element.box[3]) / 2
            ok = any(t == _squash(element.text) and math.hypot(x - cx, y - cy) <= 12 for t, x, y in found)
            recovered += ok
            total += 1
            if not ok:
                missed.append(f"{name}: {element.text!r}")
    assert total >= 150
    assert recovered / total >= 0.95, missed
