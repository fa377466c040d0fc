"""The public demo's base-URL policy: a table of hosts and spellings that must be refused or kept.

No test here uses real DNS: names resolve through a table (``FakeResolver``); connections that would
leave the machine are recorded by a fake network layer instead of being made.
"""

from __future__ import annotations

from typing import Any

import httpx2 as httpx
import pytest

from mae.errors import ConfigError
from mae.llm import base_urls
from mae.llm.base_urls import BaseUrlRefused, GuardedBackend, check_base_url, parse_ipv4_spelling
from mae.testing.fake_model_server import FakeModelServer

PUBLIC_V4 = "93.184.215.14"
PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c"
TABLE = {
    "api.example.com": [PUBLIC_V4, PUBLIC_V6],
    "v6only.example.com": [PUBLIC_V6],
    "rebind.example.com": ["127.0.0.1"],
    "intranet.example.com": ["10.1.2.3"],
    "mixed.example.com": [PUBLIC_V4, "192.168.1.10"],
    "metadata.example.com": ["169.254.169.254"],
    "v6local.example.com": ["fd00::1"],
    "mapped.example.com": ["::ffff:10.0.0.1"],
}


class FakeResolver:
    """A DNS table; ``calls`` lists every lookup."""

    def __init__(self, table: dict[str, list[str]] | None = None) -> None:
        self.table = dict(TABLE if table is None else table)
        self.calls: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        return list(self.table.get(host, []))


REFUSED = [
    "http://127.0.0.1:8000/v1",
    "http://127.8.9.10/v1",
    "http://localhost:8000/v1",
    "http://LOCALHOST./v1",
    "http://api.localhost/v1",
    "http://0.0.0.0:8000/v1",
    "http://0/v1",
    "http://2130706433/v1",  # 127.0.0.1 as one decimal number
    "http://0177.0.0.1/v1",  # octal
    "http://0x7f.0.0.1/v1",  # hex
    "http://0x7f000001/v1",
    "http://127.1/v1",  # short form
    "http://017700000001/v1",
    "http://10.0.0.5/v1",
    "http://172.16.3.4/v1",
    "http://192.168.0.1/v1",
    "http://100.64.0.1/v1",  # carrier-grade NAT
    "http://169.254.169.254/latest/meta-data",  # cloud metadata
    "http://224.0.0.1/v1",  # multicast
    "http://240.0.0.1/v1",  # reserved
    "http://255.255.255.255/v1",
    "http://198.18.0.1/v1",  # benchmarking
    "http://[::1]:8000/v1",
    "http://[::]/v1",
    "http://[fe80::1]/v1",
    "http://[fe80::1%25eth0]/v1",
    "http://[fd12:3456::1]/v1",
    "http://[ff02::1]/v1",
    "http://[::ffff:127.0.0.1]/v1",  # IPv4-mapped
    "http://[::ffff:a00:1]/v1",
    "http://[2002:7f00:1::]/v1",  # 6to4 around 127.0.0.1
    "http://[64:ff9b::a00:1]/v1",  # NAT64 around 10.0.0.1
    "http://rebind.example.com/v1",
    "http://intranet.example.com/v1",
    "http://mixed.example.com/v1",
    "http://metadata.example.com/v1",
    "http://v6local.example.com/v1",
    "http://mapped.example.com/v1",
    "http://nowhere.example.com/v1",  # does not resolve
    "ftp://api.example.com/v1",
    "file:///etc/passwd",
    "http:///v1",
]
KEPT = [
    "https://api.example.com/v1",
    "https://API.EXAMPLE.COM/v1",
    "https://v6only.example.com/v1",
    f"https://{PUBLIC_V4}/v1",
    f"https://[{PUBLIC_V6}]/v1",
    "https://8.8.8.8/v1",
]


