"""Full CLI runs against a misbehaving local model server: exit code, message and wall time per fault.

    python benchmarks/provider_faults.py            # every fault, a table on stdout
    python benchmarks/provider_faults.py --json     # the same as JSON

Each fault runs ``python -m mae run`` on the virtual phone with ``--timeout 2 --max-retries 1`` and
``MAE_MAX_RETRY_WAIT=2`` against ``mae.testing.fake_model_server`` answering every request the faulty
way. Reported: the exit code, the run's last message line, the wall time, whether ``summary.json`` was
written, and whether the long-term memory folder is byte-for-byte unchanged (for faults that end the
run) or updated (for the good run with malformed token counts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing mae

from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest  # noqa: E402

GOOD_USAGE_BODY = (
    '{{"id": "x", "object": "chat.completion", "created": 0, "model": "m", '
    '"choices": [{{"index": 0, "message": {{"role": "assistant", "content": {text}}}, '
    '"finish_reason": "stop"}}], '
    '"usage": {{"prompt_tokens": "lots", "completion_tokens": null}}}}'
)
MANAGER_DONE = "### Thought ###\nNothing to do.\n### Plan ###\n1. Nothing\n### Current Subgoal ###\nFinished"
TIPS = "### Updated Tips ###\n1. Use Open_App to open apps.\n2. Close pop-ups with Back.\n"
SHORTCUTS = "### New Shortcuts ###\n[]\n"


def _completion(kind: str) -> Callable[[RecordedRequest], FakeReply]:
    def respond(request: RecordedRequest) -> FakeReply:
        if kind == "trickle":
            return FakeReply(text=MANAGER_DONE, trickle_s=0.05)
        if kind.startswith("retry-after-"):
            value = {"retry-after-negative": "-5", "retry-after-nan": "nan", "retry-after-huge": "1e9"}[kind]
            return FakeReply(
                status=503, body='{"error": {"message": "busy"}}', headers={"retry-after": value}
            )
        if kind == "null-choice":
            return FakeReply(
                body='{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [null]}'
            )
        if kind == "no-message":
            return FakeReply(
                body='{"id": "x", "object": "chat.completion", "created": 0, "model": "m", '
                '"choices": [{"index": 0, "finish_reason": "stop"}]}'
            )
        if kind == "model-404":
            return FakeReply(status=404, body='{"error": {"message": "The model `fake` does not exist."}}')
        if kind == "auth-401":
            return FakeReply(status=401, body='{"error": {"message": "invalid api key"}}')
        if kind == "bad-usage":
            text = {"manager": MANAGER_DONE}.get(request.role or "", "")
            if request.role == "experience":
                text = TIPS if "Updated Tips" in request.text else SHORTCUTS
            return FakeReply(body=GOOD_USAGE_BODY.format(text=json.dumps(text)))
        raise ValueError(kind)

    return respond


FAULTS = [
    "trickle",
    "retry-after-negative",
    "retry-after-nan",
    "retry-after-huge",
    "null-choice",
    "no-message",
    "auth-401",
    "model-404",
    "connection-refused",
    "bad-usage",
]


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_fault(kind: str, scratch: Path, quiet: bool = True) -> dict[str, object]:
    memory = scratch / kind / "memory"
    logs = scratch / kind / "runs"
    memory.mkdir(parents=True)
    server = FakeModelServer(responder=_completion(kind) if kind != "connection-refused" else None)
    base_url = server.base_url if kind != "connection-refused" else f"http://127.0.0.1:{_closed_port()}/v1"
    env = {**os.environ, "MAE_MAX_RETRY_WAIT": "2", "PYTHONPATH": str(ROOT)}
    env.pop("MAE_PROFILE", None)
    command = [
        sys.executable, "-m", "mae", "run", "Open the Notes app", "--device", "virtual",
        "--backbone", "custom", "--base-url", base_url, "--model", "fake", "--timeout", "2",
        "--max-retries", "1", "--memory-dir", str(memory), "--log-dir", str(logs),
        *(["--quiet"] if quiet else []),
    ]  # fmt: skip
    with server if kind != "connection-refused" else _Nothing():
        # the memory folder is created on first use: one no-op listing makes the "before" state
        subprocess.run([sys.executable, "-m", "mae", "memory", "show", "--memory-dir", str(memory)],
                       env=env, capture_output=True, check=False, cwd=ROOT)  # fmt: skip
        before = _digest(memory)
        started = time.monotonic()
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, check=False, cwd=ROOT, timeout=300
        )
        wall = time.monotonic() - started
        requests = len(server.requests) if kind != "connection-refused" else 0
    output = (done.stdout + done.stderr).strip().splitlines()
    summaries = list(logs.rglob("summary.json"))
    return {
        "fault": kind,
        "exit_code": done.returncode,
        "message": output[-1][:160] if output else "",
        "wall_s": round(wall, 1),
        "summary_json": bool(summaries),
        "memory_unchanged": _digest(memory) == before,
        "requests": requests,
        "traceback": any("Traceback" in line for line in output),
        "skipped_lines": sum("Experience Reflectors skipped" in line for line in output),
    }


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("faults", nargs="*", default=FAULTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [run_fault(kind, Path(tmp)) for kind in args.faults]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(
            f"{row['fault']:22} exit {row['exit_code']:>3}  {row['wall_s']:>5.1f} s  "
            f"summary {'yes' if row['summary_json'] else 'NO '}  "
            f"memory {'unchanged' if row['memory_unchanged'] else 'updated  '}  "
            f"requests {row['requests']:>2}  {'TRACEBACK ' if row['traceback'] else ''}{row['message']}"
        )


if __name__ == "__main__":
    main()
