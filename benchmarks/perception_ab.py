"""Two checkouts' Perceptors side by side: cold time per screen, interleaved screen by screen.

A machine shared with others can run the same code 20 % slower from one minute to the next, so two
figures taken one after the other do not show what a change gave. This runs the Perceptor of each
checkout in its own process (the default settings, nothing cached, contour icons, no captions), on the
same screens (the virtual suite's, rendered once by this checkout), and alternates which goes first on
each screen, so both meet the same load.

    git worktree add ../before HEAD~3
    python benchmarks/perception_ab.py ../before .             # before, after
    python benchmarks/perception_ab.py ../before . --screens 60 --repeat 2 --json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import load_average, machine, machine_line, spread, spread_text


def worker(checkout: Path, shots: Path) -> None:
    """Load ``checkout``'s Perceptor, answer ``ready``, then time one cold ``perceive`` per screen
    index read from stdin (a JSON ``[wall, cpu]`` line each)."""
    sys.path.insert(0, str(checkout.resolve()))
    from PIL import Image

    import mae
    from mae.perception import Perceptor
    from mae.perception.icons import make_icon_detector
    from mae.perception.ocr import RapidOcrBackend

    if not Path(mae.__file__).resolve().is_relative_to(checkout.resolve()):
        raise SystemExit(f"mae was imported from {mae.__file__}, not from {checkout}")
    perceptor = Perceptor(RapidOcrBackend(rec_cache=0), make_icon_detector("contour"))
    screens = [Image.open(path).convert("RGB") for path in sorted(shots.glob("*.png"))]
    perceptor.perceive(screens[0])  # models loaded and warmed up
    print("ready", flush=True)
    for line in sys.stdin:
        screen = screens[int(line)]
        wall, cpu = time.perf_counter(), time.process_time()
        perceptor.perceive(screen)
        print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]), flush=True)


class Side:
    """One checkout's worker process."""

    def __init__(self, checkout: Path, shots: Path) -> None:
        self.checkout = checkout.resolve()
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(self.checkout), "--shots", str(shots)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=self.checkout,
        )
        self.wall: list[float] = []
        self.cpu: list[float] = []
        if self._read() != "ready":
            raise SystemExit(f"the Perceptor of {checkout} did not start (see the error above)")

    def _read(self) -> str:
        stdout: IO[str] | None = self.process.stdout
        return stdout.readline().strip() if stdout else ""

    def perceive(self, index: int) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(f"{index}\n")
        stdin.flush()
        wall, cpu = json.loads(self._read())
        self.wall.append(wall)
        self.cpu.append(cpu)

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def compare(before: Path, after: Path, screens: int, repeat: int) -> dict[str, Any]:
    from perception import virtual_screens

    info = machine()
    with tempfile.TemporaryDirectory() as folder:
        shots = Path(folder)
        rendered = virtual_screens(screens)
        for index, (image, _, _) in enumerate(rendered):
            image.save(shots / f"{index:04d}.png")
        sides = [Side(before, shots), Side(after, shots)]
        try:
            turn = 0
            for _ in range(repeat):
                for index in range(len(rendered)):
                    for side in sides if turn % 2 == 0 else sides[::-1]:
                        side.perceive(index)
                    turn += 1
        finally:
            for side in sides:
                side.close()
    report: dict[str, Any] = {"machine": info, "load_after": load_average(), "screens": len(rendered)}
    for name, side in zip(("before", "after"), sides, strict=True):
        report[name] = {"checkout": str(side.checkout), "wall": spread(side.wall), "cpu": spread(side.cpu)}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", nargs="?", type=Path, help="checkout measured first in the report")
    parser.add_argument("after", nargs="?", type=Path, default=Path("."), help="default: this one")
    parser.add_argument("--screens", type=int, default=60, help="virtual screens (default 60)")
    parser.add_argument("--repeat", type=int, default=1, help="passes over the screens (default 1)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--shots", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.shots)
        return
    if args.before is None:
        parser.error("name the checkout to compare with, e.g. ../before (git worktree add ../before HEAD~1)")
    for checkout in (args.before, args.after):
        if not (checkout / "mae" / "perception").is_dir():
            parser.error(f"{checkout} is not a mae checkout (no mae/perception folder)")
    report = compare(args.before, args.after, max(1, args.screens), max(1, args.repeat))
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(machine_line(report["machine"], report["load_after"]))
    print(f"Perceptor, cold, {report['screens']} virtual screens 1080x2340, interleaved")
    for name in ("before", "after"):
        side = report[name]
        print(f"  {name:6s} {side['checkout']}")
        print(f"    wall {spread_text(side['wall'])}")
        print(f"    CPU  {spread_text(side['cpu'])}")
    ratio = report["after"]["wall"]["median"] / report["before"]["wall"]["median"]
    print(f"  after / before, wall median: {ratio:.2f}")


if __name__ == "__main__":
    main()
