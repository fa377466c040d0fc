"""Benchmark reading the accessibility tree over ADB: ``AdbDevice.ui_tree()`` against the fake adb
server of ``tests/device`` (real socket protocol, real parsing), per dump and per step.

The phone-side cost of ``uiautomator dump`` (0.5-2 s on real phones) is not simulated; this measures
what mae adds on the host (transfer, XML parsing, node building) and the fusion with vision. In a run
the dump is read on the Perceptor's second thread while OCR runs, so it only lengthens a step when it
takes longer than OCR.

    python benchmarks/a11y_dump.py
    python benchmarks/a11y_dump.py --json --repeat 50
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "device"))

from fake_adb_server import FakeAdb, start  # noqa: E402
from test_adb_a11y import huge_dump  # noqa: E402

from mae.device import adb_exec  # noqa: E402
from mae.device.adb import AdbDevice  # noqa: E402
from mae.perception import Element  # noqa: E402
from mae.perception.fusion import fuse  # noqa: E402
from mae.perception.tidy import tidy  # noqa: E402

FIXTURE = ROOT / "tests" / "device" / "fixtures" / "uiautomator_dump_maps_a14.txt"


def median_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    fake = FakeAdb()
    server, port = start(fake)
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(port)
    os.environ["MAE_ADB_AUTOSTART"] = "0"
    adb_exec._devices.clear()
    screens = {"maps screen": FIXTURE.read_text(), "long list (2,000 rows)": huge_dump(2000)}
    report: dict[str, dict[str, float]] = {}
    try:
        device = AdbDevice("FAKE123")
        for name, dump in screens.items():
            fake.exec["uiautomator dump /dev/tty"] = dump.encode()
            dumps, fusions = [], []
            for _ in range(args.repeat):
                started = time.perf_counter()
                tree = device.ui_tree()
                dumps.append(time.perf_counter() - started)
                seen = [Element(kind="icon", box=n.bounds) for n in tree.nodes[:40] if n.area < 40000]
                started = time.perf_counter()
                tidy(fuse(seen, tree), 2400, keyboard_active=False, has_tree=True)
                fusions.append(time.perf_counter() - started)
            report[name] = {
                "bytes": len(dump),
                "nodes": len(tree.nodes),
                "dump_ms": median_ms(dumps),
                "fuse_tidy_ms": median_ms(fusions),
            }
    finally:
        server.shutdown()
        server.server_close()
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"ui_tree() over the fake adb server, median of {args.repeat} ({os.cpu_count()} CPUs)")
    for name, row in report.items():
        print(
            f"  {name:<24} {row['bytes'] / 1024:7.1f} KiB {row['nodes']:5.0f} nodes: dump+parse "
            f"{row['dump_ms']:7.2f} ms, fuse+tidy {row['fuse_tidy_ms']:6.2f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
