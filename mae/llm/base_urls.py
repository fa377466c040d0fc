"""Which base URLs a public demo may send model requests to (no server-side request forgery).

On a public demo (``mae.public_mode``) a visitor types the Base URL, and the server then POSTs full
prompts with screenshots there. So the host must be a public internet address: loopback, private,
shared (CGNAT), link-local, multicast, reserved and unspecified addresses are refused, in IPv4 and
IPv6 (IPv4-mapped, 6to4, Teredo and NAT64 forms are unwrapped), as are ``localhost`` and the numeric
spellings the C resolver accepts (``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1``). A DNS name
is resolved and every address it has must pass.

The check is made twice: when a run starts (``check_base_url``, for a clear sentence) and when each
connection is opened (``GuardedBackend``, the network layer under the model client, which connects to
the very address it checked: a DNS answer that changes in between, "DNS rebinding", gains nothing).

The operator can open exact endpoints with ``MAE_ALLOWED_BASE_URLS`` (comma-separated URLs; a URL is
allowed when scheme, host and port match one and its path starts with that one's path). Every Base URL
on a public demo has a plain path: ``.`` and ``..`` segments (also percent-encoded), other encoded
characters of the path, a query, a fragment or user info are refused before any comparison, and the
transport checks each request's final URL against the allowlist too (an allowed host answers only
under an allowed path). Outside public mode every URL is kept, as before.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import httpcore2 as httpcore
import httpx2 as httpx

from mae import public_mode
from mae.errors import ConfigError
from mae.llm.providers import PRESETS

ALLOWED_ENV = "MAE_ALLOWED_BASE_URLS"
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]
"""``resolver(host, port)`` -> the addresses ``host`` resolves to (tests pass a table, never DNS)."""

NAT64 = ipaddress.ip_network("64:ff9b::/96")
EXTRA_BLOCKED = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8",  # "this network"
        "100.64.0.0/10",  # shared address space (carrier-grade NAT)
        "192.0.0.0/24",  # IETF protocol assignments
        "198.18.0.0/15",  # benchmarking
        "64:ff9b:1::/48",  # local-use NAT64
        "fc00::/7",  # unique local
        "fec0::/10",  # site-local (deprecated, still routed by some stacks)
    )
)


class BaseUrlRefused(ConfigError):
    """A base URL a public demo may not send requests to; the message says what to do."""


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of ``host`` from the system resolver (``getaddrinfo``)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]) for info in infos]


def parse_ipv4_spelling(text: str) -> ipaddress.IPv4Address | None:
    """``text`` as the C resolver (``inet_aton``) reads a numeric IPv4 host, else None.

    One to four parts separated by dots, each decimal, octal (leading 0) or hex (0x); the last part
    fills the remaining bytes: ``2130706433``, ``0177.0.0.1``, ``0x7f.1`` and ``127.1`` are 127.0.0.1.
    """
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values = []
    for part in parts:
        low = part.lower()
        try:
            if low.startswith("0x"):
                values.append(int(low[2:] or "0", 16))
            elif len(low) > 1 and low.startswith("0"):
                values.append(int(low[1:], 8))
            elif low.isdigit():
                values.append(int(low))
            else:
                return None
        except ValueError:
            return None
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for value in head:
        number = number * 256 + value
    return ipaddress.IPv4Address((number << (8 * (4 - len(head)))) + last)


def literal_address(host: str) -> IPAddress | None:
    """``host`` as an IP address when it is one in any spelling (IPv6 with or without brackets and
    zone), else None."""
    name = host.strip().strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return parse_ipv4_spelling(name)


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, Teredo, NAT64), else None."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_problem(address: IPAddress) -> str | None:
    """Why a public demo may not connect to ``address`` (a phrase), or None when it is a public one."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = embedded_ipv4(address)
        if inner is not None:
            problem = address_problem(inner)
            return f"{problem} (inside an IPv6 address)" if problem else None
    checks = (
        (address.is_loopback, "a loopback address"),
        (address.is_unspecified, "an unspecified address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (any(address in net for net in EXTRA_BLOCKED), "a private or reserved address"),
        (address.is_private, "a private address"),
        (address.is_reserved, "a reserved address"),
        (not address.is_global, "not a public internet address"),
    )
    return next((why for hit, why in checks if hit), None)


@dataclass(frozen=True)
class Endpoint:
    """Scheme, host, port and path of a URL, the way the allowlist compares them."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def of(cls, url: str) -> Endpoint:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            shown = url.strip()[:60]
            raise BaseUrlRefused(f"the Base URL must start with http:// or https://, not {shown!r}")
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise BaseUrlRefused("the Base URL has a port that is not a number from 1 to 65535") from None
        host = (parts.hostname or "").lower()
        if not host:
            raise BaseUrlRefused("the Base URL has no host: write it like https://api.example.com/v1")
        return cls(scheme, host, port, plain_path(parts.path, url))

    def within(self, allowed: Endpoint) -> bool:
        if (self.scheme, self.host, self.port) != (allowed.scheme, allowed.host, allowed.port):
            return False
        return allowed.path == "" or self.path == allowed.path or self.path.startswith(allowed.path + "/")


PLAIN_WRITING = "write the Base URL as scheme, host, port and path only, like https://api.example.com/v1"


def plain_path(path: str, url: str) -> str:
    """``path`` without its trailing slashes and repeated slashes; ``BaseUrlRefused`` when ``url`` has a
    query, a fragment or user info, or its path has a ``.``/``..`` segment or any percent-encoding
    (``%2e%2e`` is ``..`` to some servers): such a URL could leave an allowed path."""
    parts = urlsplit(url.strip())
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise BaseUrlRefused(f"the Base URL may not have a query or a fragment: {PLAIN_WRITING}")
    if parts.username is not None or parts.password is not None:
        raise BaseUrlRefused(f"the Base URL may not carry a user name or password: {PLAIN_WRITING}")
    if "%" in path or "\\" in path:
        raise BaseUrlRefused(f"the Base URL's path may not have encoded characters: {PLAIN_WRITING}")
    segments = [s for s in unquote(path).split("/") if s]
    if any(s in (".", "..") for s in segments):
        raise BaseUrlRefused(f"the Base URL's path may not have . or .. segments: {PLAIN_WRITING}")
    return "/" + "/".join(segments) if segments else ""


def allowed_endpoints(environ: Mapping[str, str] | None = None) -> list[Endpoint]:
    """The endpoints ``MAE_ALLOWED_BASE_URLS`` opens (``ConfigError`` for an entry that is no URL)."""
    environ = os.environ if environ is None else environ
    entries = [e.strip() for e in environ.get(ALLOWED_ENV, "").split(",") if e.strip()]
    try:
        return [Endpoint.of(entry) for entry in entries]
    except BaseUrlRefused as exc:
        raise ConfigError(f"{ALLOWED_ENV}: {exc}") from None


def _refusal(host: str, why: str) -> BaseUrlRefused:
    return BaseUrlRefused(
        f"this public demo does not send requests to {host} ({why}): use your provider's public "
        f"https URL, or ask the operator to add the endpoint to {ALLOWED_ENV}"
    )


def check_host(host: str, port: int, resolver: Resolver = system_resolver) -> list[str]:
    """The addresses of ``host`` a public demo may connect to; ``BaseUrlRefused`` when any is not public
    (a name with one private address among public ones is refused: the resolver may pick either)."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        raise _refusal(host, "this machine")
    literal = literal_address(name)
    if literal is not None:
        problem = address_problem(literal)
        if problem:
            raise _refusal(host, problem)
        return [str(literal)]
    addresses = resolver(name, port)
    if not addresses:
        raise BaseUrlRefused(f"the Base URL's host {host} does not resolve: check its spelling")
    for text in addresses:
        address = literal_address(text)
        problem = "an address that is not an IP" if address is None else address_problem(address)
        if problem:
            raise _refusal(host, f"it resolves to {problem}")
    return addresses


def check_base_url(
    url: str,
    *,
    public: bool | None = None,
    resolver: Resolver = system_resolver,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Refuse ``url`` (``BaseUrlRefused``) when a public demo may not send requests there; outside public
    mode (``public`` defaults to ``mae.public_mode.is_public``) every URL passes."""
    if not (public_mode.is_public(environ) if public is None else public):
        return
    endpoint = Endpoint.of(url)
    if any(endpoint.within(allowed) for allowed in allowed_endpoints(environ)):
        return
    if endpoint.scheme == "https" and endpoint.host in preset_hosts():
        return  # a provider preset's own host (written in the code, not typed): checked at connect time
    check_host(endpoint.host, endpoint.port, resolver)


def preset_hosts() -> frozenset[str]:
    """The hosts of the hosted provider presets (OpenAI, Anthropic, Google, DashScope)."""
    hosts = {(urlsplit(p.base_url).hostname or "").lower() for p in PRESETS.values() if p.base_url}
    return frozenset(h for h in hosts if h and literal_address(h) is None and h != "localhost")


class GuardedBackend(httpcore.NetworkBackend):
    """httpcore's network layer with the address check at connect time: it resolves the host once,
    checks every address and connects to a checked address (TLS still verifies the host name).
    Hosts opened by ``MAE_ALLOWED_BASE_URLS`` connect as usual."""

    def __init__(self, resolver: Resolver = system_resolver, allowed: Iterable[Endpoint] = ()) -> None:
        self._inner = httpcore.SyncBackend()
        self._resolver = resolver
        self._allowed = {(e.host, e.port) for e in allowed}

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        if (host.lower(), port) in self._allowed:
            return self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        address = check_host(host, port, self._resolver)[0]
        return self._inner.connect_tcp(address, port, timeout, local_address, socket_options)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise BaseUrlRefused("this public demo does not connect to local sockets")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class AllowlistTransport(httpx.BaseTransport):
    """A transport that checks each request's final URL: a request to a host that
    ``MAE_ALLOWED_BASE_URLS`` opens must have a plain path under one of that host's allowed paths
    (whatever the model client appended to the Base URL)."""

    def __init__(self, inner: httpx.BaseTransport, allowed: Iterable[Endpoint]) -> None:
        self._inner = inner
        self._allowed = list(allowed)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        same_host = [e for e in self._allowed if (e.scheme, e.host, e.port) == (url.scheme, url.host, port)]
        if same_host:
            path = url.raw_path.split(b"?", 1)[0].decode("ascii", "replace")
            try:
                ok = any(Endpoint.of(f"{url.scheme}://{url.host}:{port}{path}").within(e) for e in same_host)
            except BaseUrlRefused:
                ok = False
            if not ok:
                raise BaseUrlRefused(
                    f"this public demo sends requests to {url.host} only under the paths {ALLOWED_ENV} "
                    "names: use the Base URL exactly as the operator listed it"
                )
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def guarded_transport(
    resolver: Resolver = system_resolver, environ: Mapping[str, str] | None = None
) -> httpx.BaseTransport:
    """An HTTP transport whose every connection passes ``GuardedBackend`` and whose every request to an
    allowlisted host passes ``AllowlistTransport`` (no proxy from the environment: a proxy would connect
    on the demo's behalf, unchecked)."""
    allowed = allowed_endpoints(environ)
    transport = httpx.HTTPTransport(trust_env=False)
    # httpx takes no network backend as an argument: its pool is replaced by an identical one that has ours
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        network_backend=GuardedBackend(resolver, allowed),
    )
    return AllowlistTransport(transport, allowed)
