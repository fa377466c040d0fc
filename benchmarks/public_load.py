"""Load a public demo with many visitors at once: page loads and runs, queue positions shown, memory after.

Starts the demo in this process in public mode (``MAE_PUBLIC=1``) on 127.0.0.1 with the fake model
server (also on 127.0.0.1, opened with ``MAE_ALLOWED_BASE_URLS``) and the real Perceptor, runs one
warm-up task (models load), then has ``--sessions`` visitors (each its own ``gradio_client`` session)
press Run at the same moment. Reports the most runs seen at once (sampled every 0.1 s and counted by
the admission line), the queue positions each visitor was shown, how each run ended, and the server's
resident memory (the server runs in a child process, measured alone) before, at the peak and after
the runs ended; ``--bursts 2`` repeats the load to show whether what stays grows. Before the runs,
``--page-loads`` anonymous sessions open the page the way a script would, with Gradio's raw queue
protocol (``POST /gradio_api/queue/join`` of the page's load event, then its event stream), 16 at a
time; the figures say the resident memory after them. Bounded: at most 500 page loads, 50 sessions
and 3 bursts, loopback only, a deadline of ``--timeout`` seconds per visitor.

    python benchmarks/public_load.py                       # 20 sessions, MAE_MAX_RUNS=2
    python benchmarks/public_load.py --page-loads 300 --sessions 10 --json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_common import machine

MAX_SESSIONS = 50
MAX_PAGE_LOADS = 500
PAGE_LOAD_THREADS = 16
POSITION = re.compile(r"Waiting in line: position (\d+)")


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of process ``pid`` in MB (Linux ``/proc``)."""
    with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def reply(request: Any) -> Any:
    """A two-step run (open Notes, then finished), each answer after a short delay like a real model."""
    from mae.testing.fake_model_server import FakeReply

    role = request.role
    if role == "manager":
        subgoal = "Finished" if "Notes is open" in request.text else "Open Notes"
        text = f"### Thought ###\nPlan.\n### Plan ###\n1. Open Notes\n### Current Subgoal ###\n{subgoal}\n"
    elif role == "operator":
        action = json.dumps({"name": "Open_App", "arguments": {"app_name": "Notes"}})
        text = f"### Thought ###\nOpen it.\n### Action ###\n{action}\n### Description ###\nOpen Notes.\n"
    elif role == "reflector":
        text = "### Outcome ###\nA\n### Error Description ###\nNone\n"
        text += "### Progress Status ###\nNotes is open.\n"
    else:
        text = "### Important Notes ###\nNone\n"
    return FakeReply(text=text, delay_s=0.3)


def run_arguments(parameters: list[dict[str, Any]], base_url: str) -> list[Any]:
    """The Run endpoint's inputs: a short task on the fake model, no keys, no self-evolution."""
    values: list[Any] = []
    for parameter in parameters:
        kind = str(parameter["python_type"]["type"])
        if kind.startswith("Literal["):
            values.append(kind[len("Literal[") :].split(",")[0].strip(" ']"))
        elif kind == "str":
            values.append("")
        elif kind == "bool":
            values.append(False)
        elif kind in ("float", "int"):
            values.append(None)
        else:
            values.append([])
    names = [p["parameter_name"] for p in parameters]
    values[names.index("param_2")] = "Open the Notes app"
    values[names.index("param_4")] = "custom"
    values[names.index("param_5")] = base_url
    values[names.index("param_6")] = "fake-vlm"
    values[names.index("param_7")] = 5
    values[names.index("param_11")] = "e"
    values[names.index("param_31")] = 60
    values[names.index("param_32")] = 0
    return values


def visit(url: str, base_url: str, start: threading.Event, out: dict[str, Any], timeout_s: float) -> None:
    """One visitor: open the page's API (its own session), wait for the start signal, press Run."""
    try:
        visit_once(url, base_url, start, out, timeout_s)
    except Exception as exc:  # a visitor the server could not serve: counted, with its reason
        out.update(positions=out.get("positions", []), final=f"client error: {exc}"[:200], done=False)


