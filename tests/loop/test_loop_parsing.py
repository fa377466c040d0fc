"""Unit tests: section parsing, strict outcomes, prompt rendering, action validation, working memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from mae.actions.registry import INITIAL_SHORTCUTS
from mae.agents import manager, notetaker, reflector
from mae.agents.base import Screen
from mae.agents.operator import validate_action
from mae.agents.parsing import ReplyProblem, extract_sections, is_finished, parse_outcome, require_sections
from mae.agents.prompting import PROMPTS_DIR, PromptError, load_template, placeholders, render, render_prompt
from mae.llm.coordinates import CoordinateMapper
from mae.memory.working import ActionRecord, WorkingMemory
from mae.perception.elements import Perception


def test_loop_sections_tolerate_case_spacing_and_colons() -> None:
    text = "preamble\n###  thought ###\nhmm\n## PLAN:\n1. a\n2. b\n###Current   Subgoal###\n  do a  \n"
    sections = extract_sections(text)
    assert sections == {"thought": "hmm", "plan": "1. a\n2. b", "current subgoal": "do a"}


def test_loop_required_sections_are_enforced() -> None:
    with pytest.raises(ReplyProblem, match="no sections"):
        require_sections("just text", ["Plan"])
    with pytest.raises(ReplyProblem, match=r"### Current Subgoal ###"):
        require_sections("### Plan ###\n1. x\n### Current Subgoal ###\n\n", ["Plan", "Current Subgoal"])
    assert require_sections("### Plan ###\nx", ["Plan"], optional=("Thought",)) == {
        "Plan": "x",
        "Thought": "",
    }


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("A", "A"),
        ("B. Failed: wrong page", "B"),
        ("**C**: no change", "C"),
        ("(A)", "A"),
        (" A\n", "A"),
        ("C - nothing happened", "C"),
        ("Outcome: A", "A"),
        ("a", "A"),
        ("The outcome is A", "A"),
        ("Answer: B. wrong page", "B"),
    ],
)
def test_loop_outcome_letters(text: str, letter: str) -> None:
    assert parse_outcome(text) == letter


@pytest.mark.parametrize(
    "text", ["A, B", "A (or maybe B)", "A or B", "A/B", "D", "", "Apparently fine", "AB"]
)
def test_loop_outcome_rejects_anything_else(text: str) -> None:
    with pytest.raises(ReplyProblem):
        parse_outcome(text)


def test_loop_finished_subgoal() -> None:
    assert is_finished("Finished") and is_finished("**finished.**") and is_finished("Task finished")
    assert not is_finished("Finished the search, now open Notes") and not is_finished("Not finished")


def test_loop_agent_reply_parsers() -> None:
    reply = manager.parse_reply("### Thought ###\nx\n### Plan ###\n1. a\n### Current Subgoal ###\nFinished")
    assert reply.finished and reply.plan == "1. a"
    verdict = reflector.parse_reply(
        "### Outcome ###\nA\n### Error Description ###\nNone\n### Progress Status ###\np"
    )
    assert verdict.outcome == "A" and verdict.error_description == "" and verdict.progress == "p"
    assert notetaker.parse_reply("### Important Notes ###\nNone.").notes == ""


def test_loop_render_is_strict() -> None:
    assert render("Hi $name, ${what}$$", {"name": "Ann", "what": "go"}) == "Hi Ann, go$"
    with pytest.raises(PromptError, match="no value for what"):
        render("Hi $name $what", {"name": "Ann"})
    with pytest.raises(PromptError, match="values never used: extra"):
        render("Hi $name", {"name": "Ann", "extra": 1})
    with pytest.raises(PromptError, match="malformed placeholder at line 2"):
        placeholders("ok\ncosts $5")
    # values are not re-scanned: a price in a note stays as it is
    assert render("$notes", {"notes": "$159.99 ${x}"}) == "$159.99 ${x}"


def test_loop_prompt_files_have_the_documented_placeholders() -> None:
    expected = {
        "manager": {
            "instruction",
            "plan",
            "subgoal",
            "progress",
            "notes",
            "shortcuts",
            "escalation",
            "guidance",
        },
        "notetaker": {"instruction", "plan", "subgoal", "action", "progress", "notes", "perception"},
    }
    for name, names in expected.items():
        assert placeholders(load_template(name)) == names
    assert "<!--" not in load_template("operator") and (PROMPTS_DIR / "action_reflector.md").exists()
    with pytest.raises(PromptError, match="missing"):
        render_prompt("nonexistent", {}, Path("/nonexistent"))


def test_loop_manager_prompt_first_step_and_escalation() -> None:
    memory = WorkingMemory(instruction="Buy milk")
    first = manager.build_prompt(memory, INITIAL_SHORTCUTS)
    assert "start of the task" in first and "Errors To Resolve" not in first
    assert "Precondition: There is a text input box" in first
    memory.plan = "1. x"
    memory.record(ActionRecord(step=1, name="Tap", text="Tap(1, 2)", outcome="B", error="wrong page"))
    escalated = manager.build_prompt(memory, {}, memory.recent_errors(2))
    assert "Errors To Resolve" in escalated and "wrong page" in escalated and "(none)" in escalated


def _screen(width: int = 1080, height: int = 2340) -> Screen:
    return Screen(Image.new("RGB", (width, height)), Perception(width=width, height=height))


def test_loop_validate_action_maps_image_coordinates_to_screen() -> None:
    screen = _screen()
    mapper = CoordinateMapper((1080, 2340), (540, 1170))
    call, screen_call, steps = validate_action(
        '{"name": "Tap", "arguments": {"x": 100, "y": 1000}}', shortcuts={}, screen=screen, mapper=mapper
    )
    assert call.arguments == {"x": 100, "y": 1000} and screen_call.arguments == {"x": 200, "y": 2000}
    assert str(steps[0]) == "Tap(200, 2000)"
    _, shortcut_call, shortcut_steps = validate_action(
        "Tap_Type_and_Enter(10, 20, 'hi')", shortcuts=INITIAL_SHORTCUTS, screen=screen, mapper=mapper
    )
    assert shortcut_call.arguments == {"x": 20, "y": 40, "text": "hi"}
    assert [str(s) for s in shortcut_steps] == ["Tap(20, 40)", 'Type("hi")', "Enter()"]
    with pytest.raises(ReplyProblem, match=r"off screen.*540x1170"):
        validate_action("Tap(600, 10)", shortcuts={}, screen=screen, mapper=mapper)


def test_loop_validate_action_accepts_fences_and_surrounding_words() -> None:
    screen = _screen()
    identity = CoordinateMapper.identity((1080, 2340))
    fenced = '```json\n{"name": "Back", "arguments": {}}\n```'
    assert validate_action(fenced, shortcuts={}, screen=screen, mapper=identity)[0].name == "Back"
    worded = 'I will go home: {"name": "Home", "arguments": {}}'
    assert validate_action(worded, shortcuts={}, screen=screen, mapper=identity)[0].name == "Home"


def test_loop_working_memory_counts_failures_and_repeats() -> None:
    memory = WorkingMemory(instruction="x")
    for step, outcome in enumerate(["A", "B", "C"], 1):
        memory.record(ActionRecord(step=step, name="Home", text="Home()", outcome=outcome))
    assert memory.consecutive_failures() == 2 and memory.trailing_repeats("Home()") == 3
    assert [e.step for e in memory.errors] == [2, 3]
    assert WorkingMemory.model_validate_json(memory.model_dump_json()) == memory


@pytest.mark.parametrize(
    ("text", "answer", "cut_off"),
    [
        ("<think>draft: Home()</think>\n### Action ###\nBack()", "\n### Action ###\nBack()", False),
        ("<THINKING>a</THINKING>\n<reasoning>b</reasoning>y", "\ny", False),  # any case, one after another
        ("the template opened it\n</think>\nanswer", "\nanswer", False),  # only the closing tag
        ("<think>\n### Action ###\nHome()\n", "", True),  # cut off while reasoning
        ("no reasoning at all", "no reasoning at all", False),
        ("<think><think>nested</think> rest", " rest", False),  # the inner opening tag is reasoning text
        # a tag that is not at the start, or not on a line of its own, is text
        ("<think>one</think> a <think>b", " a <think>b", False),
        ('### Action ###\nType("<think>")', '### Action ###\nType("<think>")', False),
        ('{"text": "</think>"}', '{"text": "</think>"}', False),
    ],
)
def test_loop_reasoning_blocks_are_not_the_answer(text: str, answer: str, cut_off: bool) -> None:
    from mae.agents.parsing import split_reasoning

    assert split_reasoning(text) == (answer, cut_off)


def test_loop_a_draft_inside_reasoning_is_never_read() -> None:
    draft = '<think>\n### Action ###\n{"name": "Home", "arguments": {}}\n### Description ###\nHmm'
    with pytest.raises(ReplyProblem, match="stopped inside its <think> reasoning"):
        require_sections(draft, ["Action", "Description"])
    assert extract_sections(draft, ["Action", "Description"]) == {}  # and nothing is taken from it
    chinese = draft + "\n</think>\n### 操作 ###\nTap(1, 2)"  # an answer in headers we do not read
    with pytest.raises(ReplyProblem, match="no sections"):
        require_sections(chinese, ["Action", "Description"])


def test_loop_every_occurrence_of_an_action_section_is_kept() -> None:
    twice = "### Action ###\nTap(1, 2)\n### Description ###\nOpen it.\n### Action ###\nBack()"
    assert (
        require_sections(twice, ["Action", "Description"], every=("Action",))["Action"]
        == "Tap(1, 2)\n\nBack()"
    )
    assert require_sections(twice, ["Action", "Description"])["Action"] == "Back()"  # the last, by default
    # "Action: ..." inside a line of prose is not a header when the reply has a real one
    prose = "### Action ###\nTap(1, 2)\n### Description ###\nOpen it.\nAction: Back() if nothing happens."
    assert require_sections(prose, ["Action", "Description"], every=("Action",))["Action"] == "Tap(1, 2)"
    inline = "Action: Tap(1, 2)\nDescription: open it\nAction: Back()"  # a reply written that way
    assert (
        require_sections(inline, ["Action", "Description"], every=("Action",))["Action"]
        == "Tap(1, 2)\n\nBack()"
    )


@pytest.mark.parametrize(
    ("subgoal", "finished"),
    [
        ("Finished? Not yet - next save the note.", False),
        ("Finished: no, the note is not saved.", False),
        ("Finished - wait, no: one more step.", False),
        ("Finished - almost, one step left.", False),
        ("Finished: the note is saved.", True),
        ("Finished!", True),
    ],
)
def test_loop_finished_followed_by_a_denial_is_not_finished(subgoal: str, finished: bool) -> None:
    assert is_finished(subgoal) is finished
