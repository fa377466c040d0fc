"""The Manager: high-level planning (paper §2.1, eq. 1-2). It never sees the perception list W_V."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel

from mae.actions.registry import Shortcut
from mae.agents.base import AgentResult, Screen, TurnListener, ask
from mae.agents.parsing import is_finished, require_sections
from mae.agents.prompting import render_prompt
from mae.llm.client import ChatClient
from mae.memory.working import ErrorRecord, WorkingMemory

ROLE = "manager"

FIRST_STEP = (
    "This is the start of the task: nothing has been done yet. Make an overall plan for the whole request "
    "and name the first subgoal."
)
LATER_STEP = (
    "Compare the progress with the plan and the screen. If the last subgoal is done, move on to the next "
    "one; if not, keep it (make it more precise if that helps). Revise the plan when the screen or the "
    "progress shows it no longer fits. If everything the user asked for is done, the subgoal is Finished."
)
ESCALATION = """
### Errors To Resolve ###
The Operator has failed {count} times in a row on this subgoal. The recent errors:
{errors}
Rethink at a higher level: change the subgoal or the plan so the Operator can recover, for example by
splitting the subgoal into smaller steps, going back to a known screen, or taking another route.
"""


class ManagerReply(BaseModel):
    """The Manager's parsed reply: updated plan W_P and next subgoal W_S."""

    thought: str = ""
    plan: str
    subgoal: str
    finished: bool = False


def parse_reply(text: str) -> ManagerReply:
    """Read ``### Thought ###``, ``### Plan ###`` and ``### Current Subgoal ###`` (the last two required)."""
    sections = require_sections(text, ["Plan", "Current Subgoal"], optional=("Thought",))
    subgoal = sections["Current Subgoal"]
    return ManagerReply(
        thought=sections["Thought"], plan=sections["Plan"], subgoal=subgoal, finished=is_finished(subgoal)
    )


def describe_shortcuts(shortcuts: Mapping[str, Shortcut]) -> str:
    """Shortcut signatures, descriptions and preconditions as prompt lines."""
    return "\n".join(s.describe() for s in shortcuts.values()) or "(none)"


def build_prompt(
    memory: WorkingMemory,
    shortcuts: Mapping[str, Shortcut],
    escalate: Sequence[ErrorRecord] = (),
    prompts_dir: Path | None = None,
) -> str:
    """The rendered Manager prompt for the current working memory."""
    first = not memory.plan
    escalation = ""
    if escalate:
        errors = "\n".join(f"- {e.summary()}" for e in escalate)
        escalation = ESCALATION.format(count=len(escalate), errors=errors)
    return render_prompt(
        "manager",
        {
            "instruction": memory.instruction,
            "plan": memory.plan or "(no plan yet)",
            "subgoal": memory.subgoal or "(none yet)",
            "progress": memory.progress or "(nothing yet)",
            "notes": memory.notes or "(none yet)",
            "shortcuts": describe_shortcuts(shortcuts),
            "escalation": escalation,
            "guidance": FIRST_STEP if first else LATER_STEP,
        },
        prompts_dir,
    )


def plan(
    client: ChatClient,
    memory: WorkingMemory,
    screen: Screen,
    shortcuts: Mapping[str, Shortcut],
    *,
    escalate: Sequence[ErrorRecord] = (),
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
) -> AgentResult[ManagerReply]:
    """Ask the Manager for the updated plan and next subgoal; ``escalate`` = the last k errors, if raised."""
    prompt = build_prompt(memory, shortcuts, escalate, prompts_dir)
    return ask(client, ROLE, prompt, [screen.encoded(client, ROLE)], parse_reply, agent=ROLE, on_turn=on_turn)
