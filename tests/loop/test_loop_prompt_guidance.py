"""The authors' guidance is in the rendered prompts (in mae's words), and the element list in them
says each element's kind."""

from __future__ import annotations

from PIL import Image

from mae.actions.registry import INITIAL_SHORTCUTS
from mae.agents import manager, notetaker, operator
from mae.agents.base import Screen
from mae.llm import ChatClient, ModelProfile
from mae.memory.working import WorkingMemory
from mae.perception.elements import Element, Perception


def screen() -> Screen:
    elements = [
        Element(kind="text", text="Search here", box=(160, 300, 400, 360), role="field"),
        Element(kind="icon", text="Save", box=(980, 150, 1040, 210), role="button", named_by="a11y"),
    ]
    perception = Perception(width=1080, height=2340, elements=elements, keyboard_collapsed=True)
    return Screen(Image.new("RGB", (1080, 2340), "white"), perception)


def flat(text: str) -> str:
    return " ".join(text.split())


def client() -> ChatClient:
    return ChatClient(ModelProfile(base_url="http://127.0.0.1:9/v1", model="m", api_key_env=None))


def test_manager_prompt_has_the_planning_guidance() -> None:
    text = flat(
        manager.build_prompt(WorkingMemory(instruction="Compare three air fryers"), INITIAL_SHORTCUTS)
    )
    assert "concrete and measurable" in text and "compare the first three results" in text
    assert 'Investigate enough before declaring "Finished"' in text
    assert "reasonable assumption the user would make" in text


def test_operator_prompt_has_the_acting_guidance_and_kinds() -> None:
    memory = WorkingMemory(instruction="Find a bakery")
    raw = operator.build_prompt(client(), memory, screen(), "", INITIAL_SHORTCUTS, 5)
    text = flat(raw)
    assert "Use a Shortcut whenever one fits" in text
    assert "try a Swipe" in text
    assert "magnifying-glass icon" in text
    assert "trust the screenshot" in text
    # the screenshot goes out at 768x1664 (the default image policy): the prompt says that size, and
    # the element list is in that image's pixels (screen centres times 768/1080 and 1664/2340)
    assert "the current screen, 768 pixels wide and 1664 pixels high" in text
    assert 'field "Search here"; coordinates: [199, 235]' in raw.splitlines()
    assert 'button "Save"; coordinates: [718, 128]' in raw.splitlines()
    assert "on-screen keyboard shown" in text


def test_notetaker_prompt_says_none_keeps_the_notes() -> None:
    memory = WorkingMemory(instruction="Note the price")
    text = flat(notetaker.build_prompt(client(), memory, screen()))
    assert 'write "None": the existing notes are kept' in text
