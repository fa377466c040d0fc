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
from typing import Any

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
        deadline = time.monotonic() + 180
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
    compose_text = (REPO / "docker-compose.yml").read_text() + (REPO / "docker-compose.cpu.yml").read_text()
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    assert set(compose["services"]) == {"vllm", "mae", "mae-volumes"}
    assert compose["services"]["vllm"]["image"].startswith("vllm/vllm-openai:")
    for service in compose["services"].values():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:")  # never beyond this machine without a proxy
    used = set(re.findall(r"\$\{([A-Z0-9_]+)", compose_text))
    documented = (REPO / "docker" / "compose.env.example").read_text() + (REPO / "README.md").read_text()
    missing = sorted(name for name in used if name not in documented)
    assert not missing, f"document these in docker/compose.env.example: {missing}"
    for dockerfile in ("Dockerfile", "Dockerfile.cpu"):
        text = (REPO / dockerfile).read_text()
        assert "HEALTHCHECK" in text and re.search(r"^USER \$\{MAE_UID\}:\$\{MAE_GID\}$", text, re.M)
        assert "docker/entrypoint.sh" in text


def test_a_data_folder_it_cannot_write_stops_the_start_with_how_to_fix_ownership(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    if os.geteuid() == 0:  # root writes anywhere: a file where the folder should be is just as unwritable
        (data / "runs").write_text("")
    else:
        data.chmod(0o555)
    env = _env(tmp_path, MAE_LOG_DIR=str(data / "runs"))
    done = _run(["models", "list"], env)
    data.chmod(0o755)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"cannot write {data / 'runs'}: mae runs as UID {os.getuid()}" in done.stderr
    assert (
        f"sudo chown -R {os.getuid()}:{os.getgid()}" in done.stderr and "--build-arg MAE_UID" in done.stderr
    )
    assert "./mae-data for /data" in done.stderr
    assert _run(["models", "list"], _env(tmp_path)).returncode == 0  # writable folders: it starts


def test_vllms_key_is_named_for_mae_only_when_vllm_is_the_backbone(tmp_path: Path) -> None:
    # the entrypoint ends in `python -m mae`: a stand-in interpreter prints what it was given
    fake_python = tmp_path / "python"
    fake_python.write_text(
        '#!/usr/bin/env bash\necho "key_env=${MAE_API_KEY_ENV:-} check=${MAE_MODEL_API_KEY_ENV:-}"\n'
    )
    fake_python.chmod(0o755)
    cases = [
        ({"MAE_BACKBONE": "vllm", "VLLM_API_KEY": "sk-local"}, "key_env=VLLM_API_KEY check=VLLM_API_KEY"),
        ({"MAE_BACKBONE": "vllm", "VLLM_API_KEY": ""}, "key_env= check="),
        ({"MAE_BACKBONE": "openai", "VLLM_API_KEY": "sk-local"}, "key_env= check="),
        (
            {"MAE_BACKBONE": "vllm", "VLLM_API_KEY": "k", "MAE_API_KEY_ENV": "MY_KEY"},
            "key_env=MY_KEY check=MY_KEY",
        ),
    ]
    for extra, expected in cases:
        env = _env(tmp_path, PYTHON=str(fake_python), **extra)
        done = _run(["models", "list"], env)
        assert done.returncode == 0 and done.stdout.strip() == expected, (extra, done.stdout, done.stderr)
        assert "sk-local" not in done.stdout + done.stderr


def test_prepare_volumes_creates_the_folders_and_hands_over_only_what_is_not_maes(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "chown-calls"
    (bin_dir / "chown").write_text(f'#!/usr/bin/env bash\necho "$@" >> {calls}\n')
    (bin_dir / "chown").chmod(0o755)
    data, weights = tmp_path / "data", tmp_path / "weights" / "mae"
    owner = f"{os.getuid()}:{os.getgid()}"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "MAE_VOLUME_OWNER": owner}
    script = str(REPO / "docker" / "prepare-volumes.sh")
    done = subprocess.run(["bash", script, str(data), str(weights)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert data.is_dir() and weights.is_dir() and f"{data} belongs to {owner}" in done.stderr
    assert not calls.exists()  # already ours: nothing rewritten
    env["MAE_VOLUME_OWNER"] = "4321:4321"
    done = subprocess.run(["bash", script, str(data)], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and calls.read_text().split() == ["-h", "4321:4321", str(data)]
    env["MAE_VOLUME_OWNER"] = "mae"
    done = subprocess.run(["bash", script, str(data)], capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "MAE_VOLUME_OWNER=UID:GID" in done.stderr


def _compose(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((REPO / name).read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_compose_demos_are_private_and_get_the_keys_and_folders_they_need() -> None:
    for name in ("docker-compose.yml", "docker-compose.cpu.yml"):
        services = _compose(name)["services"]
        mae, volumes = services["mae"], services["mae-volumes"]
        env = mae["environment"]
        assert all(port.startswith("127.0.0.1:") for port in mae["ports"])
        assert env["MAE_PUBLIC"] == "${MAE_PUBLIC:-0}"  # published on loopback: private
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DASHSCOPE_API_KEY"):
            assert env[key] == f"${{{key}:-}}"
        assert mae["depends_on"]["mae-volumes"]["condition"] == "service_completed_successfully"
        assert volumes["user"] == "0:0" and volumes["volumes"] == mae["volumes"]
        mounted = [v.split(":")[-1] for v in mae["volumes"]]
        assert volumes["entrypoint"] == ["/app/docker/prepare-volumes.sh", *mounted]
        assert volumes["build"]["args"] == {"MAE_UID": "${MAE_UID:-1000}", "MAE_GID": "${MAE_GID:-1000}"}
    gpu = _compose("docker-compose.yml")["services"]
    assert gpu["mae"]["environment"]["VLLM_API_KEY"] == gpu["vllm"]["environment"]["VLLM_API_KEY"]
    assert gpu["mae"]["environment"]["MAE_ICONS"] == "${MAE_ICONS:-groundingdino}"
    vllm_cache = gpu["vllm"]["volumes"][0].rsplit(":", 1)[0]
    assert vllm_cache not in [v.rsplit(":", 1)[0] for v in gpu["mae"]["volumes"]]  # root's files stay apart
    cpu = _compose("docker-compose.cpu.yml")["services"]
    assert set(cpu) == {"mae", "mae-volumes"} and "deploy" not in cpu["mae"]  # no GPU, no vLLM
    assert cpu["mae"]["build"]["dockerfile"] == "Dockerfile.cpu"
    assert cpu["mae"]["environment"]["MAE_ICONS"] == "${MAE_ICONS:-contour}"


def test_the_build_context_leaves_out_keys_and_the_host_folders() -> None:
    ignored = set((REPO / ".dockerignore").read_text().split())
    assert {".env", "mae-data", "weights"} <= ignored  # `COPY . /app` must not bake keys or models in


def test_the_health_check_waits_as_long_as_the_demo_waits_for_its_model() -> None:
    wait = int(
        _compose("docker-compose.yml")["services"]["mae"]["environment"]["MAE_WAIT_FOR_MODEL"].split("-")[1][
            :-1
        ]
    )
    start = re.search(r"--start-period=(\d+)s", (REPO / "Dockerfile").read_text())
    assert start and int(start.group(1)) >= wait + 60
    for dockerfile in ("Dockerfile", "Dockerfile.cpu"):
        assert re.search(r"^\s+MAE_PUBLIC=1 \\$", (REPO / dockerfile).read_text(), re.M)  # safe default
