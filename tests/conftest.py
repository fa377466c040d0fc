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


PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def _guard(address: Any, family: int) -> None:
    if family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        raise ConnectionRefusedError(f"tests may not reach the network ({address!r})")


@pytest.fixture(scope="session", autouse=True)
def _no_network() -> Iterator[None]:
    """For the whole session (module fixtures included): refuse every connection or datagram that is
    not to this machine, hide real provider keys and proxies, keep model hubs offline."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_sendto = socket.socket.sendto

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        _guard(address, self.family)
        return real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> Any:
        _guard(address, self.family)
        return real_connect_ex(self, address)

    def guarded_sendto(self: socket.socket, data: Any, *args: Any) -> Any:
        _guard(args[-1], self.family)
        return real_sendto(self, data, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", guarded_connect)
        patch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
        patch.setattr(socket.socket, "sendto", guarded_sendto)
        for name in (*PROVIDER_KEY_VARS, *PROXY_VARS):
            patch.delenv(name, raising=False)
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        patch.setenv("MAE_ADB_AUTOSTART", "0")  # never start a real adb server on 5037
        yield


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys a test set for itself never leak into the next test."""
    for name in PROVIDER_KEY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _key_place_of_the_demo() -> Iterator[None]:
    """A test that ran the CLI or the MCP server (which name where a missing key goes for them) leaves
    the process's default, the demo's, to the next test."""
    from mae.llm.keys import set_key_place

    yield
    set_key_place("demo")


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
