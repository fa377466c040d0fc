"""Crash-safe file writing and an inter-process lock for the long-term memory store.

``atomic_write_bytes`` writes a temporary file in the target's directory, flushes and fsyncs it, then
``os.replace``-s it over the target: a reader sees either the old file or the new one, never a mix,
even when the writer is killed mid-write. ``append_line`` adds one fsynced line to a log, repairing a
line a killed writer left unfinished. ``DirectoryLock`` serialises writers across processes with an
OS lock on a lock file (released by the kernel if its holder dies, so it never goes stale).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

from mae.errors import MemoryStoreError

TEMP_PREFIX = ".tmp-"
"""Prefix of temporary files; a leftover one is an unfinished write and is never read."""


def fsync_directory(directory: Path) -> None:
    """Make a rename inside ``directory`` durable (a no-op where directories cannot be opened)."""
    if sys.platform.startswith("win"):
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` atomically and durably; ``MemoryStoreError`` if it cannot."""
    directory = path.parent
    try:
        fd, temp_name = tempfile.mkstemp(dir=directory, prefix=f"{TEMP_PREFIX}{path.name}.")
    except OSError as exc:
        raise MemoryStoreError(
            f"cannot write in {directory}: {exc.strerror}; check it exists and is writable"
        ) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        if isinstance(exc, OSError):
            raise MemoryStoreError(
                f"cannot write {path}: {exc.strerror}; check free space and permissions"
            ) from None
        raise
    fsync_directory(directory)


def atomic_write_text(path: Path, text: str) -> None:
    """``atomic_write_bytes`` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def append_line(path: Path, line: str) -> None:
    """Append one line (no newline inside) to ``path`` and fsync it.

    If a killed writer left the file without a final newline, a newline is written first so the
    unfinished line stays on its own (readers skip it) and never swallows this one.
    """
    if "\n" in line:
        raise ValueError("append_line takes a single line")
    try:
        with path.open("ab+") as handle:
            handle.seek(0, os.SEEK_END)
            prefix = b""
            if handle.tell() > 0:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    prefix = b"\n"
            handle.seek(0, os.SEEK_END)
            handle.write(prefix + line.encode("utf-8") + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise MemoryStoreError(
            f"cannot append to {path}: {exc.strerror}; check free space and permissions"
        ) from None


def remove_stale_temp_files(directory: Path) -> list[Path]:
    """Delete temporary files of unfinished writes in ``directory``; call only while holding the lock."""
    removed: list[Path] = []
    if not directory.is_dir():
        return removed
    for entry in directory.iterdir():
        if entry.name.startswith(TEMP_PREFIX) and entry.is_file():
            with contextlib.suppress(OSError):
                entry.unlink()
                removed.append(entry)
    return removed


class DirectoryLock:
    """An exclusive lock held through a lock file; use as a context manager.

    Waits up to ``timeout_s`` for another process to release it, then raises ``MemoryStoreError``.
    The kernel releases the lock when its holder exits or is killed, so a crash never leaves it stuck.
    The lock is not re-entrant.
    """

    def __init__(self, path: Path, *, timeout_s: float = 30.0, poll_s: float = 0.02) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self.poll_s = poll_s
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise MemoryStoreError(
                f"cannot create the lock file {self.path}: {exc.strerror}; "
                "check the memory directory is writable"
            ) from None
        deadline = time.monotonic() + self.timeout_s
        while True:
            if _try_lock(fd):
                break
            if time.monotonic() >= deadline:
                holder = _read_holder(fd)
                os.close(fd)
                raise MemoryStoreError(
                    f"the memory in {self.path.parent} is being updated by another mae process{holder} "
                    f"for more than {self.timeout_s:g} s; wait for it to finish (a run's reflection can "
                    "take a minute) and try again"
                )
            time.sleep(self.poll_s)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            _unlock(fd)
        finally:
            os.close(fd)

    def __enter__(self) -> DirectoryLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        pid = os.read(fd, 32).decode(errors="replace").strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


if sys.platform.startswith("win"):  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
