"""Every exit condition fires with its own reason; two failures escalate the errors to the Manager."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from conftest import RunFn
from loop_scripting import GroundTruthPerceptor, Script, Step, manager_reply

from mae.actions.registry import ActionCall
from mae.device.virtual import VirtualPhone
from mae.errors import DeviceBusyError, DeviceError, ExitReason
from mae.run.events import Event
from mae.run.loop import DECLINED
from mae.run.results import EXIT_CODES
from mae.testing.fake_model_server import FakeModelServer, FakeReply

SWIPE = {"name": "Swipe", "arguments": {"x1": 540, "y1": 1500, "x2": 540, "y2": 700}}
HOME = {"name": "Home", "arguments": {}}


def test_loop_exit_codes_are_distinct() -> None:
    codes = list(EXIT_CODES.values())
    assert len(set(codes)) == len(codes) == len(ExitReason)
    assert EXIT_CODES[ExitReason.FINISHED] == 0 and 2 not in codes


def test_loop_escalates_two_failures_to_the_manager(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.responder = Script(
        [
            Step(
                "Open Notes",
                {"name": "Open_App", "arguments": {"app_name": "Maps"}},
                "B",
                "Maps opened, not Notes",
            ),
            Step("Open Notes", {"name": "Tap", "arguments": {"x": 5, "y": 1200}}, "C", "Tapped empty space"),
            Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}}),
        ]
    )
    result, _ = run("Open Notes")
    assert result.finished
    texts = [r.text for r in fake_server.requests_for("manager")]
    assert "Errors To Resolve" not in texts[0] and "Errors To Resolve" not in texts[1]
    assert "Errors To Resolve" in texts[2]
    assert "Maps opened, not Notes" in texts[2] and "Tapped empty space" in texts[2]
    assert "failed 2 times in a row" in texts[2]
    assert "Errors To Resolve" not in texts[3]  # the success cleared the flag
    operator_third = fake_server.requests_for("operator")[2].text
    assert "Tapped empty space" in operator_third and "failed (failed: wrong page)" in operator_third
    assert [e.outcome for e in result.errors] == ["B", "C"]


def test_loop_exit_max_steps(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.responder = Script([Step("Scroll", SWIPE)], finish=False)
    result, events = run("Scroll forever", loop={"max_steps": 3})
    assert result.exit_reason is ExitReason.MAX_STEPS and not result.finished
    assert len(result.actions) == 3 and result.exit_code == 3
    assert events[-1].type == "run_finished" and events[-1].data["exit_reason"] == "max_steps"


def test_loop_exit_consecutive_errors(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.responder = Script([Step("Scroll", SWIPE, "C", "Nothing moved")], finish=False)
    result, _ = run("Scroll", loop={"max_steps": 10})
    assert result.exit_reason is ExitReason.CONSECUTIVE_ERRORS
    assert [a.outcome for a in result.actions] == ["C", "C", "C"]


def test_loop_exit_repeated_action_before_the_fourth_run(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    fake_server.responder = Script([Step("Go home", HOME)], finish=False)
    result, _ = run("Go home", loop={"max_steps": 10})
    assert result.exit_reason is ExitReason.REPEATED_ACTION
    assert len(result.actions) == 3 and "4 times" in result.message
    assert sum(1 for e in phone.state().log if e.action == "Home()") == 3


def test_loop_swipe_and_back_are_exempt_from_the_repeat_exit(
    run: RunFn, fake_server: FakeModelServer
) -> None:
    fake_server.responder = Script([Step("Scroll", SWIPE)], finish=False)
    result, _ = run("Scroll", loop={"max_steps": 5})
    assert result.exit_reason is ExitReason.MAX_STEPS and len(result.actions) == 5


def test_loop_exit_unusable_reply_after_one_correction(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.add("I would open the Notes app first.", "Still no sections, sorry.", role="manager")
    result, _events = run("Open Notes")
    assert result.exit_reason is ExitReason.UNUSABLE_REPLY and "Manager" in result.message
    second = fake_server.requests_for("manager")[1]
    messages = second.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == "I would open the Notes app first."
    assert "could not be used" in messages[2]["content"] and "no sections" in messages[2]["content"]
    assert not result.actions and len(fake_server.requests) == 2


def test_loop_exit_model_error(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.add(FakeReply(status=400, body='{"error": {"message": "bad request"}}'), role="manager")
    result, events = run("Open Notes")
    assert result.exit_reason is ExitReason.MODEL_ERROR and "HTTP 400" in result.message
    failed = [e for e in events if e.type == "model_call" and not e.data["ok"]]
    assert failed and failed[0].data["error"] == "ModelRequestError"


class FlakyPhone:
    """The virtual phone, except that every tap fails as if the USB cable were pulled."""

    def __init__(self, phone: VirtualPhone) -> None:
        self._phone = phone

    def __getattr__(self, name: str) -> Any:
        return getattr(self._phone, name)

    def tap(self, x: int, y: int) -> None:
        raise DeviceError("the phone disconnected: check the USB cable and run `adb devices`")


def test_loop_exit_device_error(run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer) -> None:
    fake_server.responder = Script([Step("Tap", {"name": "Tap", "arguments": {"x": 100, "y": 100}})])
    result, _ = run("Tap", device=FlakyPhone(phone))
    assert result.exit_reason is ExitReason.DEVICE_ERROR and "disconnected" in result.message


def test_loop_stop_flag_is_checked_before_the_action(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    stop = threading.Event()
    fake_server.responder = Script(
        [Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}})]
    )

    def press_stop(event: Event) -> None:
        if event.type == "stage_finished" and event.data["stage"] == "operator":
            stop.set()

    result, _ = run("Open Notes", stop_event=stop, listener=press_stop)
    assert result.exit_reason is ExitReason.STOPPED and result.exit_code == 130
    assert not result.actions and phone.screen_name == "home"


def test_loop_stop_before_start(run: RunFn, fake_server: FakeModelServer) -> None:
    stop = threading.Event()
    stop.set()
    result, _ = run("Anything", stop_event=stop)
    assert result.exit_reason is ExitReason.STOPPED and not fake_server.requests


def test_loop_declined_sensitive_action_is_the_users_answer(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    """A refusal does not end the run: the step is recorded as not run, the agent reads the user's
    answer and goes on another way."""
    asked: list[tuple[ActionCall, str, int]] = []

    def approver(call: ActionCall, description: str, step: int) -> bool:
        asked.append((call, description, step))
        return False

    fake_server.responder = Script(
        [
            Step(
                "Post",
                {"name": "Tap", "arguments": {"x": 800, "y": 500}},  # nothing named there on the home screen
                description="Tap Post to publish the reply",
            ),
            Step("Keep it as a note", {"name": "Open_App", "arguments": {"app_name": "Notes"}}),
        ]
    )
    result, events = run("Post on X", approver=approver)
    assert result.finished and result.exit_reason is ExitReason.FINISHED
    assert asked[0][0].name == "Tap" and asked[0][2] == 1 and len(asked) == 1
    declined, opened = result.actions
    assert not declined.executed and declined.outcome == "C" and declined.error == DECLINED
    assert opened.executed and phone.state().app == "Notes"
    assert not any(entry.action == "Tap(800, 500)" for entry in phone.log)
    second_operator = fake_server.requests_for("operator")[1]
    assert "the user declined this action" in second_operator.text
    approval = next(e for e in events if e.type == "approval")
    assert approval.data["approved"] is False and "sending a message" in approval.data["reason"]
    steps = [json.loads(line) for line in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    assert any(r["kind"] == "approval" and r["approved"] is False for r in steps)


def test_loop_approved_sensitive_action_runs(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    fake_server.responder = Script(
        [Step("Open X", {"name": "Open_App", "arguments": {"app_name": "X"}}, description="Open X to post")]
    )
    result, _ = run("Post on X", approver=lambda call, description, step: True)
    assert result.finished and phone.state().app == "X"


def test_loop_manager_finished_at_once(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.add(manager_reply("1. Nothing to do", "Finished"), role="manager")
    result, _ = run("Nothing")
    assert result.finished and result.exit_code == 0 and not result.actions
    assert result.memory.finished and len(fake_server.requests) == 1


def test_loop_busy_device_refuses_a_second_run(run: RunFn, fake_server: FakeModelServer) -> None:
    outcome: dict[str, Any] = {}

    def second_run(event: Event) -> None:
        if event.type == "run_started":
            try:
                run("Second")
            except DeviceBusyError as exc:
                outcome["error"] = str(exc)

    fake_server.add(manager_reply("1. done", "Finished"), role="manager")
    result, _ = run("First", listener=second_run)
    assert result.finished
    assert "busy" in outcome["error"] and "'First'" in outcome["error"]
    fake_server.add(manager_reply("1. done", "Finished"), role="manager")
    assert run("Third")[0].finished  # the device is free again


class BrokenPerceptor:
    """Perception that fails on the second screen, with a mae error or with a bug."""

    def __init__(self, phone: VirtualPhone, error: Exception) -> None:
        self.phone, self.error, self.calls = phone, error, 0

    def perceive(self, image: Any, keyboard_active: bool | None = None) -> Any:
        from loop_scripting import GroundTruthPerceptor

        self.calls += 1
        if self.calls > 1:
            raise self.error
        return GroundTruthPerceptor(self.phone).perceive(image, keyboard_active)


def test_loop_exit_error_for_other_mae_errors(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer
) -> None:
    from mae.errors import ConfigError

    fake_server.responder = Script(
        [Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}})]
    )
    result, _ = run("Open Notes", perceptor=BrokenPerceptor(phone, ConfigError("OCR backend missing")))
    assert result.exit_reason is ExitReason.ERROR and "OCR backend missing" in result.message


def test_loop_a_crash_keeps_the_trajectory(
    run: RunFn, phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Any
) -> None:
    import json

    import pytest

    fake_server.responder = Script(
        [Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}})]
    )
    with pytest.raises(ZeroDivisionError):
        run("Open Notes", perceptor=BrokenPerceptor(phone, ZeroDivisionError("bug")))
    (run_dir,) = (tmp_path / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["exit_reason"] == "error" and "unexpected problem" in summary["message"]
    assert "ZeroDivisionError" not in summary["message"]  # a sentence for people; the log has the rest
    assert (run_dir / "step_001_before.jpg").exists() and (run_dir / "steps.jsonl").read_text()
    # the device was released despite the crash
    fake_server.add("### Plan ###\n1. x\n### Current Subgoal ###\nFinished", role="manager")
    assert run("Again")[0].finished


def test_loop_a_reply_cut_off_at_the_length_limit_says_so(run: RunFn, fake_server: FakeModelServer) -> None:
    cut = FakeReply.message({"content": "### Plan ###\n1. Open Notes\n2. Type the"}, "length")
    fake_server.add(cut, cut, role="manager")
    result, _events = run("Open Notes")
    assert result.exit_reason is ExitReason.UNUSABLE_REPLY
    correction = fake_server.requests_for("manager")[1].body["messages"][2]["content"]
    assert "cut off at the length limit (answer more briefly)" in correction
    assert "Current Subgoal" in correction
    # the user sees which agent, why, and what the model said
    assert result.message.startswith("Manager: it was cut off at the length limit")
    assert "the model's last reply: “### Plan ### 1. Open Notes 2. Type the”" in result.message


def test_loop_ctrl_c_after_an_action_ran_keeps_it_as_a_step(run: RunFn, fake_server: FakeModelServer) -> None:
    fake_server.responder = Script([Step("Go home", HOME)], finish=False)

    def interrupt(event: Event) -> None:
        if event.type == "stage_started" and event.data.get("stage") == "reflector":
            raise KeyboardInterrupt  # Ctrl-C while the Action Reflector is being asked

    result, events = run("Go home", listener=interrupt)
    assert result.exit_reason is ExitReason.STOPPED and result.message == "interrupted (Ctrl-C)"
    (action,) = result.actions  # Home() ran on the phone: the run's record says so
    assert action.text == "Home()" and action.executed and action.stopped
    assert action.error == "interrupted (Ctrl-C) before the step was judged"
    finished = next(e for e in events if e.type == "run_finished")
    assert finished.data["steps"] == 1
    summary = json.loads((Path(finished.data["run_dir"]) / "summary.json").read_text(encoding="utf-8"))
    assert [a["text"] for a in summary["actions"]] == ["Home()"] and len(summary["step_timings"]) == 1


def test_loop_perception_seconds_include_the_first_screen(
    run: RunFn, fake_server: FakeModelServer, phone: VirtualPhone
) -> None:
    class SlowPerceptor(GroundTruthPerceptor):
        def perceive(self, image: Any, keyboard_active: bool | None = None) -> Any:
            time.sleep(0.05)
            return super().perceive(image, keyboard_active)

    perceptor = SlowPerceptor(phone)
    fake_server.responder = Script([Step("Go home", HOME)])
    result, _ = run("Go home", perceptor=perceptor)
    assert perceptor.calls >= 2  # the first screen, and the screen after the action
    assert result.totals.perception_seconds >= 0.05 * perceptor.calls * 0.95
