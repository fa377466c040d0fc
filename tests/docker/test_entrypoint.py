"""The Docker images' entry point and health check, run directly on this machine (no Docker engine
here): waiting for the model server, ADB over Wi-Fi, the CLI, and the demo answering its health check."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from mae.testing.fake_model_server import FakeModelServer

REPO = Path(__file__).resolve().parents[2]
ENTRYPOINT = REPO / "docker" / "entrypoint.sh"
HEALTHCHECK = REPO / "docker" / "healthcheck.sh"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAE_", "ADB_", "GRADIO_"))}
    env.update(
        PYTHON=sys.executable,
        PYTHONPATH=str(REPO),
        MAE_APP=str(REPO / "app.py"),
        MAE_LOG_DIR=str(tmp_path / "runs"),
        MAE_MEMORY_DIR=str(tmp_path / "memory"),
        HOME=str(tmp_path),
    )
    env.update(extra)
    return env


def _run(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(ENTRYPOINT), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=env["HOME"],
        timeout=timeout,
    )


def test_waits_for_the_model_server_then_runs_the_cli(tmp_path: Path, fake_server: FakeModelServer) -> None:
    env = _env(tmp_path, MAE_WAIT_FOR_MODEL="5", MAE_BASE_URL=fake_server.base_url, MAE_MODEL="fake")
    done = _run(["models", "list"], env)
    assert done.returncode == 0, done.stderr
    assert "waiting up to 5 s" in done.stderr and "fake  <- mae uses this" in done.stdout
    assert "qwen2.5-vl-7b" in done.stdout and "ui-tars-1.5-7b" in done.stdout


def test_an_absent_model_server_stops_the_start_with_a_clear_message(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = _env(tmp_path, MAE_WAIT_FOR_MODEL="1", MAE_BASE_URL=f"http://127.0.0.1:{port}/v1")
    done = _run(["models", "list"], env)
    assert done.returncode != 0 and "no server answers" in done.stderr and "Traceback" not in done.stderr
    done = _run(["models", "list"], _env(tmp_path, MAE_WAIT_FOR_MODEL="soon"))
    assert done.returncode != 0 and "number of seconds" in done.stderr
    done = _run(["models", "list"], _env(tmp_path, MAE_WAIT_FOR_MODEL="3"))
    assert done.returncode != 0 and "needs MAE_BASE_URL" in done.stderr


def test_adb_connect_reaches_each_wifi_phone(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "adb-calls"
    fake_adb = bin_dir / "adb"
    fake_adb.write_text(
        f'#!/usr/bin/env bash\necho "$@" >> {calls}\n'
        'case "$2" in 10.0.0.9:*) echo "failed to connect to $2";; *) echo "connected to $2";; esac\n'
    )
    fake_adb.chmod(0o755)
    path = f"{bin_dir}:{os.environ['PATH']}"
    env = _env(tmp_path, ADB_CONNECT="192.168.1.23:5555, 192.168.1.24:37001", PATH=path)
    done = _run(["models", "list"], env)
    assert done.returncode == 0, done.stderr
    assert calls.read_text().splitlines() == ["connect 192.168.1.23:5555", "connect 192.168.1.24:37001"]
    done = _run(["models", "list"], _env(tmp_path, ADB_CONNECT="10.0.0.9:5555", PATH=path))
    assert done.returncode != 0 and "Wireless debugging" in done.stderr
    done = _run(["models", "list"], _env(tmp_path, ADB_CONNECT="phone; rm -rf /", PATH=path))
    assert done.returncode != 0 and "look like 192.168.1.23:5555" in done.stderr


@pytest.mark.slow
def test_demo_starts_and_answers_the_health_check(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = _env(tmp_path, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port), MAE_DEVICE="virtual")
    check = ["bash", str(HEALTHCHECK)]
    assert subprocess.run(check, env=env, capture_output=True, timeout=30).returncode == 1  # nothing yet
    demo = subprocess.Popen(
        ["bash", str(ENTRYPOINT)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        healthy = False
        while time.monotonic() < deadline and demo.poll() is None:
            if subprocess.run(check, env=env, capture_output=True, timeout=30).returncode == 0:
                healthy = True
                break
            time.sleep(1)
        assert healthy, (
            demo.stdout.read().decode() if demo.poll() is not None and demo.stdout else "no answer"
        )
    finally:
        os.killpg(demo.pid, signal.SIGTERM)
        demo.wait(timeout=30)


def test_compose_settings_are_all_documented() -> None:
    compose_text = (REPO / "docker-compose.yml").read_text()
    compose = yaml.safe_load(compose_text)
    assert set(compose["services"]) == {"vllm", "mae"}
    assert compose["services"]["vllm"]["image"].startswith("vllm/vllm-openai:")
    for service in compose["services"].values():
        for port in service["ports"]:
            assert port.startswith("127.0.0.1:")  # never beyond this machine without a proxy
    used = set(re.findall(r"\$\{([A-Z0-9_]+)", compose_text))
    documented = (REPO / "docker" / "compose.env.example").read_text() + (REPO / "README.md").read_text()
    missing = sorted(name for name in used if name not in documented)
    assert not missing, f"document these in docker/compose.env.example: {missing}"
    for dockerfile in ("Dockerfile", "Dockerfile.cpu"):
        text = (REPO / dockerfile).read_text()
        assert "HEALTHCHECK" in text and re.search(r"^USER 1000", text, re.M)
        assert "docker/entrypoint.sh" in text