def visit_once(
    url: str, base_url: str, start: threading.Event, out: dict[str, Any], timeout_s: float
) -> None:
    from gradio_client import Client

    client = Client(url, verbose=False, download_files=False)
    parameters = client.view_api(return_format="dict", print_info=False)["named_endpoints"]["/on_run"]
    arguments = run_arguments(parameters["parameters"], base_url)
    start.wait()
    job = client.submit(*arguments, api_name="/on_run")
    deadline = time.monotonic() + timeout_s
    while not job.done() and time.monotonic() < deadline:
        time.sleep(0.2)
    statuses = [str(o[0]) for o in job.outputs() if o]
    if job.done() and not statuses:
        try:
            job.result()
        except Exception as exc:
            statuses = [f"server error: {exc}"]
    positions = [int(m.group(1)) for s in statuses if (m := POSITION.search(s))]
    out.update(positions=positions, final=statuses[-1] if statuses else "", done=job.done())
    client.close()


def load_event(url: str) -> int:
    """The id (``fn_index``) of the page's load event, from the page's config."""
    import urllib.request

    with urllib.request.urlopen(url + "config", timeout=30) as response:
        config = json.loads(response.read())
    for dependency in config["dependencies"]:
        if dependency.get("api_name") == "on_load":
            return int(dependency["id"])
    raise SystemExit("error: the demo's page has no load event named on_load")


