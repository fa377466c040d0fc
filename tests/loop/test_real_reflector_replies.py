"""Real Action Reflector replies (relay runs with a real multimodal model) and what later prompts show."""

from __future__ import annotations

from pathlib import Path

from mae.agents.reflector import parse_reply
from mae.memory.working import ActionRecord

REPLIES = Path(__file__).parent / "data" / "real_replies"


def test_a_partial_success_is_not_shown_as_plain_success_in_later_prompts() -> None:
    """Hotel task, request 3: the model judged "A. Partially successful" (Chrome still loading), then read
    "Outcome: successful" for that step in every later prompt. The paper's A means successful or partially
    successful, and the history now says so."""
    reply = parse_reply((REPLIES / "reflector_partial_loading.txt").read_text(encoding="utf-8"))
    assert reply.outcome == "A"
    line = ActionRecord(step=1, name="Open_App", text='Open_App("Chrome")', outcome=reply.outcome).summary()
    assert line.endswith("Outcome: successful or partially successful")
    failed = ActionRecord(step=2, name="Tap", text="Tap(1, 2)", outcome="C").summary()
    assert "Outcome: failed" in failed and "partially" not in failed


def test_both_reflectors_say_how_to_judge_a_loading_result_or_a_pop_up_that_appeared() -> None:
    """Eight relay runs (E and v2): after an action whose result was still loading, or hidden by a pop-up
    that appeared on its own, the real model found no outcome that fit and answered A "with caveats"
    (as in the hotel task's request 3 above). Both prompts now say that this is A."""
    from mae.agents.prompting import load_template

    e_text = " ".join(load_template("action_reflector").split())
    v2_text = " ".join(load_template("v2_reflection").split())
    assert (
        "whose result is still loading, or is covered by a pop-up that appeared on its own, is A too"
        in e_text
    )
    assert "also when the result is still loading, or a pop-up that appeared on its own covers it" in v2_text


def test_the_operator_is_told_the_repeated_action_exit_it_would_otherwise_walk_into() -> None:
    """Trips, relay runs in all three arms: a real model paged a date picker with ">" one month at a
    time, each tap working, and the loop ended the task on the fourth identical tap (the paper's exit),
    which no prompt had mentioned."""
    from mae.agents.prompting import render_prompt

    names = "instruction plan subgoal progress notes history errors tips atomic_actions shortcuts frame"
    values: dict[str, object] = {name: f"<{name}>" for name in names.split()}
    values |= {"perception": "<elements>", "keyboard": "", "tap_x": 1, "tap_y": 2, "max_repeats": 3}
    text = " ".join(render_prompt("operator", values).split())
    assert "would run more than 3 times in a row, even if each one worked" in text
