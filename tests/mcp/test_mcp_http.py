"""``python -m mae mcp --http``: streamable HTTP on 127.0.0.1, several clients on one server."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_testkit import (
    NOTES_TASK,
    POST_TAP,
    POST_TASK,
    REPO,
    SLOW_TASK,
    approve_with,
    assert_sentence,
    free_port,
    scripted_model,
    server_args,
    server_env,
    text_of,
)

from mae.testing.fake_model_server import FakeModelServer

pytestmark = pytest.mark.slow  # each test starts `python -m mae mcp` (a few seconds)

START_TIMEOUT_S = 90


def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"the server did not listen on port {port} within {START_TIMEOUT_S} s")


def test_mcp_http_clients_progress_approval_and_busy_device(tmp_path: Path) -> None:
    port = free_port()
    with FakeModelServer(responder=scripted_model()) as fake:
        command = [sys.executable, *server_args(fake, tmp_path, "--http", "--port", str(port))]
        process = subprocess.Popen(
            command, cwd=REPO, env=server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            wait_for_port(port, process)
            anyio.run(_scenario, f"http://127.0.0.1:{port}/mcp")
        finally:
            process.terminate()
            try:
                _out, errors = process.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                _out, errors = process.communicate()
        assert b"Traceback" not in errors, errors.decode(errors="replace")[-2000:]


async def _scenario(url: str) -> None:
    asked: list[str] = []
    refused: list[str] = []
    async with (
        Client(url, read_timeout_seconds=120) as first,
        Client(url, elicitation_callback=approve_with(True, asked), read_timeout_seconds=120) as second,
        Client(url, elicitation_callback=approve_with(False, refused), read_timeout_seconds=120) as third,
    ):
        assert len((await first.list_tools()).tools) == 9
        shot = await first.call_tool("screenshot", {})
        assert shot.content[1].type == "image" and shot.structured_content["image_height"] == 1280
        as_json = '{"name": "open_app", "arguments": {"app": "Notes"}}'  # another agent's JSON style
        opened = await second.call_tool("act", {"action": as_json})
        assert opened.structured_content["foreground_after"] == "com.mae.notes", text_of(opened)
        assert_sentence(await first.call_tool("perceive", {"device": "phone-x"}), "no device called")
        # protocol 2026-07-28: the question comes back as input_required; declined, nothing is typed
        declined = await third.call_tool("act", {"action": 'Type("4111 1111 1111 1111")'})
        assert_sentence(declined, "refused the sensitive action", "declined")
        assert len(refused) == 1 and "card number" in refused[0]

        messages: list[str] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            messages.append(message or "")

        done = await first.call_tool("run_task", {"task": NOTES_TASK}, progress_callback=on_progress)
        assert done.structured_content["exit_reason"] == "finished", text_of(done)
        assert "step 1: subgoal: Open Notes" in messages and "step 1: outcome: A" in messages

        # one client's run holds the phone: the other client is refused until it is cancelled
        started = anyio.Event()

        async def watch(value: float, total: float | None, message: str | None) -> None:
            started.set()

        async with anyio.create_task_group() as group:

            async def slow_run() -> None:
                await first.call_tool("run_task", {"task": SLOW_TASK}, progress_callback=watch)

            group.start_soon(slow_run)
            with anyio.fail_after(60):
                await started.wait()
            assert_sentence(await second.call_tool("act", {"action": "Back()"}), "busy")
            other = await second.call_tool("act", {"device": "virtual-2", "action": "Open_App(Notes)"})
            assert not other.is_error, text_of(other)  # another phone works meanwhile
            group.cancel_scope.cancel()
        with anyio.fail_after(60):
            while (await second.call_tool("act", {"action": "Home()"})).is_error:
                await anyio.sleep(0.2)

        # the agent's sensitive action, approved by the person behind the second client
        posted = await second.call_tool("run_task", {"task": POST_TASK})
        assert posted.structured_content["exit_reason"] == "finished", text_of(posted)
        assert len(asked) == 1 and POST_TAP in asked[0]


def test_mcp_http_refuses_a_taken_port(capsys: pytest.CaptureFixture[str]) -> None:
    from mae.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["mcp", "--http", "--port", str(port), "--device", "virtual"]) == 2
    assert f"port {port} on 127.0.0.1 is in use: choose another with --port" in capsys.readouterr().err
