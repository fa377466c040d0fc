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

from mae.actions.reading import canonical_action_name
from mae.actions.registry import INITIAL_SHORTCUTS, Shortcut
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
from mae.memory.models import ShortcutUsage
from mae.memory.select import bounded, rank_shortcuts, rank_tips
from mae.memory.slices import tip_key
from mae.memory.tips import INITIAL_TIPS, format_tips, split_tips

ROLE = "experience"

CANDIDATE_TIPS = 60
"""Most Tips the Tips retriever is shown (the best-ranked without a model)."""
CANDIDATE_TIPS_CHARS = 12_000
CANDIDATE_SHORTCUTS = 40
"""Most Shortcuts the Shortcuts retriever is shown."""
CANDIDATE_SHORTCUTS_CHARS = 16_000
RUN_TIPS = 12
"""Most Tips one run gets (its Operator sees them at every step)."""
RUN_TIPS_CHARS = 4_000
"""Most characters of Tips one run gets: a memory up to this size (and ``RUN_TIPS`` Tips) is given
whole, a larger one as the best-chosen Tips within it. Real models write Tips of 200 to 400 characters
(relay runs on the frontier tier): the earlier 720 gave a run of a twelve-Tip memory only two or three
of them, cutting the very Tips its Shortcuts' preconditions named (the Cartwell price-check memory
held 12 Tips in 3,073 characters). 4,000 characters are about 1,000 tokens, about 3 % of a real
Operator request (about 9,000 characters of text and 30,000 input tokens with its screenshots)."""
RUN_SHORTCUTS = 6
"""Most Shortcuts one run gets (its Manager and Operator see them at every step)."""
RUN_SHORTCUTS_CHARS = 540


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


def parse_tip_selection(text: str, count: int, shown: set[int] | None = None) -> TipSelection:
    """Numbers from ``### Selected Tips ###`` (``None`` = no tip); all must be between 1 and ``count``
    and, when ``shown`` is given, among the numbers the retriever was shown."""
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
    unseen = sorted({n for n in numbers if shown is not None and n not in shown})
    if unseen:
        raise ReplyProblem(f"tips {unseen[:20]} are not in the list: choose among the numbers shown")
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


def _tips_for_run(items: list[str], indices: list[int]) -> str:
    return format_tips([items[i] for i in indices])


def _fallback_tips(items: list[str], instruction: str) -> list[int]:
    """The initial Tips still in the store, then the top-ranked few, within the run's budget."""
    initial = {tip_key(tip) for tip in split_tips(INITIAL_TIPS)}
    first = [i for i, item in enumerate(items) if tip_key(item) in initial]
    return rank_tips(items, instruction, limit=RUN_TIPS, budget_chars=RUN_TIPS_CHARS, first=first)


def _fallback_shortcuts(
    shortcuts: Mapping[str, Shortcut], instruction: str, usage: Mapping[str, ShortcutUsage] | None
) -> dict[str, Shortcut]:
    """The initial Shortcuts still usable, then the top-ranked few, within the run's budget."""
    names = rank_shortcuts(
        shortcuts,
        instruction,
        limit=RUN_SHORTCUTS,
        budget_chars=RUN_SHORTCUTS_CHARS,
        usage=usage,
        first=[n for n in INITIAL_SHORTCUTS if n in shortcuts],
    )
    return {n: shortcuts[n] for n in names}


def retrieve(
    client: ChatClient,
    instruction: str,
    tips: str,
    shortcuts: Mapping[str, Shortcut],
    evolution: EvolutionSettings,
    *,
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
    usage: Mapping[str, ShortcutUsage] | None = None,
) -> Retrieved:
    """The Tips and Shortcuts to give a run for ``instruction``: all of them while the memory is small;
    past the thresholds, the retrievers choose among a bounded candidate list ranked without a model
    (``mae.memory.select``), and the run gets at most ``RUN_TIPS_CHARS`` / ``RUN_SHORTCUTS_CHARS`` of
    the choice. A failed retriever leaves the run with the initial memory and the top-ranked few."""
    items = split_tips(tips)
    result = Retrieved(
        tips=tips, shortcuts=dict(shortcuts), tips_total=len(items), shortcuts_total=len(shortcuts)
    )
    if evolution.retrieve_tips_over and len(items) > evolution.retrieve_tips_over:
        _retrieve_tips(client, instruction, items, result, on_turn, prompts_dir)
    elif len(items) > RUN_TIPS or len(tips) > RUN_TIPS_CHARS:
        # retrieval is off but the memory is large: the model-free ranking alone bounds the prompt
        chosen = _fallback_tips(items, instruction)
        result.tips, result.tips_selected = _tips_for_run(items, chosen), [i + 1 for i in chosen]
    if evolution.retrieve_shortcuts_over and len(shortcuts) > evolution.retrieve_shortcuts_over:
        _retrieve_shortcuts(client, instruction, shortcuts, usage, result, on_turn, prompts_dir)
    elif len(shortcuts) > RUN_SHORTCUTS * 4:
        result.shortcuts = _fallback_shortcuts(shortcuts, instruction, usage)
        result.shortcuts_selected = list(result.shortcuts)
    return result


