"""Benchmark the Perceptor: median per-stage latency over 1080x2340 screenshots.

By default the screenshots are the screens the virtual phone shows while replaying the reference
actions of its task suite (a sample of distinct screens); pass image files to use your own. With
``--accuracy`` (virtual screens only) it also reports text and icon recall against the phone's ground
truth: a text line (2+ characters) counts when an element has the same text (ignoring spaces) with its
centre within 12 px; an icon counts when a found icon box holds its centre and covers 30% of it.

    python benchmarks/perception.py                      # summary
    python benchmarks/perception.py --json               # machine-readable
    python benchmarks/perception.py --accuracy --screens 100
    python benchmarks/perception.py shots/*.png --repeat 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PIL import Image

from mae.actions import parse_action_text, resolve_call
from mae.device.virtual import VirtualPhone
from mae.eval.virtual_suite import load_task_suite
from mae.perception import Element, Perceptor
from mae.perception.geometry import box_area, intersection
from mae.perception.icons import make_icon_detector
from mae.perception.ocr import make_ocr

TARGET_S = 0.8

Screen = tuple[Image.Image, list[Element] | None]


def virtual_screens(limit: int) -> list[Screen]:
    """Distinct screens of the virtual task suite's reference replays with their ground truth."""
    seen: set[str] = set()
    screens: list[Screen] = []
    for task in load_task_suite():
        phone = VirtualPhone()
        for text in ["Home()", *task.reference_actions]:
            for step in resolve_call(parse_action_text(text), {}, phone.screen_size()):
                step.execute(phone)
            shot = phone.screenshot()
            digest = hashlib.sha1(shot.tobytes()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                screens.append((shot, phone.ground_truth()))
            if len(screens) >= limit:
                return screens
    return screens


def _squash(text: str) -> str:
    return "".join(text.split())


def recall(perceptor: Perceptor, screens: list[Screen]) -> dict[str, Any]:
    """Line-level text recall (texts of 2+ characters) and icon recall against the ground truth."""
    merge, perceptor.merge = perceptor.merge, False
    texts = text_hits = icons = icon_hits = 0
    try:
        for image, truth in screens:
            if truth is None:
                continue
            found = perceptor.perceive(image)
            for label in truth:
                if label.kind == "text" and len(_squash(label.text)) > 1:
                    texts += 1
                    text_hits += any(
                        _squash(e.text) == _squash(label.text) and math.dist(e.center, label.center) <= 12
                        for e in found.texts
                    )
                elif label.kind == "icon":
                    icons += 1
                    x, y = label.center
                    icon_hits += any(
                        e.box[0] <= x <= e.box[2]
                        and e.box[1] <= y <= e.box[3]
                        and intersection(e.box, label.box) > 0.3 * max(1, box_area(label.box))
                        for e in found.icons
                    )
    finally:
        perceptor.merge = merge
    return {
        "text_lines": texts,
        "text_recall": round(text_hits / texts, 4) if texts else None,
        "icons": icons,
        "icon_recall": round(icon_hits / icons, 4) if icons else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("images", nargs="*", type=Path, help="screenshots (default: virtual phone screens)")
    parser.add_argument("--screens", type=int, default=30, help="virtual screens to use (default 30)")
    parser.add_argument("--repeat", type=int, default=1, help="passes over the screens (default 1)")
    parser.add_argument("--ocr", default="rapidocr", choices=["rapidocr", "paddleocr"])
    parser.add_argument("--icons", default="contour", choices=["contour", "groundingdino", "none"])
    parser.add_argument(
        "--line-cache",
        action="store_true",
        help="keep RapidOCR's cache of recognised lines (as in a task, where screens share lines); by "
        "default it is off, so every screen is read from scratch",
    )
    parser.add_argument("--rec-workers", type=int, help="RapidOCR recognition threads (default: up to 2)")
    parser.add_argument("--det-max-side", type=int, help="RapidOCR detection size (default 1600)")
    parser.add_argument("--accuracy", action="store_true", help="also report recall against ground truth")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)

    if args.images:
        screens: list[Screen] = [(Image.open(path).convert("RGB"), None) for path in args.images]
    else:
        screens = virtual_screens(args.screens)
    ocr_options: dict[str, Any] = {}
    if args.ocr == "rapidocr":
        ocr_options = {"rec_cache": 4096 if args.line_cache else 0, "rec_workers": args.rec_workers}
        if args.det_max_side:
            ocr_options["det_max_side"] = args.det_max_side
    perceptor = Perceptor(make_ocr(args.ocr, **ocr_options), make_icon_detector(args.icons))
    perceptor.perceive(screens[0][0])  # load the models once, outside the measurement
    if args.line_cache:
        perceptor = Perceptor(make_ocr(args.ocr, **ocr_options), perceptor.icons)  # start with an empty cache

    stages: dict[str, list[float]] = {}
    wall: list[float] = []
    for _ in range(args.repeat):
        for screen, _truth in screens:
            started = time.perf_counter()
            result = perceptor.perceive(screen)
            wall.append(time.perf_counter() - started)
            for stage, seconds in result.timings.items():
                stages.setdefault(stage, []).append(seconds)
    report: dict[str, Any] = {
        "screens": len(screens),
        "runs": len(wall),
        "size": list(screens[0][0].size),
        "backends": {"ocr": args.ocr, "icons": args.icons, "captions": "none"},
        "line_cache": args.line_cache,
        "cpus": os.cpu_count(),
        "median_s": {stage: round(statistics.median(values), 3) for stage, values in stages.items()},
        "p90_total_s": round(sorted(wall)[int(0.9 * (len(wall) - 1))], 3),
        "target_s": TARGET_S,
    }
    report["meets_target"] = report["median_s"]["total"] <= TARGET_S
    if args.accuracy:
        report["accuracy"] = recall(perceptor, screens)
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"Perceptor on {report['screens']} screens {report['size'][0]}x{report['size'][1]}, "
        f"{len(wall)} runs, {report['cpus']} CPUs, line cache {'on' if args.line_cache else 'off'}"
    )
    for stage, value in report["median_s"].items():
        print(f"  median {stage:<8} {value * 1000:7.0f} ms")
    print(f"  p90 total      {report['p90_total_s'] * 1000:7.0f} ms")
    verdict = "meets" if report["meets_target"] else "misses"
    print(f"  {verdict} the target of {TARGET_S * 1000:.0f} ms median total")
    if args.accuracy:
        acc = report["accuracy"]
        print(f"  text recall {acc['text_recall']} over {acc['text_lines']} lines (centres within 12 px)")
        print(f"  icon recall {acc['icon_recall']} over {acc['icons']} icons")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
