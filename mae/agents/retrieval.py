"""The Experience Retrievers (paper §4.4): pick the Tips and Shortcuts relevant to a task.

They only run once the memory has grown past ``evolution.retrieve_tips_over`` Tips or
``retrieve_shortcuts_over`` Shortcuts (0 turns each off). The selection is what one run shows its
agents; the store is never reduced to it. A retriever that fails leaves the run with everything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from mae.action_text import canonical_action_name
from mae.actions import INITIAL_SHORTCUTS, Shortcut
from mae.agents.base import TurnListener, ask
from mae.agents.parsing import (
    NONE_WORDS,
    ReplyProblem,
    require_sections,
    says_none,
    says_nothing,
    strip_fence,
)
from mae.agents.prompting import render_prompt
from mae.config import EvolutionSettings
from mae.llm.client import ChatClient
from mae.llm.errors import ModelError
from mae.memory.tips import INITIAL_TIPS, format_tips, split_tips

ROLE = "experience"


class TipSelection(BaseModel):
    thought: str = ""
    numbers: list[int] = Field(default_factory=list, description="1-based tip numbers")


class ShortcutSelection(BaseModel):
    thought: str = ""
    names: list[str] = Field(default_factory=list)


@dataclass
class Retrieved:
    """The Tips text and Shortcuts one run gets, and what the retrievers did."""

    tips: str
    shortcuts: dict[str, Shortcut]
    tips_total: int
    shortcuts_total: int
    tips_selected: list[int] | None = None
    shortcuts_selected: list[str] | None = None
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        tips = (
            f"{len(self.tips_selected)} of {self.tips_total} Tips selected"
            if self.tips_selected is not None
            else f"all {self.tips_total} Tips"
        )
        shortcuts = (
            f"{len(self.shortcuts_selected)} of {self.shortcuts_total} Shortcuts selected"
            if self.shortcuts_selected is not None
            else f"all {self.shortcuts_total} Shortcuts"
        )
        return f"{tips}, {shortcuts}"


def parse_tip_selection(text: str, count: int) -> TipSelection:
    """Numbers from ``### Selected Tips ###`` (``None`` = no tip); all must be between 1 and ``count``."""
    sections = require_sections(text, ["Selected Tips"], optional=("Thought",))
    body = strip_fence(sections["Selected Tips"])
    numbers = [] if says_none(body, NONE_WORDS) else _tip_numbers(body)
    if not numbers:
        if says_nothing(body, then_anything=True):
            return TipSelection(thought=sections["Thought"])
        raise ReplyProblem("### Selected Tips ### must list tip numbers separated by commas, or None")
    wrong = sorted({n for n in numbers if not 1 <= n <= count})
    if wrong:
        raise ReplyProblem(f"tips {wrong} do not exist: choose numbers from 1 to {count}")
    return TipSelection(thought=sections["Thought"], numbers=sorted(set(numbers)))


def _tip_numbers(body: str) -> list[int]:
    """Tip numbers in ``1, 3 and 5``, ``[2, 4]``, ``Tip 2`` or ``1-3`` (a range)."""
    numbers: list[int] = []
    for low, high in re.findall(r"(\d{1,6})(?:[ \t]*[-–][ \t]*(\d{1,6}))?", body[:4000]):
        first = int(low)
        last = int(high) if high else first
        numbers.extend(range(first, min(last, first + 200) + 1) if last >= first else [first])
    return numbers


def parse_shortcut_selection(text: str, known: list[str]) -> ShortcutSelection:
    """Known names from ``### Selected Shortcuts ###`` (``None`` = none; other words are ignored)."""
    sections = require_sections(text, ["Selected Shortcuts"], optional=("Thought",))
    body = strip_fence(sections["Selected Shortcuts"])
    if says_none(body, NONE_WORDS):
        return ShortcutSelection(thought=sections["Thought"])
    keys = {canonical_action_name(name, known): name for name in known}
    words = re.findall(r"[A-Za-z][A-Za-z0-9_]*", body[:4000])
    names = [keys[canonical_action_name(w, known)] for w in words if canonical_action_name(w, known) in keys]
    if not names and says_nothing(body, then_anything=True):
        return ShortcutSelection(thought=sections["Thought"])
    if not names:
        raise ReplyProblem(
            f"### Selected Shortcuts ### names no known Shortcut; choose from {', '.join(known)}, or None"
        )
    return ShortcutSelection(thought=sections["Thought"], names=list(dict.fromkeys(names)))


def retrieve(
    client: ChatClient,
    instruction: str,
    tips: str,
    shortcuts: Mapping[str, Shortcut],
    evolution: EvolutionSettings,
    *,
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
) -> Retrieved:
    """The Tips and Shortcuts to give a run for ``instruction`` (all of them while the memory is small)."""
    items = split_tips(tips)
    result = Retrieved(
        tips=tips, shortcuts=dict(shortcuts), tips_total=len(items), shortcuts_total=len(shortcuts)
    )
    if evolution.retrieve_tips_over and len(items) > evolution.retrieve_tips_over:
        listing = "\n".join(f"[{index}] {item}" for index, item in enumerate(items, 1))
        prompt = render_prompt("retriever_tips", {"instruction": instruction, "tips": listing}, prompts_dir)
        try:
            reply = ask(
                client,
                ROLE,
                prompt,
                [],
                lambda text: parse_tip_selection(text, len(items)),
                agent="tips_retriever",
                on_turn=on_turn,
            )
        except ModelError as exc:
            result.problems.append(f"Tips retriever failed ({exc}); using all Tips")
        else:
            if reply.value is None:
                result.problems.append(
                    f"Tips retriever gave no usable reply ({reply.problem}); using all Tips"
                )
            elif not reply.value.numbers:
                # "None": no learned Tip fits, but the initial Tips (pop-ups, sign-in, payment) always do.
                result.tips_selected = []
                result.tips = INITIAL_TIPS
                result.problems.append("Tips retriever chose none; using the initial Tips")
            else:
                result.tips_selected = reply.value.numbers
                result.tips = format_tips([items[n - 1] for n in reply.value.numbers])
    if evolution.retrieve_shortcuts_over and len(shortcuts) > evolution.retrieve_shortcuts_over:
        known = list(shortcuts)
        listing = "\n".join(s.describe() for s in shortcuts.values())
        prompt = render_prompt(
            "retriever_shortcuts", {"instruction": instruction, "shortcuts": listing}, prompts_dir
        )
        try:
            selection = ask(
                client,
                ROLE,
                prompt,
                [],
                lambda text: parse_shortcut_selection(text, known),
                agent="shortcuts_retriever",
                on_turn=on_turn,
            )
        except ModelError as exc:
            result.problems.append(f"Shortcuts retriever failed ({exc}); using all Shortcuts")
        else:
            if selection.value is None:
                result.problems.append(
                    f"Shortcuts retriever gave no usable reply ({selection.problem}); using all Shortcuts"
                )
            elif not selection.value.names:
                initial = {n: shortcuts[n] for n in INITIAL_SHORTCUTS if n in shortcuts}
                result.shortcuts_selected = list(initial)
                result.shortcuts = initial or dict(INITIAL_SHORTCUTS)
                result.problems.append("Shortcuts retriever chose none; using the initial Shortcuts")
            else:
                result.shortcuts_selected = selection.value.names
                result.shortcuts = {n: shortcuts[n] for n in selection.value.names}
    return result
