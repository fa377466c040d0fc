"""The edits a user, an import or a rollback makes to the long-term memory, as mutations.

``MemoryStore.update`` (``mae.memory.longterm``) applies a ``Mutation`` to a copy of the current memory
under the writers' lock and stores the result; this module builds those mutations and checks their input
before anything is locked or written: a Tips text, Shortcuts (from JSON, a file or a parsed document),
a deletion or reinstatement, an import of the paper's files, a rollback target, a reset. Every refusal is
a ``MemoryStoreError`` whose message says what to do; nothing is changed then.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mae.actions.registry import Shortcut
from mae.errors import MemoryStoreError
from mae.memory.limits import MAX_IMPORT_BYTES, MAX_STORE_SHORTCUTS, tip_problem
from mae.memory.models import MemoryState, initial_state
from mae.memory.shortcuts import (
    Rejection,
    ShortcutsFileError,
    check_shortcut,
    parse_shortcuts_text,
    same_definition,
    shortcut_entries,
)
from mae.memory.tips import normalize_tips, split_tips

ShortcutsMode = Literal["merge", "replace"]


@dataclass
class Change:
    """What an update did, for the history: one line per change, refused proposals, problems met."""

    summary: str
    changes: list[str] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


Mutation = Callable[[MemoryState], Change]
"""Edits a copy of the current memory in place and says what it did."""


def set_tips(text: str) -> Mutation:
    """Replace the Tips with ``text`` (a numbered list, one tip per item); refused when empty or too long."""
    tips = normalize_tips(text)
    if not tips:
        raise MemoryStoreError(
            "the Tips are empty; give at least one tip (`memory reset` restores the initial ones)"
        )
    problem = tip_problem(split_tips(tips))
    if problem:
        raise MemoryStoreError(f"the Tips were not saved: {problem}")

    def mutate(state: MemoryState) -> Change:
        changed = state.tips != tips
        state.tips = tips
        return Change("Tips edited", [f"Tips replaced ({len(split_tips(tips))} tips)"] if changed else [])

    return mutate


def put_shortcuts(data: Any, *, mode: ShortcutsMode, source: str = "") -> Mutation:
    """Store Shortcuts from a parsed JSON document (keyed object, list or one object); see
    ``MemoryStore.put_shortcuts``."""
    try:
        entries = shortcut_entries(data)
    except ShortcutsFileError as exc:
        raise MemoryStoreError(f"{source or 'the Shortcuts'}: {exc}") from None
    checked = [check_shortcut(value, key=key, source=source) for key, value in entries]
    return lambda state: apply_shortcuts(state, checked, mode)


def shortcuts_json(text: str, *, source: str) -> Any:
    """The JSON document in ``text``; ``MemoryStoreError`` (nothing changed) when it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MemoryStoreError(
            f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); nothing changed"
        ) from None
    except (RecursionError, ValueError):
        raise MemoryStoreError(
            f"{source}: nested too deeply or holds numbers too long to read; nothing changed"
        ) from None


def delete_shortcut(name: str) -> Mutation:
    """Remove one Shortcut (it stays in earlier versions)."""

    def mutate(state: MemoryState) -> Change:
        if name not in state.shortcuts:
            raise MemoryStoreError(unknown_shortcut(name, state))
        del state.shortcuts[name]
        state.usage.pop(name, None)
        return Change(f"Shortcut {name} deleted", [f"removed {name}"])

    return mutate


def reinstate_shortcut(name: str) -> Mutation:
    """Clear a flagged or withheld Shortcut's failure streak so the Operator may use it again."""

    def mutate(state: MemoryState) -> Change:
        if name not in state.shortcuts:
            raise MemoryStoreError(unknown_shortcut(name, state))
        usage = state.usage_of(name)
        if usage.failure_streak == 0:
            return Change(f"Shortcut {name} was not flagged")
        usage.failure_streak = 0
        return Change(f"Shortcut {name} reinstated", [f"failure streak of {name} cleared"])

    return mutate


