"""A persistent map from an icon crop's content hash to its caption.

One JSON file (default ``<user cache dir>/mae/icon-captions.json``). Updates are serialised by a lock,
merged with what other processes wrote to the file meanwhile, and written atomically (a temporary file
renamed over the old one), so a crash never leaves a half-written cache. An unreadable file only costs
recomputation.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path


class CaptionCache:
    """Crop hash -> caption, in memory and (when ``path`` is given) in a JSON file; thread-safe."""

    def __init__(self, path: Path | None, *, max_entries: int = 50_000) -> None:
        self.path = path
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._data: dict[str, str] = _read(path) if path is not None else {}

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._data.get(key)

    def update(self, entries: dict[str, str]) -> None:
        """Add captions and persist them (entries other processes added are kept; ours win)."""
        if not entries:
            return
        with self._lock:
            if self.path is not None:
                self._data = {**_read(self.path), **self._data}
            self._data.update(entries)
            if len(self._data) > self.max_entries:  # drop the oldest entries (insertion order)
                self._data = dict(list(self._data.items())[-self.max_entries :])
            if self.path is not None:
                _write_atomically(self.path, self._data)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


def _read(path: Path) -> dict[str, str]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}


def _write_atomically(path: Path, data: dict[str, str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".captions-", suffix=".json")
    except OSError:
        return  # a read-only cache directory: keep the captions in memory only
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(temp, path)
    except OSError:
        Path(temp).unlink(missing_ok=True)
