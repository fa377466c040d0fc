"""``python -m mae device {list,screenshot,do,shell,doctor}``: see, operate and check a phone."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from PIL import Image

from mae.actions.reading import parse_action_text
from mae.actions.registry import INITIAL_SHORTCUTS, ActionCall, resolve_call, run_steps
from mae.device import VIRTUAL, open_device
from mae.device.base import Device
from mae.errors import ConfigError, DeviceError, MaeError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``device`` subcommand and its ``list``, ``screenshot``, ``do`` and ``shell`` actions."""
    parser = subparsers.add_parser(
        "device",
        help="list, screenshot and operate phones (ADB or virtual)",
        description=f"List, screenshot and operate phones. With the virtual phone, {FRESH_VIRTUAL}.",
    )

    def show_help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    parser.set_defaults(func=show_help)
    actions = parser.add_subparsers(dest="device_command", metavar="ACTION")

    listing = actions.add_parser("list", help="attached ADB phones, plus the built-in virtual phone")
    listing.set_defaults(func=cmd_list)

    shot = actions.add_parser("screenshot", help="save the phone's screen as an image")
    _add_device_option(shot)
    shot.add_argument("-o", "--output", required=True, type=Path, help="image file to write (.png, .jpg)")
    shot.set_defaults(func=cmd_screenshot)

    do = actions.add_parser("do", help="run one atomic operation, e.g. 'Tap(540, 1200)' or 'Type(\"hi\")'")
    _add_device_option(do)
    do.add_argument("action", help="the operation, as the Operator writes it: 'Open_App(\"Maps\")', 'Back()'")
    do.add_argument("--screenshot", type=Path, help="also save the settled screen afterwards to this file")
    do.set_defaults(func=cmd_do)

    shell = actions.add_parser(
        "shell", help="keep one phone open and run operations typed one per line (screenshot FILE, quit)"
    )
    _add_device_option(shell)
    shell.set_defaults(func=cmd_shell)

    doctor = actions.add_parser(
        "doctor",
        help="check an attached phone: versions, screen, screenshots, uiautomator, keyboard, typing, taps",
    )
    doctor.add_argument(
        "serial",
        nargs="?",
        default=None,
        metavar="SERIAL",
        help="ADB serial or HOST:PORT (default: the only phone)",
    )
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(func=cmd_doctor)

    for sub in (listing, shot, do, shell, doctor):
        sub.add_argument("-v", "--verbose", action="store_true", help="print every adb command issued")


def _add_device_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--device",
        default=None,
        metavar="SERIAL",
        help="ADB serial, HOST:PORT for Wi-Fi, or 'virtual' (default: the only phone attached, else virtual)",
    )


def _verbose(args: argparse.Namespace) -> None:
    if getattr(args, "verbose", False):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("  %(message)s"))
        logger = logging.getLogger("mae.device")
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)


def cmd_list(args: argparse.Namespace) -> int:
    """Print the ADB devices (with advice for unusable ones) and the virtual phone; always exit 0."""
    _verbose(args)
    from mae.device.adb_devices import NO_DEVICE_HELP, list_devices, state_error

    print("ADB phones:")
    try:
        devices = list_devices()
    except DeviceError as exc:
        print(f"  none: {exc}")
    else:
        if not devices:
            print(f"  none attached: {NO_DEVICE_HELP}")
        width = max((len(d.serial) for d in devices), default=0)
        for info in devices:
            details = ", ".join(part for part in (info.model, info.transport) if part)
            print(f"  {info.serial:<{width}}  {info.state:<13} {details}")
            error = state_error(info)
            if error is not None:
                print(f"  {'':<{width}}  -> {error}")
    print("Virtual phone:")
    try:
        import mae.device.virtual as virtual

        available = hasattr(virtual, "VirtualPhone")
    except Exception:  # a broken optional part must not break the listing
        available = False
    note = "built-in virtual phone, no hardware needed" if available else "not available in this install"
    print(f"  {VIRTUAL}  ({note})")
    return 0


FRESH_VIRTUAL = (
    "each command starts a fresh virtual phone on its home screen, so nothing carries over to the next "
    "command; `python -m mae device shell` keeps one phone for many operations"
)
SHELL_HELP = (
    "type one operation per line, as the Operator writes it (Open_App(Notes), Tap(540, 1200), Back(), "
    "...), or: screenshot FILE, help, quit"
)


