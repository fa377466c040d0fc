"""What the Experience Reflectors see of a large memory: the relevant slice plus what the task used.

While the memory is small they see all of it, as in the paper. Past ``REFLECT_TIPS`` Tips or
``REFLECT_SHORTCUTS`` Shortcuts they see a bounded slice chosen without a model (``mae.memory.select``)
for the task and the upcoming ones: first what this task was given and called, then the Shortcuts that
keep failing, then the best-ranked rest. Their edits are merged into the full store (three-way, by the
text of each Tip; Shortcuts by name), so nothing they did not see is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from mae.memory.models import MemoryState, UsagePolicy
from mae.memory.select import rank_shortcuts, rank_tips
from mae.memory.tips import format_tips, split_tips

REFLECT_TIPS = 30
"""Most Tips the Tips reflector sees (its reply may add a few: at most 40 are read)."""
REFLECT_TIPS_CHARS = 6_000
REFLECT_SHORTCUTS = 25
"""Most Shortcuts the Shortcuts reflector sees."""
REFLECT_SHORTCUTS_CHARS = 8_000
MAX_FLAGGED_SHOWN = 10
"""Most failing Shortcuts shown for revision at once (the most recently failed first)."""


def tip_key(tip: str) -> str:
    """A tip compared by its words (case and spacing ignored)."""
    return " ".join(tip.lower().split())


def tips_slice(tips: str, query: str, used: str = "") -> str:
    """The Tips text the Tips reflector sees: all of ``tips`` while small, else the Tips in ``used``
    (what the run was given) and the best-ranked for ``query``, in their stored order."""
    items = split_tips(tips)
    if len(items) <= REFLECT_TIPS and len(tips) <= REFLECT_TIPS_CHARS:
        return tips
    used_keys = {tip_key(item) for item in split_tips(used)}
    first = [i for i, item in enumerate(items) if tip_key(item) in used_keys]
    chosen = rank_tips(items, query, limit=REFLECT_TIPS, budget_chars=REFLECT_TIPS_CHARS, first=first)
    return format_tips([items[i] for i in sorted(chosen)])


def failing_shortcuts(state: MemoryState, policy: UsagePolicy, limit: int = MAX_FLAGGED_SHOWN) -> list[str]:
    """Flagged and withheld Shortcuts, the most recently failed first, at most ``limit``."""

    def last_failure(name: str) -> float:
        usage = state.usage.get(name)
        return max((f.time for f in usage.recent_failures), default=0.0) if usage else 0.0

    return sorted(state.flagged(policy), key=last_failure, reverse=True)[:limit]


def shortcuts_slice(state: MemoryState, query: str, used: Sequence[str], policy: UsagePolicy) -> list[str]:
    """Names of the Shortcuts the Shortcuts reflector sees: all while few, else those the task used,
    the failing ones, then the best-ranked for ``query``."""
    if len(state.shortcuts) <= REFLECT_SHORTCUTS:
        return list(state.shortcuts)
    first = [n for n in dict.fromkeys([*used, *failing_shortcuts(state, policy)]) if n in state.shortcuts]
    chosen = rank_shortcuts(
        state.shortcuts,
        query,
        limit=REFLECT_SHORTCUTS,
        budget_chars=REFLECT_SHORTCUTS_CHARS,
        usage=state.usage,
        first=first,
    )
    order = {name: i for i, name in enumerate(state.shortcuts)}
    return sorted(chosen, key=lambda n: order[n])


def merge_tips(base: str, ours: str, theirs: str) -> str:
    """A three-way merge of Tips lists: ``theirs`` (the newest stored version) with the tips ``ours``
    added to ``base`` and without the ones ``ours`` removed from it (compared by their text)."""

    base_items, our_items, their_items = split_tips(base), split_tips(ours), split_tips(theirs)
    base_keys = {tip_key(item) for item in base_items}
    our_keys = {tip_key(item) for item in our_items}
    removed = base_keys - our_keys
    kept = [item for item in their_items if tip_key(item) not in removed]
    present = {tip_key(item) for item in kept}
    added = [item for item in our_items if tip_key(item) not in base_keys and tip_key(item) not in present]
    return format_tips(kept + added)