def open_page(url: str, fn_index: int, number: int, timeout_s: float) -> str:
    """One anonymous page load with the raw queue protocol: join the queue with the load event, read
    the session's event stream to its end; the last message's kind ("process_completed" when served)."""
    import urllib.request

    session = f"load{number:04d}{os.getpid()}"
    body: dict[str, Any] = {
        "data": [{}],
        "event_data": None,
        "fn_index": fn_index,
        "trigger_id": None,
        "session_hash": session,
    }
    join = urllib.request.Request(
        url + "gradio_api/queue/join",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(join, timeout=timeout_s) as response:
        response.read()
    last = "no message"
    stream = f"{url}gradio_api/queue/data?session_hash={session}"
    with urllib.request.urlopen(stream, timeout=timeout_s) as response:
        for raw in response:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            last = str(message.get("msg", ""))
            if last in ("process_completed", "close_stream", "unexpected_error"):
                break
    return last


def page_loads(url: str, count: int, timeout_s: float) -> dict[str, int]:
    """``count`` page loads, ``PAGE_LOAD_THREADS`` at a time; how many ended with each last message."""
    from concurrent.futures import ThreadPoolExecutor

    fn_index = load_event(url)

    def one(number: int) -> str:
        try:
            return open_page(url, fn_index, number, timeout_s)
        except Exception as exc:  # counted with its kind, like a visitor the server could not serve
            return f"client error: {type(exc).__name__}"

    with ThreadPoolExecutor(PAGE_LOAD_THREADS) as pool:
        endings = list(pool.map(one, range(count)))
    return {ending: endings.count(ending) for ending in sorted(set(endings))}


def serve(port: int, model_url: str, work: str, max_runs: int, runs_now: Any, stop: Any) -> None:
    """The demo server (a child process, so its memory is measured alone): public mode, the real
    Perceptor, the fake model opened by allowlist; ``runs_now`` follows the runs in its registry."""
    os.environ.update(
        MAE_PUBLIC="1",
        MAE_MAX_RUNS=str(max_runs),
        MAE_ALLOWED_BASE_URLS=model_url,
        GRADIO_ANALYTICS_ENABLED="False",
        GRADIO_TEMP_DIR=str(Path(work) / "gradio"),
        TMPDIR=work,  # the private root of the visitors' folders goes here too
    )
    import app
    from mae.config import load_settings
    from mae.ui import space
    from mae.ui.runner import Backend

    overrides = {
        "log_dir": str(Path(work) / "runs"),
        "memory_dir": str(Path(work) / "memory"),
        "device": "virtual",
    }
    settings = space.apply_defaults(load_settings(overrides=overrides))
    backend = Backend(settings)
    demo = app.build_demo(backend, lister=lambda: [])
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        while not stop.is_set():
            runs_now.value = len(backend.runs)
            time.sleep(0.05)
    finally:
        demo.close()


def wait_for(url: str, process: Any, timeout_s: float) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while True:
        if not process.is_alive():
            raise SystemExit("error: the demo server stopped while starting")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit("error: the demo server did not answer in time") from None
            time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help=f"visitors at once (at most {MAX_SESSIONS})")
    parser.add_argument("--max-runs", type=int, default=2, help="MAE_MAX_RUNS for the demo")
    parser.add_argument("--bursts", type=int, default=1, help="rounds of --sessions visitors (at most 3)")
    parser.add_argument(
        "--page-loads",
        type=int,
        default=0,
        help=f"raw-protocol page loads before the runs (at most {MAX_PAGE_LOADS})",
    )
    parser.add_argument("--timeout", type=float, default=540.0, help="seconds before giving up")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    sessions = max(1, min(args.sessions, MAX_SESSIONS))
    args.bursts = max(1, min(args.bursts, 3))
    loads = max(0, min(args.page_loads, MAX_PAGE_LOADS))

    import multiprocessing

    from mae.testing.fake_model_server import FakeModelServer

    context = multiprocessing.get_context("spawn")
    work = tempfile.mkdtemp(prefix="mae-public-load-")
    runs_now, stop = context.Value("i", 0), context.Event()
    with FakeModelServer(responder=reply) as model:
        port = free_port()
        server = context.Process(
            target=serve, args=(port, model.base_url, work, args.max_runs, runs_now, stop), daemon=True
        )
        server.start()
        pid = server.pid or "self"
        url = f"http://127.0.0.1:{port}/"
        try:
            wait_for(url, server, args.timeout)
            rss_start = rss_mb(pid)
            warm: dict[str, Any] = {}
            ready = threading.Event()
            ready.set()
            visit(url, model.base_url, ready, warm, args.timeout)  # the Perceptor's models load here
            time.sleep(2.0)
            rss_before = rss_mb(pid)
            peak_seen, peak_rss, stop_sampling = 0, rss_before, threading.Event()

            def sample() -> None:
                nonlocal peak_seen, peak_rss
                while not stop_sampling.is_set():
                    peak_seen = max(peak_seen, runs_now.value)
                    peak_rss = max(peak_rss, rss_mb(pid))
                    time.sleep(0.1)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            loads_started = time.monotonic()
            load_endings = page_loads(url, loads, args.timeout) if loads else {}
            load_seconds = time.monotonic() - loads_started
            time.sleep(3.0)
            rss_after_loads = rss_mb(pid)
            rss_after_bursts, results, seconds = [], [], 0.0
            for _ in range(max(1, args.bursts)):
                start = threading.Event()
                burst: list[dict[str, Any]] = [{} for _ in range(sessions)]
                threads = [
                    threading.Thread(target=visit, args=(url, model.base_url, start, burst[i], args.timeout))
                    for i in range(sessions)
                ]
                for thread in threads:
                    thread.start()
                time.sleep(3.0)  # every visitor has its page's API open
                started = time.monotonic()
                start.set()
                for thread in threads:
                    thread.join(args.timeout)
                seconds += time.monotonic() - started
                time.sleep(3.0)  # the last runs' pump threads end and hand memory back
                rss_after_bursts.append(round(rss_mb(pid), 1))
                results += burst
            stop_sampling.set()
            sampler.join()
            rss_after = rss_mb(pid)
            runs_left = runs_now.value
        finally:
            stop.set()
            server.join(30)
            if server.is_alive():
                server.terminate()
    endings = [str(r.get("final", "no answer before the deadline")) for r in results]
    finished = sum("Finished" in end for end in endings)
    positions = sorted({p for r in results for p in r.get("positions", [])})
    figures = {
        "machine": machine(),
        "sessions": sessions,
        "bursts": args.bursts,
        "max_runs": args.max_runs,
        "warm_up": warm.get("final", "")[:80],
        "max_concurrent_runs_sampled": peak_seen,
        "finished": finished,
        "other_endings": sorted({end[:100] for end in endings if "Finished" not in end}),
        "visitors_queued": sum(bool(r.get("positions")) for r in results),
        "queue_positions_shown": positions,
        "runs_left_in_registry": runs_left,
        "session_folders": len(list(Path(work).glob("mae-space-*/sessions/*"))),
        "page_loads": loads,
        "page_load_endings": load_endings,
        "page_load_seconds": round(load_seconds, 1),
        "seconds": round(seconds, 1),
        "server_rss_mb": {
            "started": round(rss_start, 1),
            "before_load_after_warm_up": round(rss_before, 1),
            "after_page_loads": round(rss_after_loads, 1),
            "peak": round(peak_rss, 1),
            "after": round(rss_after, 1),
            "after_each_burst": rss_after_bursts,
            "after_vs_before_percent": round(100 * (rss_after - rss_before) / rss_before, 1),
        },
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for key, value in figures.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
