"""Public mode hooks: safe defaults for a demo anyone on the internet can open.

The demo is public (``mae.public_mode``) on a Hugging Face Space (``SPACE_ID``), with a share link, on
a non-loopback bind, or with ``MAE_PUBLIC=1``. Then the demo uses the built-in virtual phone (no
ADB), a short step limit, and per-visitor isolation: each browser session runs with its own run
folder and long-term memory under a private temporary root, and the shared History, Memory and
Evaluate tabs are not built, so one visitor never sees another's runs, memory or keys; session
folders idle for ``MAE_SESSION_TTL`` seconds are removed. Base URLs pass ``mae.llm.base_urls``.
Visitors bring their own API keys: on a public deployment the server's keys are used only when
``MAE_ALLOW_SERVER_KEYS=1`` and a login (``MAE_AUTH``) is set (the rule lives in ``mae.llm.keys``;
this module only words the refusal).

``app.py`` and the page (``mae.ui.demo``, ``mae.ui.run_tab``) call the small hooks below; everything
else of the demo is unchanged.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

from mae.config import Settings
from mae.device.virtual import VirtualPhone
from mae.errors import ConfigError
from mae.llm.base_urls import BaseUrlRefused, check_base_url
from mae.llm.keys import server_keys_refused
from mae.llm.providers import AGENT_ROLES
from mae.public_mode import is_public

SPACE_STEP_LIMIT = 12
"""Default step limit on a Space: a run costs the visitor's own tokens and shares a small CPU."""
MANUAL_OFF = (
    "On this public demo the phone is operated by your runs only (each visitor has a phone of their own)."
)


def space_id(environ: Mapping[str, str] | None = None) -> str | None:
    """The Space's id (``owner/name``) when running on Hugging Face Spaces, else ``None``."""
    environ = os.environ if environ is None else environ
    return environ.get("SPACE_ID", "").strip() or None


def apply_defaults(settings: Settings, environ: Mapping[str, str] | None = None) -> Settings:
    """``settings`` with the public defaults (virtual phone, short step limit, private data root) when
    the demo is public; unchanged otherwise. A step limit set through ``MAE_MAX_STEPS`` is kept, and so
    is ``MAE_OCR_MEM_ARENA`` (off by default there: concurrent visitors' OCR would leave onnxruntime's
    arena at their peak until the line empties)."""
    environ = os.environ if environ is None else environ
    if not is_public(environ):
        return settings
    steps = settings.loop.max_steps if environ.get("MAE_MAX_STEPS") else SPACE_STEP_LIMIT
    arena = settings.perception.ocr_mem_arena if environ.get("MAE_OCR_MEM_ARENA") else False
    root = Path(tempfile.mkdtemp(prefix="mae-space-"))
    return settings.model_copy(
        update={
            "device": "virtual",
            "loop": settings.loop.model_copy(update={"max_steps": steps}),
            "perception": settings.perception.model_copy(update={"ocr_mem_arena": arena}),
            "log_dir": root / "runs",
            "memory_dir": root / "memory",
        }
    )


def session_settings(settings: Settings, session_hash: str | None) -> Settings:
    """On a public demo, ``settings`` with a run folder and memory of this browser session alone (under
    the private root ``apply_defaults`` chose); unchanged elsewhere."""
    if not is_public():
        return settings
    if not session_hash or not re.fullmatch(r"[A-Za-z0-9_-]{4,128}", session_hash):
        raise ValueError("this browser session has no valid id; reload the page and try again")
    folder = hashlib.sha256(session_hash.encode()).hexdigest()[:24]  # the hash itself is never a path
    root = Path(settings.log_dir).parent / "sessions" / folder
    return settings.model_copy(update={"log_dir": root / "runs", "memory_dir": root / "memory"})


_PHONES: OrderedDict[str, VirtualPhone] = OrderedDict()
_PHONES_LOCK = threading.Lock()
MAX_SESSION_PHONES = 32
"""Virtual phones kept for recent sessions; the least recently used one is dropped beyond this."""


