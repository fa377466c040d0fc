"""Start-up time: ``python -m mae --help``, ``python -m mae config show``, and how soon ``python app.py
--port N`` says that port N is taken, each in fresh interpreters.

Each command runs ``--repeat`` times, interleaved; the script reports the median wall time with its
spread and which heavy packages the command imported (none of openai, gradio, cv2, onnxruntime should
load for these commands; ``--help`` loads none of numpy, PIL, pydantic or mae.config either). Targets, on
a quiet machine: ``--help`` within 0.3 s, the taken port within 2 s.

    python benchmarks/startup.py [--repeat 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import load_average, machine, machine_line, spread, spread_text

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.3
PORT_TARGET_S = 2.0
COMMANDS = {"--help": ["--help"], "config show": ["config", "show"]}
HEAVY = ("openai", "gradio", "cv2", "onnxruntime", "torch", "numpy", "PIL", "pydantic", "mae.config")
PROBE = (
    "import runpy, sys, json, atexit\n"
    "atexit.register(lambda: print(json.dumps([m for m in {heavy!r} if m in sys.modules]),\n"
    "                              file=sys.stderr))\n"
    "sys.argv = ['mae', *{argv!r}]\n"
    "runpy.run_module('mae', run_name='__main__')\n"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="runs per command (default 10)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    info = machine()
    times: dict[str, list[float]] = {name: [] for name in [*COMMANDS, "app.py, port taken"]}
    with socket.socket() as taken:  # a port another server holds
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        for _ in range(args.repeat):
            for name, argv in COMMANDS.items():
                started = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "mae", *argv], cwd=ROOT, capture_output=True, check=False
                )
                times[name].append(time.perf_counter() - started)
            times["app.py, port taken"].append(_taken_port_seconds(port))
    imported: dict[str, Any] = {}
    for name, argv in COMMANDS.items():
        probe = PROBE.format(heavy=HEAVY, argv=argv)
        done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
        lines = done.stderr.strip().splitlines()
        imported[name] = json.loads(lines[-1]) if lines and lines[-1].startswith("[") else "unknown"
    report: dict[str, Any] = {
        "machine": info,
        "seconds": {name: spread(values) for name, values in times.items()},
        "heavy_imports": imported,
        "target_s": TARGET_S,
        "port_target_s": PORT_TARGET_S,
        "load_average_after": load_average(),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(machine_line(info, report["load_average_after"]))
    for name in COMMANDS:
        print(
            f"  python -m mae {name}: {spread_text(report['seconds'][name])}; heavy imports: {imported[name]}"
        )
    print(f"  python app.py --port N (N taken): {spread_text(report['seconds']['app.py, port taken'])}")
    verdict = "meets" if report["seconds"]["--help"]["median"] <= TARGET_S else "misses"
    print(f"  --help {verdict} the target of {TARGET_S} s")
    verdict = "meets" if report["seconds"]["app.py, port taken"]["median"] <= PORT_TARGET_S else "misses"
    print(f"  the taken port {verdict} the target of {PORT_TARGET_S} s")
    return 0


def _taken_port_seconds(port: int) -> float:
    """Seconds until ``python app.py --port PORT`` exits saying the port is in use."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(ROOT / "app.py"), "--port", str(port)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    elapsed = time.perf_counter() - started
    if "already in use" not in done.stderr:
        raise SystemExit(f"app.py did not report the taken port {port}: {done.stderr.strip()[-300:]}")
    return elapsed


if __name__ == "__main__":
    raise SystemExit(main())
