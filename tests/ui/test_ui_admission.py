"""Run admission and clean-up of a public demo: the line, one ticket per page, ended runs dropped,
idle session folders removed, the idle-viewer default, the private upload folder; local use unchanged."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from test_ui_live import waiting_runner

from mae.config import load_settings
from mae.errors import ConfigError
from mae.public_mode import public_reason
from mae.ui import space
from mae.ui.admission import Admission, AdmissionRefused, max_runs, queue_message
from mae.ui.launch import remove_private_temp_dir, use_private_temp_dir
from mae.ui.live import PUBLIC_IDLE_STOP_S, LiveRun, RunRegistry, idle_stop_seconds
from mae.ui.public_runs import busy_note
from mae.ui.session import RunController
from mae.ui.views import RunView


def test_at_most_the_limit_runs_and_the_rest_wait_in_order() -> None:
    line = Admission(2)
    tickets = [line.join(f"session-{i}") for i in range(5)]
    assert [t.admitted for t in tickets] == [True, True, False, False, False]
    assert [line.position(t) for t in tickets] == [0, 0, 1, 2, 3]
    with pytest.raises(AdmissionRefused, match="already has a run"):
        line.join("session-3")  # one ticket per page, waiting or running
    assert not line.wait(tickets[2], 0.05)
    line.leave(tickets[0])  # a run ended
    assert line.wait(tickets[2], 0.05) and line.position(tickets[3]) == 1
    line.leave(tickets[3])  # a page left the line
    assert line.position(tickets[4]) == 1
    assert line.running == 2 and line.peak == 2 and line.sessions() == {"session-1", "session-2", "session-4"}


def test_a_ticket_whose_page_stopped_asking_is_dropped() -> None:
    line = Admission(1, stale_s=0.2)
    first, second = line.join("a"), line.join("b")
    assert first.admitted and not second.admitted
    time.sleep(0.3)  # b's page went away: it stopped asking for its place
    third = line.join("c")
    assert line.position(second) == 0 and line.position(third) == 1
    line.leave(first)
    assert line.wait(third, 0.1)


def test_waiting_wakes_up_when_a_slot_frees() -> None:
    line = Admission(1)
    first, second = line.join("a"), line.join("b")
    threading.Timer(0.2, line.leave, args=(first,)).start()
    started = time.monotonic()
    assert line.wait(second, 5.0)
    assert time.monotonic() - started < 2.0


def test_limit_setting_and_queue_line() -> None:
    assert max_runs({}, cores=8) == 8 and max_runs({}, cores=0) == 1
    assert max_runs({"MAE_MAX_RUNS": "3"}, cores=8) == 3
    for bad in ("0", "two"):
        with pytest.raises(ConfigError, match="MAE_MAX_RUNS"):
            max_runs({"MAE_MAX_RUNS": bad})
    assert "position 3" in queue_message(3, 2) and "2 visitors ahead" in queue_message(3, 2)
    assert "nobody ahead" in queue_message(1, 1)


def test_public_mode_predicate() -> None:
    local = {"GRADIO_SERVER_NAME": "127.0.0.1"}
    assert public_reason(share=False, host="127.0.0.1", environ={}) is None
    assert public_reason(share=False, host="localhost", environ={}) is None
    assert public_reason(environ=local) is None
    assert public_reason(environ={"SPACE_ID": "a/b"}) == "it runs as a Hugging Face Space"
    assert public_reason(environ={"MAE_SHARE": "1"}) == "it has a public share link"
    assert public_reason(environ={"GRADIO_SERVER_NAME": "0.0.0.0"}) == "it listens on 0.0.0.0"
    assert public_reason(environ={"MAE_PUBLIC": "true"}) == "MAE_PUBLIC is set"
    # a container binding 0.0.0.0 inside, published on 127.0.0.1 only, says so explicitly
    assert public_reason(share=False, host="0.0.0.0", environ={"MAE_PUBLIC": "0", "SPACE_ID": "a/b"}) is None
    with pytest.raises(ConfigError, match="MAE_PUBLIC"):
        public_reason(environ={"MAE_PUBLIC": "maybe"})


def test_ended_runs_leave_a_public_registry() -> None:
    release = threading.Event()
    registry = RunRegistry(keep_finished=False)
    ended: list[LiveRun] = []
    run = LiveRun("virtual#s1", RunController(waiting_runner(release)), RunView(started_at=time.time()))
    registry.add(run)
    run.on_end(ended.append)
    run.start(None)
    assert registry.get("virtual#s1") is run
    release.set()
    deadline = time.monotonic() + 120
    while not ended:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert registry.get("virtual#s1") is None and len(registry) == 0
    assert run.view.finished is not None  # a page still watching it keeps its final view


def test_idle_viewer_default_is_on_in_public_mode_only() -> None:
    assert idle_stop_seconds({}) is None
    assert idle_stop_seconds({"SPACE_ID": "a/b"}) == PUBLIC_IDLE_STOP_S
    assert idle_stop_seconds({"SPACE_ID": "a/b", "MAE_IDLE_STOP": "30"}) == 30


def test_idle_session_folders_are_removed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MAE_PUBLIC", "1")
    base = load_settings(overrides={"log_dir": str(tmp_path / "runs")}, environ={})
    busy, idle, fresh = "busy-session-1", "idle-session-1", "fresh-session-1"
    folders = {}
    for session in (busy, idle, fresh):
        runs = Path(space.session_settings(base, session).log_dir)
        runs.mkdir(parents=True)
        (runs / "trajectory.json").write_text("{}")
        folders[session] = runs.parent
    old = time.time() - 7200
    for session in (busy, idle):
        for path in [folders[session], *folders[session].rglob("*")]:
            os.utime(path, (old, old))
    removed = space.sweep_sessions(base, {busy}, ttl_s=3600)
    assert removed == [folders[idle].name]
    assert folders[busy].exists() and folders[fresh].exists() and not folders[idle].exists()
    monkeypatch.setenv("MAE_PUBLIC", "0")
    os.utime(folders[busy], (old, old))
    assert space.sweep_sessions(base, set(), ttl_s=1) == []  # a private demo keeps every folder


def test_uploads_go_to_a_folder_of_this_server_removed_at_exit(tmp_path: Path) -> None:
    environ: dict[str, str] = {}
    stale = tmp_path / "server-old"
    stale.mkdir()
    os.utime(stale, (time.time() - 2 * 86_400,) * 2)
    folder = use_private_temp_dir(environ, base=tmp_path)
    assert folder is not None and folder.parent == tmp_path and environ["GRADIO_TEMP_DIR"] == str(folder)
    assert not stale.exists()  # a leftover of a server that did not stop cleanly
    remove_private_temp_dir(folder, environ)
    assert not folder.exists() and "GRADIO_TEMP_DIR" not in environ
    assert use_private_temp_dir({"GRADIO_TEMP_DIR": "/srv/uploads"}, base=tmp_path) is None  # operator's


def test_busy_note_names_the_task_as_text() -> None:
    note = busy_note("Buy ![x](http://h/a.png) on <b>Amazon</b>")
    assert "The phone is busy" in note and "from another tab" in note and "Watch it here" in note
    assert "<b>" not in note and "![x](" not in note


def test_sigterm_removes_the_servers_temp_folder(tmp_path: Path) -> None:
    """``docker stop`` or a Space restart stops the demo with SIGTERM: its upload folder goes too."""
    import signal
    import subprocess
    import sys

    from ui_testkit import free_port

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "GRADIO_TEMP_DIR"}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), MAE_LOG_DIR=str(tmp_path / "runs"))
    env.update(MAE_MEMORY_DIR=str(tmp_path / "memory"), GRADIO_ANALYTICS_ENABLED="False")
    demo = subprocess.Popen(
        [sys.executable, "app.py", "--port", str(free_port())],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert demo.stdout is not None
        assert demo.stdout.readline().startswith("mae demo:")  # it answers: its folder exists now
        folders = list((tmp_path / "data" / "mae" / "gradio-tmp").glob("server-*"))
        assert len(folders) == 1
        demo.send_signal(signal.SIGTERM)
        output, _ = demo.communicate()  # the demo's exit is the signal; pytest-timeout bounds it
    finally:
        demo.kill()
    assert "Traceback" not in output
    assert not folders[0].exists()
