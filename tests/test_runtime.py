"""Building a run's runtime fails early and clearly on a missing key or an incomplete backbone."""

from __future__ import annotations

import pytest

from mae.config import Settings
from mae.errors import ConfigError
from mae.llm import ModelAuthError
from mae.run.runtime import build_client


def test_missing_key_is_reported_before_anything_runs() -> None:
    with pytest.raises(ModelAuthError, match="OPENAI_API_KEY"):
        build_client(Settings(backbone="openai"))


def test_key_given_for_the_session_is_enough() -> None:
    client = build_client(Settings(backbone="openai"), api_keys={"OPENAI_API_KEY": "sk-test"})
    assert client.profile("operator").model == "gpt-6.1-sol"


def test_custom_backbone_needs_url_and_model() -> None:
    with pytest.raises(ConfigError, match="base URL and a model"):
        build_client(Settings(backbone="custom"))
    client = build_client(Settings(backbone="custom", base_url="http://127.0.0.1:9/v1", model="m"))
    client.check_key("manager")  # no key variable named: nothing to check


def test_the_network_guard_refuses_non_loopback_addresses() -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp, pytest.raises(ConnectionRefusedError):
        tcp.connect(("192.0.2.1", 443))  # TEST-NET-1: never routable, refused before any packet
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, pytest.raises(ConnectionRefusedError):
        udp.sendto(b"x", ("192.0.2.1", 53))
