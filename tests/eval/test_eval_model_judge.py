"""The model judge's reply reader, fed what real models write."""

from __future__ import annotations

import re

import pytest

from mae.agents.parsing import ReplyProblem
from mae.eval.model_judge import parse_rubric_steps

GOOD = "### Thought ###\nIt worked.\n\n### Rubric Steps ###\n1. after step 1\n2. never\n3. at the start\n"


@pytest.mark.parametrize(
    "reply",
    [
        GOOD,
        GOOD.replace("\n", "\r\n"),
        "Sure! Here is my judgement.\n\n" + GOOD + "\nLet me know if you need more.",
        "### Rubric Steps ###\n```\n1. after step 1\n2. never\n3. at the start\n```",
        "## rubric steps:\n- **1.** After Step 1\n- **2.** Never\n- **3.** At the start (already open)",
        "### Rubric Steps ###\nRubric 1: step 1\nRubric 2: not fulfilled\nRubric 3: before the first action",
        "### Rubric Steps ###\n1) Opened Maps: after step 1\n2) Searched: no\n3) Home screen: at the start",
    ],
    ids=["plain", "crlf", "prose-around", "fenced", "bullets-bold", "rubric-n", "rubric-text"],
)
def test_eval_model_judge_reads_real_reply_styles(reply: str) -> None:
    assert parse_rubric_steps(reply, rubrics=3, steps=4).steps == [1, None, 0]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("I'm sorry, I can't help with evaluating screenshots.", "no sections"),
        ("", "empty"),
        ("### Rubric Steps ###\n1. after step 1\n3. never", "rubric item(s) 2"),
        ("### Rubric Steps ###\n1. after step 9\n2. never\n3. never", "step 9 does not exist"),
        ("### Rubric Steps ###\n1. maybe\n2. never\n3. never", "cannot read"),
        ("### Rubric Steps ###\n" + "x" * 20000, "rubric item(s) 1, 2, 3"),
    ],
    ids=["refusal", "empty", "missing-item", "no-such-step", "unreadable", "huge"],
)
def test_eval_model_judge_refuses_unusable_replies(reply: str, problem: str) -> None:
    with pytest.raises(ReplyProblem, match=re.escape(problem)):
        parse_rubric_steps(reply, rubrics=3, steps=4)