def session_phone(session_hash: str) -> VirtualPhone:
    """This browser session's own virtual phone (runs of different visitors never share a screen)."""
    with _PHONES_LOCK:
        phone = _PHONES.pop(session_hash, None) or VirtualPhone()
        _PHONES[session_hash] = phone
        while len(_PHONES) > MAX_SESSION_PHONES:
            _PHONES.popitem(last=False)
        return phone


def forget_phone(session_hash: str) -> None:
    """Drop this session's virtual phone (its run ended: the next run starts on a fresh phone)."""
    with _PHONES_LOCK:
        _PHONES.pop(session_hash, None)


def key_refusal(settings: Settings, session_keys: Mapping[str, str]) -> str | None:
    """Why a run must not start on a public deployment (a key it would take from the server), or
    ``None``. The message says what the visitor should do. Whether the server's keys are off is decided
    once, when the demo starts (``mae.llm.keys.configure_server_keys``)."""
    if server_keys_refused() is None:
        return None
    needed = []
    for role in AGENT_ROLES:
        env = settings.profile_for(role).api_key_env
        if env and not session_keys.get(env) and env not in needed:
            needed.append(env)
    if not needed:
        return None
    return (
        "This public demo does not use the server's API keys. Enter your own key for "
        f"{', '.join(needed)} under 'Per-agent models, API keys and safety'; it stays in this browser "
        "session only."
    )


def base_url_refusal(settings: Settings) -> str | None:
    """Why a run's base URLs may not be used on this public demo (a sentence), or None."""
    for role in AGENT_ROLES:
        try:
            check_base_url(settings.profile_for(role).base_url)
        except BaseUrlRefused as exc:
            text = str(exc)
            return f"{text[:1].upper()}{text[1:]}."
    return None


SESSION_TTL_ENV = "MAE_SESSION_TTL"
DEFAULT_SESSION_TTL_S = 3600.0


def session_ttl(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a visitor's session folder is kept after its last change (``MAE_SESSION_TTL``)."""
    environ = os.environ if environ is None else environ
    text = environ.get(SESSION_TTL_ENV, "").strip()
    try:
        value = float(text) if text else DEFAULT_SESSION_TTL_S
    except ValueError:
        raise ConfigError(f"{SESSION_TTL_ENV} must be a number of seconds, not {text!r}") from None
    if value <= 0:
        raise ConfigError(f"{SESSION_TTL_ENV} must be more than 0 seconds")
    return value


def last_change(folder: Path) -> float:
    """The newest modification time of ``folder`` or anything in it."""
    times = [folder.stat().st_mtime]
    times += [p.stat().st_mtime for p in folder.rglob("*") if not p.is_symlink()]
    return max(times)


def sweep_sessions(settings: Settings, busy: set[str], ttl_s: float, now: float | None = None) -> list[str]:
    """Remove the session folders unchanged for ``ttl_s`` seconds, except those of ``busy`` sessions
    (session hashes with a run going); the folder names removed."""
    root = Path(settings.log_dir).parent / "sessions"
    if not is_public() or not root.is_dir():
        return []
    now = time.time() if now is None else now
    keep = {hashlib.sha256(h.encode()).hexdigest()[:24] for h in busy}
    removed = []
    for folder in root.iterdir():
        if folder.name in keep or not folder.is_dir():
            continue
        try:
            if now - last_change(folder) > ttl_s:
                shutil.rmtree(folder)
                removed.append(folder.name)
        except OSError:  # removed meanwhile, or a file vanished while looking
            continue
    return removed


def banner(settings: Settings) -> str:
    """The note shown at the top of the page when the demo is public ('' elsewhere)."""
    if not is_public():
        return ""
    name = space_id()
    where = f"Hugging Face Space ({name})" if name else "Public demo"
    return (
        f"**{where}.** This demo drives the built-in virtual phone, stops after "
        f"{settings.loop.max_steps} steps by default, and needs **your own API key** (open "
        "'Per-agent models, API keys and safety'). Your runs and the memory they build are kept for this "
        "browser session only and are never shown to other visitors. Runs wait in line when the demo is busy."
    )
