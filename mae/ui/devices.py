"""Phones for the demo: the device picker's choices, one shared open device per name, manual control.

The pool keeps one ``Device`` object per name for the life of the server, so the phone view, manual
control and runs all see the same phone (and the per-device run lock of ``mae.device.lock`` applies to
that one object). Manual control takes the same lock briefly, so it never interleaves with a run.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

from PIL import Image

from mae.actions.registry import make_atomic
from mae.device import VIRTUAL, open_device
from mae.device.base import Device
from mae.device.lock import DeviceLock, device_busy
from mae.errors import DeviceBusyError, DeviceError

DISPLAY_WIDTH = 540
"""Width the phone view is sent to the browser at (screens are scaled down to save bandwidth)."""

MANUAL_OPS = ("Back", "Home", "Switch_App")


def device_choices(serials: list[str]) -> list[tuple[str, str]]:
    """(label, value) pairs for the device picker: attached ADB phones, then the virtual phone."""
    return [(f"ADB phone {serial}", serial) for serial in serials] + [("Virtual phone (built in)", VIRTUAL)]


def default_device(serials: list[str], preferred: str | None = None) -> str:
    """``preferred`` if given, else the first attached phone, else the virtual phone."""
    if preferred:
        return preferred
    return serials[0] if serials else VIRTUAL


def attached(lister: Callable[[], list[str]] | None = None) -> list[str]:
    """Serials of the attached ADB phones (empty when adb cannot be reached)."""
    if lister is None:
        from mae.device.adb import attached_serials

        lister = attached_serials
    try:
        return list(lister())
    except Exception:  # the picker must still offer the virtual phone
        return []


def display_size(size: tuple[int, int], width: int = DISPLAY_WIDTH) -> tuple[int, int]:
    """The size a screen of ``size`` is shown at: ``width`` pixels wide at most, aspect kept."""
    if size[0] <= width:
        return size
    return width, max(1, round(size[1] * width / size[0]))


def display_image(image: Image.Image, width: int = DISPLAY_WIDTH) -> Image.Image:
    """``image`` scaled to ``width`` pixels wide (never enlarged)."""
    size = display_size(image.size, width)
    return image if size == image.size else image.resize(size, Image.Resampling.LANCZOS)


def to_screen(point: Any, shown: tuple[int, int], screen: tuple[int, int]) -> tuple[int, int]:
    """Map a click at ``point`` (pixels of the image shown, size ``shown``) to screen pixels.

    Raises ``ValueError`` when the click lies outside the image.
    """
    if not isinstance(point, list | tuple) or len(point) != 2:
        raise ValueError("click on the phone screen")
    x, y = float(point[0]), float(point[1])
    if not (0 <= x < shown[0] and 0 <= y < shown[1]):
        raise ValueError("click inside the phone screen")
    sx = min(screen[0] - 1, max(0, round(x * screen[0] / shown[0])))
    sy = min(screen[1] - 1, max(0, round(y * screen[1] / shown[1])))
    return sx, sy


class DevicePool:
    """One open ``Device`` per name, shared by every session of the server."""

    def __init__(self, opener: Callable[[str], Device] = open_device) -> None:
        self._opener = opener
        self._devices: dict[str, Device] = {}
        self._lock = threading.Lock()
        self.only: frozenset[str] | None = None
        """The only device names this pool opens (a public demo: the virtual phone); None = any."""

    def restrict(self, names: frozenset[str]) -> None:
        """From now on open only ``names``: any other name is refused before anything touches ADB."""
        self.only = names

    def check(self, name: str) -> None:
        """``DeviceError`` when this pool may not open ``name``."""
        if self.only is not None and name not in self.only:
            raise DeviceError("this public demo drives only the built-in virtual phone: pick it in Phone")

    def get(self, name: str) -> Device:
        """The device called ``name`` (opened on first use); ``DeviceError`` if it cannot be opened."""
        self.check(name)
        with self._lock:
            device = self._devices.get(name)
            if device is None:
                device = self._opener(name)
                self._devices[name] = device
            return device

    def forget(self, name: str) -> None:
        """Close and drop a device (e.g. after it was unplugged)."""
        with self._lock:
            device = self._devices.pop(name, None)
        if device is not None:
            device.close()

    def busy(self, name: str) -> bool:
        with self._lock:
            device = self._devices.get(name)
        return device is not None and device_busy(device)

    def close(self) -> None:
        with self._lock:
            devices, self._devices = list(self._devices.values()), {}
        for device in devices:
            device.close()


def manual_action(
    device: Device, name: str, arguments: dict[str, Any] | None = None, *, paused_run: bool = False
) -> Image.Image:
    """Run one atomic operation by hand and return the settled screen.

    Takes the device's run lock for the duration: ``DeviceBusyError`` while a run operates the phone.
    ``paused_run``: the run holding the lock is waiting for an approval (its thread does nothing until
    answered), so the operation runs without the lock.
    """
    action = make_atomic(name, arguments or {})
    action.check_on_screen(*device.screen_size())
    if paused_run:
        action.execute(device)
        device.settle()
        return device.screenshot()
    try:
        with DeviceLock(device, owner="manual control in the demo"):
            action.execute(device)
            device.settle()
            return device.screenshot()
    except DeviceBusyError:
        raise DeviceBusyError(
            "a run is operating this phone: manual control works when no run is active (press Stop first)"
        ) from None


def fresh_start(device: Device) -> None:
    """Put the phone on its home screen before a run: the virtual phone also closes its apps (as the
    paper's setup starts each task); a real phone gets Home (its apps stay in the background)."""
    close_apps = getattr(device, "clear_recents", None)
    if callable(close_apps):
        close_apps()
    device.home()  # through the Device API, so the phone redraws its screen
    device.settle()


def reset_phone(device: Device) -> Image.Image:
    """The Reset phone control: the virtual phone back to its first state (seeded notes, no carts, no
    open apps); a real phone to its home screen. Takes the run lock; returns the settled screen."""
    try:
        with DeviceLock(device, owner="Reset phone in the demo"):
            reset = getattr(device, "reset", None)
            if callable(reset):
                reset()
            else:
                device.home()
            device.settle()
            return device.screenshot()
    except DeviceBusyError:
        raise DeviceBusyError("a run is operating this phone: press Stop first, then Reset phone") from None


def screen_signature(image: Image.Image) -> bytes:
    """A cheap fingerprint of a screen, to send the live view only when the picture changed."""
    small = image.reduce(max(1, image.width // 108))  # a box average: fast, and any change shows
    return hashlib.blake2b(small.tobytes(), digest_size=16).digest()
