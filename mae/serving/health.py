"""Health check of an OpenAI-compatible server: poll ``GET {base_url}/models`` until a model is listed.

Used for a vLLM server mae started (then a crash of the process ends the wait at once, with the tail
of its log) and for any server already running (``python -m mae models check``).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from mae.errors import MaeError

Progress = Callable[[str], None]


class ServeError(MaeError):
    """A local model server could not be started or reached. The message says what to do."""


class ServerNotReadyError(ServeError):
    """The server did not list the expected model in time, or exited before it was ready."""


class HealthReport(BaseModel):
    """A server that answered ``/models``."""

    base_url: str
    models: list[str]
    elapsed_s: float


class _Probe(Exception):
    """One failed attempt; the message says what was wrong. ``final``: a live server gave an answer that
    waiting will not change (no key, not an OpenAI-compatible server)."""

    def __init__(self, message: str, final: bool = False) -> None:
        super().__init__(message)
        self.final = final


class _Process(Protocol):
    def poll(self) -> int | None: ...


def log_tail(path: Path | None, lines: int = 25) -> str:
    """The last ``lines`` lines of a log file ('' when there is none)."""
    if path is None or not path.is_file():
        return ""
    with path.open("rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - 64 * 1024))
        text = handle.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def _with_tail(message: str, path: Path | None) -> str:
    tail = log_tail(path)
    if not tail:
        return message
    return f"{message}\n--- last lines of {path} ---\n{tail}"


def list_models(base_url: str, api_key: str | None = None, timeout_s: float = 5.0) -> list[str]:
    """The model ids a server lists at ``{base_url}/models``; ``ServeError`` saying why not."""
    try:
        return _fetch_models(base_url, api_key, timeout_s)
    except _Probe as exc:
        raise ServeError(str(exc)) from None


class ServedModel(BaseModel):
    """One entry of ``/models``: the name clients use and, from vLLM, the weights it loaded (``root``)."""

    id: str
    root: str | None = None
    shutdown_date: str | None = None
    """When the provider stops serving it (OpenAI's ``GET /models`` reports ``shutdown_date``)."""


def served_models(base_url: str, api_key: str | None = None, timeout_s: float = 5.0) -> list[ServedModel]:
    """The models a server lists, with vLLM's ``root`` when given; ``ServeError`` saying why not."""
    url = f"{base_url.rstrip('/')}/models"
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=max(0.1, timeout_s)) as response:
            data = json.loads(response.read())
        return [
            ServedModel(
                id=str(item["id"]),
                root=str(item["root"]) if item.get("root") else None,
                shutdown_date=str(item["shutdown_date"]) if item.get("shutdown_date") else None,
            )
            for item in data["data"]
        ]
    except (urllib.error.URLError, TimeoutError, OSError, ValueError, KeyError, TypeError) as exc:
        raise ServeError(f"{url} did not answer a model list ({exc})") from None


def _fetch_models(base_url: str, api_key: str | None, timeout_s: float) -> list[str]:
    url = f"{base_url.rstrip('/')}/models"
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=max(0.1, timeout_s)) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise _Probe(
                f"{url} refused the request (HTTP {exc.code}): the server needs an API key; set the variable "
                "named by --api-key-env / MAE_API_KEY_ENV",
                final=True,
            ) from None
        raise _Probe(
            f"{url} answered HTTP {exc.code}: is this an OpenAI-compatible server (base URL ends in /v1)?",
            final=exc.code < 500,
        ) from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise _Probe(f"no server answers at {url} ({reason})") from None
    try:
        data = json.loads(raw)
        return [str(item["id"]) for item in data["data"]]
    except (ValueError, KeyError, TypeError):
        raise _Probe(
            f"{url} did not answer a model list (expected JSON {{'data': [{{'id': ...}}]}})", final=True
        ) from None


def wait_for_model(
    base_url: str,
    model: str | None = None,
    *,
    timeout_s: float = 600.0,
    interval_s: float = 2.0,
    api_key: str | None = None,
    progress: Progress | None = None,
    progress_every_s: float = 15.0,
    process: _Process | None = None,
    log_path: Path | None = None,
) -> HealthReport:
    """Poll ``{base_url}/models`` until it lists ``model`` (any model when ``None``).

    Raises ``ServerNotReadyError`` after ``timeout_s`` (the last problem and the log tail in the message),
    at once when ``process`` has exited, and at once when a server answers but waiting cannot help: it
    lists other models (another server on that port, or another served name), wants an API key, or is
    not OpenAI-compatible. ``timeout_s=0`` makes one attempt.
    """
    start = time.monotonic()
    deadline = start + max(0.0, timeout_s)
    last_report = start
    problem = "not tried"
    while True:
        remaining = deadline - time.monotonic()
        try:
            models = _fetch_models(base_url, api_key, min(5.0, max(0.5, remaining)))
        except _Probe as exc:
            if exc.final:
                raise ServerNotReadyError(str(exc)) from None
            problem = str(exc)
        else:
            elapsed = round(time.monotonic() - start, 2)
            if model is None or model in models:
                return HealthReport(base_url=base_url, models=models, elapsed_s=elapsed)
            listed = ", ".join(models) or "no models"
            raise ServerNotReadyError(
                f"the server at {base_url} serves {listed}, not {model}. Start it with --served-model-name "
                f"{model}, or point mae at what it serves (MAE_MODEL={models[0] if models else '...'}), or "
                "use another port"
            )
        if process is not None and process.poll() is not None:
            raise ServerNotReadyError(
                _with_tail(f"the server exited with code {process.poll()} before it was ready", log_path)
            )
        now = time.monotonic()
        if now >= deadline:
            waited = f" after {timeout_s:g} s" if timeout_s else ""
            raise ServerNotReadyError(_with_tail(f"{problem}{waited}", log_path))
        if progress is not None and now - last_report >= progress_every_s:
            last_report = now
            status = log_tail(log_path, lines=1).strip()[-160:] or problem
            progress(f"waiting for {model or 'a model'} at {base_url} ({now - start:.0f} s): {status}")
        _pause(min(interval_s, deadline - now), process)


def _pause(seconds: float, process: _Process | None) -> None:
    """Sleep, waking early when ``process`` exits."""
    end = time.monotonic() + max(0.0, seconds)
    while (left := end - time.monotonic()) > 0:
        if process is not None and process.poll() is not None:
            return
        time.sleep(min(left, 0.2))
