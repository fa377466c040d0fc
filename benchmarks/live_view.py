"""Benchmark the demo's live phone view: what one tick of the 1-per-second refresh costs on the server.

A tick takes a screenshot, fingerprints it and, only when the screen changed, scales it for the
browser. On the virtual phone an unchanged screen is a cached image, so an idle tick is cheap; a
changed screen is repainted. The figures bound the CPU the live view adds per open tab.

    python benchmarks/live_view.py
    python benchmarks/live_view.py --ticks 50 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mae.device.virtual import VirtualPhone
from mae.ui.phone_view import TabState


def time_ticks(ticks: int, change: bool) -> list[float]:
    """Seconds per tick on the virtual phone; with ``change`` the screen changes before every tick."""
    phone = VirtualPhone()
    tab = TabState()
    tab.refresh(phone.screenshot)
    seconds = []
    for index in range(ticks):
        if change:
            (phone.open_app if index % 2 == 0 else lambda _name: phone.home())("Notes")
        started = time.perf_counter()
        if tab.refresh(phone.screenshot):
            tab.shown()
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    rows = {}
    for label, change in (("unchanged screen", False), ("changed screen", True)):
        seconds = time_ticks(args.ticks, change)
        rows[label] = {
            "median_ms": round(1000 * statistics.median(seconds), 1),
            "max_ms": round(1000 * max(seconds), 1),
        }
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"live view tick on the virtual phone ({args.ticks} ticks each)")
    for label, row in rows.items():
        print(f"  {label:17s} median {row['median_ms']:7.1f} ms   max {row['max_ms']:7.1f} ms")


if __name__ == "__main__":
    main()
