"""Fast mode's switches, each on its own (``LoopSettings.fast``): a Manager asked only when it has
something to decide, notes written by the Action Reflector, pop-ups dismissed without a Manager round,
and the speculative Operator, used on outcome A with the screen unchanged and discarded otherwise.

The fake model answers from the prompt it gets (the Operator: by how many actions its history shows) and
answers nothing it does not expect, so an extra call fails the test."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import RunFn
from loop_scripting import GroundTruthPerceptor, manager_reply, notes_reply, operator_reply, reflector_reply
from PIL import Image

from mae.agents.speculation import DISCARDED
from mae.config import LoopSettings, load_settings
from mae.device.virtual import VirtualPhone
from mae.perception.elements import Element, Perception
from mae.run.events import Event
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

OPEN = {"name": "Open_App", "arguments": {"app_name": "Notes"}}
WAIT = {"name": "Wait", "arguments": {}}
HOME = {"name": "Home", "arguments": {}}
BACK = {"name": "Back", "arguments": {}}
SWIPE = {"name": "Swipe", "arguments": {"x1": 540, "y1": 1800, "x2": 540, "y2": 900}}


class Model:
    """Answers each role; ``verdicts[i]`` = (outcome, subgoal done answer or None for no section)."""

    def __init__(
        self, actions: list[dict[str, Any]], verdicts: list[tuple[str, str | None]], notes: str | None = None
    ) -> None:
        self.actions, self.verdicts, self.notes = actions, verdicts, notes
        self.judged = 0
        self.notetaker_calls = 0
        self.beyond = 0
        self.on_reflector: dict[int, Any] = {}
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> str | None:
        role, text = request.role, request.text
        if role == "manager":
            finished = self.judged >= len(self.actions)
            return manager_reply("1. Do it", "Finished" if finished else "Do it")
        if role == "operator":
            done = text.count("| Outcome:")  # the actions its history shows (history long enough)
            if done >= len(self.actions):  # only a speculative call, after the last action, gets here
                self.beyond += 1
                return operator_reply(WAIT)
            return operator_reply(self.actions[done])
        if role == "reflector":
            with self.lock:
                index, self.judged = self.judged, self.judged + 1
            if index in self.on_reflector:
                self.on_reflector[index]()
            outcome, done_answer = self.verdicts[index]
            reply = reflector_reply(outcome, f"{index + 1} done.", "None" if outcome == "A" else "Wrong.")
            if done_answer is not None:
                reply += f"\n### Subgoal Done ###\n{done_answer}\n"
            if self.notes is not None and "### Existing Important Notes ###" in text:
                reply += f"\n### Important Notes ###\n{self.notes} {index + 1}\n"
            return reply
        if role == "notetaker":
            self.notetaker_calls += 1
            return notes_reply("From the Notetaker.")
        return None


def fast_events(events: list[Event], key: str) -> list[tuple[int, str, str]]:
    chosen = [e for e in events if e.type == "fast_mode" and key in e.data]
    return [(e.step, e.data[key], e.data["reason"]) for e in chosen]


def test_fast_turns_every_switch_on_and_an_explicit_value_wins() -> None:
    assert LoopSettings.model_validate({}).manager_every == 1  # the paper's order by default
    fast = LoopSettings.model_validate({"fast": True})
    assert (fast.manager_every, fast.notes_in_reflector, fast.dismiss_popups, fast.speculative_operator) == (
        4,
        True,
        True,
        True,
    )
    mixed = load_settings(environ={"MAE_FAST": "true", "MAE_SPECULATIVE_OPERATOR": "false"}).loop
    assert mixed.notes_in_reflector and not mixed.speculative_operator


def test_manager_is_asked_at_the_start_on_failure_on_subgoal_done_and_every_n_steps(
    run: RunFn, fake_server: FakeModelServer
) -> None:
    actions = [OPEN, WAIT, SWIPE, WAIT, HOME, BACK]
    verdicts = [("A", "No"), ("A", "No"), ("A", "No"), ("C", "No"), ("A", "Yes"), ("A", "Yes")]
    fake_server.responder = Model(actions, verdicts)
    result, events = run("Open Notes", loop={"manager_every": 3, "operator_history": 40})
    assert result.finished, result.message
    asked = [(step, reason) for step, what, reason in fast_events(events, "manager") if what == "asked"]
    assert asked == [(1, "start"), (4, "every 3 steps"), (5, "failed action"), (6, "subgoal done")]
    assert len(fake_server.requests_for("manager")) == 5  # and step 7's, which finished the task
    assert len(fake_server.requests_for("operator")) == 6
    assert "### Subgoal Done ###" in fake_server.requests_for("reflector")[0].text


def test_a_reflector_that_does_not_say_whether_the_subgoal_is_done_gets_the_manager_every_step(
    run: RunFn, fake_server: FakeModelServer
) -> None:
    fake_server.responder = Model([OPEN, HOME], [("A", None), ("A", "maybe")])
    result, _ = run("Open Notes", loop={"manager_every": 5, "operator_history": 40})
    assert result.finished, result.message
    assert len(fake_server.requests_for("manager")) == 3  # nothing is skipped on an unclear answer


def test_paper_order_asks_for_no_extra_sections(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.responder = Model([OPEN], [("A", None)])
    result, events = run("Open Notes", loop={"operator_history": 40})
    assert result.finished, result.message
    prompt = fake_server.requests_for("reflector")[0].text
    assert "### Subgoal Done ###" not in prompt and "### Existing Important Notes ###" not in prompt
    assert not [e for e in events if e.type == "fast_mode"]
    assert len(fake_server.requests_for("notetaker")) == 1


@pytest.mark.parametrize("written", [True, False])
def test_notes_in_the_reflectors_reply_replace_the_notetaker_call(
    written: bool, run: RunFn, fake_server: FakeModelServer
) -> None:
    model = Model([OPEN, HOME], [("A", None), ("A", None)], notes="Price $10, step" if written else None)
    fake_server.responder = model
    result, _ = run("Open Notes", loop={"notes_in_reflector": True, "operator_history": 40})
    assert result.finished, result.message
    if written:
        assert model.notetaker_calls == 0 and result.memory.notes == "Price $10, step 2"
    else:  # the section is missing: the Notetaker is asked as usual
        assert model.notetaker_calls == 2 and result.memory.notes == "From the Notetaker."


class PopupOnSecondScreen(GroundTruthPerceptor):
    """Ground truth, plus a "Not now" button on the screen after the first action."""

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
        seen = super().perceive(image, keyboard_active)
        if self.calls == 2:
            button = Element(kind="text", text="Not now", box=(300, 1500, 780, 1600), source="test")
            seen.elements.append(button)
        return seen


def test_a_known_popup_is_dismissed_by_the_operator_without_a_manager_round(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    tap_not_now = {"name": "Tap", "arguments": {"x": 540, "y": 1550}}
    fake_server.responder = Model([OPEN, tap_not_now, HOME], [("A", None)] * 3)
    result, events = run(
        "Open Notes",
        perceptor=PopupOnSecondScreen(phone),
        loop={"dismiss_popups": True, "operator_history": 40},
    )
    assert result.finished, result.message
    assert len(fake_server.requests_for("manager")) == 3  # steps 1, 3 and the finish: not step 2
    assert (2, "skipped", "") in fast_events(events, "manager")
    operator_prompts = [r.text for r in fake_server.requests_for("operator")]
    assert "dismiss it by tapping “Not now”. Then go on with: Do it" in operator_prompts[1]
    assert "Not now" not in operator_prompts[0] + operator_prompts[2]


def test_speculative_operator_is_used_on_a_and_discarded_on_b_or_a_manager_round(
    run: RunFn, fake_server: FakeModelServer
) -> None:
    actions = [OPEN, WAIT, SWIPE, HOME, BACK]
    verdicts = [("A", "No"), ("B", "No"), ("A", "No"), ("A", "No"), ("A", "Yes")]
    model = Model(actions, verdicts)
    fake_server.responder = model
    result, events = run(
        "Open Notes", loop={"speculative_operator": True, "manager_every": 10, "operator_history": 40}
    )
    assert result.finished, result.message
    assert [a.name for a in result.memory.actions] == ["Open_App", "Wait", "Swipe", "Home", "Back"]
    assert fast_events(events, "speculation") == [
        (2, "used", ""),
        (3, "discarded", "a Manager round is due"),  # after B
        (4, "used", ""),
        (5, "used", ""),
        (6, "discarded", "a Manager round is due"),  # the subgoal was done
    ]
    # 5 actions: the live Operator at steps 1 and 3, four speculative calls used and two discarded
    assert len(fake_server.requests_for("operator")) == 2 + 3 + 2 and model.beyond == 1
    roles = [e.data["role"] for e in events if e.type == "model_call"]
    assert roles.count(DISCARDED) == 2 and roles.count("operator") == 5


def test_speculative_operator_is_discarded_when_the_screen_changed_while_judging(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    model = Model([OPEN, HOME], [("A", "No"), ("A", "Yes")])
    model.on_reflector[0] = phone.home  # something else changed the phone while the Reflector judged
    fake_server.responder = model
    result, events = run(
        "Open Notes", loop={"speculative_operator": True, "manager_every": 10, "operator_history": 40}
    )
    assert result.finished, result.message
    assert fast_events(events, "speculation")[0] == (2, "discarded", "the screen changed")
    assert len(fake_server.requests_for("operator")) == 2 + 2  # live twice, speculated twice


def test_run_fast_flag_and_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mae.cli import build_parser
    from mae.cli.run_cmd import settings_from_args

    monkeypatch.delenv("MAE_FAST", raising=False)
    monkeypatch.setenv("MAE_MEMORY_DIR", str(tmp_path / "memory"))
    profile = tmp_path / "fast.toml"
    profile.write_text("[loop]\nfast = true\nmanager_every = 6\n", encoding="utf-8")
    parser = build_parser()
    on = settings_from_args(parser.parse_args(["run", "task", "--fast"])).loop
    assert on.fast and on.manager_every == 4 and on.speculative_operator
    from_profile = settings_from_args(parser.parse_args(["run", "task", "--profile", str(profile)])).loop
    assert from_profile.manager_every == 6 and from_profile.notes_in_reflector
    off = settings_from_args(parser.parse_args(["run", "task", "--profile", str(profile), "--no-fast"])).loop
    assert not off.fast and off.manager_every == 6 and not off.notes_in_reflector


REAL = Path(__file__).parent / "data" / "real_popups"


@pytest.mark.parametrize(
    ("dump", "expected"), [("108.xml", "Don’t allow"), ("160.xml", "Skip"), ("078.xml", None)]
)
def test_popups_on_real_phones_are_recognised_and_an_apps_own_skip_button_is_not(
    dump: str, expected: str | None
) -> None:
    from mae.agents.fast import popup_dismiss
    from mae.perception.a11y import parse_uiautomator

    nodes = parse_uiautomator((REAL / dump).read_text(encoding="utf-8")).nodes
    texts = [Element(kind="text", text=n.text, box=n.bounds, source="a11y") for n in nodes if n.text.strip()]
    width = max(n.bounds[2] for n in nodes)
    height = max(n.bounds[3] for n in nodes)
    found = popup_dismiss(Perception(width=width, height=height, elements=texts))
    assert (found.text if found else None) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("### Subgoal Done ###\nYes.", True),
        ("**Subgoal Done:** yes, the results list shows the fryer", True),
        ("## Subgoal Done\r\nNo - the note is not saved yet", False),
        ("### Subgoal Done ###\nNot yet.", False),
        ("### Subgoal Done ###\nPartially.", None),
        ("", None),
    ],
)
def test_subgoal_done_is_read_tolerantly_and_unclear_answers_ask_the_manager(
    reply: str, expected: bool | None
) -> None:
    from mae.agents.fast import read_subgoal_done

    text = reflector_reply("A", "Searched.") + "\n" + reply
    assert read_subgoal_done(text) is expected


def test_a_real_fast_reply_keeps_its_extra_sections_out_of_the_progress() -> None:
    """A real model's Reflector reply in fast mode (relay run, OLED task, request 5): the Subgoal Done and
    Important Notes sections used to run into the progress, so every later prompt showed them twice."""
    from mae.agents.reflector import parse_reply

    text = (Path(__file__).parent / "data" / "real_replies" / "reflector_fast_subgoal_notes.txt").read_text()
    reply = parse_reply(text)
    assert reply.outcome == "A"
    assert reply.progress.startswith("The Best Buy app has been opened")
    assert "Subgoal Done" not in reply.progress and "Important Notes" not in reply.progress
    assert reply.progress.rstrip().endswith("its search box.")


def test_the_speculative_operator_is_told_the_last_action_is_not_judged_yet() -> None:
    """A real model read "Outcome: successful" for an action its own Reflector had not judged yet."""
    from mae.agents.speculation import assumed_success
    from mae.memory.working import ActionRecord, WorkingMemory

    memory = WorkingMemory(instruction="Find a TV")
    record = ActionRecord(step=1, name="Tap", text="Tap(10, 20)", outcome="C")
    seen = assumed_success(memory, record).actions[-1].summary()
    assert "not judged yet" in seen and "successful" not in seen.replace("succeeded", "")
    assert memory.actions == []  # the run's own memory is untouched
    judged = record.model_copy(update={"outcome": "A"}).summary()
    assert "Outcome: successful or partially successful" in judged


@pytest.mark.parametrize(("dump", "permission"), [("108.xml", True), ("160.xml", False)])
def test_a_permission_prompt_is_answered_as_the_task_needs_not_refused(dump: str, permission: bool) -> None:
    """A real model in fast mode was told to tap "Don't allow" on Maps' location prompt during a "nearest
    bakery" task, which needs the location: a permission prompt's subgoal leaves the answer to the task."""
    from mae.agents.fast import PERMISSION_GRANTS, popup_dismiss, popup_subgoal
    from mae.memory.working import WorkingMemory
    from mae.perception.a11y import parse_uiautomator

    nodes = parse_uiautomator((REAL / dump).read_text(encoding="utf-8")).nodes
    texts = [Element(kind="text", text=n.text, box=n.bounds, source="a11y") for n in nodes if n.text.strip()]
    width, height = max(n.bounds[2] for n in nodes), max(n.bounds[3] for n in nodes)
    perception = Perception(width=width, height=height, elements=texts)
    button = popup_dismiss(perception)
    assert button is not None
    memory = WorkingMemory(
        instruction="Get directions to the nearest bakery", plan="1. Search", subgoal="Search"
    )
    subgoal = popup_subgoal(memory, button, perception)
    assert subgoal.endswith("Then go on with: Search")
    if permission:
        assert subgoal.startswith("A permission prompt is in the way: answer it as the task needs")
        # it names the grant buttons the prompt shows (Cartwell's prompt had only Allow / Don't allow, and a
        # real model was offered "Only this time" or "While using the app")
        grants = [e.text for e in texts if e.text.strip().lower() in PERMISSION_GRANTS]
        assert grants and all(f"“{g.strip()}”" in subgoal for g in grants)
        box = (100, 1000, 300, 1100)
        plain = Perception(
            width=width,
            height=height,
            elements=[Element(kind="text", text=t, box=box, source="a11y") for t in ("Allow", "Don't allow")],
        )
        assert "(“Allow” when the task needs" in popup_subgoal(memory, button, plain)
    else:
        assert subgoal.startswith(f"A pop-up is in the way: dismiss it by tapping “{button.text.strip()}”")
