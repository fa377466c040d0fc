"""How reliably the coordinate doctor names a served model's convention, within its 20-request budget.

For each fake convention (``mae.testing.grounding_fake``: screen pixels, Qwen2.5-VL resized pixels,
UI-TARS-1.5 resize, Qwen3-VL 0-1000, 0-1 fractions, a server with an unexpected pixel budget, random
answers) and each of ``--seeds`` seeds (different noise and misses), one doctor run against a local
fake server on 127.0.0.1, mae configured for screen pixels. Reports how often the expected verdict
came out, the configured and detected hit rates, and the seconds per run.

    python benchmarks/coordinate_doctor.py                      # 10 seeds, +-15 px, 10 % misses
    python benchmarks/coordinate_doctor.py --noise 30 --miss-rate 0.2 --trials 10
    python benchmarks/coordinate_doctor.py --json
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import load_average, machine, machine_line

EXPECTED: dict[str, tuple[str, str | None]] = {
    "screen": ("ok", "screen"),
    "qwen2.5-vl": ("switch", "qwen2.5-vl"),
    "ui-tars-1.5": ("switch", "ui-tars-1.5"),
    "qwen3-vl": ("switch", "qwen3-vl"),
    "fractions": ("unsupported", "fractions"),
    "resized": ("unexplained", None),
    "random": ("unexplained", None),
}
"""Fake convention -> (verdict, detected reading) the doctor should give with mae set for screen pixels."""


def run(conventions: list[str], seeds: int, trials: int, noise: float, miss_rate: float) -> dict[str, Any]:
    from mae.llm.client import ChatClient
    from mae.llm.providers import ModelProfile
    from mae.serving.doctor import run_doctor
    from mae.testing.fake_model_server import FakeModelServer
    from mae.testing.grounding_fake import GroundingFake

    results: dict[str, Any] = {}
    for convention in conventions:
        right, seconds, configured, detected_rates = 0, [], [], []
        outcomes: dict[str, int] = {}
        for seed in range(seeds):
            fake = GroundingFake(convention, noise_px=noise, miss_rate=miss_rate, seed=seed)
            with FakeModelServer(responder=fake) as server:
                client = ChatClient(ModelProfile(base_url=server.base_url, model="served-vlm", max_retries=0))
                started = time.perf_counter()
                report = run_doctor(client, trials=trials)
                seconds.append(time.perf_counter() - started)
            outcome = f"{report.verdict}:{report.detected}"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            right += (report.verdict, report.detected) == EXPECTED[convention]
            configured.append(report.configured_fit.hit_rate)
            if report.detected:
                detected_rates.append(report.fit(report.detected).hit_rate)
        results[convention] = {
            "expected": ":".join(str(x) for x in EXPECTED[convention]),
            "right": right,
            "runs": seeds,
            "outcomes": outcomes,
            "configured_hit_rate": round(statistics.median(configured), 2),
            "detected_hit_rate": round(statistics.median(detected_rates), 2) if detected_rates else None,
            "seconds_per_run": round(statistics.median(seconds), 2),
        }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="runs per convention (default 10)")
    parser.add_argument("--trials", type=int, default=20, help="requests per run (default 20)")
    parser.add_argument("--noise", type=float, default=15.0, help="noise in screen pixels (default 15)")
    parser.add_argument("--miss-rate", type=float, default=0.1, help="share of wild replies (default 0.1)")
    parser.add_argument("--conventions", nargs="*", default=list(EXPECTED), choices=list(EXPECTED))
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    info = machine()
    results = run(args.conventions, args.seeds, args.trials, args.noise, args.miss_rate)
    if args.json:
        print(json.dumps({"machine": info, "results": results}, indent=2))
        return
    print(machine_line(info, load_average()))
    print(f"{args.trials} requests per run, +-{args.noise:g} px noise, {args.miss_rate:.0%} wild replies\n")
    header = ("fake answers like", "expected", "right", "hits (conf/det)", "s/run")
    print(f"{header[0]:18} {header[1]:26} {header[2]:>7} {header[3]:>16} {header[4]:>6}  outcomes")
    for name, row in results.items():
        detected = row["detected_hit_rate"]
        hits = f"{row['configured_hit_rate']:.2f}/{detected if detected is not None else '-'}"
        right = f"{row['right']}/{row['runs']}"
        outcomes = ", ".join(f"{k} x{v}" for k, v in row["outcomes"].items())
        print(f"{name:18} {row['expected']:26} {right:>7} {hits:>16} {row['seconds_per_run']:>6}  {outcomes}")


if __name__ == "__main__":
    main()
