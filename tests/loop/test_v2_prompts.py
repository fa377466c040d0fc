"""What the v2 baseline's prompts tell a real model (relay runs on the frontier tier)."""

from __future__ import annotations

from mae.agents.prompting import render_prompt


def test_the_decision_agent_is_told_its_memory_note_is_added_not_a_replacement() -> None:
    """v2 on Cartwell's webcam task: a real model re-listed its whole result list in each Memory note,
    as nothing said the notes are appended, so every later prompt held each result twice."""
    names = ["instruction", "progress", "memory", "last", "reflection", "tips", "frame", "keyboard"]
    values: dict[str, object] = {name: f"<{name}>" for name in names}
    values |= {"perception": "<elements>", "atomic_actions": "<ops>", "tap_x": 384, "tap_y": 788}
    text = " ".join(render_prompt("v2_decision", values).split())
    assert "Task-relevant content noted from earlier screens: <memory>" in text
    assert "it is added to the Memory, so do not repeat what is there" in text
