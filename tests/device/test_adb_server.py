"""The real ``_exec`` against a real adb: no server at all, and a private adb server with no phone.

These never touch the default adb server (port 5037): each test points ``ANDROID_ADB_SERVER_PORT``
at a free port of its own, and stops the server it started.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from adbutils import adb_path

from mae.device.adb import AdbDevice, attached_serials, list_devices
from mae.errors import DeviceError

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_no_server_and_no_autostart_is_a_quick_device_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(free_port()))
    monkeypatch.setenv("MAE_ADB_AUTOSTART", "0")
    started = time.monotonic()
    with pytest.raises(DeviceError, match=r"cannot reach the adb server at 127\.0\.0\.1"):
        list_devices()
    with pytest.raises(DeviceError, match="adb start-server"):
        AdbDevice()
    assert attached_serials() == []
    assert time.monotonic() - started < 5


def test_cli_device_list_without_server_exits_0_quickly() -> None:
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(free_port()), "MAE_ADB_AUTOSTART": "0"}
    env.pop("ANDROID_SERIAL", None)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mae", "device", "list"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "cannot reach the adb server" in done.stdout and "adb start-server" in done.stdout
    assert "virtual" in done.stdout
    assert time.monotonic() - started < 30


@pytest.fixture
def private_adb_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A port for an adb server that ``_exec`` starts itself; the server is stopped afterwards."""
    port = free_port()
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    monkeypatch.setenv("MAE_ADB_AUTOSTART", "1")
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    try:
        yield port
    finally:
        subprocess.run(
            [adb_path(), "-P", str(port), "kill-server"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=15,
            check=False,
        )


@pytest.mark.slow
def test_a_real_adb_server_with_no_phone(private_adb_server: int) -> None:
    assert list_devices() == []  # starts the server on the private port, then asks it
    with pytest.raises(DeviceError, match="no Android phone is attached"):
        AdbDevice()
    with pytest.raises(DeviceError, match="no phone with serial 'R5CW30ABCDE'"):
        AdbDevice("R5CW30ABCDE")
    closed = f"127.0.0.1:{free_port()}"
    with pytest.raises(DeviceError, match=rf"cannot connect to {closed} over Wi-Fi"):
        AdbDevice(closed)
