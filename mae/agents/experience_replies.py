"""What the Experience Reflectors answer: the Tips reply (the complete updated list) and the Shortcuts
reply (new and revised proposals as JSON), read and bounded before the memory is touched."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, Field

from mae.agents.parsing import (
    ReplyProblem,
    first_json,
    load_json,
    require_sections,
    says_nothing,
    strip_fence,
)
from mae.memory.limits import MAX_TIP_CHARS
from mae.memory.shortcuts import shortcut_entries
from mae.memory.tips import format_tips, normalize_tips, split_tips

log = logging.getLogger(__name__)


class TipsReply(BaseModel):
    """The Tips reflector's reply: the complete updated list."""

    thought: str = ""
    tips: str


class ShortcutsReply(BaseModel):
    """The Shortcuts reflector's reply: proposed new Shortcuts and revisions, as raw JSON values."""

    thought: str = ""
    new: list[Any] = Field(default_factory=list)
    revised: list[Any] = Field(default_factory=list)


MAX_TIPS = 40
"""Most Tips kept from one reply (the rest are dropped with a warning)."""
MAX_SHORTCUT_JSON_CHARS = 16_000
"""Largest Shortcuts section read; a larger one is refused."""
MAX_SHORTCUTS_PER_REPLY = 10
"""Most Shortcut proposals read from one section (the rest are dropped with a warning)."""

_ECHOES = (
    "reply in exactly this format",
    "guidelines:",
    "the complete updated list of tips as a numbered list",
    "what this task teaches, in a few sentences",
    "keep every current tip that is still right",
)


def parse_tips_reply(text: str, current_count: int = 0) -> TipsReply:
    """Read ``### Updated Tips ###``; refuse an empty list, one that silently drops most tips, or one
    that echoes the prompt's instructions. More than ``MAX_TIPS`` tips, or tips longer than
    ``MAX_TIP_CHARS``, are trimmed with a warning."""
    sections = require_sections(text, ["Updated Tips"], optional=("Thought",))
    tips = normalize_tips(strip_fence(sections["Updated Tips"]))
    lowered = tips.lower()
    echoed = [phrase for phrase in _ECHOES if phrase in lowered]
    if echoed:
        raise ReplyProblem(
            f"### Updated Tips ### repeats the instructions ({echoed[0]!r}): write only the tips themselves, "
            "as a numbered list"
        )
    items = split_tips(tips)
    count = len(items)
    if count == 0:
        raise ReplyProblem("### Updated Tips ### is empty: give the complete numbered list of Tips")
    if current_count >= 4 and count < (current_count + 1) // 2:
        raise ReplyProblem(
            f"### Updated Tips ### has {count} tips but there were {current_count}: return the complete "
            "updated list, keeping every existing tip that is still right"
        )
    if count > MAX_TIPS or any(len(item) > MAX_TIP_CHARS for item in items):
        log.warning(
            "the Tips reply had %d tips (longest %d characters); kept %d tips of at most %d characters",
            count,
            max(len(item) for item in items),
            min(count, MAX_TIPS),
            MAX_TIP_CHARS,
        )
        tips = format_tips([_cut(item, MAX_TIP_CHARS) for item in items[:MAX_TIPS]])
    return TipsReply(thought=sections["Thought"], tips=tips)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _json_list(section: str, title: str) -> list[Any]:
    text = strip_fence(section)
    if says_nothing(text, then_anything=True):
        return []
    if len(text) > MAX_SHORTCUT_JSON_CHARS:
        raise ReplyProblem(
            f"### {title} ### is {len(text)} characters long: propose at most a few short Shortcuts "
            f"(under {MAX_SHORTCUT_JSON_CHARS} characters of JSON)"
        )
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if not starts:
        raise ReplyProblem(f"### {title} ### must be a JSON list of Shortcut objects, or [] for none")
    opening = text[min(starts)]
    body = first_json(text, opening, f"### {title} ###")
    if body is None:
        raise ReplyProblem(f"### {title} ### is not valid JSON (a {opening} is never closed)")
    data = load_json(body, f"### {title} ###")
    if data is None:
        return []
    try:
        entries = [value for _key, value in shortcut_entries(data)]
    except ValueError:
        raise ReplyProblem(f"### {title} ### must be a JSON list of Shortcut objects, or []") from None
    if len(entries) > MAX_SHORTCUTS_PER_REPLY:
        kept = MAX_SHORTCUTS_PER_REPLY
        log.warning("%s proposed %d Shortcuts; kept the first %d", title, len(entries), kept)
        entries = entries[:MAX_SHORTCUTS_PER_REPLY]
    return entries


def parse_shortcuts_reply(text: str) -> ShortcutsReply:
    """Read the two JSON sections (``New Shortcuts`` required, ``Revised Shortcuts`` optional)."""
    sections = require_sections(text, ["New Shortcuts"], optional=("Thought", "Revised Shortcuts"))
    return ShortcutsReply(
        thought=sections["Thought"],
        new=_json_list(sections["New Shortcuts"], "New Shortcuts"),
        revised=_json_list(sections["Revised Shortcuts"], "Revised Shortcuts"),
    )
