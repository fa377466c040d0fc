"""The trajectory directory of one run, written as the run goes (a crash keeps what happened so far).

Layout of ``<log_dir>/<YYYYmmdd-HHMMSS>-<slug>/``:

- ``steps.jsonl``: one JSON object per line, ``kind`` = ``perception`` | ``agent`` (rendered prompt, raw
  reply, parsed result, latency, tokens) | ``action`` (what ran, without an outcome) | ``outcome``
  (``outcome`` A/B/C, ``error``, ``stopped``: written once the action is judged, never before) |
  ``step`` (timings) | ``exit``;
- ``step_NNN_before.jpg``: the screen before step NNN's action, with the action drawn on it;
- ``step_NNN_after.jpg``: the settled screen after it (``step_NNN_after_K.jpg`` after each step K of a
  Shortcut);
- ``summary.json``: task, exit reason, totals, final plan/progress/notes, action and error history
  (rewritten atomically after every step, ``status`` = ``running`` until the run ends).

API keys never reach this directory: prompts and replies are the only model traffic recorded.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from PIL import Image

from mae.errors import ConfigError

ImageFormat = Literal["jpg", "png"]


def slugify(text: str, limit: int = 40) -> str:
    """``"Find the price of X!"`` -> ``"find-the-price-of-x"``."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].rstrip("-") or "task"


def new_run_dir(log_dir: Path | str, instruction: str, now: datetime | None = None) -> Path:
    """Create and return a fresh ``<log_dir>/<timestamp>-<slug>`` directory; ``ConfigError`` when the
    log folder cannot be written."""
    base = Path(log_dir) / f"{(now or datetime.now()).strftime('%Y%m%d-%H%M%S')}-{slugify(instruction)}"
    candidate, counter = base, 1
    while True:
        try:
            candidate.mkdir(parents=True, exist_ok=False)
            return candidate
        except FileExistsError:
            counter += 1
            candidate = base.with_name(f"{base.name}-{counter}")
        except OSError as exc:
            reason = exc.strerror or "it cannot be written"
            raise ConfigError(
                f"cannot write the run log in {log_dir} ({reason.lower()}): choose a writable folder with "
                "--log-dir (MAE_LOG_DIR)"
            ) from None


class TrajectoryWriter:
    """Appends records and saves images of one run; images are encoded on a background thread."""

    def __init__(self, run_dir: Path, image_format: ImageFormat = "jpg") -> None:
        self.run_dir = run_dir
        self.image_format = image_format
        self._lines = (run_dir / "steps.jsonl").open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mae-trajectory")
        self._pending: list[Future[None]] = []
        self.closed = False

    def record(self, kind: str, step: int, /, **data: Any) -> None:
        """Append one JSON line (flushed at once)."""
        line = json.dumps({**data, "kind": kind, "step": step, "time": time.time()}, default=str)
        with self._lock:
            if self.closed:
                return
            self._lines.write(line + "\n")
            self._lines.flush()

    def image_path(self, name: str) -> Path:
        return self.run_dir / f"{name}.{self.image_format}"

    def save_image(self, name: str, image: Image.Image) -> Path:
        """Queue ``image`` to be written as ``<name>.<format>``; returns the path it will have."""
        path = self.image_path(name)
        if not self.closed:
            self._pending.append(self._pool.submit(self._write_image, path, image.copy()))
            self._pending = [f for f in self._pending if not f.done()]
        return path

    def _write_image(self, path: Path, image: Image.Image) -> None:
        temp = path.with_name(path.name + ".part")
        if self.image_format == "jpg":
            image.convert("RGB").save(temp, format="JPEG", quality=85)
        else:
            image.save(temp, format="PNG", compress_level=1)
        os.replace(temp, path)

    def write_summary(self, summary: dict[str, Any]) -> None:
        """Rewrite ``summary.json`` atomically."""
        path = self.run_dir / "summary.json"
        temp = path.with_name("summary.json.part")
        temp.write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
        os.replace(temp, path)

    def flush(self) -> None:
        """Wait until every queued image is on disk."""
        for future in list(self._pending):
            future.result()
        self._pending = []

    def close(self) -> None:
        """Finish writing images and close ``steps.jsonl``."""
        if self.closed:
            return
        try:
            self.flush()
        finally:
            self._pool.shutdown(wait=True)
            with self._lock:
                self.closed = True
                self._lines.close()


def read_steps(run_dir: Path | str) -> list[dict[str, Any]]:
    """The records of a run's ``steps.jsonl`` (replays, tests, the evolution reflectors)."""
    path = Path(run_dir) / "steps.jsonl"
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