def _retrieve_tips(
    client: ChatClient,
    instruction: str,
    items: list[str],
    result: Retrieved,
    on_turn: TurnListener | None,
    prompts_dir: Path | None,
) -> None:
    candidates = rank_tips(items, instruction, limit=CANDIDATE_TIPS, budget_chars=CANDIDATE_TIPS_CHARS)
    shown = sorted(candidates)
    listing = "\n".join(f"[{index + 1}] {items[index]}" for index in shown)
    prompt = render_prompt("retriever_tips", {"instruction": instruction, "tips": listing}, prompts_dir)
    numbers = {i + 1 for i in shown}
    try:
        reply = ask(
            client,
            ROLE,
            prompt,
            [],
            lambda text: parse_tip_selection(text, len(items), numbers),
            agent="tips_retriever",
            on_turn=on_turn,
        )
    except ModelError as exc:
        problem = f"Tips retriever failed ({exc})"
    else:
        if reply.value is not None and not reply.value.numbers:
            # "None": no learned Tip fits, but the initial Tips (pop-ups, sign-in, payment) always do.
            result.tips_selected = []
            result.tips = INITIAL_TIPS
            result.problems.append("Tips retriever chose none; using the initial Tips")
            return
        if reply.value is not None:
            rank = {index: position for position, index in enumerate(candidates)}
            chosen = sorted((n - 1 for n in reply.value.numbers), key=lambda i: rank.get(i, len(rank)))
            kept = bounded(chosen, [len(item) + 8 for item in items], RUN_TIPS, RUN_TIPS_CHARS)
            picked = sorted(kept)
            result.tips_selected = [i + 1 for i in picked]
            result.tips = _tips_for_run(items, picked)
            if len(picked) < len(chosen):
                result.problems.append(
                    f"Tips retriever chose {len(chosen)} tips; the run gets the {len(picked)} that fit its "
                    "prompt budget"
                )
            return
        problem = f"Tips retriever gave no usable reply ({reply.problem})"
    chosen = _fallback_tips(items, instruction)
    result.tips, result.tips_selected = _tips_for_run(items, chosen), None
    result.problems.append(f"{problem}; using the initial Tips and the {len(chosen)} best-matching ones")


def _retrieve_shortcuts(
    client: ChatClient,
    instruction: str,
    shortcuts: Mapping[str, Shortcut],
    usage: Mapping[str, ShortcutUsage] | None,
    result: Retrieved,
    on_turn: TurnListener | None,
    prompts_dir: Path | None,
) -> None:
    candidates = rank_shortcuts(
        shortcuts,
        instruction,
        limit=CANDIDATE_SHORTCUTS,
        budget_chars=CANDIDATE_SHORTCUTS_CHARS,
        usage=usage,
        first=[n for n in INITIAL_SHORTCUTS if n in shortcuts],
    )
    listing = "\n".join(shortcuts[n].describe() for n in candidates)
    prompt = render_prompt(
        "retriever_shortcuts", {"instruction": instruction, "shortcuts": listing}, prompts_dir
    )
    try:
        selection = ask(
            client,
            ROLE,
            prompt,
            [],
            lambda text: parse_shortcut_selection(text, candidates),
            agent="shortcuts_retriever",
            on_turn=on_turn,
        )
    except ModelError as exc:
        problem = f"Shortcuts retriever failed ({exc})"
    else:
        if selection.value is not None and not selection.value.names:
            initial = {n: shortcuts[n] for n in INITIAL_SHORTCUTS if n in shortcuts}
            result.shortcuts_selected = list(initial)
            result.shortcuts = initial or dict(INITIAL_SHORTCUTS)
            result.problems.append("Shortcuts retriever chose none; using the initial Shortcuts")
            return
        if selection.value is not None:
            chosen = selection.value.names
            sizes = [len(shortcuts[n].describe()) + 1 for n in chosen]
            names = [
                chosen[i] for i in bounded(range(len(chosen)), sizes, RUN_SHORTCUTS, RUN_SHORTCUTS_CHARS)
            ]
            result.shortcuts_selected = names
            result.shortcuts = {n: shortcuts[n] for n in names}
            if len(names) < len(chosen):
                result.problems.append(
                    f"Shortcuts retriever chose {len(chosen)} Shortcuts; the run gets the {len(names)} that "
                    "fit its prompt budget"
                )
            return
        problem = f"Shortcuts retriever gave no usable reply ({selection.problem})"
    result.shortcuts = _fallback_shortcuts(shortcuts, instruction, usage)
    result.shortcuts_selected = None
    result.problems.append(
        f"{problem}; using the initial Shortcuts and the {len(result.shortcuts)} best-matching ones"
    )
