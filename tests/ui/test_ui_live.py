"""Server-owned runs: shared views, re-attaching, idle stop; readable messages; the port-in-use line."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mae.errors import ConfigError
from mae.run.events import Event
from mae.ui.live import LiveRun, RunRegistry, idle_stop_seconds
from mae.ui.session import RunController, RunHooks, error_message
from mae.ui.text import readable
from mae.ui.views import RunView


def waiting_runner(release: threading.Event) -> Any:
    def runner(job: Any, hooks: RunHooks) -> None:
        hooks.listener(Event("run_started", data={"task": "t", "max_steps": 3}))
        hooks.listener(Event("action", step=1, data={"action": "Home()"}))
        while not release.is_set() and not hooks.stop_event.is_set():
            time.sleep(0.05)
        reason = "stopped" if hooks.stop_event.is_set() else "finished"
        hooks.listener(Event("run_finished", data={"exit_reason": reason, "finished": reason == "finished"}))

    return runner


def test_every_viewer_sees_the_same_run_and_nothing_but_stop_ends_it() -> None:
    release = threading.Event()
    registry = RunRegistry()
    run = LiveRun("virtual", RunController(waiting_runner(release)), RunView(started_at=time.time()))
    registry.add(run)
    run.start(None)
    deadline = time.monotonic() + 120
    while 1 not in run.view.steps:
        assert time.monotonic() < deadline
        run.wait(run.version, 0.2)
    # a second tab (or a reloaded one) finds the run on its phone, with the timeline so far
    assert registry.active("virtual") is run and registry.active() is run
    assert registry.active("emulator-5554") is None
    assert run.view.steps[1].action == "Home()"
    assert not registry.forget("virtual")  # a running run is never dropped
    time.sleep(0.3)
    assert run.controller.active  # no tab closing or idle time stops it (idle stop is off)
    assert registry.stop_unwatched(time.monotonic() + 3600) == []
    release.set()
    run.controller.join(60)
    deadline = time.monotonic() + 120
    while run.active:
        assert time.monotonic() < deadline
        run.wait(run.version, 0.2)
    assert run.view.finished is not None and run.view.finished["exit_reason"] == "finished"
    assert registry.forget("virtual") and registry.get("virtual") is None


def test_an_unwatched_run_stops_after_the_idle_timeout() -> None:
    release = threading.Event()
    registry = RunRegistry(idle_stop_s=30)
    run = LiveRun("virtual", RunController(waiting_runner(release)), RunView(started_at=time.time()))
    registry.add(run)
    run.start(None)
    run.touch()
    assert registry.stop_unwatched(time.monotonic() + 10) == []  # watched 10 s ago: keeps going
    assert registry.stop_unwatched(time.monotonic() + 31) == [run]
    run.controller.join(60)
    assert not run.controller.active and run.stopped_for_idle
    release.set()


def test_idle_stop_setting() -> None:
    assert idle_stop_seconds({}) is None and idle_stop_seconds({"MAE_IDLE_STOP": "0"}) is None
    assert idle_stop_seconds({"MAE_IDLE_STOP": "600"}) == 600
    with pytest.raises(ConfigError, match="number of seconds"):
        idle_stop_seconds({"MAE_IDLE_STOP": "ten minutes"})


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("ConfigError: the custom backbone needs a base URL", "The custom backbone needs a base URL."),
        (
            "Cannot start: DeviceBusyError: device 'virtual' is busy",
            "Cannot start: device 'virtual' is busy.",
        ),
        (
            "write each section under its header: ### Plan ### and ### Current Subgoal ###",
            "Write each section under its header: “Plan” and “Current Subgoal”.",
        ),
        (
            "/tmp/gradio/341fab0c/shortcuts_bad.json: not valid JSON",
            "shortcuts_bad.json: not valid JSON.",
        ),
    ],
)
def test_messages_are_sentences_without_class_names_headers_or_paths(raw: str, shown: str) -> None:
    assert readable(raw) == shown


def test_error_message_never_shows_a_class_name() -> None:
    assert error_message(ValueError("click inside the phone screen")) == "Click inside the phone screen."
    assert "KeyError" not in error_message(KeyError())


def test_a_port_in_use_is_one_line_suggesting_another() -> None:
    import app

    line = app.port_in_use("127.0.0.1", 7860)
    assert "\n" not in line and "--port 7861" in line and "Traceback" not in line


def test_a_port_in_use_is_refused_before_the_page_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    import app

    def never(*_args: object) -> None:
        raise AssertionError("the page was built although the port is taken")

    monkeypatch.setattr(app, "build_demo", never)
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.setattr("mae.public_mode._server", None)  # app.main records its server: forgotten after
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert not app.port_free("127.0.0.1", port)
        with pytest.raises(SystemExit) as exited:
            app.main(["--port", str(port)])
    assert f"port {port} on 127.0.0.1 is already in use" in str(exited.value.code)
    assert f"--port {port + 1}" in str(exited.value.code)
