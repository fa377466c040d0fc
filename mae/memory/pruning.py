"""Which old memory versions are deleted, and the chunks only they used.

Policy: keep the newest ``keep_last`` versions (default ``KEEP_VERSIONS``), every version a run started
from (recorded in ``runs.jsonl`` when the run prepares its memory, so its trajectory can always be
traced to the memory it used), and always the current one. Everything else is deleted, with the chunks
(``objects/``) no kept version lists. The history (``history.jsonl``) keeps a line for every version
ever written.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mae.memory.atomic import TEMP_PREFIX, append_line
from mae.memory.snapshots import referenced

KEEP_VERSIONS = 50
"""Versions kept besides the ones runs started from."""
PRUNE_SLACK = 10
"""An automatic prune runs once this many versions are over the limit (deleting in batches)."""
RUNS_FILE = "runs.jsonl"


@dataclass
class PruneReport:
    """What a prune deleted."""

    versions: list[int] = field(default_factory=list)
    objects: int = 0
    bytes_freed: int = 0


def record_run_start(directory: Path, version: int, task: str) -> None:
    """Note that a run started from ``version`` (that version is then never pruned)."""
    if version <= 0:
        return
    directory.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"time": time.time(), "version": version, "task": task[:200]}, ensure_ascii=False)
    append_line(directory / RUNS_FILE, line)


def pinned_versions(directory: Path) -> set[int]:
    """Versions runs started from (unreadable lines are skipped)."""
    path = directory / RUNS_FILE
    found: set[int] = set()
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return found
    for line in lines:
        try:
            value = json.loads(line).get("version")
        except (ValueError, AttributeError):
            continue
        if isinstance(value, int):
            found.add(value)
    return found


def versions_to_delete(numbers: list[int], pinned: set[int], keep_last: int) -> list[int]:
    """The versions the policy deletes from ``numbers`` (ascending): not among the newest ``keep_last``,
    not pinned, never the newest."""
    kept = set(numbers[-max(1, keep_last) :]) | pinned
    return [n for n in numbers if n not in kept]


def delete_versions(
    versions_dir: Path, objects_dir: Path, doomed: list[int], path_of: Callable[[int], Path]
) -> PruneReport:
    """Delete ``doomed`` version files, then the chunks no remaining version file lists. Call only while
    holding the store's lock (a writer writes its chunks before its version file)."""
    report = PruneReport()
    for number in doomed:
        path = path_of(number)
        with contextlib.suppress(OSError):
            size = path.stat().st_size
            path.unlink()
            report.versions.append(number)
            report.bytes_freed += size
    remaining: list[dict[str, Any]] = []
    for entry in versions_dir.iterdir():
        if not entry.name.endswith(".json") or entry.name.startswith(TEMP_PREFIX):
            continue
        try:
            data = json.loads(entry.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return report  # a version we cannot read may need any chunk: delete none
        if isinstance(data, dict):
            remaining.append(data)
    needed = referenced(remaining)
    if not objects_dir.is_dir():
        return report
    for folder in objects_dir.iterdir():
        if not folder.is_dir():
            continue
        for entry in folder.iterdir():
            name = entry.name.removesuffix(".json")
            if entry.name.startswith(TEMP_PREFIX) or name not in needed:
                with contextlib.suppress(OSError):
                    size = entry.stat().st_size
                    entry.unlink()
                    report.objects += 1
                    report.bytes_freed += size
    return report
