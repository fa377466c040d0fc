"""The agents' prompts put what stays the same within a task first and what changes every step last, so
that providers' automatic prompt caching can serve the start of each request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
MARKER = "What follows changes from step to step"
STABLE = {"instruction", "tips", "shortcuts", "atomic_actions", "tap_x", "tap_y"}
CHANGING = {
    "plan",
    "subgoal",
    "progress",
    "notes",
    "history",
    "errors",
    "perception",
    "frame",
    "keyboard",
    "action",
    "description",
    "before",
    "after",
    "keyboard_before",
    "keyboard_after",
    "escalation",
    "guidance",
}


@pytest.mark.parametrize("name", ["operator", "manager", "action_reflector", "notetaker"])
def test_what_changes_every_step_comes_after_what_stays(name: str) -> None:
    text = (PROMPTS / f"{name}.md").read_text(encoding="utf-8").split("-->", 1)[1]
    assert text.count(MARKER) == 1
    stable, changing = text.split(MARKER)
    used = set(re.findall(r"\$([a-z_]+)", text))
    assert used & CHANGING <= set(re.findall(r"\$([a-z_]+)", changing))
    assert used & STABLE <= set(re.findall(r"\$([a-z_]+)", stable)), "a stable value comes late"
    assert not set(re.findall(r"\$([a-z_]+)", stable)) & CHANGING, "a value that changes comes early"
    assert "Reply in exactly this format" in stable  # the reply format is part of the cached start
