"""The option that skips the Manager and the Notetaker while a screen is still loading (off by default)."""

from __future__ import annotations

import pytest
from conftest import RunFn
from loop_scripting import (
    GroundTruthPerceptor,
    manager_reply,
    notes_reply,
    operator_reply,
    reflector_reply,
    section,
)
from PIL import Image

from mae.device.virtual import VirtualPhone
from mae.perception.elements import Element, Perception
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

OPEN = {"name": "Open_App", "arguments": {"app_name": "Notes"}}
WAIT = {"name": "Wait", "arguments": {}}
HOME = {"name": "Home", "arguments": {}}


class SpinnerAfterOpening(GroundTruthPerceptor):
    """Ground truth, except that the two screens after the first action show only a spinner."""

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
        seen = super().perceive(image, keyboard_active)
        if self.calls in (2, 3):
            width, height = image.size
            spinner = Element(kind="icon", text="loading", box=(470, 1100, 610, 1240), source="test")
            status = Element(kind="text", text="9:41", box=(40, 20, 140, 70), source="test")
            return Perception(width=width, height=height, elements=[status, spinner])
        return seen


def test_still_loading_recognises_spinners_and_blank_pages() -> None:
    blank = Perception(width=1080, height=2340, elements=[])
    spinner = Element(kind="icon", text="Loading…", box=(470, 1100, 610, 1240))
    busy = Perception(width=1080, height=2340, elements=[spinner])
    rows = [
        Element(kind="text", text=f"Result {i}", box=(40, 300 + 90 * i, 600, 360 + 90 * i)) for i in range(5)
    ]
    listing = Perception(width=1080, height=2340, elements=[spinner, *rows])  # more results loading below
    assert blank.still_loading and busy.still_loading and not listing.still_loading
    assert not Perception(width=1080, height=2340, elements=rows[:1]).still_loading


@pytest.mark.parametrize("skip", [False, True])
def test_manager_and_notetaker_wait_out_a_loading_screen_only_when_asked(
    skip: bool, run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    actions = [OPEN, WAIT, WAIT, HOME]
    done: list[int] = []

    def respond(request: RecordedRequest) -> str | None:
        if request.role == "manager":
            subgoal = "Finished" if len(done) >= len(actions) else "Open Notes and wait for it"
            return manager_reply("1. Open Notes", subgoal)
        if request.role == "operator":
            done.append(1)
            return operator_reply(actions[len(done) - 1])
        if request.role == "reflector":
            return reflector_reply("A", "Notes opened.")
        return notes_reply("Notes has a Groceries note.")

    fake_server.responder = respond
    result, _ = run(
        "Open Notes", perceptor=SpinnerAfterOpening(phone), loop={"skip_planning_while_loading": skip}
    )
    assert result.finished, result.message
    managers = len(fake_server.requests_for("manager"))
    notetakers = len(fake_server.requests_for("notetaker"))
    operators = [section(r.text, "Current Subgoal") for r in fake_server.requests_for("operator")]
    if not skip:
        assert (managers, notetakers) == (5, 4)  # every step, the paper's order
        assert not any(s.startswith("The screen is still loading") for s in operators)
    else:
        # after step 1 and step 2 the screen is a spinner: no Notetaker after them, no Manager before
        # steps 2 and 3; the plan and the notes stand
        assert (managers, notetakers) == (3, 2)
        assert result.memory.notes == "Notes has a Groceries note."
        # the Operator on those screens is told to wait first, as every Manager asked there in
        # real-model runs said; its plan's subgoal follows (and the memory's subgoal is unchanged)
        waits = [s for s in operators if s.startswith("The screen is still loading: Wait() for its content")]
        assert len(waits) == 2 and all(
            s.endswith("do not repeat an action that ran): Open Notes and wait for it") for s in waits
        ), operators
