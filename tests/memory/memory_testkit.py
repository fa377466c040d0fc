"""Helpers for the memory tests: a client on the fake server, task results, scripted reflector replies."""

from __future__ import annotations

import json
from typing import Any

from mae.errors import ExitReason
from mae.llm import ChatClient, ModelProfile
from mae.memory.working import ActionRecord, WorkingMemory
from mae.run.results import TaskResult
from mae.testing.fake_model_server import FakeModelServer

SEARCH_SHORTCUT: dict[str, Any] = {
    "name": "Search_In_App",
    "arguments": ["x", "y", "text"],
    "description": "Tap the search box at (x, y), type the text and press Enter.",
    "precondition": "An empty search box is visible on the screen.",
    "atomic_action_sequence": [
        {"name": "Tap", "arguments_map": {"x": "x", "y": "y"}},
        {"name": "Type", "arguments_map": {"text": "text"}},
        {"name": "Enter", "arguments_map": {}},
    ],
}


def make_client(server: FakeModelServer) -> ChatClient:
    return ChatClient(
        ModelProfile(
            provider="test", base_url=server.base_url, model="fake-vlm", api_key_env=None, max_retries=0
        )
    )


def action(
    step: int,
    text: str,
    *,
    outcome: str = "A",
    shortcut: str | None = None,
    error: str | None = None,
    atomic: int = 1,
) -> ActionRecord:
    name = shortcut or text.split("(")[0]
    return ActionRecord(
        step=step,
        name=name,
        text=text,
        description=f"step {step}",
        shortcut=shortcut,
        atomic_steps=[f"op{i}" for i in range(atomic)],
        completed_steps=atomic,
        outcome=outcome,  # type: ignore[arg-type]
        error=error,
    )


def task_result(
    instruction: str,
    actions: list[ActionRecord],
    *,
    exit_reason: ExitReason = ExitReason.FINISHED,
    plan: str = "1. Do it",
    progress: str = "Done.",
) -> TaskResult:
    memory = WorkingMemory(instruction=instruction, plan=plan, progress=progress, notes="Price: $12")
    for record in actions:
        memory.record(record)
    return TaskResult(
        instruction=instruction,
        exit_reason=exit_reason,
        finished=exit_reason is ExitReason.FINISHED,
        message="" if exit_reason is ExitReason.FINISHED else "3 errors in a row",
        memory=memory,
    )


def tips_reply(*tips: str) -> str:
    listing = "\n".join(f"{i}. {tip}" for i, tip in enumerate(tips, 1))
    return f"### Thought ###\nLessons.\n\n### Updated Tips ###\n{listing}\n"


def shortcuts_reply(new: Any = (), revised: Any = (), raw_new: str | None = None) -> str:
    new_text = raw_new if raw_new is not None else json.dumps(list(new), indent=1)
    return (
        "### Thought ###\nLooking for subroutines.\n\n"
        f"### New Shortcuts ###\n{new_text}\n\n"
        f"### Revised Shortcuts ###\n{json.dumps(list(revised))}\n"
    )


INITIAL_TIP_LINES = [
    "Do not add any payment information; sign in as a guest; close pop-ups.",
    "By default, no apps are open in the background.",
    "Partial text from earlier input in a text box is not an error.",
    "New Notes need no title unless asked.",
]
