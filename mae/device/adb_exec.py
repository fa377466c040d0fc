"""The one place that talks to adb, and the translation of adb failures into ``DeviceError``.

``_exec(args)`` runs one adb command given as the argument list of the ``adb`` command line
(``["-s", "R58M", "shell", "input", "tap", "540", "1200"]``, ``["devices", "-l"]``) through adbutils'
socket protocol and returns its output. It is the lowest function of the ADB device layer: tests
replace it with a recorder that replays captured outputs, so everything above it runs for real.
``run_adb`` wraps it with logging and turns every adb failure into a ``DeviceError`` that says what
to do.
"""

from __future__ import annotations

import logging
import os
import shlex
import socket
import subprocess
import time

from adbutils import AdbClient, AdbDevice, adb_path
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from mae.errors import DeviceError

log = logging.getLogger("mae.device.adb")

SHELL_TIMEOUT_S = 20.0
"""Socket timeout of one shell or exec-out command."""

HOST_TIMEOUT_S = 5.0
"""Socket timeout of server-level commands (``devices``, ``get-state``)."""

SERVER_PROBE_TIMEOUT_S = 0.5
"""How long to wait for the adb server's TCP port before deciding it is not running."""

SERVER_START_TIMEOUT_S = 10.0
"""Cap on ``adb start-server`` when the server is not running and auto-start is allowed."""

AUTOSTART_ENV = "MAE_ADB_AUTOSTART"
"""Set to ``0`` to never start an adb server (e.g. on a hosted demo with no USB)."""

_devices: dict[tuple[str, int, str], AdbDevice] = {}


def server_address() -> tuple[str, int]:
    """Host and port of the adb server, as adb itself reads them from the environment."""
    host = os.environ.get("ANDROID_ADB_SERVER_HOST") or "127.0.0.1"
    port = int(os.environ.get("ANDROID_ADB_SERVER_PORT") or 5037)
    return host, port


def autostart_allowed() -> bool:
    """Whether a missing local adb server may be started (``MAE_ADB_AUTOSTART``, default on)."""
    return os.environ.get(AUTOSTART_ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


def _server_listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=SERVER_PROBE_TIMEOUT_S):
            return True
    except OSError:
        return False


