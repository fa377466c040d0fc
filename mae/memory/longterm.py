"""The long-term memory store: Tips and Shortcuts that persist across tasks, versioned and crash-safe.

Layout of a memory directory (``Settings.memory_dir`` unless the user picks another)::

    versions/000001.json   one file per version: who changed what, and the chunks holding its content
    versions/000002.json   ... the highest readable number is the current memory
    objects/               content-addressed chunks shared between versions (``mae.memory.snapshots``)
    runs.jsonl             versions runs started from (kept by the pruning policy, ``mae.memory.pruning``)
    history.jsonl          one JSON line per change, rejected proposal or failed reflection
    .lock                  held by a writer while it updates (other writers wait)

Every file is written once, atomically (temporary file, fsync, ``os.replace``), and never rewritten,
chunks before the version that names them, so a process killed mid-write leaves the previous version
current. Version 0 is the built-in initial memory (the paper's four Tips and ``Tap_Type_and_Enter``)
and is never written. An unreadable snapshot is kept on disk, reported, and skipped in favour of the
newest readable one; if none is readable, ``MemoryStoreError`` says what to do. Rollback and reset add
a new version; old versions are pruned by a documented policy (keep the newest ``keep_versions`` and
every version a run started from).

The public API (used by the CLI, the runs and the UI): ``MemoryStore.load``, ``load_version``,
``versions``, ``history``, ``update``, ``set_tips``, ``put_shortcuts``, ``put_shortcuts_json``,
``delete_shortcut``, ``reinstate_shortcut``, ``import_files``, ``export``, ``rollback``, ``reset``,
``log_event``, ``prune``, ``record_run_start``; ``MemoryState.status`` / ``usable_shortcuts`` and
``status_table`` for display.
Every write returns an ``UpdateResult`` (the new state, the version written or None, and the change
report with refused Shortcuts); every failure is a ``MemoryStoreError`` whose message says what to do.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mae.errors import MemoryStoreError
from mae.memory import edits
from mae.memory.atomic import DirectoryLock, append_line, atomic_write_text, remove_stale_temp_files
from mae.memory.edits import Change, Mutation
from mae.memory.models import (
    FORMAT,
    HistoryEntry,
    MemoryState,
    ShortcutFailure,
    ShortcutStatus,
    ShortcutUsage,
    UsagePolicy,
    initial_state,
    policy_from,
    status_table,
)
from mae.memory.pruning import (
    KEEP_VERSIONS,
    PRUNE_SLACK,
    PruneReport,
    delete_versions,
    pinned_versions,
    record_run_start,
    versions_to_delete,
)
from mae.memory.shortcuts import Rejection, dump_shortcuts
from mae.memory.snapshots import OBJECTS_DIR
from mae.memory.snapshots import read_version as read_snapshot
from mae.memory.snapshots import write_version as write_snapshot

__all__ = [
    "FORMAT",
    "SHORTCUTS_FILE",
    "TIPS_FILE",
    "HistoryEntry",
    "MemoryState",
    "MemoryStore",
    "ShortcutFailure",
    "ShortcutStatus",
    "ShortcutUsage",
    "UpdateResult",
    "UsagePolicy",
    "initial_state",
    "policy_from",
    "status_table",
]

logger = logging.getLogger("mae.memory")

TIPS_FILE = "tips.txt"
SHORTCUTS_FILE = "shortcuts.json"
_VERSION_NAME = re.compile(r"^(\d+)\.json$")


@dataclass
class UpdateResult:
    """The memory after an update, the version it created (None if nothing changed) and the report."""

    state: MemoryState
    version: int | None
    change: Change

    @property
    def changed(self) -> bool:
        return self.version is not None


class MemoryStore:
    """A directory of versioned long-term memory. Cheap to create; every call reads the disk afresh."""

    def __init__(
        self, directory: Path | str, *, lock_timeout_s: float = 30.0, keep_versions: int = KEEP_VERSIONS
    ) -> None:
        self.directory = Path(directory).expanduser()
        self.versions_dir = self.directory / "versions"
        self.history_path = self.directory / "history.jsonl"
        self.objects_dir = self.directory / OBJECTS_DIR
        self.lock_timeout_s = lock_timeout_s
        self.keep_versions = keep_versions
        self.warnings: list[str] = []
        """Problems met by the latest read (unreadable snapshots skipped, bad history lines)."""

    @property
    def _shell_directory(self) -> str:
        """The memory folder as a shell argument (for the commands a message suggests)."""
        return shlex.quote(str(self.directory))

    # ------------------------------------------------------------------ reading

    def versions(self) -> list[int]:
        """Numbers of the snapshot files on disk (readable or not), ascending."""
        if self.directory.exists() and not self.directory.is_dir():
            raise MemoryStoreError(f"{self.directory} is a file, not a memory directory; choose another path")
        if not self.versions_dir.is_dir():
            return []
        numbers = []
        for entry in self.versions_dir.iterdir():
            match = _VERSION_NAME.match(entry.name)
            if match:
                numbers.append(int(match.group(1)))
        return sorted(numbers)

    def _version_path(self, version: int) -> Path:
        return self.versions_dir / f"{version:06d}.json"

    def _read_version(self, version: int) -> MemoryState:
        path = self._version_path(version)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise MemoryStoreError(f"{path} does not exist") from None
        except OSError as exc:
            raise MemoryStoreError(f"{path} cannot be read: {exc.strerror}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MemoryStoreError(f"{path} is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise MemoryStoreError(f"{path} is not a memory snapshot (expected a JSON object)")
        file_format = data.get("format", FORMAT)
        if not isinstance(file_format, int) or isinstance(file_format, bool):
            raise MemoryStoreError(f"{path} is not a memory snapshot (format {file_format!r})")
        if file_format > FORMAT:
            raise MemoryStoreError(
                f"{path} was written by a newer mae (format {data['format']}); upgrade mae"
            )
        state = read_snapshot(path, self.objects_dir, data) if file_format >= 2 else _validated(path, data)
        if state.version != version:
            raise MemoryStoreError(f"{path} says it is version {state.version}, not {version}")
        return state

    def load(self) -> MemoryState:
        """The current memory: the newest readable version, or version 0 when nothing was stored yet.

        Unreadable snapshots are skipped (and kept on disk) with a warning in ``self.warnings``;
        ``MemoryStoreError`` if snapshots exist but none can be read.
        """
        self.warnings = []
        numbers = self.versions()
        if not numbers:
            return initial_state()
        problems: list[str] = []
        for version in reversed(numbers):
            try:
                state = self._read_version(version)
            except MemoryStoreError as exc:
                problems.append(str(exc))
                continue
            if problems:
                self._warn(
                    f"{'; '.join(problems)}. Using version {version} instead; the unreadable file(s) are "
                    f"kept in {self.versions_dir}: repair or remove them, or run `python -m mae memory "
                    f"rollback {version} --memory-dir {self._shell_directory}` to confirm this version"
                )
            return state
        raise MemoryStoreError(
            f"no readable memory version in {self.versions_dir} ({len(numbers)} unreadable: "
            f"{'; '.join(problems[:3])}). "
            "Restore a backup of that folder, or run `python -m mae memory reset --memory-dir "
            f"{self._shell_directory}` to start again from the initial Tips and Shortcuts (the unreadable "
            "files are kept)"
        )

    def load_version(self, version: int) -> MemoryState:
        """One version (0 is the built-in initial memory); ``MemoryStoreError`` if missing or unreadable."""
        if version == 0:
            return initial_state()
        numbers = self.versions()
        if version not in numbers:
            span = _span(numbers) if numbers else "only 0 (nothing stored yet)"
            pruned = (
                " (old versions are pruned: see docs/memory.md)" if numbers and version < numbers[-1] else ""
            )
            raise MemoryStoreError(
                f"memory version {version} does not exist in {self.directory}{pruned}; versions: {span}"
            )
        return self._read_version(version)

    def history(self, limit: int | None = None) -> list[HistoryEntry]:
        """Every change and logged event, oldest first (the last ``limit`` when given)."""
        self.warnings = []
        entries: list[HistoryEntry] = []
        if self.history_path.is_file():
            try:
                lines = self.history_path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError as exc:
                raise MemoryStoreError(f"cannot read {self.history_path}: {exc.strerror}") from None
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    entries.append(HistoryEntry.model_validate_json(line))
                except ValidationError:
                    self._warn(
                        f"{self.history_path} line {number} is unreadable (interrupted write?); skipped"
                    )
        logged = {e.version for e in entries if e.version is not None}
        for version in self.versions():
            if version in logged:
                continue
            try:
                state = self._read_version(version)
            except MemoryStoreError as exc:
                self._warn(str(exc))
                continue
            entries.append(
                HistoryEntry(
                    time=state.created_at,
                    version=version,
                    author=state.author,
                    summary=state.summary,
                    task=state.task,
                    changes=state.changes,
                    rejected=state.rejected,
                    problems=state.problems,
                )
            )
        entries.sort(key=lambda e: e.time)
        return entries[-limit:] if limit else entries

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        logger.warning("%s", message)

    # ------------------------------------------------------------------ writing

    def _lock(self) -> DirectoryLock:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.versions_dir.mkdir(exist_ok=True)
        except OSError as exc:
            raise MemoryStoreError(
                f"cannot create the memory directory {self.directory}: {exc.strerror}; choose a writable "
                "folder with --memory-dir or MAE_MEMORY_DIR"
            ) from None
        return DirectoryLock(self.directory / ".lock", timeout_s=self.lock_timeout_s)

    def update(
        self, mutate: Mutation, *, author: str, task: str | None = None, from_scratch: bool = False
    ) -> UpdateResult:
        """Apply ``mutate`` to the latest memory under the writers' lock and store the result.

        A new version is written only if the content changed; the history gets a line either way when
        there is something to record (changes, rejected proposals, problems). ``from_scratch`` lets a
        mutation that replaces everything (reset) proceed when no stored version is readable.
        """
        with self._lock():
            remove_stale_temp_files(self.versions_dir)
            if self.objects_dir.is_dir():
                for folder in self.objects_dir.iterdir():
                    remove_stale_temp_files(folder)
            try:
                current = self.load()
            except MemoryStoreError:
                if not from_scratch:
                    raise
                current = initial_state()
                current.tips = ""
            draft = current.model_copy(deep=True)
            change = mutate(draft)
            if draft.content_key() == current.content_key():
                if change.changes or change.rejected or change.problems:
                    self._append_history(
                        HistoryEntry(
                            previous=current.version,
                            author=author,
                            summary=change.summary,
                            task=task,
                            changes=change.changes,
                            rejected=change.rejected,
                            problems=change.problems,
                        )
                    )
                return UpdateResult(state=current, version=None, change=change)
            numbers = self.versions()
            version = (numbers[-1] if numbers else 0) + 1
            draft.usage = {name: usage for name, usage in draft.usage.items() if name in draft.shortcuts}
            draft.format = FORMAT
            draft.version = version
            draft.created_at = time.time()
            draft.author = author
            draft.summary = change.summary
            draft.task = task
            draft.changes = list(change.changes)
            draft.rejected = list(change.rejected)
            draft.problems = list(change.problems)
            write_snapshot(self._version_path(version), self.objects_dir, draft)
            self._append_history(
                HistoryEntry(
                    time=draft.created_at,
                    version=version,
                    previous=current.version,
                    author=author,
                    summary=change.summary,
                    task=task,
                    changes=change.changes,
                    rejected=change.rejected,
                    problems=change.problems,
                )
            )
            logger.info("memory version %d by %s: %s", version, author, change.summary)
            if len(numbers) + 1 > self.keep_versions + PRUNE_SLACK:
                self._prune_locked(self.keep_versions)
            return UpdateResult(state=draft, version=version, change=change)

    def _log_before_pruning(self, doomed: list[int]) -> None:
        """Give every version about to be deleted its history line (a writer killed between its version
        file and its history line left it only in the version file)."""
        logged: set[int] = set()
        if self.history_path.is_file():
            for line in self.history_path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    version = json.loads(line).get("version")
                except (ValueError, AttributeError):
                    continue
                if isinstance(version, int):
                    logged.add(version)
        for number in doomed:
            if number in logged:
                continue
            try:
                state = self._read_version(number)
            except MemoryStoreError:
                continue
            self._append_history(
                HistoryEntry(
                    time=state.created_at,
                    version=number,
                    author=state.author,
                    summary=state.summary,
                    task=state.task,
                    changes=state.changes,
                    rejected=state.rejected,
                    problems=state.problems,
                )
            )

    def record_run_start(self, version: int, task: str) -> None:
        """Note that a run started from ``version``: the pruning policy keeps that version."""
        try:
            record_run_start(self.directory, version, task)
        except (OSError, MemoryStoreError) as exc:
            self._warn(f"cannot note the memory version this run uses ({exc}); it may be pruned later")

    def prune(self, keep_last: int | None = None) -> PruneReport:
        """Delete old versions by the policy (keep the newest ``keep_last``, default ``keep_versions``,
        and every version a run started from) and the chunks only they used."""
        with self._lock():
            return self._prune_locked(self.keep_versions if keep_last is None else keep_last)

    def _prune_locked(self, keep_last: int) -> PruneReport:
        doomed = versions_to_delete(self.versions(), pinned_versions(self.directory), keep_last)
        if not doomed:
            return PruneReport()
        self._log_before_pruning(doomed)
        report = delete_versions(self.versions_dir, self.objects_dir, doomed, self._version_path)
        logger.info("memory: pruned %d old version(s), %d chunk(s)", len(report.versions), report.objects)
        return report

    def _append_history(self, entry: HistoryEntry) -> None:
        append_line(self.history_path, entry.model_dump_json())

    def log_event(
        self,
        summary: str,
        *,
        author: str,
        task: str | None = None,
        rejected: list[Rejection] | None = None,
        problems: list[str] | None = None,
    ) -> None:
        """Record something that changed nothing (a failed reflection, refused proposals) in the history."""
        with self._lock():
            previous = self.versions()
            self._append_history(
                HistoryEntry(
                    previous=previous[-1] if previous else 0,
                    author=author,
                    summary=summary,
                    task=task,
                    rejected=rejected or [],
                    problems=problems or [],
                )
            )

    # ------------------------------------------------------------------ edits (built in mae.memory.edits)

    def set_tips(self, text: str, *, author: str = "user") -> UpdateResult:
        """Replace the Tips with ``text`` (a numbered list, one tip per item)."""
        return self.update(edits.set_tips(text), author=author)

    def put_shortcuts(
        self, data: Any, *, author: str = "user", mode: edits.ShortcutsMode = "merge", source: str = ""
    ) -> UpdateResult:
        """Validate and store Shortcuts from a parsed JSON document (keyed object, list or one object).

        ``merge`` adds new Shortcuts and replaces those with the same name; ``replace`` also removes
        Shortcuts absent from ``data`` (as when the user edits the whole JSON). Invalid entries are
        refused with the reason; they never remove or alter the stored Shortcut of that name. A new
        definition of an existing name starts its usage counts afresh (the old one stays in history).
        """
        return self.update(edits.put_shortcuts(data, mode=mode, source=source), author=author)

    def put_shortcuts_json(
        self,
        text: str,
        *,
        author: str = "user",
        mode: edits.ShortcutsMode = "replace",
        source: str = "editor",
    ) -> UpdateResult:
        """``put_shortcuts`` from JSON text (the UI's editor); ``MemoryStoreError`` if it is not JSON."""
        data = edits.shortcuts_json(text, source=source)
        return self.put_shortcuts(data, author=author, mode=mode, source=source)

    def delete_shortcut(self, name: str, *, author: str = "user") -> UpdateResult:
        """Remove one Shortcut (it stays in earlier versions)."""
        return self.update(edits.delete_shortcut(name), author=author)

    def reinstate_shortcut(self, name: str, *, author: str = "user") -> UpdateResult:
        """Clear a flagged or withheld Shortcut's failure streak so the Operator may use it again."""
        return self.update(edits.reinstate_shortcut(name), author=author)

    def import_files(
        self, *, tips: Path | None = None, shortcuts: Path | None = None, author: str = "import"
    ) -> UpdateResult:
        """Import the paper's formats: a Tips text file (replaces the Tips) and/or a Shortcuts JSON file
        (merged; each invalid Shortcut refused with its reason, the valid ones kept).

        Both files are read before anything changes: an unreadable file or one that is not JSON at all
        raises ``MemoryStoreError`` and the memory is left as it was.
        """
        return self.update(edits.import_files(tips, shortcuts), author=author)

    def export(self, out_dir: Path, *, version: int | None = None) -> list[Path]:
        """Write ``tips.txt`` and ``shortcuts.json`` (the paper's formats) into ``out_dir``."""
        state = self.load() if version is None else self.load_version(version)
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemoryStoreError(f"cannot create {out_dir}: {exc.strerror}") from None
        tips_path, shortcuts_path = out_dir / TIPS_FILE, out_dir / SHORTCUTS_FILE
        atomic_write_text(tips_path, state.tips)
        atomic_write_text(shortcuts_path, dump_shortcuts(state.shortcuts))
        return [tips_path, shortcuts_path]

    def rollback(self, version: int, *, author: str = "user") -> UpdateResult:
        """Make the Tips and Shortcuts of ``version`` current again, as a new version.

        Usage counts of Shortcuts whose definition is unchanged are kept (they describe that definition).
        """
        return self.update(edits.rollback(self.load_version(version), version), author=author)

    def reset(self, *, author: str = "user") -> UpdateResult:
        """Start again from the initial Tips and Shortcuts, as a new version (history is kept)."""
        return self.update(edits.reset(), author=author, from_scratch=True)


def _span(numbers: list[int]) -> str:
    """``1..5, 9, 12..14`` for the version numbers on disk."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}..{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def _validated(path: Path, data: dict[str, Any]) -> MemoryState:
    """A format-1 snapshot (the whole content in one file), validated."""
    try:
        return MemoryState.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise MemoryStoreError(f"{path} is not a valid memory snapshot ({where}: {first['msg']})") from None
