"""The Memory tab's logic: view and edit Tips and Shortcuts, import/export, history with rollback.

Every function takes a ``MemoryStore`` (``mae.memory.longterm``) and returns plain values the app puts
into components; errors a user can cause come back as messages, never as tracebacks.
"""

from __future__ import annotations

import json
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mae.errors import MemoryStoreError
from mae.memory.longterm import MemoryStore, UpdateResult, UsagePolicy, status_table
from mae.memory.models import HistoryEntry
from mae.memory.shortcuts import (
    Rejection,
    ShortcutsFileError,
    check_shortcut,
    dump_shortcuts,
    shortcut_entries,
)
from mae.ui.text import md_text, readable
from mae.wording import counted

SHORTCUT_COLUMNS = ["name", "arguments", "status", "calls", "successes", "failures", "streak", "description"]
HISTORY_COLUMNS = ["version", "time", "author", "summary", "changes"]


@dataclass
class MemoryView:
    """Everything the Memory tab shows."""

    version: int
    tips: str
    shortcut_rows: list[list[Any]]
    shortcuts_json: str
    history_rows: list[list[Any]]
    versions: list[int]
    warnings: list[str]

    def header(self) -> str:
        count = len(self.shortcut_rows)
        text = f"**Long-term memory** · version {self.version} · {counted(count, 'Shortcut')}"
        for warning in self.warnings:
            text += f"\n\n⚠ {warning}"
        return text


def _when(timestamp: float) -> str:
    if not timestamp:
        return "built-in"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def load_view(store: MemoryStore, policy: UsagePolicy | None = None) -> MemoryView:
    """Read the current memory, its usage table and its history."""
    policy = policy or UsagePolicy()
    state = store.load()
    warnings = list(store.warnings)
    usage = {row["name"]: row for row in status_table(state, policy)}
    rows = []
    for name, shortcut in state.shortcuts.items():
        row = usage.get(name, {})
        rows.append(
            [
                name,
                ", ".join(shortcut.arguments),
                row.get("status", "ok"),
                row.get("calls", 0),
                row.get("successes", 0),
                row.get("failures", 0),
                row.get("failure_streak", 0),
                shortcut.description,
            ]
        )
    history = store.history()
    warnings.extend(store.warnings)
    history_rows = [
        [
            entry.version if entry.version is not None else "unchanged",
            _when(entry.time),
            entry.author,
            entry.summary,
            history_changes(entry),
        ]
        for entry in reversed(history)
    ]
    return MemoryView(
        version=state.version,
        tips=state.tips,
        shortcut_rows=rows,
        shortcuts_json=dump_shortcuts(state.shortcuts),
        history_rows=history_rows,
        versions=[0, *store.versions()],
        warnings=warnings,
    )


def history_changes(entry: HistoryEntry) -> str:
    """The "changes" cell of a history row: what changed, what was refused, and why nothing changed."""
    parts = [*entry.changes, *(f"refused {r.name}: {r.reason}" for r in entry.rejected)]
    parts += [f"problem: {problem}" for problem in entry.problems]
    if not parts and entry.version is None:
        parts.append("nothing changed")
    return "; ".join(parts)


def describe_update(result: UpdateResult, what: str) -> str:
    """A one-paragraph report of an edit: the new version or 'nothing changed', and refused entries."""
    if result.changed:
        text = f"✔ {what} saved as version {result.version}."
        if result.change.changes:
            text += " " + "; ".join(result.change.changes) + "."
    else:
        text = f"{what}: nothing changed."
    if result.change.rejected:
        refused = "; ".join(str(r) for r in result.change.rejected)
        text += f"\n\n✖ Refused (kept as they were): {refused}"
    return text


def save_tips(store: MemoryStore, text: str) -> str:
    """Replace the Tips with ``text``."""
    try:
        return describe_update(store.set_tips(text, author="user (demo)"), "Tips")
    except MemoryStoreError as exc:
        return f"✖ {readable(str(exc))}"


def validate_shortcuts_json(text: str) -> tuple[Any | None, str | None]:
    """Parse the edited Shortcuts JSON; ``(data, None)`` or ``(None, message with line and column)``."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        return None, f"✖ The Shortcuts are not valid JSON: {exc.msg} at {where}. Nothing was saved."


def refused_shortcuts(data: Any) -> str | None:
    """Why the edited document cannot be saved (each bad Shortcut by name, with its reason), or None."""
    try:
        entries = shortcut_entries(data)
    except ShortcutsFileError as exc:
        return f"✖ The Shortcuts cannot be read: {md_text(str(exc))}. Nothing was saved."
    refused = [
        checked
        for key, value in entries
        if isinstance(checked := check_shortcut(value, key=key, source="the editor"), Rejection)
    ]
    if not refused:
        return None
    lines = "\n".join(f"- **{md_text(r.name)}**: {md_text(r.reason)}" for r in refused)
    noun = "this Shortcut is" if len(refused) == 1 else "these Shortcuts are"
    return (
        f"✖ Nothing was saved: {noun} not valid. Fix {'it' if len(refused) == 1 else 'them'} in the "
        f"editor (your text is kept) and save again.\n\n{lines}"
    )


def save_shortcuts(store: MemoryStore, text: str) -> tuple[str, bool]:
    """Store the edited Shortcuts document (the whole set: Shortcuts left out are removed).

    All or nothing: if any entry is invalid, nothing changes and the message names each bad entry.
    Returns the message and whether the memory was written.
    """
    data, problem = validate_shortcuts_json(text)
    if problem is not None:
        return problem, False
    refusal = refused_shortcuts(data)
    if refusal is not None:
        return refusal, False
    try:
        result = store.put_shortcuts(data, author="user (demo)", mode="replace", source="the editor")
    except MemoryStoreError as exc:
        return f"✖ {readable(str(exc))}", False
    return describe_update(result, "Shortcuts"), True


def import_memory(store: MemoryStore, tips_file: str | None, shortcuts_file: str | None) -> str:
    """Import a Tips text file and/or a Shortcuts JSON file (the paper's formats)."""
    if not tips_file and not shortcuts_file:
        return "Choose a Tips file (.txt), a Shortcuts file (.json), or both, then press Import."
    try:
        result = store.import_files(
            tips=Path(tips_file) if tips_file else None,
            shortcuts=Path(shortcuts_file) if shortcuts_file else None,
            author="import (demo)",
        )
    except MemoryStoreError as exc:
        return f"✖ {readable(str(exc))}"
    return describe_update(result, "Import")


def export_memory(store: MemoryStore, version: int | None = None, out_dir: Path | None = None) -> Path:
    """A zip with ``tips.txt`` and ``shortcuts.json`` of the current (or given) version."""
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="mae-memory-"))
    files = store.export(out_dir / "files", version=version)
    state_version = version if version is not None else store.load().version
    archive = out_dir / f"mae-memory-v{state_version}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        for path in files:
            handle.write(path, arcname=path.name)
    return archive


def rollback(store: MemoryStore, version: Any) -> str:
    """Make an earlier version current again (as a new version)."""
    try:
        number = int(version)
    except (TypeError, ValueError):
        return "Choose a version to roll back to."
    try:
        return describe_update(store.rollback(number, author="user (demo)"), f"Rollback to version {number}")
    except MemoryStoreError as exc:
        return f"✖ {readable(str(exc))}"
