"""The Action Reflector: judges an action's outcome from the screens before and after (paper §2.1, eq. 6).

Outcome A (success or partial success), B (wrong page) or C (no change); the updated progress W_G; on
B/C an error description with the likely cause, which becomes W_E[t].
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from mae.agents import fast
from mae.agents.base import AgentResult, Screen, TurnListener, ask
from mae.agents.parsing import ReplyProblem, parse_outcome, require_sections
from mae.agents.prompting import render_prompt
from mae.llm.client import ChatClient
from mae.llm.images import EncodedImage, before_policy, encode_image
from mae.memory.working import Outcome, WorkingMemory

ROLE = "reflector"
PROMPT = "action_reflector"

_NONE = {"", "none", "n/a", "na", "-", "none.", "no error", "no errors"}


class ReflectorReply(BaseModel):
    """Outcome, error description ('' for A) and the updated progress."""

    outcome: Outcome
    error_description: str = ""
    progress: str
    subgoal_done: bool | None = None
    """Fast mode only: whether the current subgoal is done (None when not asked or not said clearly)."""
    notes: str | None = None
    """Fast mode only: the updated notes written in the same reply (None when not asked or missing)."""


def parse_reply(text: str) -> ReflectorReply:
    """Read the Outcome (exactly A, B or C), Error Description and Progress Status sections."""
    # fast mode's sections are named so that they end the progress rather than run into it
    extra = (fast.SUBGOAL_SECTION, fast.NOTES_SECTION)
    sections = require_sections(text, ["Outcome", "Progress Status"], optional=("Error Description", *extra))
    outcome = parse_outcome(sections["Outcome"])
    error = sections["Error Description"].strip()
    if error.lower() in _NONE:
        error = ""
    if outcome != "A" and not error:
        raise ReplyProblem(f"outcome {outcome} needs an ### Error Description ### saying what went wrong")
    if outcome == "A":
        error = ""
    return ReflectorReply(outcome=outcome, error_description=error, progress=sections["Progress Status"])


def progress_after(outcome: Outcome, previous: str, written: str) -> str:
    """The progress W_G after an action judged ``outcome``: the Reflector's for A; for B or C the
    previous progress, with what the Reflector added after it when it kept that progress word for word
    (a failed action makes no progress, but it can show something, such as the end of a list)."""
    if outcome == "A":
        return written
    kept, new = " ".join(previous.split()), " ".join(written.split())
    if kept and new.startswith(kept) and len(new) > len(kept):
        return written.strip()
    return previous


def _keyboard(screen: Screen) -> str:
    return "keyboard shown" if screen.perception.keyboard_active else "keyboard hidden"


def _before_image(client: ChatClient, before: Screen) -> EncodedImage:
    """The 'before' screenshot as sent: it may go smaller (it was seen in full the step before)."""
    policy = client.profile(ROLE).image
    if policy.before_max_side is None:
        return before.encoded(client, ROLE)
    return encode_image(before.image, before_policy(policy, before.image.size))


def build_prompt(
    client: ChatClient,
    memory: WorkingMemory,
    before: Screen,
    after: Screen,
    action: str,
    description: str,
    prompts_dir: Path | None = None,
    addendum: str = "",
) -> str:
    """The rendered Action Reflector prompt (with fast mode's ``addendum``, ``fast.reflector_addendum``)."""
    return addendum_after(
        render_prompt(
            PROMPT,
            {
                "instruction": memory.instruction,
                "subgoal": memory.subgoal or "(no subgoal)",
                "progress": memory.progress or "(nothing yet)",
                "action": action,
                "description": description or "(none given)",
                "frame": after.pair_frame(client, ROLE, _before_image(client, before).size),
                "before": before.describe(client, ROLE),
                "after": after.describe(client, ROLE),
                "keyboard_before": _keyboard(before),
                "keyboard_after": _keyboard(after),
            },
            prompts_dir,
        ),
        addendum,
    )


def addendum_after(prompt: str, addendum: str) -> str:
    """``prompt`` with fast mode's extra requests at its end."""
    return prompt.rstrip("\n") + "\n" + addendum if addendum else prompt


def reflect(
    client: ChatClient,
    memory: WorkingMemory,
    before: Screen,
    after: Screen,
    *,
    action: str,
    description: str,
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
    ask_subgoal_done: bool = False,
    ask_notes: bool = False,
) -> AgentResult[ReflectorReply]:
    """Ask the Action Reflector to judge ``action`` from the two screens; in fast mode also whether the
    subgoal is done (``ask_subgoal_done``) and the updated notes (``ask_notes``), in the same request."""
    addendum = fast.reflector_addendum(memory, subgoal_done=ask_subgoal_done, notes=ask_notes)
    prompt = build_prompt(client, memory, before, after, action, description, prompts_dir, addendum)
    images = [_before_image(client, before), after.encoded(client, ROLE)]

    def parse(text: str) -> ReflectorReply:
        reply = parse_reply(text)
        if ask_subgoal_done:
            reply.subgoal_done = fast.read_subgoal_done(text)
        if ask_notes:
            reply.notes = fast.read_notes(text)
        return reply

    return ask(client, ROLE, prompt, images, parse, agent=ROLE, on_turn=on_turn)
