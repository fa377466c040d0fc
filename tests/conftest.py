"""Shared fixtures: no test reaches the network beyond loopback, and a fake model server."""

from __future__ import annotations

import ipaddress
import socket
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mae.testing.fake_model_server import FakeModelServer

PROVIDER_KEY_VARS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "DASHSCOPE_API_KEY",
    "MAE_PROFILE",
    "MAE_BACKBONE",
    "MAE_BASE_URL",
    "MAE_MODEL",
)


def _is_loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):  # unix sockets
        return True
    if not (isinstance(address, tuple) and address):
        return False
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse every connection that is not to this machine, and hide real provider keys."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise ConnectionRefusedError(f"tests may not reach the network ({address!r})")
        return real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise ConnectionRefusedError(f"tests may not reach the network ({address!r})")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    for name in PROVIDER_KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MAE_ADB_AUTOSTART", "0")  # never start a real adb server on 5037
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _private_memory_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the long-term memory at a fresh temporary folder, never the user's real one."""
    monkeypatch.setenv("MAE_MEMORY_DIR", str(tmp_path_factory.getbasetemp() / "memory" / uuid.uuid4().hex))


@pytest.fixture
def fake_server() -> Iterator[FakeModelServer]:
    """A started fake chat-completions server; the test fails if a request went unanswered."""
    server = FakeModelServer().start()
    try:
        yield server
        if server.unexpected:
            server.assert_done()
    finally:
        server.stop()
