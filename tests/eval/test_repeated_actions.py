"""No task's reference may need what the paper's loop forbids: the very same action (Swipe and Back
excepted) more than ``LoopSettings().max_repeated_actions`` times in a row ends a run with
``repeated_action``. A reference that repeats one (four ">" taps through a date picker) shows a task
that an agent following the paper cannot finish, however well it reads the screen. Every suite is
checked (basic, hard, frontier)."""

from __future__ import annotations

from typing import get_args

import pytest

from mae.actions.reading import parse_action_text
from mae.actions.registry import REPEAT_EXEMPT
from mae.config import LoopSettings
from mae.eval.virtual_suite import SUITE_FILES, SuiteName, VirtualTask, load_task_suite

SUITES: tuple[SuiteName, ...] = get_args(SuiteName)
TASKS = [task for suite in SUITES for task in load_task_suite(suite=suite)]


def longest_repeat(actions: list[str]) -> tuple[int, str]:
    """The longest run of one action that the loop counts (as the loop writes it), and that action."""
    best, best_text, run, last = 0, "", 0, ""
    for text in actions:
        call = parse_action_text(text)
        written = str(call)
        if call.name in REPEAT_EXEMPT:
            run, last = 0, ""
            continue
        run = run + 1 if written == last else 1
        last = written
        if run > best:
            best, best_text = run, written
    return best, best_text


def test_the_count_follows_the_loops_rule() -> None:
    taps = ["Tap(978, 494)"] * 4
    assert longest_repeat(taps) == (4, "Tap(978, 494)")
    assert longest_repeat(["Tap(1, 2)", "Tap(1, 3)", "Tap(1, 2)"])[0] == 1
    assert longest_repeat(["Back()"] * 6 + ["Swipe(540, 1500, 540, 500)"] * 5) == (0, "")
    assert longest_repeat(["Tap(5, 5)", "Tap(5, 5)", "Back()", "Tap(5, 5)"])[0] == 2


def test_the_suites_are_there() -> None:
    assert set(SUITES) == set(SUITE_FILES) == {"basic", "hard", "frontier"}
    assert len(TASKS) >= 17 + 25 + 20 and all(task.reference_actions for task in TASKS)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_no_reference_repeats_an_action_past_the_papers_exit(task: VirtualTask) -> None:
    limit = LoopSettings().max_repeated_actions
    count, action = longest_repeat(task.reference_actions)
    assert count <= limit, (
        f"{task.id} repeats {action} {count} times in a row (the loop stops at {limit + 1})"
    )
