"""Benchmark the virtual phone: time to apply one atomic operation and render the new screen.

Replays the reference actions of every task of the virtual task suite, taking a screenshot after each
operation (as the agent loop does), and reports the per-step time. The first pass starts with empty
caches (text rasterisation, static layers); later passes show the steady state.

    python benchmarks/virtual_phone.py            # human-readable summary
    python benchmarks/virtual_phone.py --json     # machine-readable
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mae.actions.reading import parse_action_text
from mae.actions.registry import resolve_call
from mae.device.virtual import VirtualPhone
from mae.eval.virtual_suite import load_task_suite

TARGET_MS = 20.0


def run_pass(width: int, height: int, suite: str = "basic") -> dict[str, list[float]]:
    """One replay of the whole suite; per-step times in milliseconds."""
    times: dict[str, list[float]] = {"step": [], "action": [], "screenshot": []}
    for task in load_task_suite(suite="hard" if suite == "hard" else "basic"):
        phone = VirtualPhone(width=width, height=height)
        task.prepare(phone)
        for text in task.reference_actions:
            steps = resolve_call(parse_action_text(text), {}, phone.screen_size())
            start = time.perf_counter()
            for step in steps:
                step.execute(phone)
            middle = time.perf_counter()
            phone.screenshot()
            end = time.perf_counter()
            times["action"].append((middle - start) * 1000)
            times["screenshot"].append((end - middle) * 1000)
            times["step"].append((end - start) * 1000)
    return times


def summarise(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
        "mean_ms": round(statistics.fmean(ordered), 2),
        "max_ms": round(ordered[-1], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=3, help="replays of the suite (first one is cold)")
    parser.add_argument("--width", type=int, default=1080)
    parser.add_argument("--height", type=int, default=2340)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--suite", choices=["basic", "hard"], default="basic", help="task suite to replay")
    args = parser.parse_args(argv)

    passes = [run_pass(args.width, args.height, args.suite) for _ in range(max(1, args.passes))]
    warm_steps = [t for p in passes[1:] for t in p["step"]] or passes[0]["step"]
    report: dict[str, Any] = {
        "screen": f"{args.width}x{args.height}",
        "steps_per_pass": len(passes[0]["step"]),
        "passes": len(passes),
        "cold": {key: summarise(values) for key, values in passes[0].items()},
        "warm": summarise(warm_steps),
        "target_median_ms": TARGET_MS,
    }
    report["meets_target"] = report["cold"]["step"]["median_ms"] <= TARGET_MS
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    cold = report["cold"]
    print(
        f"virtual phone, {report['screen']}, {report['steps_per_pass']} steps per pass, {len(passes)} passes"
    )
    print("one step = apply one atomic operation + screenshot of the new screen")
    for label, stats in (
        ("cold step", cold["step"]),
        ("  action + layout", cold["action"]),
        ("  paint + copy", cold["screenshot"]),
        ("warm step", report["warm"]),
    ):
        print(
            f"  {label:<18} median {stats['median_ms']:6.2f} ms   p90 {stats['p90_ms']:6.2f} ms   "
            f"mean {stats['mean_ms']:6.2f} ms   max {stats['max_ms']:6.2f} ms"
        )
    verdict = "meets" if report["meets_target"] else "MISSES"
    print(f"median cold step {cold['step']['median_ms']:.2f} ms {verdict} the {TARGET_MS:.0f} ms target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
