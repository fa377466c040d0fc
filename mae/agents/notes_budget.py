"""Bounded notes: past a budget, the Notetaker is asked to consolidate W_N so prompts stop growing.

The notes are pasted into the Manager's, the Operator's and the Notetaker's prompts at every step; a
Notetaker that only ever adds makes every step of a long task dearer than the one before. Once the notes
pass ``NOTES_BUDGET_CHARS`` the Notetaker gets one extra call (prompt ``notetaker_consolidate``) asking
for the same facts in at most ``NOTES_TARGET_CHARS``. A reply that is empty or not shorter gets the usual
corrective retry; if it still is not, the notes stay as they were (the Notetaker's own hard cap,
``notetaker.MAX_NOTES_CHARS``, still applies).

Nothing the task still needs may be lost on the way, and only a model can tell which facts those are, so
the check is conservative (``mae.agents.notes_facts``): every fact of the old notes (prices, times,
numbers with units, names, quoted text, URLs ...) must be in the new notes, in any spelling that means
the same, or be named under an optional ``### Dropped ###`` section, where the Notetaker lists what the
request no longer needs (an option ruled out). A first reply that loses facts, or moves a value to
another item, gets the corrective retry naming them; a last reply that still does is repaired: the lines
that moved a value are removed, the old lines holding the lost facts are put back (each once), and the
run log gets a warning naming them. If the repaired notes are no shorter than the old ones, the old
notes are kept.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import BaseModel, Field

from mae.agents.base import AgentResult, TurnListener, ask
from mae.agents.notes_facts import find_losses, repair, strip_sign_off
from mae.agents.notetaker import ROLE
from mae.agents.parsing import ReplyProblem, require_sections, says_nothing
from mae.agents.prompting import render_prompt
from mae.llm.client import ChatClient
from mae.memory.working import WorkingMemory

AGENT = "notes_consolidator"
NOTES_BUDGET_CHARS = 1_500
"""Notes longer than this are consolidated (about 375 tokens, in three prompts a step)."""
NOTES_TARGET_CHARS = 900
"""The length the consolidated notes are asked to fit in."""
CORRECTIVE_RETRIES = 1

log = logging.getLogger(__name__)


def over_budget(notes: str) -> bool:
    return len(notes) > NOTES_BUDGET_CHARS


class ConsolidatedNotes(BaseModel):
    """The Notetaker's shorter notes, what it said the request no longer needs, and the facts the
    safeguard had to put back (empty when the model kept everything)."""

    notes: str
    dropped: str = ""
    restored: list[str] = Field(default_factory=list)


def parse_consolidated(text: str, before: str) -> ConsolidatedNotes:
    """The consolidated notes; refused when empty or not shorter than ``before``."""
    sections = require_sections(text, ["Important Notes"], optional=("Dropped",))
    notes = strip_sign_off(sections["Important Notes"].strip())
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
    dropped = sections["Dropped"].strip()
    return ConsolidatedNotes(notes=notes, dropped="" if says_nothing(dropped) else dropped)


def keep_facts(reply: ConsolidatedNotes, before: str, *, last_try: bool) -> ConsolidatedNotes:
    """``reply`` when it lost no fact of ``before``; else a corrective problem, or on the last try the
    repaired notes (refused when the repair makes them no shorter than ``before``)."""
    loss = find_losses(before, reply.notes, reply.dropped)
    if not loss:
        return reply
    if not last_try:
        raise ReplyProblem(loss.problem())
    repaired = repair(before, reply.notes, loss)
    if len(repaired) >= len(before):
        raise ReplyProblem(
            f"the notes lost facts the old notes held ({loss.describe()}), and putting them back leaves "
            "the notes no shorter"
        )
    restored = list(dict.fromkeys(f.text for f in loss.lost))
    return ConsolidatedNotes(notes=repaired, dropped=reply.dropped, restored=restored)


def consolidation_prompt(memory: WorkingMemory, prompts_dir: Path | None = None) -> str:
    """The Notetaker's request to shorten ``memory.notes`` toward ``NOTES_TARGET_CHARS``."""
    return render_prompt(
        "notetaker_consolidate",
        {
            "instruction": memory.instruction,
            "plan": memory.plan or "(no plan)",
            "progress": memory.progress or "(nothing yet)",
            "notes": memory.notes,
            "length": str(len(memory.notes)),
            "target": str(NOTES_TARGET_CHARS),
        },
        prompts_dir,
    )


def consolidate(
    client: ChatClient,
    memory: WorkingMemory,
    *,
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
) -> AgentResult[ConsolidatedNotes]:
    """Ask the Notetaker to shorten ``memory.notes`` (one corrective retry) without losing a fact; the
    caller keeps the old notes when the result has no value."""
    before = memory.notes
    prompt = consolidation_prompt(memory, prompts_dir)
    tries = 0

    def parse(text: str) -> ConsolidatedNotes:
        nonlocal tries
        tries += 1
        return keep_facts(parse_consolidated(text, before), before, last_try=tries > CORRECTIVE_RETRIES)

    result = ask(
        client, ROLE, prompt, [], parse, agent=AGENT, corrective_retries=CORRECTIVE_RETRIES, on_turn=on_turn
    )
    if result.value is None:
        log.warning(
            "the Notetaker could not consolidate its notes (%s); they are kept as they are", result.problem
        )
    elif result.value.restored:
        log.warning("%s", restored_warning(result.value))
    return result


def restored_warning(reply: ConsolidatedNotes) -> str:
    """The run log's line when the safeguard put facts back."""
    shown = ", ".join(f'"{t}"' for t in reply.restored[:8])
    more = f" and {len(reply.restored) - 8} more" if len(reply.restored) > 8 else ""
    return (
        f"the Notetaker's consolidated notes lost {shown}{more}; the lines of the old notes holding them "
        "were put back"
    )
