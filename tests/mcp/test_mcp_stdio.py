"""``python -m mae mcp`` over stdio, driven by the MCP SDK's own client (one server process per test)."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_testkit import (
    NOTES_TASK,
    POST_TAP,
    POST_TASK,
    SLOW_TASK,
    approve_with,
    assert_sentence,
    scripted_model,
    stdio_server,
    text_of,
)
from PIL import Image

from mae.testing.fake_model_server import FakeModelServer

pytestmark = pytest.mark.slow  # each test starts `python -m mae mcp` (a few seconds)

TOOLS = {
    "list_devices",
    "screenshot",
    "perceive",
    "act",
    "run_task",
    "memory_tips",
    "memory_shortcuts",
    "list_runs",
    "get_run",
}


def test_mcp_stdio_tools_phone_runs_cancel_and_refusals(tmp_path: Path) -> None:
    with FakeModelServer(responder=scripted_model()) as fake:
        anyio.run(_main_scenario, fake, tmp_path)


async def _main_scenario(fake: FakeModelServer, tmp_path: Path) -> None:
    async with Client(stdio_server(fake, tmp_path), read_timeout_seconds=120) as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        for tool in listed.tools:
            assert tool.description and len(tool.description) > 60, tool.name
            assert tool.input_schema["type"] == "object"
        act_schema = next(t for t in listed.tools if t.name == "act").input_schema
        assert "action" in act_schema["required"] and "max_side" in act_schema["properties"]

        devices = await client.call_tool("list_devices", {})
        assert "virtual: built-in virtual phone (default)" in text_of(devices)

        # a screenshot within the size limit, the scale stated
        shot = await client.call_tool("screenshot", {"max_side": 1000})
        image_block = shot.content[1]
        assert image_block.type == "image" and image_block.mime_type == "image/png"
        image = Image.open(io.BytesIO(base64.b64decode(image_block.data)))
        assert max(image.size) <= 1000 and image.size == (462, 1000)
        assert "scaled by 0.4274" in text_of(shot) and shot.structured_content["scale"] < 1

        # perception in the same image space: the Notes icon of the home screen, scaled
        seen = await client.call_tool("perceive", {"max_side": 1000})
        notes = next(e for e in seen.structured_content["elements"] if e["name"] == "Notes")
        assert 100 < notes["x"] < 300 and notes["y"] < 600, notes
        assert 'button "Notes"; coordinates:' in text_of(seen)

        # act changes the screen
        opened = await client.call_tool("act", {"action": "Open_App(Notes)"})
        assert not opened.is_error, text_of(opened)
        assert opened.structured_content["screen_changed"] is True
        assert opened.structured_content["foreground_after"] == "com.mae.notes"
        link = opened.content[1]
        assert link.type == "resource_link" and str(link.uri).startswith("mae://screenshots/")
        kept = await client.read_resource(str(link.uri))
        assert kept.contents[0].mime_type == "image/png"
        home = await client.call_tool("act", {"action": {"name": "Home", "arguments": {}}})
        assert not home.is_error and home.structured_content["foreground_after"] == "com.mae.launcher"

        # bad inputs: sentences, never tracebacks
        assert_sentence(
            await client.call_tool("act", {"device": "pixel-9", "action": "Back()"}),
            "no device called 'pixel-9'",
        )
        assert_sentence(
            await client.call_tool("act", {"action": "scroll up please"}), "cannot read the action"
        )
        assert_sentence(await client.call_tool("act", {"action": "Tap(540"}), "Tap(x, y)")
        assert_sentence(
            await client.call_tool("act", {"action": "Tap(1, 2)\nBack()"}), "more than one action"
        )
        assert_sentence(await client.call_tool("act", {"action": "Tap(5000, 10)"}), "off screen")
        assert_sentence(await client.call_tool("screenshot", {"max_side": 10}), "max_side must be between")
        assert_sentence(await client.call_tool("act", {"action": "Back()", "max_side": "big"}), "max_side")
        assert_sentence(await client.call_tool("get_run", {"name": "../etc"}), "no run called")

        # a sensitive action is refused: this client cannot ask anybody and the server has no --yes
        card = await client.call_tool("act", {"action": 'Type("4111 1111 1111 1111")'})
        assert_sentence(card, "refused the sensitive action", "card number", "--yes")

        # a whole run with a progress notification per stage
        progress: list[tuple[float, str]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, message or ""))

        done = await client.call_tool("run_task", {"task": NOTES_TASK}, progress_callback=on_progress)
        assert not done.is_error, text_of(done)
        summary = done.structured_content
        assert summary["exit_reason"] == "finished" and summary["steps"] == 1
        assert Path(summary["run_folder"]).is_dir()
        messages = [message for _value, message in progress]
        assert "step 1: subgoal: Open Notes" in messages
        assert any(m.startswith('step 1: action: Open_App("Notes")') for m in messages), messages
        assert "step 1: outcome: A" in messages
        values = [value for value, _message in progress]
        assert values == sorted(values) and len(set(values)) == len(values)

        # a second run, cancelled: the busy phone refuses other callers until the run has stopped
        started = anyio.Event()

        async def watch(value: float, total: float | None, message: str | None) -> None:
            started.set()

        async with anyio.create_task_group() as group:

            async def slow_run() -> None:
                await client.call_tool("run_task", {"task": SLOW_TASK}, progress_callback=watch)

            group.start_soon(slow_run)
            with anyio.fail_after(60):
                await started.wait()
            busy = await client.call_tool("act", {"action": "Back()"})
            assert_sentence(busy, "busy")
            second = await client.call_tool("run_task", {"task": NOTES_TASK})
            assert_sentence(second, "busy")
            group.cancel_scope.cancel()
        with anyio.fail_after(60):
            while (await client.call_tool("act", {"action": "Home()"})).is_error:
                await anyio.sleep(0.2)
        runs = (await client.call_tool("list_runs", {})).structured_content["runs"]
        assert [run["exit_reason"] for run in runs if run["task"] == SLOW_TASK] == ["stopped"]
        one = await client.call_tool("get_run", {"name": runs[-1]["name"]})
        assert one.structured_content["task"] == NOTES_TASK and one.structured_content["actions"]

        # the agent's own sensitive action is refused too (it is told and goes on), and the run says why
        refused = await client.call_tool("run_task", {"task": POST_TASK})
        assert refused.structured_content["exit_reason"] == "finished", text_of(refused)
        assert "cannot ask a person" in text_of(refused)

        tips = await client.call_tool("memory_tips", {})
        assert "Tips:" in text_of(tips) and tips.structured_content["version"] == 0
        shortcuts = await client.call_tool("memory_shortcuts", {})
        assert shortcuts.structured_content["shortcuts"][0]["name"] == "Tap_Type_and_Enter"


def test_mcp_stdio_approval_mid_call_and_yes(tmp_path: Path) -> None:
    with FakeModelServer(responder=scripted_model()) as fake:
        anyio.run(_approval_scenario, fake, tmp_path)


async def _approval_scenario(fake: FakeModelServer, tmp_path: Path) -> None:
    card = {"action": 'Type("4111 1111 1111 1111")'}
    asked: list[str] = []
    # protocol 2025-11-25: the question is sent in the middle of the call; approved, the action runs
    async with Client(
        stdio_server(fake, tmp_path),
        mode="legacy",
        elicitation_callback=approve_with(True, asked),
        read_timeout_seconds=120,
    ) as client:
        assert client.protocol_version == "2025-11-25"
        await client.call_tool("act", {"action": "Open_App(Notes)"})
        approved = await client.call_tool("act", card)
        assert not approved.is_error, text_of(approved)
        assert len(asked) == 1 and "card number" in asked[0]
        posted = await client.call_tool("run_task", {"task": POST_TASK})
        assert posted.structured_content["exit_reason"] == "finished", text_of(posted)
        assert len(asked) == 2 and POST_TAP in asked[1]
    # --yes: approved without asking anybody
    fake.responder = scripted_model()
    async with Client(stdio_server(fake, tmp_path, "--yes"), read_timeout_seconds=120) as client:
        allowed = await client.call_tool("act", card)
        assert not allowed.is_error, text_of(allowed)
        posted = await client.call_tool("run_task", {"task": POST_TASK})
        assert posted.structured_content["exit_reason"] == "finished", text_of(posted)
        assert len(asked) == 2
