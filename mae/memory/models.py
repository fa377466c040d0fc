"""The data of the long-term memory: one version's Tips, Shortcuts and usage, and the history lines.

``MemoryState`` is one stored version; ``ShortcutUsage`` how a Shortcut has fared; ``UsagePolicy``
when a failing Shortcut is flagged or withheld; ``HistoryEntry`` one line of ``history.jsonl``.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from pydantic import BaseModel, Field

from mae.actions.registry import INITIAL_SHORTCUTS, Shortcut
from mae.config import EvolutionSettings
from mae.memory.shortcuts import Rejection, shortcuts_to_json
from mae.memory.tips import INITIAL_TIPS, split_tips

FORMAT = 3
"""Snapshot format written by this code (2: chunks shared between versions; 3: the same, with Shortcut
chunks as rows and a table of shared steps, which load three to four times faster; 1 and 2 are still
read)."""

_RECENT_FAILURES = 5


class ShortcutFailure(BaseModel):
    """One failed call of a Shortcut, as shown to the Shortcuts reflector for revision."""

    task: str = ""
    action: str = ""
    outcome: str = ""
    error: str = ""
    time: float = Field(default_factory=time.time)


class ShortcutUsage(BaseModel):
    """How a Shortcut's current definition has fared (reset when the definition changes)."""

    calls: int = 0
    successes: int = 0
    failures: int = 0
    failure_streak: int = Field(default=0, description="failures since the last success")
    refused: int = Field(default=0, description="calls the precondition check refused (not run)")
    recent_failures: list[ShortcutFailure] = Field(default_factory=list)
    last_used: float | None = None

    def record(self, success: bool, failure: ShortcutFailure | None = None) -> None:
        """Count one executed call."""
        self.calls += 1
        self.last_used = time.time()
        if success:
            self.successes += 1
            self.failure_streak = 0
            return
        self.failures += 1
        self.failure_streak += 1
        if failure is not None:
            self.recent_failures = [*self.recent_failures, failure][-_RECENT_FAILURES:]


ShortcutStatus = Literal["ok", "flagged", "withheld", "invalid"]


class UsagePolicy(BaseModel):
    """When a failing Shortcut is flagged for revision and when it is withheld from the Operator."""

    flag_after: int = Field(default=2, ge=1, description="consecutive failures before a Shortcut is flagged")
    withhold_after: int = Field(default=3, ge=1, description="consecutive failures before it is withheld")


class MemoryState(BaseModel):
    """One version of the long-term memory, with who made it and why."""

    format: int = FORMAT
    version: int = 0
    created_at: float = Field(default_factory=time.time)
    author: str = "built-in"
    summary: str = ""
    task: str | None = None
    changes: list[str] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    tips: str = ""
    shortcuts: dict[str, Shortcut] = Field(default_factory=dict)
    usage: dict[str, ShortcutUsage] = Field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The snapshot as stored (Shortcuts in the paper's JSON form)."""
        data = self.model_dump(mode="json", exclude={"shortcuts"})
        data["shortcuts"] = shortcuts_to_json(self.shortcuts)
        return data

    def content_key(self) -> str:
        """A canonical text of the content (Tips, Shortcuts, usage), to tell whether anything changed."""
        data = self.to_json()
        return json.dumps({k: data[k] for k in ("tips", "shortcuts", "usage")}, sort_keys=True)

    def tip_items(self) -> list[str]:
        return split_tips(self.tips)

    def usage_of(self, name: str) -> ShortcutUsage:
        """The usage record of ``name`` (created empty if missing)."""
        return self.usage.setdefault(name, ShortcutUsage())

    def status(self, name: str, policy: UsagePolicy) -> ShortcutStatus:
        """``invalid`` (unusable definition), ``withheld``, ``flagged`` or ``ok``."""
        shortcut = self.shortcuts[name]
        if shortcut.problems():
            return "invalid"
        streak = self.usage.get(name, ShortcutUsage()).failure_streak
        if streak >= policy.withhold_after:
            return "withheld"
        if streak >= policy.flag_after:
            return "flagged"
        return "ok"

    def usable_shortcuts(self, policy: UsagePolicy) -> dict[str, Shortcut]:
        """The Shortcuts the Operator may use: all but withheld and invalid ones."""
        return {n: s for n, s in self.shortcuts.items() if self.status(n, policy) in ("ok", "flagged")}

    def flagged(self, policy: UsagePolicy) -> list[str]:
        """Names of Shortcuts that keep failing (flagged or withheld), for the Shortcuts reflector."""
        return [n for n in self.shortcuts if self.status(n, policy) in ("flagged", "withheld")]


def initial_state() -> MemoryState:
    """Version 0: the paper's initial Tips and Shortcuts."""
    return MemoryState(
        version=0,
        created_at=0.0,
        author="built-in",
        summary="initial Tips and Shortcuts",
        tips=INITIAL_TIPS,
        shortcuts={name: s.model_copy(deep=True) for name, s in INITIAL_SHORTCUTS.items()},
    )


class HistoryEntry(BaseModel):
    """One line of ``history.jsonl``: a new version, or an event that changed nothing (``version`` None)."""

    time: float = Field(default_factory=time.time)
    version: int | None = None
    previous: int | None = None
    author: str
    summary: str
    task: str | None = None
    changes: list[str] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list, description="failures met, e.g. a reflector error")


def status_table(state: MemoryState, policy: UsagePolicy) -> list[dict[str, Any]]:
    """One row per Shortcut: name, status and usage counts (for ``memory show`` and the UI)."""
    rows = []
    for name in state.shortcuts:
        usage = state.usage.get(name, ShortcutUsage())
        rows.append(
            {
                "name": name,
                "status": state.status(name, policy),
                "calls": usage.calls,
                "successes": usage.successes,
                "failures": usage.failures,
                "failure_streak": usage.failure_streak,
                "refused": usage.refused,
            }
        )
    return rows


def policy_from(evolution: EvolutionSettings) -> UsagePolicy:
    """The ``UsagePolicy`` of ``Settings.evolution``."""
    return UsagePolicy(
        flag_after=evolution.flag_after_failures, withhold_after=evolution.withhold_after_failures
    )
