"""Shortcuts (L_S) as JSON in the paper's format, and the checks every Shortcut passes before storage.

The paper's file is a JSON object keyed by Shortcut name (Figure 12); a list of Shortcut objects or a
single one is read too. ``check_shortcut`` turns one JSON value into a usable ``Shortcut`` or a
``Rejection`` saying why not: unknown atomic operations, operation arguments mapped to neither a
Shortcut argument nor a valid literal, unused arguments, bad names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from mae.actions.registry import Shortcut
from mae.memory.limits import shortcut_too_big


class Rejection(BaseModel):
    """A Shortcut that was refused, and why."""

    name: str
    reason: str
    source: str = ""

    def __str__(self) -> str:
        return f"{self.name}: {self.reason}"


class ShortcutsFileError(ValueError):
    """The text is not a Shortcuts JSON document at all (nothing in it can be used)."""


def shortcut_to_json(shortcut: Shortcut) -> dict[str, Any]:
    """The paper's JSON object of one Shortcut (fields absent from its source stay absent)."""
    return shortcut.model_dump(mode="json", exclude_unset=True)


def shortcuts_to_json(shortcuts: Mapping[str, Shortcut]) -> dict[str, Any]:
    """The paper's Shortcuts document: an object keyed by name."""
    return {name: shortcut_to_json(shortcut) for name, shortcut in shortcuts.items()}


def dump_shortcuts(shortcuts: Mapping[str, Shortcut]) -> str:
    """The paper's Shortcuts document as indented JSON text."""
    return json.dumps(shortcuts_to_json(shortcuts), indent=4, ensure_ascii=False) + "\n"


def _label(value: Any, fallback: str) -> str:
    if isinstance(value, Mapping) and isinstance(value.get("name"), str) and value["name"].strip():
        return str(value["name"])
    return fallback


def check_shortcut(value: Any, *, key: str | None = None, source: str = "") -> Shortcut | Rejection:
    """A usable ``Shortcut`` built from one JSON value, or a ``Rejection`` naming every problem.

    ``key`` is the name the value was filed under in a document keyed by name; it must match ``name``.
    """
    label = _label(value, key or "(unnamed Shortcut)")
    if not isinstance(value, Mapping):
        return Rejection(name=label, reason="a Shortcut must be a JSON object", source=source)
    too_big = shortcut_too_big(value)
    if too_big:
        return Rejection(name=label, reason=too_big, source=source)
    try:
        shortcut = Shortcut.model_validate(dict(value))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'shortcut'}: {err['msg']}" for err in exc.errors()
        )
        return Rejection(name=label, reason=problems, source=source)
    if key is not None and key != shortcut.name:
        return Rejection(
            name=label, reason=f"filed under the key {key!r} but named {shortcut.name!r}", source=source
        )
    problems_found = shortcut.problems()
    if problems_found:
        return Rejection(name=shortcut.name, reason="; ".join(problems_found), source=source)
    return shortcut


def shortcut_entries(data: Any) -> list[tuple[str | None, Any]]:
    """The (key, value) pairs of a Shortcuts document: keyed object, list, or one Shortcut object."""
    if isinstance(data, Mapping):
        if "atomic_action_sequence" in data and isinstance(data.get("name"), str):
            return [(None, data)]
        return [(str(key), value) for key, value in data.items()]
    if isinstance(data, list):
        return [(None, value) for value in data]
    raise ShortcutsFileError("expected a JSON object keyed by Shortcut name (or a list of Shortcut objects)")


def parse_shortcuts_text(text: str) -> list[tuple[str | None, Any]]:
    """Entries of a Shortcuts JSON text; ``ShortcutsFileError`` if it is not JSON or not such a document."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ShortcutsFileError(
            f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except (RecursionError, ValueError):
        raise ShortcutsFileError("nested too deeply or holds numbers too long to read") from None
    return shortcut_entries(data)


def same_definition(a: Shortcut, b: Shortcut) -> bool:
    """Whether two Shortcuts define the same thing (ignoring which optional fields were spelled out)."""
    return a.model_dump() == b.model_dump()
