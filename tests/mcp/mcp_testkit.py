"""Helpers for the MCP tests: the server command line, a scripted model that answers per task, and the
SDK client's callbacks."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters
from mcp_types import CallToolResult, ElicitResult

from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest

REPO = Path(__file__).resolve().parents[2]
NOTES_TASK = "Open the Notes app"
SLOW_TASK = "Keep scrolling the home screen"
POST_TASK = "Post the reply"
POST_TAP = "Tap(788, 1547)"
"""The Post task's tap as the approval question shows it: the model's (560, 1100) in the 768x1664 image it
is sent, in screen pixels of the 1080x2340 virtual phone: an empty spot of the home screen, so the
description names the target (a tap within reach of an app icon is checked against the icon's label)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_args(fake: FakeModelServer, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "-m",
        "mae",
        "mcp",
        "--device",
        "virtual",
        "--backbone",
        "custom",
        "--base-url",
        fake.base_url,
        "--model",
        "fake-vlm",
        "--max-retries",
        "0",
        "--log-dir",
        str(tmp_path / "runs"),
        "--memory-dir",
        str(tmp_path / "memory"),
        "--no-evolve",
        *extra,
    ]


def server_env() -> dict[str, str]:
    """No adb server is started or reached; no icon detector (perception stays quick)."""
    return {
        **os.environ,
        "MAE_ICONS": "none",
        "MAE_CAPTIONS": "none",
        "MAE_ADB_AUTOSTART": "0",
        "ANDROID_ADB_SERVER_PORT": str(free_port()),
        "PYTHONUNBUFFERED": "1",
    }


def stdio_server(fake: FakeModelServer, tmp_path: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=server_args(fake, tmp_path, *extra), env=server_env(), cwd=str(REPO)
    )


def manager(subgoal: str) -> str:
    return f"### Thought ###\nPlanning.\n\n### Plan ###\n1. {subgoal}\n\n### Current Subgoal ###\n{subgoal}\n"


def operator(action: dict[str, Any], description: str) -> str:
    return (
        f"### Thought ###\nActing.\n\n### Action ###\n{json.dumps(action)}\n\n"
        f"### Description ###\n{description}\n"
    )


REFLECTOR = "### Outcome ###\nA\n\n### Error Description ###\nNone\n\n### Progress Status ###\nDone.\n"
NOTES = "### Important Notes ###\nNone\n"


@dataclass
class TaskScript:
    """What the model answers for one task: one action, then Finished (or the same action forever)."""

    subgoal: str
    action: dict[str, Any]
    description: str
    endless: bool = False
    delay_s: float = 0.0


@dataclass
class ScriptedModel:
    """A fake-server responder that recognises the task in each prompt and answers by role."""

    tasks: dict[str, TaskScript]
    counts: dict[tuple[str, str], int] = field(default_factory=dict)

    def __call__(self, request: RecordedRequest) -> FakeReply | str | None:
        text, role = request.text, request.role or ""
        task = next((name for name in self.tasks if name in text), None)
        if task is None:
            return None
        script = self.tasks[task]
        index = self.counts.get((task, role), 0)
        self.counts[(task, role)] = index + 1
        if role == "manager":
            reply = manager("Finished" if index >= 1 and not script.endless else script.subgoal)
        elif role == "operator":
            reply = operator(script.action, script.description)
        elif role == "reflector":
            reply = REFLECTOR
        elif role == "notetaker":
            reply = NOTES
        else:
            return None
        return FakeReply(text=reply, delay_s=script.delay_s)


def scripted_model() -> ScriptedModel:
    return ScriptedModel(
        {
            NOTES_TASK: TaskScript(
                "Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}}, "Open the Notes app"
            ),
            SLOW_TASK: TaskScript(
                "Scroll down",
                {"name": "Swipe", "arguments": {"x1": 540, "y1": 1500, "x2": 540, "y2": 900}},
                "Scroll down the page",
                endless=True,
                delay_s=0.3,
            ),
            POST_TASK: TaskScript(
                "Post it",
                {"name": "Tap", "arguments": {"x": 560, "y": 1100}},
                "Tap Post to publish the reply",
            ),
        }
    )


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def approve_with(approved: bool, asked: list[str]) -> Callable[..., Any]:
    """An elicitation callback that records the question and answers it."""

    async def callback(_context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"approve": approved})

    return callback


def assert_sentence(result: CallToolResult, *needles: str) -> str:
    """An error result whose text is a sentence (no traceback, no class names) holding ``needles``."""
    text = text_of(result)
    assert result.is_error, text
    assert "Traceback" not in text and "Error:" not in text.replace("Error executing tool", ""), text
    for needle in needles:
        assert needle in text, text
    return text