@pytest.mark.parametrize("url", REFUSED)
def test_public_mode_refuses_local_private_and_odd_spellings(url: str) -> None:
    with pytest.raises(BaseUrlRefused) as caught:
        check_base_url(url, public=True, resolver=FakeResolver(), environ={})
    message = str(caught.value)
    assert "Traceback" not in message and "Error" not in message
    assert message[0].islower() or message[0].isupper()


@pytest.mark.parametrize("url", KEPT)
def test_public_mode_keeps_public_endpoints(url: str) -> None:
    check_base_url(url, public=True, resolver=FakeResolver(), environ={})


def test_the_table_is_big_enough() -> None:
    assert len(REFUSED) + len(KEPT) >= 25


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "http://10.0.0.5/v1", "http://localhost/v1"])
def test_local_use_keeps_every_url(url: str) -> None:
    resolver = FakeResolver()
    check_base_url(url, public=False, resolver=resolver, environ={})
    check_base_url(url, resolver=resolver, environ={})  # the environment says private
    assert resolver.calls == []


def test_the_allowlist_opens_exact_endpoints_only() -> None:
    environ = {"MAE_ALLOWED_BASE_URLS": "http://127.0.0.1:8000/v1, http://intranet.example.com"}
    resolver = FakeResolver()
    check_base_url("http://127.0.0.1:8000/v1", public=True, resolver=resolver, environ=environ)
    check_base_url("http://127.0.0.1:8000/v1/", public=True, resolver=resolver, environ=environ)
    check_base_url("http://intranet.example.com/any/path", public=True, resolver=resolver, environ=environ)
    for other in ("http://127.0.0.1:8001/v1", "http://127.0.0.1:8000/v1x", "https://127.0.0.1:8000/v1"):
        with pytest.raises(BaseUrlRefused):
            check_base_url(other, public=True, resolver=resolver, environ=environ)
    with pytest.raises(ConfigError, match="MAE_ALLOWED_BASE_URLS"):
        base_urls.allowed_endpoints({"MAE_ALLOWED_BASE_URLS": "not a url"})


def test_numeric_spellings_read_like_the_c_resolver() -> None:
    for text in ("2130706433", "0177.0.0.1", "0x7f.1", "127.1", "0x7F.0x0.0.01", "127.0.1"):
        assert str(parse_ipv4_spelling(text)) == "127.0.0.1"
    for text in ("1.2.3.4.5", "256.1.1.1", "0x", "09.1.1.1", "a.b.c.d", "", "1..2"):
        assert parse_ipv4_spelling(text) is None or text == "0x"


class RecordingBackend:
    """Stands in for the socket layer: records where a connection would go, connects nowhere."""

    def __init__(self) -> None:
        self.connected: list[tuple[str, int]] = []

    def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        self.connected.append((host, port))
        raise OSError("recorded, not connected")


def test_connect_time_check_stops_dns_rebinding() -> None:
    resolver = FakeResolver({"flip.example.com": [PUBLIC_V4]})
    check_base_url("https://flip.example.com/v1", public=True, resolver=resolver, environ={})  # passes now
    resolver.table["flip.example.com"] = ["127.0.0.1"]  # the name now points at the server itself
    backend = GuardedBackend(resolver)
    recorder = RecordingBackend()
    backend._inner = recorder  # type: ignore[assignment]
    with pytest.raises(BaseUrlRefused):
        backend.connect_tcp("flip.example.com", 443)
    assert recorder.connected == []
    resolver.table["flip.example.com"] = [PUBLIC_V4]
    with pytest.raises(OSError, match="recorded"):
        backend.connect_tcp("flip.example.com", 443)
    assert recorder.connected == [(PUBLIC_V4, 443)]  # the checked address, not a second lookup


