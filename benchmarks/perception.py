"""Benchmark the Perceptor: median per-stage latency over 1080x2340 screenshots.

By default the screenshots are the screens the virtual phone shows while replaying the reference
actions of its task suite (a sample of distinct screens); pass image files to use your own.

    python benchmarks/perception.py                      # summary
    python benchmarks/perception.py --json               # machine-readable
    python benchmarks/perception.py shots/*.png --repeat 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PIL import Image

from mae.actions import parse_action_text, resolve_call
from mae.config import PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.device.virtual.tasks import load_task_suite
from mae.perception import Perceptor

TARGET_S = 0.8


def virtual_screens(limit: int) -> list[Image.Image]:
    """Distinct screens of the virtual task suite's reference replays, up to ``limit``."""
    seen: set[str] = set()
    screens: list[Image.Image] = []
    for task in load_task_suite():
        phone = VirtualPhone()
        for text in ["Home()", *task.reference_actions]:
            for step in resolve_call(parse_action_text(text), {}, phone.screen_size()):
                step.execute(phone)
            shot = phone.screenshot()
            digest = hashlib.sha1(shot.tobytes()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                screens.append(shot)
            if len(screens) >= limit:
                return screens
    return screens


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("images", nargs="*", type=Path, help="screenshots (default: virtual phone screens)")
    parser.add_argument("--screens", type=int, default=30, help="virtual screens to use (default 30)")
    parser.add_argument("--repeat", type=int, default=1, help="passes over the screens (default 1)")
    parser.add_argument("--ocr", default="rapidocr", choices=["rapidocr", "paddleocr"])
    parser.add_argument("--icons", default="contour", choices=["contour", "groundingdino", "none"])
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)

    if args.images:
        screens = [Image.open(path).convert("RGB") for path in args.images]
    else:
        screens = virtual_screens(args.screens)
    perceptor = Perceptor.from_settings(PerceptionSettings(ocr=args.ocr, icons=args.icons))
    perceptor.perceive(screens[0])  # load the models once, outside the measurement

    stages: dict[str, list[float]] = {}
    wall: list[float] = []
    for _ in range(args.repeat):
        for screen in screens:
            started = time.perf_counter()
            result = perceptor.perceive(screen)
            wall.append(time.perf_counter() - started)
            for stage, seconds in result.timings.items():
                stages.setdefault(stage, []).append(seconds)
    report: dict[str, Any] = {
        "screens": len(screens),
        "runs": len(wall),
        "size": list(screens[0].size),
        "backends": {"ocr": args.ocr, "icons": args.icons, "captions": "none"},
        "median_s": {stage: round(statistics.median(values), 3) for stage, values in stages.items()},
        "p90_total_s": round(sorted(wall)[int(0.9 * (len(wall) - 1))], 3),
        "target_s": TARGET_S,
    }
    report["meets_target"] = report["median_s"]["total"] <= TARGET_S
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"Perceptor on {report['screens']} screens {report['size'][0]}x{report['size'][1]}, "
            f"{len(wall)} runs"
        )
        for stage, value in report["median_s"].items():
            print(f"  median {stage:<8} {value * 1000:7.0f} ms")
        print(f"  p90 total      {report['p90_total_s'] * 1000:7.0f} ms")
        verdict = "meets" if report["meets_target"] else "misses"
        print(f"  {verdict} the target of {TARGET_S * 1000:.0f} ms median total")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
