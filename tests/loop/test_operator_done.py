"""The Operator's ``Done()``: the way it says the request is complete, honoured by the loop.

Real case (issue 38; 6 of 16 runs with a real model as the backbone, e.g. bakery fast, headphones fast):
asked once more after the last action (fast mode's speculative Operator), the model wrote "The operation
list has no 'finish' action, so I choose the harmless Wait()". ``Done()`` comes from the action registry
(the prompt's list and the parser); the loop never runs it: the Manager, which alone ends a task in the
paper, is asked at once, and a ``Done()`` the Manager has just overruled is a failed step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import RunFn
from loop_scripting import manager_reply, notes_reply, operator_reply, reflector_reply
from pydantic import ValidationError

from mae.actions.reading import parse_action_text
from mae.actions.registry import Done, Shortcut, describe_atomic_actions, resolve_call
from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

OPEN = {"name": "Open_App", "arguments": {"app_name": "Notes"}}
DONE = {"name": "Done", "arguments": {}}
REAL_REPLY = Path(__file__).parent / "data" / "real_replies" / "operator_wait_after_done_bakery_fast.txt"


class Model:
    """The Operator opens Notes, then says ``Done()``; the Manager finishes only from its ``finish_on``-th
    call on (1-based)."""

    def __init__(self, finish_on: int) -> None:
        self.finish_on = finish_on
        self.manager_calls = 0
        self.operator_prompts: list[str] = []

    def __call__(self, request: RecordedRequest) -> str | None:
        if request.role == "manager":
            self.manager_calls += 1
            finished = self.manager_calls >= self.finish_on
            return manager_reply("1. Open Notes\n2. Stop there", "Finished" if finished else "Stop at Notes")
        if request.role == "operator":
            self.operator_prompts.append(request.text)
            acted = request.text.count("| Outcome:")
            return operator_reply(OPEN) if acted == 0 else done_reply()
        if request.role == "reflector":
            reply = reflector_reply("A", "Notes is open.")
            if "### Subgoal Done ###" in request.text:
                reply += "\n### Subgoal Done ###\nNo\n"
            return reply
        if request.role == "notetaker":
            return notes_reply()
        return None


def test_the_registry_offers_done_to_the_operator_only_and_reads_it() -> None:
    assert "Done()" in describe_atomic_actions(done=True)
    assert "Done()" not in describe_atomic_actions()  # v2 and the experience prompts keep the nine
    for written in ('{"name": "Done", "arguments": {}}', '{"name": "done"}', "Done()"):
        call = parse_action_text(written)
        assert call.is_done and not call.is_atomic, written
        assert resolve_call(call, {}) == [Done()]
    finishing = {
        "name": "Open_And_Finish",
        "arguments": ["app"],
        "description": "Open an app and stop.",
        "precondition": "Any screen.",
        "atomic_action_sequence": [
            {"name": "Open_App", "arguments_map": {"app_name": "app"}},
            {"name": "Done", "arguments_map": {}},
        ],
    }
    # a Shortcut is made of the paper's operations only, and cannot take Done's name
    assert Shortcut.model_validate(finishing).problems() == ["step 2: unknown operation 'Done'"]
    with pytest.raises(ValidationError):
        Shortcut.model_validate({**finishing, "name": "Done"})


def test_only_the_e_operator_may_answer_done() -> None:
    """v1 and v2 do not offer Done(): there it is an invalid action (a corrective retry), never a step."""
    from PIL import Image

    from mae.agents.base import Screen
    from mae.agents.operator import validate_action
    from mae.agents.parsing import ReplyProblem
    from mae.llm.coordinates import CoordinateMapper
    from mae.perception.elements import Perception

    screen = Screen(Image.new("RGB", (1080, 2340)), Perception(width=1080, height=2340))
    identity = CoordinateMapper.identity((1080, 2340))
    with pytest.raises(ReplyProblem, match="Done\\(\\) is not one of the operations listed"):
        validate_action(json.dumps(DONE), shortcuts={}, screen=screen, mapper=identity)
    call, _, steps = validate_action(
        json.dumps(DONE), shortcuts={}, screen=screen, mapper=identity, done=True
    )
    assert call.is_done and steps == [Done()]


def done_reply() -> str:
    """The real reply (bakery fast, the route on screen), as it is written now that Done() is offered."""
    reply = REAL_REPLY.read_text(encoding="utf-8")
    assert 'no "finish" action' in reply and parse_action_text(reply).name == "Wait"
    thought = reply.split("### Action ###")[0].replace(
        'The operation list has no "finish" action, so I choose the harmless Wait(), which leaves the route '
        "screen untouched.",
        "So I answer Done().",
    )
    return f"{thought}### Action ###\n{json.dumps(DONE)}\n\n### Description ###\nThe request is complete.\n"


@pytest.mark.parametrize("fast", [False, True])
def test_done_asks_the_manager_which_ends_the_task(
    run: RunFn, fake_server: FakeModelServer, phone: VirtualPhone, fast: bool
) -> None:
    loop: dict[str, Any] = {"manager_every": 5, "speculative_operator": True} if fast else {}
    model = Model(finish_on=3 if not fast else 2)
    fake_server.responder = model
    result, events = run("Open Notes and stop there", loop=loop)
    assert result.finished, result.message
    assert "Done() to say so" not in result.message
    assert 'answer\n  {"name": "Done", "arguments": {}}' in model.operator_prompts[0]
    assert "- Done(): " in model.operator_prompts[0]
    assert [entry.action for entry in phone.state().log] == ['Open_App("Notes")']  # Done never runs
    if fast:  # the speculative Operator's Done is used: the Manager is asked at once, and finishes
        assert "the Operator said Done" in result.message
        reasons = [e.data["reason"] for e in events if e.type == "fast_mode" and e.data.get("manager")]
        assert reasons[-1] == "the Operator said Done"
        assert model.manager_calls == 2
    else:  # the Manager kept the task going this step: Done is a failed step, then it finishes
        assert model.manager_calls == 3
        outcomes = [
            (e.step, e.data["outcome"], e.data["error_description"]) for e in events if e.type == "outcome"
        ]
        assert outcomes[1][:2] == (2, "C") and "Done() while the Manager's plan goes on" in outcomes[1][2]