def test_a_guarded_client_never_reaches_a_loopback_server() -> None:
    with FakeModelServer() as server:
        resolver = FakeResolver({"model.example.com": ["127.0.0.1"]})
        port = server.base_url.rsplit(":", 1)[1].split("/")[0]
        transport = base_urls.guarded_transport(resolver, environ={})
        with httpx.Client(transport=transport, trust_env=False) as client:
            for url in (f"http://model.example.com:{port}/v1/models", f"http://127.0.0.1:{port}/v1/models"):
                with pytest.raises(BaseUrlRefused):
                    client.get(url)
        allowed = base_urls.guarded_transport(resolver, environ={"MAE_ALLOWED_BASE_URLS": server.base_url})
        with httpx.Client(transport=allowed, trust_env=False) as client:
            response = client.get(f"{server.base_url}/models")  # the allowlist connects as before
        assert response.status_code in (200, 404)  # an answer from the server: the request got there


def test_a_presets_own_host_is_not_looked_up_when_a_run_starts() -> None:
    resolver = FakeResolver({})
    check_base_url("https://api.openai.com/v1", public=True, resolver=resolver, environ={})
    assert resolver.calls == []  # written in the code, not typed: checked when connecting
    with pytest.raises(BaseUrlRefused):  # the local vLLM preset is not exempt
        check_base_url("http://127.0.0.1:8000/v1", public=True, resolver=resolver, environ={})
    with pytest.raises(BaseUrlRefused):  # nor is plain http to a preset's host name
        check_base_url("http://api.openai.com/v1", public=True, resolver=resolver, environ={})


ESCAPES = [
    "http://127.0.0.1:8000/v1/../admin/shutdown?x=",
    "http://127.0.0.1:8000/v1/../admin/shutdown#",
    "http://127.0.0.1:8000/v1/%2e%2e/admin",
    "http://127.0.0.1:8000/v1/%2E%2E/admin",
    "http://127.0.0.1:8000/v1/.%2e/admin",
    "http://127.0.0.1:8000/v1/./../admin",
    "http://127.0.0.1:8000/v1/%2fadmin",
    "http://127.0.0.1:8000/v1?next=/admin",
    "http://127.0.0.1:8000/v1#/admin",
    "http://127.0.0.1:8000/v1/..",
    "http://127.0.0.1:8000/v1\\..\\admin",
    "http://user:pw@127.0.0.1:8000/v1",
]


@pytest.mark.parametrize("url", ESCAPES)
def test_an_allowed_path_cannot_be_left(url: str) -> None:
    environ = {"MAE_ALLOWED_BASE_URLS": "http://127.0.0.1:8000/v1"}
    with pytest.raises(BaseUrlRefused) as caught:
        check_base_url(url, public=True, resolver=FakeResolver(), environ=environ)
    assert "Base URL" in str(caught.value) or "public demo" in str(caught.value)


def test_plain_paths_are_normalised_before_the_comparison() -> None:
    environ = {"MAE_ALLOWED_BASE_URLS": "http://127.0.0.1:8000/v1/"}
    for url in ("http://127.0.0.1:8000//v1", "http://127.0.0.1:8000/v1//", "http://127.0.0.1:8000/v1/sub"):
        check_base_url(url, public=True, resolver=FakeResolver(), environ=environ)


def test_the_transport_checks_each_requests_final_url() -> None:
    with FakeModelServer() as server:
        transport = base_urls.guarded_transport(
            FakeResolver({}), environ={"MAE_ALLOWED_BASE_URLS": server.base_url}
        )
        root = server.base_url.rsplit("/", 1)[0]  # http://127.0.0.1:P
        refused = [
            f"{root}/admin/shutdown/?x=chat/completions",
            f"{root}/admin/shutdown/chat/completions",
            f"{server.base_url}/../admin/chat/completions",
            f"{server.base_url}/%2e%2e/admin/chat/completions",
            f"{root}/v1x/chat/completions",
        ]
        with httpx.Client(transport=transport, trust_env=False) as client:
            for url in refused:
                with pytest.raises(BaseUrlRefused):
                    client.post(url, json={"model": "m", "messages": []})
            assert server.requests == []  # nothing reached the allowed server outside its path
            client.get(f"{server.base_url}/models?limit=1")  # under the allowed path: it goes through
