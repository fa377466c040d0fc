"""The demo's agent picker: Mobile-Agent-E or one of the baselines it is compared with (docs/agents.md).

``agent_picker`` builds the control inside the Run column; ``wire_agent_picker`` greys out
self-evolution for the baselines, which neither read nor change the long-term memory.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from mae.agents.choose import AGENT_NAMES, AGENT_TITLES

AGENT_INFO = {
    "e": "Manager, Operator, Action Reflector and Notetaker, with Tips and Shortcuts",
    "v2": "baseline: planning, decision and reflection agents with a memory unit",
    "v1": "baseline: one agent planning from its own history, reflecting when nothing changes",
}
"""One line per agent: who does the work."""


def agent_choices() -> list[tuple[str, str]]:
    """``(label, value)`` pairs for the picker."""
    return [(AGENT_TITLES[name], name) for name in AGENT_NAMES]


def agent_info(name: str | None) -> str:
    """The picker's caption for ``name``."""
    return AGENT_INFO.get(name or "e", AGENT_INFO["e"])


def agent_picker(default: str = "e") -> gr.Radio:
    """The agent picker (place it inside the Run column)."""
    return gr.Radio(
        agent_choices(),
        value=default if default in AGENT_NAMES else "e",
        label="Agent",
        info=agent_info(default),
        elem_id="mae-agent",
    )


def wire_agent_picker(picker: gr.Radio, evolve: gr.Checkbox) -> None:
    """Baselines have no long-term memory: self-evolution is off and locked while one is picked."""

    def changed(name: str | None) -> tuple[Any, Any]:
        baseline = (name or "e") != "e"
        picker_update = gr.update(info=agent_info(name))
        if baseline:
            return picker_update, gr.update(value=False, interactive=False)
        return picker_update, gr.update(interactive=True)

    picker.change(changed, picker, [picker, evolve], queue=False)
