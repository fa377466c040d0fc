"""One run per device at a time: an in-process lock per device plus a cross-process lock file (fcntl).

A second run on a busy device raises ``DeviceBusyError`` at once (no waiting). Virtual phones are
separate objects in each process, so they are locked per object and need no lock file.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from pathlib import Path
from types import TracebackType

from mae.device.base import Device
from mae.errors import DeviceBusyError, DeviceError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no fcntl; the in-process lock still applies
    fcntl = None  # type: ignore[assignment]

_registry_lock = threading.Lock()
_held: dict[str, tuple[str, int]] = {}


def lock_dir() -> Path:
    """Where lock files live: ``<tmp>/mae-locks``."""
    path = Path(tempfile.gettempdir()) / "mae-locks"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _is_virtual(device: Device) -> bool:
    return device.name == "virtual" or type(device).__name__ == "VirtualPhone"


class DeviceLock:
    """Context manager that holds ``device`` for one run; ``owner`` says who (shown to a blocked run)."""

    def __init__(self, device: Device, owner: str = "a run") -> None:
        self.device_name = device.name
        self.virtual = _is_virtual(device)
        self.key = f"virtual#{id(device)}" if self.virtual else f"adb:{device.name}"
        self.owner = owner
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", device.name)
        self.path = None if self.virtual else lock_dir() / f"device-{safe}.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise ``DeviceBusyError`` saying who holds it."""
        with _registry_lock:
            holder = _held.get(self.key)
            if holder is not None:
                raise DeviceBusyError(
                    f"device {self.device_name!r} is busy: {holder[0]} is operating it in this process; "
                    "wait for it to finish or stop it first"
                )
            _held[self.key] = (self.owner, id(self))
        if self.path is None or fcntl is None:
            return
        try:
            self._fd = self._lock_file(self.path)
        except BaseException:
            with _registry_lock:
                _held.pop(self.key, None)
            raise

    def _lock_file(self, path: Path) -> int:
        """Take the cross-process lock file; the descriptor is closed again on any failure."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise DeviceError(f"cannot create the device lock file {path}: {exc.strerror}") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                other = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
                raise DeviceBusyError(
                    f"device {self.device_name!r} is busy: {other} is operating it (lock file {path}); "
                    "wait for that run to finish or stop it, then try again"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} ({self.owner})".encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def release(self) -> None:
        """Give the device back (safe to call twice)."""
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
                if fcntl is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None
        with _registry_lock:
            if _held.get(self.key) == (self.owner, id(self)):
                del _held[self.key]

    def __enter__(self) -> DeviceLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def device_busy(device: Device) -> bool:
    """Whether a run in this process holds ``device`` (the UI uses it to grey out the Run button)."""
    key = f"virtual#{id(device)}" if _is_virtual(device) else f"adb:{device.name}"
    with _registry_lock:
        return key in _held
