"""The model judge's reply reader, fed what real models write."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import patch

import pytest
from PIL import Image

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


FULL = (
    "### Thought ###\nIt stopped on the route, then went back.\n\n### Rubric Steps ###\n"
    "1. after step 1\n2. after step 3, lost later\n3. never\n\n"
    "### Wrong Actions ###\nsteps 2 and 4\n\n### Wrong Verdicts ###\nnone\n"
)


def test_eval_model_judge_reads_lost_items_and_wrong_actions_and_verdicts() -> None:
    reply = parse_rubric_steps(FULL, rubrics=3, steps=4)
    assert reply.steps == [1, 3, None] and reply.final_held == [True, False, None]
    assert reply.wrong_actions == [2, 4] and reply.wrong_verdicts == []
    bare = parse_rubric_steps(GOOD, rubrics=3, steps=4)
    assert bare.wrong_actions is None and bare.wrong_verdicts is None  # not judged, not "all right"
    with pytest.raises(ReplyProblem, match="does not exist"):
        parse_rubric_steps(FULL.replace("steps 2 and 4", "7"), rubrics=3, steps=4)
    with pytest.raises(ReplyProblem, match="wrong actions"):
        parse_rubric_steps(FULL.replace("steps 2 and 4", "the second one"), rubrics=3, steps=4)


def test_eval_model_judge_sees_every_changed_screen_and_the_notes(tmp_path: Path) -> None:
    from eval_testkit import record

    from mae.eval.marks import apply_marks
    from mae.eval.model_judge import FRAME_WIDTH, judge_record

    colours = [
        "red",
        "red",
        "blue",
        "green",
        "green",
        "white",
        "black",
        "gray",
        "navy",
        "teal",
        "olive",
        "red",
    ]
    for step, colour in enumerate(colours, 1):
        Image.new("RGB", (1080, 2340), colour).save(tmp_path / f"step_{step:03d}_after.jpg")
    (tmp_path / "summary.json").write_text(json.dumps({"notes": "Golden Loaf Bakery, 4.5 stars"}))
    item = record("t", outcomes="A" * len(colours), rubric_steps=[1, 2, None], run_dir=str(tmp_path))
    item.grader = "none"

    class Client:
        def __init__(self) -> None:
            self.prompts: list[str] = []
            self.images: list[Image.Image] = []

        def encode(self, role: str, image: Image.Image) -> Image.Image:
            self.images.append(image)
            return image

    client = Client()

    def fake_ask(client_: Client, role: str, prompt: str, images: list[Image.Image], parse):  # type: ignore[no-untyped-def]
        client_.prompts.append(prompt)
        reply = FULL.replace("steps 2 and 4", "2").replace("none\n", "3\n")
        return SimpleNamespace(value=parse(reply), problem=None)

    with patch("mae.eval.model_judge.ask", fake_ask):
        marks = judge_record(client, item)  # type: ignore[arg-type]
    # 12 steps, 8 changed screens (steps 2 and 5 repeat the screen before them): all 10 sent, not 8 of 12
    assert len(client.images) == 10 and all(image.width == FRAME_WIDTH for image in client.images)
    prompt = client.prompts[0]
    assert "Golden Loaf Bakery, 4.5 stars" in prompt and "Action Reflector: A" in prompt
    assert "Image 1: the screen after step 1" in prompt and "after step 2\n" not in prompt
    assert marks.action_correct[:3] == [True, False, True] and marks.reflection_correct[2] is False
    judged = apply_marks(item, marks)
    assert judged.final_passed == [True, False, False]  # item 2 held after step 3 but was lost later
    assert judged.curve[3] == pytest.approx(2 / 3) and judged.curve[-1] == pytest.approx(1 / 3)
    assert judged.correctness_source == "model"
