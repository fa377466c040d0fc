"""Which phones adb sees, and choosing one: by serial, the only one attached, or ``host:port`` over Wi-Fi."""

from __future__ import annotations

import os
import re

from pydantic import BaseModel

from mae.device import adb_exec
from mae.device.adb_exec import HOST_TIMEOUT_S, offline_error, unauthorized_error
from mae.errors import DeviceError

CONNECT_TIMEOUT_S = 10.0
_NETWORK_SERIAL = re.compile(r"^[\w.\-\[\]:]+:\d{1,5}$")

NO_DEVICE_HELP = (
    "connect a phone by USB with USB debugging on (Settings > About phone: tap 'Build number' 7 times; "
    "then Developer options > USB debugging), or over Wi-Fi with --device HOST:PORT (see docs/device.md); "
    "without a phone, use --device virtual"
)


class AdbDeviceInfo(BaseModel):
    """One line of ``adb devices -l``."""

    serial: str
    state: str
    model: str = ""
    product: str = ""
    usb: str = ""

    @property
    def transport(self) -> str:
        if self.usb:
            return "usb"
        if is_network_serial(self.serial):
            return "wifi"
        return "emulator" if self.serial.startswith("emulator-") else "other"


def is_network_serial(serial: str) -> bool:
    """Whether ``serial`` is a ``host:port`` address (ADB over Wi-Fi / TCP)."""
    return bool(_NETWORK_SERIAL.match(serial))


def parse_devices(output: str) -> list[AdbDeviceInfo]:
    """The devices in ``adb devices -l`` output (header, daemon notices and blank lines skipped)."""
    infos: list[AdbDeviceInfo] = []
    for line in output.splitlines():
        text = line.strip()
        if not text or text.startswith(("List of devices", "*", "adb server")):
            continue
        serial, _, rest = text.replace("\t", " ").partition(" ")
        rest = rest.strip()
        if rest.startswith("no permissions"):
            state = "no permissions"
        else:
            state = rest.split()[0] if rest else "unknown"
        tags = dict(
            tok.split(":", 1) for tok in rest.split() if re.match(r"^(usb|product|model|device):", tok)
        )
        infos.append(
            AdbDeviceInfo(
                serial=serial,
                state=state,
                model=tags.get("model", "").replace("_", " "),
                product=tags.get("product", ""),
                usb=tags.get("usb", ""),
            )
        )
    return infos


def list_devices() -> list[AdbDeviceInfo]:
    """Every device adb knows, in any state. Raises ``DeviceError`` if the adb server cannot be reached."""
    output = adb_exec.run_adb(["devices", "-l"], timeout=HOST_TIMEOUT_S)
    return parse_devices(str(output))


def attached_serials() -> list[str]:
    """Serials of the phones ready to use; ``[]`` when none, or when no adb server can be reached."""
    try:
        return [info.serial for info in list_devices() if info.state == "device"]
    except DeviceError:
        return []


def state_error(info: AdbDeviceInfo) -> DeviceError | None:
    """The error for a device adb lists but that cannot be used (``None`` when it is ready)."""
    state = info.state
    if state == "device":
        return None
    if state in {"unauthorized", "authorizing"}:
        return unauthorized_error(info.serial)
    if state in {"offline", "connecting"}:
        return offline_error(info.serial)
    if state == "no permissions":
        return DeviceError(
            f"{info.serial}: this user may not open the USB device. Add a udev rule for Android phones "
            "(e.g. install the 'android-sdk-platform-tools-common' package, or see "
            "https://developer.android.com/studio/run/device), add yourself to the plugdev group, replug."
        )
    return DeviceError(
        f"{info.serial} is in state {state!r}: boot the phone normally and unlock it, then retry"
    )


def connect(address: str) -> None:
    """``adb connect host:port``; raises ``DeviceError`` saying how to enable ADB over Wi-Fi."""
    output = str(adb_exec.run_adb(["connect", address], timeout=CONNECT_TIMEOUT_S)).strip()
    low = output.lower()
    if low.startswith(("connected to", "already connected to")):
        return
    if "authenticate" in low:
        raise unauthorized_error(address)
    raise DeviceError(
        f"cannot connect to {address} over Wi-Fi ({output or 'no answer'}). Put the phone and this computer "
        "on the same network; on Android 11+ turn on Developer options > Wireless debugging and pair once "
        "with `adb pair HOST:PAIRING_PORT`, then use the address it shows; on older phones run "
        "`adb tcpip 5555` while on USB, then use --device PHONE_IP:5555."
    )


def select_serial(serial: str | None) -> str:
    """The serial of the phone to use: ``serial`` (connecting ``host:port`` over Wi-Fi if needed), else
    ``$ANDROID_SERIAL``, else the only phone attached. Raises ``DeviceError`` saying what to do."""
    serial = serial or os.environ.get("ANDROID_SERIAL") or None
    devices = list_devices()
    if serial is None:
        ready = [info for info in devices if info.state == "device"]
        if len(ready) == 1:
            return ready[0].serial
        if len(ready) > 1:
            listed = ", ".join(info.serial for info in ready)
            raise DeviceError(f"several phones are attached ({listed}): choose one with --device SERIAL")
        for listed_info in devices:
            error = state_error(listed_info)
            if error is not None:
                raise error
        raise DeviceError(f"no Android phone is attached over ADB: {NO_DEVICE_HELP}")
    info: AdbDeviceInfo | None = next((d for d in devices if d.serial == serial), None)
    if is_network_serial(serial) and (info is None or info.state != "device"):
        connect(serial)
        info = next((d for d in list_devices() if d.serial == serial), None)
    if info is None:
        attached = ", ".join(d.serial for d in devices) or "none"
        raise DeviceError(
            f"no phone with serial {serial!r} is attached (attached: {attached}); "
            "run `python -m mae device list` to see the serials"
        )
    error = state_error(info)
    if error is not None:
        raise error
    return serial