def import_files(tips: Path | None, shortcuts: Path | None) -> Mutation:
    """Import the paper's formats (see ``MemoryStore.import_files``); both files are read and checked
    here, before anything changes."""
    if tips is None and shortcuts is None:
        raise MemoryStoreError("nothing to import: give a Tips file, a Shortcuts file, or both")
    tips_text = normalize_tips(read_import_file(tips)) if tips is not None else None
    if tips_text == "":
        raise MemoryStoreError(f"{tips} holds no Tips; nothing imported")
    problem = tip_problem(split_tips(tips_text)) if tips_text else None
    if problem:
        raise MemoryStoreError(f"{tips}: {problem}; nothing imported")
    checked: list[Shortcut | Rejection] = []
    if shortcuts is not None:
        try:
            entries = parse_shortcuts_text(read_import_file(shortcuts))
        except ShortcutsFileError as exc:
            raise MemoryStoreError(f"{shortcuts}: {exc}; nothing imported") from None
        checked = [check_shortcut(value, key=key, source=str(shortcuts)) for key, value in entries]

    def mutate(state: MemoryState) -> Change:
        change = Change("imported " + " and ".join(str(p) for p in (tips, shortcuts) if p is not None))
        if tips_text is not None and tips_text != state.tips:
            state.tips = tips_text
            change.changes.append(f"Tips replaced from {tips} ({len(split_tips(tips_text))} tips)")
        if shortcuts is not None:
            merged = apply_shortcuts(state, checked, "merge")
            change.changes.extend(merged.changes)
            change.rejected.extend(merged.rejected)
        return change

    return mutate


def rollback(target: MemoryState, version: int) -> Mutation:
    """Make the Tips and Shortcuts of ``target`` (stored as ``version``) current again.

    Usage counts of Shortcuts whose definition is unchanged are kept (they describe that definition).
    """

    def mutate(state: MemoryState) -> Change:
        usage = {
            name: state.usage[name]
            for name, shortcut in target.shortcuts.items()
            if name in state.usage
            and name in state.shortcuts
            and same_definition(shortcut, state.shortcuts[name])
        }
        state.tips = target.tips
        state.shortcuts = {n: s.model_copy(deep=True) for n, s in target.shortcuts.items()}
        state.usage = usage
        return Change(
            f"rolled back to version {version}", [f"Tips and Shortcuts of version {version} restored"]
        )

    return mutate


def reset() -> Mutation:
    """Start again from the initial Tips and Shortcuts (the history is kept)."""
    initial = initial_state()

    def mutate(state: MemoryState) -> Change:
        state.tips = initial.tips
        state.shortcuts = initial.shortcuts
        state.usage = {}
        return Change("reset to the initial Tips and Shortcuts", ["initial Tips and Shortcuts restored"])

    return mutate


def unknown_shortcut(name: str, state: MemoryState) -> str:
    return f"there is no Shortcut named {name!r}; known: {', '.join(state.shortcuts) or 'none'}"


def read_import_file(path: Path) -> str:
    """The text of a file to import; refused (nothing imported) when missing, unreadable or too large."""
    try:
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise MemoryStoreError(
                f"{path} is {size / 2**20:,.0f} MiB; a memory file may have at most "
                f"{MAX_IMPORT_BYTES // 2**20} MiB: split it or remove old entries; nothing imported"
            )
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MemoryStoreError(f"{path} does not exist; nothing imported") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MemoryStoreError(f"cannot read {path} ({exc}); nothing imported") from None


def apply_shortcuts(state: MemoryState, checked: list[Shortcut | Rejection], mode: ShortcutsMode) -> Change:
    """Store the valid Shortcuts of ``checked`` in ``state`` (``replace`` also removes those not given)."""
    change = Change("Shortcuts edited" if mode == "replace" else "Shortcuts imported")
    kept: set[str] = set()
    for item in checked:
        if isinstance(item, Rejection):
            change.rejected.append(item)
            kept.add(item.name)
            continue
        if item.name in kept:
            change.rejected.append(Rejection(name=item.name, reason="given twice; the first one was used"))
            continue
        kept.add(item.name)
        old = state.shortcuts.get(item.name)
        if old is not None and same_definition(old, item):
            continue
        state.shortcuts[item.name] = item
        state.usage.pop(item.name, None)
        change.changes.append(f"{'replaced' if old is not None else 'added'} {item.name}")
    if mode == "replace":
        for name in [n for n in state.shortcuts if n not in kept]:
            del state.shortcuts[name]
            state.usage.pop(name, None)
            change.changes.append(f"removed {name}")
    if len(state.shortcuts) > MAX_STORE_SHORTCUTS:
        raise MemoryStoreError(
            f"the memory would hold {len(state.shortcuts):,} Shortcuts; it keeps at most "
            f"{MAX_STORE_SHORTCUTS:,}: remove some first; nothing changed"
        )
    return change