def _open(args: argparse.Namespace, fresh_note: bool = True) -> Device:
    device = open_device(args.device)
    fresh = f" ({FRESH_VIRTUAL})" if fresh_note and device.name == VIRTUAL else ""
    print(f"device: {device.name}{fresh}", file=sys.stderr)
    return device


def _check_image_path(path: Path) -> None:
    """``ConfigError`` (before touching the phone) when ``path`` has no image extension Pillow writes."""
    extension = path.suffix.lower()
    if extension not in Image.registered_extensions():
        raise ConfigError(f"cannot save a screenshot as {path.name!r}: end the file name in .png or .jpg")
    if path.is_dir():
        raise ConfigError(f"{path} is a folder: name a file such as {path / 'screen.png'}")


def cmd_screenshot(args: argparse.Namespace) -> int:
    """Save one screenshot of the chosen device."""
    _check_image_path(args.output)
    _verbose(args)
    device = _open(args)
    try:
        started = time.monotonic()
        image = device.screenshot()
        elapsed = time.monotonic() - started
        args.output.parent.mkdir(parents=True, exist_ok=True)
        image.save(args.output)
    finally:
        device.close()
    method = getattr(device, "screenshot_method", None)
    timings = getattr(device, "screenshot_timings", None)
    how = f" via {method}" if method else ""
    measured = (
        " (measured: " + ", ".join(f"{k} {v:.2f} s" for k, v in timings.items()) + ")" if timings else ""
    )
    print(f"saved {args.output} ({image.width}x{image.height}{how}, {elapsed:.2f} s){measured}")
    return 0


def cmd_do(args: argparse.Namespace) -> int:
    """Run one atomic operation (or the initial Shortcut) on the chosen device, then settle."""
    if args.screenshot:
        _check_image_path(args.screenshot)
    _verbose(args)
    call = parse_action_text(args.action)
    device = _open(args)
    try:
        _run_action(device, call)
        if args.screenshot:
            _save_screen(device, args.screenshot)
    finally:
        device.close()
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """Check the phone and print what works and what to change; exit 1 when mae cannot use it."""
    _verbose(args)
    from mae.device.adb_doctor import run_doctor

    if args.serial == VIRTUAL:
        raise ConfigError("the doctor checks phones on ADB; the virtual phone needs no check")

    def progress(step: str) -> None:
        if not args.json:
            print(f"checking {step}...", file=sys.stderr)

    report = run_doctor(args.serial, progress=progress)
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        print(report.text())
    return 1 if report.verdict == "not usable" else 0


def _run_action(device: Device, call: ActionCall) -> None:
    steps = resolve_call(call, INITIAL_SHORTCUTS, screen=device.screen_size())
    started = time.monotonic()
    run_steps(device, steps)
    elapsed = time.monotonic() - started
    settle = getattr(device, "last_settle_s", None)
    settled = f", settled in {settle:.2f} s" if isinstance(settle, float) else ""
    print(f"done: {'; '.join(str(s) for s in steps)} ({elapsed:.2f} s{settled})", flush=True)


def _save_screen(device: Device, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    device.screenshot().save(path)
    print(f"saved {path}", flush=True)


def cmd_shell(args: argparse.Namespace) -> int:
    """Keep one device open and run what is typed, line by line, until ``quit`` or the end of input; a
    line that fails says why and the shell goes on. Exit status 1 when lines read from a file or a pipe
    failed."""
    _verbose(args)
    device = _open(args, fresh_note=False)
    interactive = sys.stdin.isatty()
    print(f"{device.name} is open until quit: {SHELL_HELP}", file=sys.stderr)
    failed = 0
    try:
        while True:
            if interactive:
                print("mae> ", end="", file=sys.stderr, flush=True)
            line = sys.stdin.readline()
            outcome = _shell_line(device, line.strip()) if line else None
            if outcome is None:
                return 1 if failed and not interactive else 0
            failed += not outcome
    finally:
        device.close()


def _shell_line(device: Device, line: str) -> bool | None:
    """Run one line of ``device shell``: whether it worked, None when it asks to leave."""
    word = line.split(maxsplit=1)[0].lower() if line else ""
    if word in ("quit", "exit"):
        return None
    try:
        if not line or line.startswith("#"):
            pass
        elif word == "help":
            print(SHELL_HELP, flush=True)
        elif word == "screenshot":
            target = line.split(maxsplit=1)[1:]
            if not target:
                raise ConfigError("say where to save it: screenshot FILE.png")
            path = Path(target[0])
            _check_image_path(path)
            _save_screen(device, path)
        else:
            _run_action(device, parse_action_text(line))
    except MaeError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return False
    return True
