"""Public mode: the one rule that decides whether the demo is reachable by anonymous visitors.

- ``MAE_PUBLIC=1`` (or true/yes/on): public, whatever else is set;
- ``MAE_PUBLIC=0`` (or false/no/off): private, whatever else is set (a container that binds 0.0.0.0
  inside but is published on 127.0.0.1 only says so this way);
- otherwise public when ``SPACE_ID`` is set (a Hugging Face Space), with a share link (``--share`` or
  ``MAE_SHARE=1``), or when the server binds an address other than loopback.

Everything that behaves differently for anonymous visitors asks ``public_reason`` / ``is_public``: the
server-key rule (``mae.llm.keys``), the base-URL policy (``mae.llm.base_urls``), the demo's layout and
handlers (``app.py``, ``mae.ui.space``). ``app.py`` records its bind address and share flag once with
``set_server``; the environment is read at each call.
"""

from __future__ import annotations

import ipaddress
import os
import threading
from collections.abc import Mapping

from mae.errors import ConfigError

PUBLIC_ENV = "MAE_PUBLIC"
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})
DEFAULT_HOST = "127.0.0.1"

_lock = threading.Lock()
_server: tuple[bool, str] | None = None
"""(share, host) of the demo server started in this process, once ``set_server`` was called."""


def set_server(*, share: bool, host: str) -> None:
    """Record how this process's demo server is reachable (``app.py`` calls it once at start-up)."""
    global _server
    with _lock:
        _server = (bool(share), host)


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def public_reason(
    *, share: bool | None = None, host: str | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """Why the demo is public (a phrase), or None when it is private.

    ``share``/``host`` default to what ``set_server`` recorded, else to ``MAE_SHARE`` and
    ``GRADIO_SERVER_NAME`` (127.0.0.1 when unset). A value of ``MAE_PUBLIC`` other than the words
    above is a ``ConfigError``.
    """
    environ = os.environ if environ is None else environ
    flag = environ.get(PUBLIC_ENV, "").strip().lower()
    if flag in TRUE_WORDS:
        return f"{PUBLIC_ENV} is set"
    if flag in FALSE_WORDS:
        return None
    if flag:
        raise ConfigError(f"{PUBLIC_ENV} must be 1 (public) or 0 (private), not {flag!r}")
    with _lock:
        recorded = _server
    if share is None:
        share = recorded[0] if recorded else environ.get("MAE_SHARE", "").strip().lower() in TRUE_WORDS
    if host is None:
        host = recorded[1] if recorded else (environ.get("GRADIO_SERVER_NAME") or DEFAULT_HOST)
    if share:
        return "it has a public share link"
    if environ.get("SPACE_ID", "").strip():
        return "it runs as a Hugging Face Space"
    if not is_loopback_host(host):
        return f"it listens on {host}"
    return None


def is_public(environ: Mapping[str, str] | None = None) -> bool:
    """True when the demo in this process is reachable by anonymous visitors (see ``public_reason``)."""
    return public_reason(environ=environ) is not None
