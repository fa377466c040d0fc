"""The run controller: background run, event queue, stop, approvals (with timeout), one run per device."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from ui_testkit import (
    MODEL,
    SEND_TAP,
    Script,
    make_backend,
    settings_for,
    two_step_script,
)

from mae.device.lock import DeviceLock
from mae.device.virtual import VirtualPhone
from mae.errors import ConfigError, DeviceBusyError
from mae.run.events import Event
from mae.testing.fake_model_server import FakeModelServer
from mae.ui.forms import RunForm
from mae.ui.session import ApprovalGate, RunActiveError, RunController, RunHooks
from mae.ui.views import RunView, status_markdown, timeline_html


def run_to_end(controller: RunController, timeout_s: float = 60.0) -> RunView:
    view = RunView()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for event in controller.drain(0.2):
            view.apply(event)
        if view.finished is not None and not controller.active:
            return view
    raise AssertionError("the run did not end in time")


def form(server: FakeModelServer, task: str = "Open Notes, then go home", **extra: Any) -> RunForm:
    values: dict[str, Any] = {
        "task": task,
        "device": "virtual",
        "backbone": "custom",
        "base_url": server.base_url,
        "model": MODEL,
        "evolution": False,
        **extra,
    }
    return RunForm(**values)


def test_a_scripted_runner_streams_events_and_ends() -> None:
    def runner(job: Any, hooks: RunHooks) -> str:
        hooks.listener(Event("run_started", data={"task": job, "max_steps": 3}))
        hooks.listener(Event("run_finished", data={"exit_reason": "finished", "finished": True, "steps": 0}))
        return "done"

    controller = RunController(runner)
    controller.start("task")
    view = run_to_end(controller)
    assert view.task == "task" and controller.result == "done"
    assert view.finished is not None and view.finished["exit_reason"] == "finished"


def test_a_crashing_runner_ends_with_an_error_the_user_can_read() -> None:
    def runner(job: Any, hooks: RunHooks) -> None:
        raise ConfigError("the custom backbone needs a base URL")

    controller = RunController(runner)
    controller.start(None)
    view = run_to_end(controller)
    assert view.finished is not None and view.finished["exit_reason"] == "error"
    assert "needs a base URL" in status_markdown(view)


def test_a_second_start_while_running_is_refused() -> None:
    release = threading.Event()

    def runner(job: Any, hooks: RunHooks) -> None:
        release.wait(10)

    controller = RunController(runner)
    controller.start(None)
    with pytest.raises(RunActiveError):
        controller.start(None)
    release.set()
    run_to_end(controller)
    assert not controller.active


def test_approval_gate_answers_times_out_and_stops() -> None:
    stop = threading.Event()
    gate = ApprovalGate(stop, timeout_s=0.3)
    started = time.monotonic()
    assert gate.ask({"action": "Tap(1, 1)"}) is False  # nobody answered: rejected
    assert time.monotonic() - started >= 0.3
    assert gate.answer(True) is False  # nothing waits any more

    answers: list[bool] = []
    gate = ApprovalGate(stop, timeout_s=10)
    thread = threading.Thread(target=lambda: answers.append(gate.ask({"action": "Tap(2, 2)"})))
    thread.start()
    while gate.pending is None:
        time.sleep(0.01)
    assert gate.pending == {"action": "Tap(2, 2)"}
    assert gate.answer(True) is True
    thread.join(60)
    assert answers == [True]

    thread = threading.Thread(target=lambda: answers.append(gate.ask({"action": "Tap(3, 3)"})))
    thread.start()
    while gate.pending is None:
        time.sleep(0.01)
    stop.set()
    thread.join(60)
    assert answers == [True, False]


def test_full_run_on_the_virtual_phone(tmp_path: Path) -> None:
    phone = VirtualPhone()
    with FakeModelServer() as server:
        two_step_script().load(server)
        backend = make_backend(settings_for(tmp_path, server.base_url), phone)
        controller = RunController(backend.run_job)
        controller.start(backend.make_job(form(server)))
        view = run_to_end(controller)
        server.assert_done()
    assert view.finished is not None and view.finished["exit_reason"] == "finished"
    html = timeline_html(view)
    assert "Open_App(&quot;Notes&quot;)" in html and "Home()" in html
    assert view.screen is not None and view.screen_version >= 3
    assert controller.result.exit_reason.value == "finished"
    assert phone.screen_name == "home"


def test_stop_takes_effect_before_the_next_action(tmp_path: Path) -> None:
    phone = VirtualPhone()
    with FakeModelServer() as server:
        two_step_script(delay_s=1.5).load(server)
        backend = make_backend(settings_for(tmp_path, server.base_url), phone)
        controller = RunController(backend.run_job)
        controller.start(backend.make_job(form(server)))
        view = RunView()
        while not any(e.type == "stage_started" and e.step == 2 for e in [*view_events(controller, view)]):
            assert view.finished is None
        assert controller.stop() is True
        view = run_to_end_from(controller, view)
    assert view.finished is not None and view.finished["exit_reason"] == "stopped"
    assert view.steps[2].action is None  # Home() never ran
    assert phone.current_app is not None and phone.current_app.label == "Notes"


def view_events(controller: RunController, view: RunView) -> list[Event]:
    events = controller.drain(0.2)
    for event in events:
        view.apply(event)
    return events


def run_to_end_from(controller: RunController, view: RunView) -> RunView:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        view_events(controller, view)
        if view.finished is not None and not controller.active:
            return view
    raise AssertionError("the run did not end in time")


@pytest.mark.parametrize("approve", [True, False])
def test_sensitive_action_waits_for_the_user(tmp_path: Path, approve: bool) -> None:
    phone = VirtualPhone()
    script = two_step_script(second_description="Send the message to Alice", second_action=SEND_TAP)
    if not approve:  # the declined action is not run or judged; the Manager then finishes
        script = Script(script.manager, script.operator, script.reflector[:1], script.notetaker[:1])
    with FakeModelServer() as server:
        script.load(server)
        backend = make_backend(settings_for(tmp_path, server.base_url), phone)
        controller = RunController(backend.run_job)
        controller.start(backend.make_job(form(server)))
        view = RunView()
        while view.pending_approval is None:
            view_events(controller, view)
            assert view.finished is None
        assert "sending a message" in view.pending_approval["reason"]
        assert controller.gate.pending is not None
        assert controller.answer(approve) is True
        view = run_to_end_from(controller, view)
        server.assert_done()
    assert view.finished is not None and view.finished["exit_reason"] == "finished"  # a refusal goes on
    assert view.steps[2].approval is approve
    assert any(entry.action == "Tap(900, 399)" for entry in phone.log) is approve


def test_safety_rules_can_be_switched_off(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        two_step_script(second_description="Send the message to Alice", second_action=SEND_TAP).load(server)
        backend = make_backend(settings_for(tmp_path, server.base_url), VirtualPhone())
        controller = RunController(backend.run_job)
        controller.start(backend.make_job(form(server), rule_names=["payment"]))
        view = run_to_end(controller)
    assert view.finished is not None and view.finished["exit_reason"] == "finished"
    assert not any(step.approval is not None for step in view.steps.values())


def test_a_busy_device_gets_a_clear_message(tmp_path: Path) -> None:
    phone = VirtualPhone()
    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), phone)
    with DeviceLock(phone, owner="another run"), pytest.raises(DeviceBusyError, match="busy"):
        backend.make_job(
            RunForm(
                task="x", device="virtual", backbone="custom", base_url="http://127.0.0.1:9/v1", model=MODEL
            )
        )


def test_an_empty_task_is_refused(tmp_path: Path) -> None:
    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    with pytest.raises(ConfigError, match="type a task"):
        backend.make_job(
            RunForm(task="  ", device="virtual", backbone="custom", base_url="http://x/v1", model="m")
        )


def test_a_task_of_a_book_s_length_is_refused(tmp_path: Path) -> None:
    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    with pytest.raises(ConfigError, match="the task is 20,000 characters long; describe it in at most 4,000"):
        backend.make_job(
            RunForm(task="x" * 20_000, device="virtual", backbone="custom", base_url="http://x/v1", model="m")
        )


def test_self_evolution_reports_an_experience_stage(tmp_path: Path) -> None:
    phone = VirtualPhone()
    tips = "### Updated Tips ###\n0. Open apps with Open_App.\n1. Go home with Home().\n"
    shortcuts = "### New Shortcuts ###\n[]\n"
    with FakeModelServer() as server:
        two_step_script().load(server)
        server.add(tips, shortcuts, role="experience")
        settings = settings_for(tmp_path, server.base_url, **{"evolution.evolve": True})
        backend = make_backend(settings, phone)
        controller = RunController(backend.run_job)
        controller.start(backend.make_job(form(server, evolution=True)))
        view = run_to_end(controller)
        server.assert_done()
    assert view.experience is not None
    assert "memory version 1" in view.experience.result["summary"]
    assert "Self-evolution" in timeline_html(view)
    assert "Open apps with Open_App" in backend.memory_store().load().tips


def test_a_visitor_cannot_make_the_server_connect_to_any_address(
    tmp_path: Path, fake_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mae.errors import DeviceError

    backend = make_backend(settings_for(tmp_path, fake_server.base_url), VirtualPhone())
    with pytest.raises(DeviceError, match="over Wi-Fi from the page is off"):
        backend.make_job(form(fake_server, device="10.1.2.3:5555"))
    monkeypatch.setenv("MAE_ALLOW_WIFI_DEVICES", "1")
    backend.check_device_allowed("10.1.2.3:5555")  # allowed by the server's owner
    backend.check_device_allowed("virtual")


def test_an_error_shown_in_markdown_stays_text() -> None:
    """A "Cannot start" line quotes what the person typed (a base URL): no image, link or HTML."""
    from mae.ui.session import error_markdown

    shown = error_markdown(ValueError("cannot reach ![x](http://127.0.0.1:9/a.png) <img src=x>"))
    assert "](http" not in shown and "<img" not in shown and "a.png" in shown
