"""The Perceptor against the virtual phone's ground truth: text recall, icon recall, merging."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from PIL import Image

from mae.config import PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.eval.virtual_suite import load_task_suite
from mae.perception import Element, Perceptor
from mae.perception.geometry import intersection

pytestmark = pytest.mark.slow

TASKS = {task.id: task for task in load_task_suite()}


def _after(task_id: str, steps: int) -> Callable[[VirtualPhone], None]:
    return lambda phone: TASKS[task_id].replay(phone, TASKS[task_id].reference_actions[:steps])


SCREENS: dict[str, Callable[[VirtualPhone], None]] = {
    "home": lambda phone: None,
    "maps results": _after("v_korean_late_night", 4),
    "notes list": lambda phone: phone.open_app("Notes"),
    "amazon results": _after("v_air_fryer_compare_note", 4),
    "scholar citations": _after("v_segment_anything_most_cited", 6),
    "x explore": _after("v_x_trending_note", 2),
}


def _squash(text: str) -> str:
    return "".join(text.split())


@pytest.fixture(scope="module")
def screens() -> dict[str, tuple[Image.Image, list[Element]]]:
    shots = {}
    for name, prepare in SCREENS.items():
        phone = VirtualPhone()
        prepare(phone)
        shots[name] = (phone.screenshot(), phone.ground_truth())
    return shots


@pytest.fixture(scope="module")
def line_perceptor() -> Perceptor:
    perceptor = Perceptor.from_settings(PerceptionSettings())
    perceptor.merge = False  # line-level output, comparable to the ground truth's lines
    perceptor.tidy = False  # the ground truth lists the status bar, which the tidied list leaves out
    return perceptor


def test_text_recall_with_centres_within_12px(screens: dict, line_perceptor: Perceptor) -> None:
    total = recalled = 0
    missed = []
    for name, (image, truth) in screens.items():
        found = line_perceptor.perceive(image).texts
        for label in (e for e in truth if e.kind == "text"):
            total += 1
            hit = any(
                _squash(e.text) == _squash(label.text) and math.dist(e.center, label.center) <= 12
                for e in found
            )
            recalled += hit
            if not hit:
                missed.append(f"{name}: {label.text!r} at {label.center}")
    recall = recalled / total
    assert total > 100
    assert recall >= 0.95, f"text recall {recall:.3f}; missed: {missed[:20]}"


def _icon_found(icon: Element, found: list[Element]) -> bool:
    x, y = icon.center
    return any(
        e.box[0] <= x <= e.box[2]
        and e.box[1] <= y <= e.box[3]
        and intersection(e.box, icon.box) > 0.3 * _area(icon)
        for e in found
    )


def _area(element: Element) -> int:
    left, top, right, bottom = element.box
    return max(1, (right - left) * (bottom - top))


def test_app_icon_recall(screens: dict, line_perceptor: Perceptor) -> None:
    image, truth = screens["home"]
    app_icons = [e for e in truth if e.kind == "icon"]
    assert len(app_icons) >= 12
    found = line_perceptor.perceive(image).icons
    recall = sum(_icon_found(icon, found) for icon in app_icons) / len(app_icons)
    assert recall >= 0.8, f"app-icon recall {recall:.2f}"


def test_icon_recall_across_screens(screens: dict, line_perceptor: Perceptor) -> None:
    total = hits = 0
    for image, truth in screens.values():
        found = line_perceptor.perceive(image).icons
        icons = [e for e in truth if e.kind == "icon"]
        total += len(icons)
        hits += sum(_icon_found(icon, found) for icon in icons)
    assert hits / total >= 0.7, f"icon recall {hits}/{total}"


def test_wrapped_titles_merge_but_fields_stay_apart(screens: dict) -> None:
    image, _truth = screens["amazon results"]
    merged = Perceptor.from_settings(PerceptionSettings()).perceive(image)
    texts = [_squash(e.text) for e in merged.texts]
    # a product title drawn over two lines comes back as one element
    assert any(t.startswith(_squash("Ninja DZ201")) and "Fryer" in t for t in texts), texts
    # the rating and the review count of a product stay separate elements
    assert any(t.startswith("(") and t.endswith(")") for t in texts), texts
    assert merged.timings["total"] >= merged.timings["ocr"] > 0
