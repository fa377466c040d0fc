"""Command line and server options of the demo (``python app.py --help``).

The server binds 127.0.0.1 unless told otherwise; Gradio's own ``GRADIO_SERVER_NAME`` and
``GRADIO_SERVER_PORT`` are honoured (Hugging Face Spaces set them), then ``--host``/``--port``.
``MAE_AUTH=user:password`` turns on a login, ``MAE_SHARE=1`` a public share link, and
``MAE_APPROVAL_TIMEOUT`` (seconds, default 300) bounds how long a sensitive action waits for an answer.
Uploads are limited to ``MAX_UPLOAD`` and kept in a temporary folder of this server alone (under mae's
data folder, unless ``GRADIO_TEMP_DIR`` names one), removed when the server stops (Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from mae.errors import ConfigError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7860
TRUE_WORDS = {"1", "true", "yes", "on"}
MAX_UPLOAD = "20mb"
"""Largest file Gradio accepts on its upload route (the demo itself takes no uploads on the Run tab)."""
TEMP_ENV = "GRADIO_TEMP_DIR"
STALE_TEMP_S = 86_400.0
"""A leftover temp folder of a server that did not stop cleanly is removed after a day."""


def use_private_temp_dir(
    environ: dict[str, str] | None = None, base: Path | None = None, now: float | None = None
) -> Path | None:
    """Point Gradio's uploads (``GRADIO_TEMP_DIR``) at a new folder of this server under mae's data
    folder, not the machine-wide one other Gradio servers share; the folder, or None when the operator
    chose one. Leftovers older than a day from servers that did not stop cleanly are removed."""
    environ = os.environ if environ is None else environ  # type: ignore[assignment]
    assert environ is not None
    if environ.get(TEMP_ENV, "").strip():
        return None
    base = base or Path(user_data_dir("mae")) / "gradio-tmp"
    base.mkdir(parents=True, exist_ok=True)
    now = time.time() if now is None else now
    for old in base.iterdir():
        try:
            if old.is_dir() and now - old.stat().st_mtime > STALE_TEMP_S:
                shutil.rmtree(old)
        except OSError:
            continue
    folder = Path(tempfile.mkdtemp(prefix="server-", dir=base))
    environ[TEMP_ENV] = str(folder)
    return folder


def remove_private_temp_dir(folder: Path | None, environ: dict[str, str] | None = None) -> None:
    """Remove the folder ``use_private_temp_dir`` made (nothing when it made none)."""
    if folder is None:
        return
    shutil.rmtree(folder, ignore_errors=True)
    environ = os.environ if environ is None else environ  # type: ignore[assignment]
    assert environ is not None
    if environ.get(TEMP_ENV) == str(folder):
        del environ[TEMP_ENV]


def stop_on_sigterm() -> None:
    """Let SIGTERM end the server the way Ctrl-C does, so its clean-up (the temp folder) runs."""

    def stop(_signum: int, _frame: Any) -> None:
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="app.py",
        description="Mobile-Agent-E demo: operate a phone (or the built-in virtual phone) from a browser.",
    )
    parser.add_argument(
        "--device", help="ADB serial or 'virtual' (default: the attached phone, else virtual)"
    )
    parser.add_argument(
        "--backbone", help="model preset (openai, anthropic, google, dashscope, vllm) or custom"
    )
    parser.add_argument(
        "--base-url", help="OpenAI-compatible base URL (for --backbone custom or to override)"
    )
    parser.add_argument("--model", help="model name (overrides the preset's)")
    parser.add_argument("--profile", help="settings profile file (TOML); default $MAE_PROFILE")
    parser.add_argument("--max-steps", type=int, help="default step limit shown in the UI")
    parser.add_argument("--log-dir", help="trajectory directory (default runs/, or $MAE_LOG_DIR)")
    parser.add_argument("--memory-dir", help="long-term memory directory (default $MAE_MEMORY_DIR)")
    parser.add_argument(
        "--host",
        help=f"address to bind (default $GRADIO_SERVER_NAME, else {DEFAULT_HOST}: this machine only)",
    )
    parser.add_argument("--port", type=int, help=f"port (default $GRADIO_SERVER_PORT, else {DEFAULT_PORT})")
    parser.add_argument(
        "--share", action="store_true", help="create a public gradio.live link (or MAE_SHARE=1)"
    )
    return parser


def settings_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The ``load_settings`` overrides given on the command line (absent flags change nothing)."""
    return {
        "device": args.device,
        "backbone": args.backbone,
        "base_url": args.base_url,
        "model": args.model,
        "loop.max_steps": args.max_steps,
        "log_dir": args.log_dir,
        "memory_dir": args.memory_dir,
    }


@dataclass
class ServerOptions:
    """How the Gradio server is started."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    share: bool = False
    auth: tuple[str, str] | None = None

    def launch_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"server_name": self.host, "server_port": self.port, "share": self.share}
        if self.auth is not None:
            kwargs["auth"] = self.auth
            kwargs["auth_message"] = "Log in to the Mobile-Agent-E demo."
        return kwargs


def parse_auth(value: str) -> tuple[str, str]:
    """``user:password`` -> ``(user, password)``; ``ConfigError`` if malformed."""
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise ConfigError("MAE_AUTH must look like user:password (both non-empty)")
    return user, password


def server_options(
    args: argparse.Namespace | None = None, environ: Mapping[str, str] | None = None
) -> ServerOptions:
    """Host, port, share and login from the command line and the environment."""
    environ = os.environ if environ is None else environ
    host = (args.host if args else None) or environ.get("GRADIO_SERVER_NAME") or DEFAULT_HOST
    port_text = (str(args.port) if args and args.port else None) or environ.get("GRADIO_SERVER_PORT")
    try:
        port = int(port_text) if port_text else DEFAULT_PORT
    except ValueError:
        raise ConfigError(f"GRADIO_SERVER_PORT must be a port number, not {port_text!r}") from None
    share = bool(args and args.share) or environ.get("MAE_SHARE", "").strip().lower() in TRUE_WORDS
    auth_text = environ.get("MAE_AUTH", "").strip()
    return ServerOptions(host=host, port=port, share=share, auth=parse_auth(auth_text) if auth_text else None)


def approval_timeout(environ: Mapping[str, str] | None = None, default: float = 300.0) -> float:
    """Seconds a sensitive action waits for an answer before it is rejected (``MAE_APPROVAL_TIMEOUT``)."""
    environ = os.environ if environ is None else environ
    text = environ.get("MAE_APPROVAL_TIMEOUT", "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"MAE_APPROVAL_TIMEOUT must be a number of seconds, not {text!r}") from None
    if value <= 0:
        raise ConfigError("MAE_APPROVAL_TIMEOUT must be more than 0 seconds")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return build_parser().parse_args(argv)
