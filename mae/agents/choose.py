"""Choosing the agent framework that runs on the shared loop: ``e``, ``v2`` or ``v1``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from mae.actions.registry import INITIAL_SHORTCUTS, Shortcut
from mae.agents.e_agent import MobileAgentE
from mae.agents.operator import ShortcutGuard
from mae.agents.strategy import AgentStrategy
from mae.agents.v1 import MobileAgentV1
from mae.agents.v2 import MobileAgentV2
from mae.errors import ConfigError

AgentName = Literal["e", "v2", "v1"]
"""The agents mae runs (``LoopSettings.agent``)."""

AGENT_NAMES: tuple[str, ...] = get_args(AgentName)

AGENT_TITLES: dict[str, str] = {
    "e": "Mobile-Agent-E",
    "v2": "Mobile-Agent-v2",
    "v1": "Mobile-Agent (v1)",
}
"""Display names of the agents."""


@dataclass(frozen=True)
class EOptions:
    """What only Mobile-Agent-E uses: long-term memory (Tips, Shortcuts), the Shortcut guard and the
    parallel Notetaker. The baselines neither read nor change long-term memory."""

    tips: str = ""
    shortcuts: Mapping[str, Shortcut] | None = None
    guard: ShortcutGuard | None = None
    parallel_notetaker: bool = False


def make_agent(name: str, options: EOptions) -> AgentStrategy:
    """The strategy called ``name``; ``ConfigError`` naming the choices for an unknown one."""
    if name == "e":
        return MobileAgentE(
            tips=options.tips,
            shortcuts=INITIAL_SHORTCUTS if options.shortcuts is None else options.shortcuts,
            guard=options.guard,
            parallel_notetaker=options.parallel_notetaker,
        )
    if name == "v2":
        return MobileAgentV2()
    if name == "v1":
        return MobileAgentV1()
    raise ConfigError(f"unknown agent {name!r}: choose one of {', '.join(AGENT_NAMES)}")
