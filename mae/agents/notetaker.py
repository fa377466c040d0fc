"""The Notetaker: keeps the task-relevant information seen on screens (paper §2.1, eq. 7)."""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import BaseModel

from mae.agents.base import AgentResult, Screen, TurnListener, ask
from mae.agents.parsing import require_sections, says_nothing
from mae.agents.prompting import render_prompt
from mae.llm.client import ChatClient
from mae.memory.working import WorkingMemory

ROLE = "notetaker"

log = logging.getLogger(__name__)


class NotetakerReply(BaseModel):
    """The full updated notes W_N ('' when there is nothing worth keeping)."""

    notes: str


MAX_NOTES_CHARS = 8000
"""Longest notes kept (W_N is part of every later prompt); longer notes are cut with a warning."""


def parse_reply(text: str) -> NotetakerReply:
    """Read ``### Important Notes ###``; ``None`` means no notes. Notes longer than
    ``MAX_NOTES_CHARS`` are cut there, with a warning."""
    notes = require_sections(text, ["Important Notes"])["Important Notes"].strip()
    if len(notes) > MAX_NOTES_CHARS:
        log.warning(
            "the Notetaker wrote %d characters of notes; kept the first %d", len(notes), MAX_NOTES_CHARS
        )
        notes = notes[:MAX_NOTES_CHARS].rstrip() + "\n[notes cut: too long]"
    return NotetakerReply(notes="" if says_nothing(notes) else notes)


def build_prompt(
    client: ChatClient,
    memory: WorkingMemory,
    after: Screen,
    prompts_dir: Path | None = None,
    action: str = "",
) -> str:
    """The rendered Notetaker prompt: the subgoal the last ``action`` served, and the screen after it."""
    return render_prompt(
        "notetaker",
        {
            "instruction": memory.instruction,
            "plan": memory.plan or "(no plan)",
            "subgoal": memory.subgoal or "(no subgoal)",
            "action": action or "(none yet)",
            "progress": memory.progress or "(nothing yet)",
            "notes": memory.notes or "(none yet)",
            "perception": after.describe(client, ROLE),
        },
        prompts_dir,
    )


def take_notes(
    client: ChatClient,
    memory: WorkingMemory,
    after: Screen,
    *,
    action: str = "",
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
) -> AgentResult[NotetakerReply]:
    """Ask the Notetaker for the updated notes after ``action``, on the screen ``after`` it.

    A reply of "None" (nothing new on this screen) keeps the existing notes rather than erasing them.
    """
    prompt = build_prompt(client, memory, after, prompts_dir, action)
    image = after.encoded(client, ROLE)
    result = ask(client, ROLE, prompt, [image], parse_reply, agent=ROLE, on_turn=on_turn)
    if result.value is not None and not result.value.notes and memory.notes:
        result.value = NotetakerReply(notes=memory.notes)
    return result
