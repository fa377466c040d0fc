"""Size limits of the long-term memory: one Tip, one Shortcut, and the whole store.

Imports and edits by a person are refused with a sentence when they break a limit (nothing changes);
what a model writes (the Experience Reflectors) is trimmed to fit, with a warning. The limits keep every
prompt that shows memory bounded and a snapshot small enough to load quickly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

MAX_TIP_CHARS = 400
"""Longest single Tip (a tip is one or two sentences)."""
MAX_SHORTCUT_CHARS = 4_000
"""Largest single Shortcut, as compact JSON (name, arguments, description, precondition, steps)."""
MAX_SHORTCUT_TEXT_CHARS = 600
"""Longest description or precondition of a Shortcut a model writes (longer ones are cut)."""
MAX_STORE_TIPS = 20_000
"""Most Tips the store keeps."""
MAX_STORE_SHORTCUTS = 20_000
"""Most Shortcuts the store keeps."""
MAX_IMPORT_BYTES = 64 * 1024 * 1024
"""Largest file ``memory import`` reads."""


def tip_problem(items: list[str]) -> str | None:
    """Why a list of Tips cannot be stored (too many, or one too long), or None."""
    if len(items) > MAX_STORE_TIPS:
        return f"it has {len(items):,} tips; the memory keeps at most {MAX_STORE_TIPS:,}: remove some"
    for number, item in enumerate(items, 1):
        if len(item) > MAX_TIP_CHARS:
            return (
                f"tip {number:,} is {len(item):,} characters long; a tip may have at most {MAX_TIP_CHARS:,}: "
                "shorten it or split it into several tips"
            )
    return None


def shortcut_size(value: Any) -> int:
    """Characters of a Shortcut as compact JSON (the size that counts against ``MAX_SHORTCUT_CHARS``)."""
    try:
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
    except (TypeError, ValueError, RecursionError):
        return MAX_SHORTCUT_CHARS + 1


def shortcut_too_big(value: Any) -> str | None:
    """Why one Shortcut is too big to store, or None."""
    size = shortcut_size(value)
    if size > MAX_SHORTCUT_CHARS:
        return (
            f"it is {size:,} characters of JSON; a Shortcut may have at most {MAX_SHORTCUT_CHARS:,}: "
            "shorten its description and precondition"
        )
    return None


def trim_shortcut_text(value: Any) -> tuple[Any, bool]:
    """A model's Shortcut with its description and precondition cut to ``MAX_SHORTCUT_TEXT_CHARS``;
    whether anything was cut."""
    if not isinstance(value, Mapping):
        return value, False
    trimmed = dict(value)
    cut = False
    for key in ("description", "precondition"):
        text = trimmed.get(key)
        if isinstance(text, str) and len(text) > MAX_SHORTCUT_TEXT_CHARS:
            trimmed[key] = text[: MAX_SHORTCUT_TEXT_CHARS - 1].rstrip() + "…"
            cut = True
    return trimmed, cut
