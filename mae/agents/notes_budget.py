"""Bounded notes: past a budget, the Notetaker is asked to consolidate W_N so prompts stop growing.

The notes are pasted into the Manager's, the Operator's and the Notetaker's prompts at every step; a
Notetaker that only ever adds makes every step of a long task dearer than the one before. Once the notes
pass ``NOTES_BUDGET_CHARS`` the Notetaker gets one extra call (prompt ``notetaker_consolidate``) asking
for the same facts in at most ``NOTES_TARGET_CHARS``. A reply that is empty or not shorter gets the usual
corrective retry; if it still is not, the notes stay as they were (the Notetaker's own hard cap,
``notetaker.MAX_NOTES_CHARS``, still applies).
"""

from __future__ import annotations

import logging
from pathlib import Path

from mae.agents.base import AgentResult, TurnListener, ask
from mae.agents.notetaker import ROLE, NotetakerReply
from mae.agents.parsing import ReplyProblem, require_sections, says_nothing
from mae.agents.prompting import render_prompt
from mae.llm.client import ChatClient
from mae.memory.working import WorkingMemory

AGENT = "notes_consolidator"
NOTES_BUDGET_CHARS = 1_500
"""Notes longer than this are consolidated (about 375 tokens, in three prompts a step)."""
NOTES_TARGET_CHARS = 900
"""The length the consolidated notes are asked to fit in."""

log = logging.getLogger(__name__)


def over_budget(notes: str) -> bool:
    return len(notes) > NOTES_BUDGET_CHARS


def parse_consolidated(text: str, before: str) -> NotetakerReply:
    """The consolidated notes; refused when empty or not shorter than ``before``."""
    notes = require_sections(text, ["Important Notes"])["Important Notes"].strip()
    if not notes or says_nothing(notes):
        raise ReplyProblem(
            "### Important Notes ### is empty: give the consolidated notes, keeping every fact the request "
            "still needs"
        )
    if len(notes) >= len(before):
        raise ReplyProblem(
            f"the notes are {len(notes)} characters, no shorter than before ({len(before)}): merge and "
            f"shorten them to at most {NOTES_TARGET_CHARS} characters"
        )
    return NotetakerReply(notes=notes)


def consolidate(
    client: ChatClient,
    memory: WorkingMemory,
    *,
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
) -> AgentResult[NotetakerReply]:
    """Ask the Notetaker to shorten ``memory.notes`` (one corrective retry); the caller keeps the old
    notes when the result has no value."""
    before = memory.notes
    prompt = render_prompt(
        "notetaker_consolidate",
        {
            "instruction": memory.instruction,
            "plan": memory.plan or "(no plan)",
            "progress": memory.progress or "(nothing yet)",
            "notes": before,
            "length": str(len(before)),
            "target": str(NOTES_TARGET_CHARS),
        },
        prompts_dir,
    )
    result = ask(
        client, ROLE, prompt, [], lambda text: parse_consolidated(text, before), agent=AGENT, on_turn=on_turn
    )
    if result.value is None:
        log.warning(
            "the Notetaker could not consolidate its notes (%s); they are kept as they are", result.problem
        )
    return result