def _ensure_server() -> None:
    """Make sure an adb server answers, starting a local one if allowed; else ``AdbConnectionError``."""
    host, port = server_address()
    if _server_listening(host, port):
        return
    local = host in {"127.0.0.1", "localhost", "::1"}
    if not (local and autostart_allowed()):
        raise AdbConnectionError(f"connect to adb server failed: nothing listens on {host}:{port}")
    try:
        subprocess.run(
            [adb_path(), "-P", str(port), "start-server"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=SERVER_START_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AdbConnectionError(f"connect to adb server failed: `adb start-server` failed ({exc})") from exc
    if not _server_listening(host, port):
        raise AdbConnectionError(
            f"connect to adb server failed: {host}:{port} is still closed after `adb start-server`"
        )


def _device(serial: str | None) -> AdbDevice:
    if not serial:
        raise ValueError("this adb command needs a serial: pass ['-s', SERIAL, ...]")
    host, port = server_address()
    key = (host, port, serial)
    if key not in _devices:
        _devices[key] = AdbClient(host=host, port=port).device(serial)
    return _devices[key]


def _exec(args: list[str], *, binary: bool = False, timeout: float = SHELL_TIMEOUT_S) -> bytes | str:
    """Run one adb command (the arguments after ``adb``) and return what it prints.

    Supported: ``devices -l``, ``connect HOST:PORT``, ``-s S get-state``, ``-s S shell ...`` and
    ``-s S exec-out ...`` (raw bytes, no pty, no temp file). As with the adb command line, the words
    after ``shell``/``exec-out`` are joined by spaces and run by the phone's ``sh``. Raises adbutils'
    errors, ``EOFError`` or ``OSError`` unchanged; ``run_adb`` translates them.
    """
    serial: str | None = None
    rest = list(args)
    if rest[:1] == ["-s"]:
        serial, rest = rest[1], rest[2:]
    command, params = rest[0], rest[1:]
    _ensure_server()
    host, port = server_address()
    client = AdbClient(host=host, port=port, socket_timeout=timeout)
    output: bytes | str
    if command == "devices":
        with client.make_connection(timeout=timeout) as conn:
            conn.send_command("host:devices-l" if "-l" in params else "host:devices")
            conn.check_okay()
            output = "List of devices attached\n" + conn.read_string_block()
    elif command == "connect":
        output = client.connect(params[0], timeout=timeout)
    elif command == "get-state":
        output = _device(serial).get_state()
    elif command == "shell":
        result = _device(serial).shell2(" ".join(params), timeout=timeout, encoding=None, v2=True)
        output = result.output
    elif command == "exec-out":
        with _device(serial).open_transport(timeout=timeout) as conn:
            conn.send_command("exec:" + " ".join(params))
            conn.check_okay()
            output = conn.read_until_close(encoding=None)
    else:
        raise ValueError(f"unsupported adb command: {command}")
    if binary:
        return output.encode() if isinstance(output, str) else output
    return output.decode("utf-8", errors="replace") if isinstance(output, bytes) else output


def server_version() -> int:
    """The adb server's protocol version (41 for current platform-tools); ``DeviceError`` if none answers."""
    try:
        _ensure_server()
        host, port = server_address()
        return int(AdbClient(host=host, port=port, socket_timeout=HOST_TIMEOUT_S).server_version())
    except DeviceError:
        raise
    except Exception as exc:
        raise translate_error(exc, ["version"], HOST_TIMEOUT_S) from exc


def command_line(args: list[str]) -> str:
    """``args`` as the adb command a user could type (the shell part as the phone's sh sees it)."""
    words = list(args)
    for verb in ("shell", "exec-out"):
        if verb in words:
            i = words.index(verb)
            return " ".join(["adb", *map(shlex.quote, words[: i + 1]), shlex.quote(" ".join(words[i + 1 :]))])
    return " ".join(["adb", *map(shlex.quote, words)])


def run_adb(args: list[str], *, binary: bool = False, timeout: float = SHELL_TIMEOUT_S) -> bytes | str:
    """Run one adb command through ``_exec``; every failure becomes a ``DeviceError`` saying what to do."""
    started = time.monotonic()
    try:
        output = _exec(args, binary=binary, timeout=timeout)
    except DeviceError:
        raise
    except Exception as exc:
        raise translate_error(exc, args, timeout) from exc
    log.debug("%s  (%.3f s)", command_line(args), time.monotonic() - started)
    return output


def _serial_of(args: list[str]) -> str | None:
    return args[1] if args[:1] == ["-s"] and len(args) > 1 else None


def translate_error(exc: BaseException, args: list[str], timeout: float = SHELL_TIMEOUT_S) -> DeviceError:
    """The ``DeviceError`` (with advice) for an exception raised while running ``adb args``."""
    serial = _serial_of(args) or "the phone"
    what = command_line(args)
    detail = str(exc).strip()
    low = detail.lower()
    if isinstance(exc, AdbConnectionError) or "connect to adb server" in low:
        host, port = server_address()
        return DeviceError(
            f"cannot reach the adb server at {host}:{port} ({detail}). Start it with `adb start-server` "
            f"(adbutils ships an adb binary: {adb_path()}), or set ANDROID_ADB_SERVER_HOST / "
            f"ANDROID_ADB_SERVER_PORT if it runs elsewhere."
        )
    if isinstance(exc, AdbTimeout | TimeoutError | socket.timeout):
        return DeviceError(
            f"{serial} did not answer within {timeout:.0f} s while running `{what}`: unlock the phone and "
            "check the cable or Wi-Fi; if adb itself is stuck, run `adb kill-server` and retry."
        )
    if "unauthorized" in low:
        return unauthorized_error(serial)
    if "offline" in low:
        return offline_error(serial)
    if "not found" in low and "device" in low:
        return DeviceError(
            f"{serial} is not attached any more (disconnected while running `{what}`). Check the USB cable "
            "or Wi-Fi connection, run `python -m mae device list`, then retry."
        )
    if isinstance(exc, EOFError | ConnectionError | OSError) or "closed" in low:
        return DeviceError(
            f"lost the connection to {serial} in the middle of `{what}` ({detail or type(exc).__name__}). "
            "Check the USB cable or Wi-Fi connection, run `python -m mae device list`, then retry."
        )
    if isinstance(exc, AdbError):
        return DeviceError(f"adb failed running `{what}`: {detail}")
    return DeviceError(f"unexpected failure running `{what}`: {type(exc).__name__}: {detail}")


def unauthorized_error(serial: str) -> DeviceError:
    """The error for a phone that has not accepted this computer's RSA key."""
    return DeviceError(
        f"{serial} has not authorized this computer: unlock the phone and accept the 'Allow USB "
        "debugging?' prompt (RSA key fingerprint), ticking 'Always allow from this computer'. No prompt? "
        "In Developer options tap 'Revoke USB debugging authorizations', then unplug and replug the phone."
    )


def offline_error(serial: str) -> DeviceError:
    """The error for a phone adb lists as offline."""
    return DeviceError(
        f"{serial} is offline: unplug and replug it (or run `adb reconnect offline`); over Wi-Fi run "
        f"`adb disconnect {serial}` then `adb connect {serial}`. If it stays offline, restart adb with "
        "`adb kill-server`."
    )
