"""Which API key a request may carry: keys stay with their own provider.

- A key typed for this session (the demo's password fields) goes where the session's settings send it.
- A server-side key (the process environment) of a preset provider (``OPENAI_API_KEY`` ...) is sent
  only to that preset's host: a Base URL pointing elsewhere gets no key and a clear error.
- When the demo is public (``mae.public_mode``: ``MAE_PUBLIC=1``, ``--share``, a non-loopback bind, a
  Hugging Face Space), server-side keys are not used at all unless the operator opts in with
  ``MAE_ALLOW_SERVER_KEYS=1`` and a login (``MAE_AUTH``); every visitor enters their own key.

Credentials embedded in URLs are removed for display and logs by ``redact_url``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from mae import public_mode
from mae.errors import ConfigError
from mae.llm.errors import ModelAuthError
from mae.llm.providers import PRESETS, ModelProfile

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})

_state = threading.Lock()
_server_keys_refused: str | None = None
"""Why server-side keys are off for this process (None = they may be used)."""
KEY_PLACES = {
    "demo": ", or enter the key in the demo's settings",
    "cli": " in the shell that runs mae (export {env}=...)",
    "mcp": " in the env of mae's entry in the MCP client's configuration, then restart the client",
}
"""Where a missing key goes, per surface that asks for it (``set_key_place``)."""
_key_place = "demo"


def redact_url(url: str) -> str:
    """``url`` without credentials or query (a key can hide in ``user:key@host`` or ``?api-key=``)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def url_host(url: str | None) -> str:
    """The lower-case host of ``url`` ('' when it has none)."""
    try:
        return (urlsplit((url or "").strip()).hostname or "").lower()
    except ValueError:
        return ""


def preset_hosts(key_env: str) -> frozenset[str]:
    """Hosts of the presets whose key lives in ``key_env`` (empty when no preset uses that variable)."""
    return frozenset(url_host(p.base_url) for p in PRESETS.values() if p.api_key_env == key_env)


def public_reason(*, share: bool, host: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Why a demo server is reachable from other machines, or None when it is local only (the one rule
    of ``mae.public_mode``, ``MAE_PUBLIC`` included)."""
    return public_mode.public_reason(share=share, host=host, environ=environ)


def configure_server_keys(*, share: bool, host: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Decide, when the demo starts, whether server-side keys may be used; the reason they may not.

    A public demo uses them only with ``MAE_ALLOW_SERVER_KEYS=1`` and ``MAE_AUTH`` both set;
    ``MAE_ALLOW_SERVER_KEYS=1`` without a login is a ``ConfigError`` (anyone could spend the keys).
    """
    global _server_keys_refused
    environ = os.environ if environ is None else environ
    reason = public_reason(share=share, host=host, environ=environ)
    allowed = environ.get("MAE_ALLOW_SERVER_KEYS", "").strip().lower() in TRUE_WORDS
    if reason and allowed and not environ.get("MAE_AUTH", "").strip():
        raise ConfigError(
            "MAE_ALLOW_SERVER_KEYS=1 needs a login on a public demo: set MAE_AUTH=user:password as well"
        )
    refused = None if reason is None or allowed else f"this demo is reachable from other machines ({reason})"
    with _state:
        _server_keys_refused = refused
    return refused


def set_key_place(surface: str) -> None:
    """Name the surface this process serves (``demo``, ``cli`` or ``mcp``): a missing key's message says
    where the key goes there."""
    global _key_place
    if surface not in KEY_PLACES:
        raise ValueError(f"unknown surface {surface!r}")
    with _state:
        _key_place = surface


def server_keys_refused() -> str | None:
    """Why server-side keys are off in this process, or None."""
    with _state:
        return _server_keys_refused


def resolve_key(
    profile: ModelProfile, session_keys: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> str:
    """The key ``profile``'s requests carry ("EMPTY" for keyless endpoints); ``ModelAuthError`` when the
    key is missing or may not go to ``profile.base_url``."""
    env = profile.api_key_env
    if env is None:
        return "EMPTY"
    if not env.strip():
        raise ModelAuthError(
            f"the name of the API key variable for {profile.provider} ({profile.model}) is empty: name the "
            "environment variable that holds the key, such as OPENAI_API_KEY, or leave it out for a server "
            "without a key"
        )
    typed = (session_keys.get(env) or "").strip()
    if typed:
        return typed
    environ = os.environ if environ is None else environ
    key = (environ.get(env) or "").strip()
    where = f"{profile.provider} ({profile.model})"
    if not key:
        with _state:
            place = KEY_PLACES[_key_place].format(env=env)
        raise ModelAuthError(f"no API key for {where}: set the environment variable {env}{place}")
    refused = server_keys_refused()
    if refused:
        raise ModelAuthError(
            f"{refused[:1].upper()}{refused[1:]}, so it does not use the server's keys: enter your own "
            f"key for {where} in the settings"
        )
    hosts = preset_hosts(env)
    host = url_host(profile.base_url)
    if hosts and host not in hosts:
        raise ModelAuthError(
            f"the key in {env} is only sent to {', '.join(sorted(hosts))}, not to {host or 'this URL'}: "
            f"enter a key for {host or 'that endpoint'} with the Base URL, or name another variable "
            "(MAE_API_KEY_ENV)"
        )
    return key
