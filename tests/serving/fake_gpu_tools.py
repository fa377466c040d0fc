"""Stand-ins for a GPU workstation's tools: executable ``vllm`` and ``nvidia-smi`` scripts on a PATH.

The fake ``vllm serve`` parses the real command line mae builds, logs a few lines like vLLM does,
then serves ``GET /v1/models`` listing its ``--served-model-name`` on ``--host``/``--port`` (requiring
``Authorization: Bearer $VLLM_API_KEY`` when that is set). ``FAKE_VLLM_MODE=crash`` makes it fail at
start-up; ``FAKE_VLLM_DELAY`` delays readiness.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
from pathlib import Path

FAKE_VLLM = r"""
import argparse, json, os, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

assert sys.argv[1] == "serve", sys.argv
parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("--host", required=True)
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--served-model-name", required=True)
parser.add_argument("--limit-mm-per-prompt", required=True)
parser.add_argument("--mm-processor-kwargs", required=True)
args, _rest = parser.parse_known_args(sys.argv[2:])
json.loads(args.limit_mm_per_prompt)
json.loads(args.mm_processor_kwargs)
print(f"INFO fake vllm {args.model} argv={sys.argv[1:]}", flush=True)
print("INFO key given: " + ("yes" if os.environ.get("VLLM_API_KEY") else "no"), flush=True)
if os.environ.get("FAKE_VLLM_MODE") == "crash":
    print("ERROR torch.OutOfMemoryError: CUDA out of memory (fake)", file=sys.stderr, flush=True)
    sys.exit(3)
time.sleep(float(os.environ.get("FAKE_VLLM_DELAY", "0")))
key = os.environ.get("VLLM_API_KEY")

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        if key and self.headers.get("Authorization") != f"Bearer {key}":
            self.send_response(401); self.send_header("Content-Length", "0"); self.end_headers(); return
        body = json.dumps({"object": "list", "data": [{"id": args.served_model_name}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

server = HTTPServer((args.host, args.port), Handler)
print(f"INFO Started server process on {args.host}:{args.port}", flush=True)
server.serve_forever()
"""


def _write_script(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def install_fake_vllm(bin_dir: Path) -> Path:
    """Write an executable ``vllm`` into ``bin_dir``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    return _write_script(bin_dir / "vllm", FAKE_VLLM)


def install_fake_nvidia_smi(bin_dir: Path, gpus: list[tuple[str, int]]) -> Path:
    """Write an ``nvidia-smi`` answering the CSV query for ``gpus`` (name, MiB)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"{index}, {name}, {mib}" for index, (name, mib) in enumerate(gpus)]
    body = f"import sys\nassert '--format=csv,noheader,nounits' in sys.argv\nprint({chr(10).join(lines)!r})\n"
    return _write_script(bin_dir / "nvidia-smi", body)


def path_with(bin_dir: Path) -> str:
    """A PATH where ``bin_dir`` comes first and no real vllm / nvidia-smi can be found."""
    return os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
