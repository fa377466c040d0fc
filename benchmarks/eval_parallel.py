"""Wall time and model requests in flight of ``mae eval`` with 1, 2, 4, 8 workers (and through Ray).

The model is the fake model server on 127.0.0.1 playing each virtual task's reference actions
(``mae.testing.reference_agent``), answering every request after a fixed latency (a hosted GPT-4o call
takes about 3.5 s). Perception reads the virtual phone's own elements (``TruthPerceptor``), so the figures
measure the scheduling, the loop, the phones and the model waits, not OCR. The server counts the
requests in flight itself.

A run at 3.5 s per call is long (25 tasks x 3 repeats take hours serially), so ``--latency`` can be
smaller: the script then extrapolates. A worker waits on its calls one after another, so the wall time
at latency T is the measured one plus (T - L) x the calls of the busiest worker (its share of the model
waits). Check the estimate by running one small configuration at both latencies (last example): on a
2-core machine, 8 tasks on 8 workers took 490 s at 3.5 s/call against 473 s estimated.

    python benchmarks/eval_parallel.py                                   # 25 hard tasks x 3, 3.5 s
    python benchmarks/eval_parallel.py --latency 0.25 --target 3.5 --workers 1,2,4,8 --ray 2
    python benchmarks/eval_parallel.py --tasks 8 --repeat 1 --workers 8 --latency 3.5   # vs --latency 0.05
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_common import machine

from mae.config import Settings
from mae.device.virtual import VirtualPhone
from mae.eval.records import read_results
from mae.eval.runner import EvalOptions, EvalRunner, write_options
from mae.eval.tasks import EvalTask, virtual_tasks
from mae.eval.workers import ParallelEvalRunner, RequestGate
from mae.run.runtime import Runtime, build_runtime
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest
from mae.testing.reference_agent import ReferenceAgent
from mae.testing.truth_perceptor import TruthPerceptor


class SlowModel:
    """The reference agent behind a fixed latency; counts the requests in flight at the server."""

    def __init__(self, latency_s: float) -> None:
        self.agent = ReferenceAgent()
        self.latency_s = latency_s
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.calls = 0

    def __call__(self, request: RecordedRequest) -> FakeReply | str | None:
        with self._lock:
            self.in_flight += 1
            self.calls += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.latency_s)
            return self.agent(request)
        finally:
            with self._lock:
                self.in_flight -= 1

    def reset(self) -> None:
        self.max_in_flight = self.calls = 0


def settings_for(server: FakeModelServer, folder: Path, max_steps: int) -> Settings:
    return Settings.model_validate(
        {
            "backbone": "custom",
            "base_url": server.base_url,
            "model": "fake-vlm",
            "device": "virtual",
            "log_dir": folder / "runs",
            "loop": {"max_steps": max_steps},
        }
    )


def runtime_for(settings: Settings) -> Runtime:
    phone = VirtualPhone()
    return build_runtime(settings, device=phone, perceptor=TruthPerceptor(phone))


def measure(
    workers: int,
    tasks: list[EvalTask],
    options: EvalOptions,
    server: FakeModelServer,
    model: SlowModel,
    ray_actors: int = 0,
) -> dict[str, Any]:
    """One eval into a fresh folder; wall time, calls, requests in flight and the busiest worker's calls."""
    model.reset()
    folder = Path(tempfile.mkdtemp(prefix="mae-bench-eval-"))
    write_options(folder, options)
    settings = settings_for(server, folder, options.max_steps)
    started = time.monotonic()
    if ray_actors:
        from mae.eval.ray_pool import RayEvalRunner

        ray_runner = RayEvalRunner(
            folder, options, tasks, settings, actors=ray_actors, perceptor_factory=TruthPerceptor.for_device
        )
        ray_runner.run()
        busiest = max(ray_runner.calls_per_actor, default=0)
    else:
        runtimes = [runtime_for(settings) for _ in range(workers)]
        if workers == 1:
            EvalRunner(folder, options, tasks, runtimes[0]).run()
        else:
            ParallelEvalRunner(folder, options, tasks, runtimes, gate=RequestGate(workers)).run()
        busiest = max(len(r.client.records) for r in runtimes)
    wall = time.monotonic() - started
    records = read_results(folder)
    return {
        "workers": ray_actors or workers,
        "ray": bool(ray_actors),
        "task_runs": len(records),
        "finished": sum(r.finished for r in records),
        "wall_s": round(wall, 1),
        "calls": model.calls,
        "max_in_flight": model.max_in_flight,
        "busiest_worker_calls": busiest,
        "folder": str(folder),
    }


def extrapolate(row: dict[str, Any], latency: float, target: float) -> float:
    """Wall seconds at ``target`` s per call from a run at ``latency`` (see the module docstring)."""
    return row["wall_s"] + (target - latency) * row["busiest_worker_calls"]


def _hms(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=25, help="first N tasks of the hard suite (default 25)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per task (default 3)")
    parser.add_argument("--latency", type=float, default=3.5, help="seconds per model call (default 3.5)")
    parser.add_argument("--target", type=float, default=3.5, help="latency to extrapolate to (default 3.5)")
    parser.add_argument("--workers", default="1,2,4,8", help="worker counts to measure (default 1,2,4,8)")
    parser.add_argument("--ray", type=int, default=0, metavar="ACTORS", help="also run through Ray")
    parser.add_argument("--max-steps", type=int, default=40)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    if not 0 <= args.latency <= 10 or args.tasks < 1 or args.repeat < 1:
        parser.error("use a latency between 0 and 10 s, and at least one task and one repeat")
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    if any(not 1 <= n <= 16 for n in counts):
        parser.error("worker counts go from 1 to 16")
    tasks = virtual_tasks("hard")[: args.tasks]
    options = EvalOptions(
        suite="virtual:hard",
        tasks=",".join(t.task_id for t in tasks),
        repeat=args.repeat,
        backbone="custom:fake-vlm",
        max_steps=args.max_steps,
    )
    print(json.dumps({"machine": machine()}))
    print(
        f"{len(tasks)} tasks x {args.repeat} repeats, {args.latency} s per call, extrapolated to "
        f"{args.target} s per call",
        flush=True,
    )
    model = SlowModel(args.latency)
    rows = []
    with FakeModelServer(responder=model) as server:
        for count in counts:
            rows.append(measure(count, tasks, options, server, model))
            _print(rows[-1], args)
        if args.ray:
            from mae.eval.ray_pool import connect_ray

            connection = connect_ray(num_cpus=2)
            try:
                rows.append(measure(args.ray, tasks, options, server, model, ray_actors=args.ray))
                _print(rows[-1], args)
            finally:
                connection.close()
    for row in rows:
        row["extrapolated_wall_s"] = round(extrapolate(row, args.latency, args.target), 1)
    if args.json:
        print(json.dumps(rows, indent=2))
    print(json.dumps({"machine_at_end": machine()["load_average"]}))


def _print(row: dict[str, Any], args: argparse.Namespace) -> None:
    at_target = extrapolate(row, args.latency, args.target)
    label = f"ray x{row['workers']}" if row["ray"] else f"{row['workers']} worker(s)"
    print(
        f"{label:>13}: {row['task_runs']} runs ({row['finished']} finished) in {row['wall_s']:.1f} s, "
        f"{row['calls']} calls, at most {row['max_in_flight']} in flight, busiest worker "
        f"{row['busiest_worker_calls']} calls -> {_hms(at_target)} at {args.target} s/call",
        flush=True,
    )


if __name__ == "__main__":
    main()
