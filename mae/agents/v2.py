"""Mobile-Agent-v2 (Wang et al., 2024) as a strategy on the shared loop.

Three agents and a memory unit (§3): the planning agent (text only) turns the last correct operation into
the task progress TP; the decision agent chooses the operation from the instruction, TP, the memory
unit's focus content FC, the last reflection and the screen, and notes new focus content; the reflection
agent judges the operation from the screens before and after it: A correct (it enters the operation
history), B wrong page (undone with Back, not in the history), C no change (not in the history). The
last B or C is shown to the decision agent. As in the Mobile-Agent-E paper's comparison, the operations
are mae's atomic operations (plus Stop), the perception is mae's Perceptor, and the decision agent gets
the same initial Tips as Mobile-Agent-E (paper §4: the baselines had the same operations, perception and
initial Tips); no Shortcuts, and the Tips never change.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from mae.actions.registry import describe_atomic_actions
from mae.agents.base import AgentResult, Screen, ask
from mae.agents.operator import OperatorDecision, keyboard_text, validate_action
from mae.agents.parsing import parse_outcome, require_sections, strip_fence
from mae.agents.prompting import render_prompt
from mae.agents.strategy import Decision, Finish, Invalid, RunContext, invalid_text, require
from mae.llm.coordinates import describe_swipe_example, describe_tap_example
from mae.memory.tips import INITIAL_TIPS
from mae.memory.working import ActionRecord, Outcome

PLANNING, DECISION, REFLECTION = "planning", "decision", "reflection"
ROLES = {PLANNING: "manager", DECISION: "operator", REFLECTION: "reflector"}
"""Agent -> the model role whose backbone settings it uses."""

_NONE = {"", "none", "n/a", "na", "-", "nothing", "no"}
_STOP = re.compile(r"^stop\b", re.I)


class PlanningReply(BaseModel):
    thought: str = ""
    progress: str


class DecisionReply(BaseModel):
    thought: str = ""
    action: str = ""
    shown: str = Field("", description="the action as people read it, in screen pixels (OperatorDecision)")
    operation: str = ""
    memory: str = ""
    stop: bool = False


class ReflectionReply(BaseModel):
    thought: str = ""
    answer: Outcome


def parse_planning(text: str) -> PlanningReply:
    """Read ``### Completed Contents ###`` (the task progress)."""
    sections = require_sections(text, ["Completed Contents"], optional=("Thought",))
    return PlanningReply(thought=sections["Thought"], progress=sections["Completed Contents"])


def parse_reflection(text: str) -> ReflectionReply:
    """Read ``### Answer ###``: exactly one of A, B or C."""
    sections = require_sections(text, ["Answer"], optional=("Thought",))
    return ReflectionReply(thought=sections["Thought"], answer=parse_outcome(sections["Answer"]))


def _is_stop(section: str) -> bool:
    text = strip_fence(section)
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return False
        return isinstance(data, dict) and str(data.get("name", "")).lower() == "stop"
    return _STOP.match(text) is not None


@dataclass
class Correct:
    """One operation the reflection agent judged correct (the v2 operation history)."""

    action: str
    operation: str
    thought: str


@dataclass
class MobileAgentV2:
    """Planning, decision and reflection agents with the memory unit (``memory.notes`` holds FC and
    ``memory.progress`` holds TP)."""

    name: str = "v2"
    stages: tuple[str, ...] = (PLANNING, DECISION, REFLECTION, "undo")
    correct: list[Correct] = field(default_factory=list)
    planned: int = 0
    reflection: str = ""
    last_thought: str = ""
    tips: str = INITIAL_TIPS

    def decide(self, run: RunContext, screen: Screen) -> Decision:
        memory = run.memory
        if len(self.correct) > self.planned:
            self.plan(run)
        role = ROLES[DECISION]
        mapper, frame = screen.mapper(run.client, role), screen.model_frame(run.client, role)
        last = self.correct[-1] if self.correct else None
        prompt = render_prompt(
            "v2_decision",
            {
                "instruction": memory.instruction,
                "progress": memory.progress if self.correct else "(nothing done yet)",
                "memory": memory.notes or "(nothing noted yet)",
                "last": f"{last.action}: {last.operation}" if last else "(none yet)",
                "reflection": self.reflection,
                "tips": self.tips.strip() or "(none)",
                "frame": screen.frame(run.client, role),
                "keyboard": keyboard_text(screen.perception),
                "perception": screen.describe(run.client, role),
                "atomic_actions": describe_atomic_actions(describe_swipe_example(mapper)),
                "tap_x": describe_tap_example(mapper)[0],
                "tap_y": describe_tap_example(mapper)[1],
            },
            run.prompts_dir,
        )
        chosen: list[OperatorDecision] = []

        def parse(text: str) -> DecisionReply:
            sections = require_sections(text, ["Action"], optional=("Thought", "Operation", "Memory"))
            reply = DecisionReply(
                thought=sections["Thought"],
                operation=sections["Operation"],
                memory="" if sections["Memory"].strip().rstrip(".").lower() in _NONE else sections["Memory"],
            )
            if _is_stop(sections["Action"]):
                reply.stop, reply.action = True, "Stop"
                return reply
            call, screen_call, steps = validate_action(
                sections["Action"], shortcuts={}, screen=screen, mapper=mapper
            )
            chosen[:] = [
                OperatorDecision.from_call(
                    call, screen_call, steps, thought=reply.thought, description=reply.operation, frame=frame
                )
            ]
            reply.action, reply.shown = str(call), chosen[0].shown
            return reply

        image = [screen.encoded(run.client, role)]
        result: AgentResult[DecisionReply]
        result, _ = run.stage(
            DECISION, lambda: ask(run.client, role, prompt, image, parse, agent=DECISION, on_turn=run.on_turn)
        )
        if result.value is None and result.problem_kind == "action":
            return Invalid(invalid_text(result.raw), result.problem or "invalid action")
        reply = require(result, "Decision agent")
        if reply.memory and reply.memory not in memory.notes:  # the memory unit keeps all focus content
            memory.notes = f"{memory.notes}\n{reply.memory}".strip()
        if reply.stop:
            return Finish("the decision agent chose Stop")
        self.last_thought = reply.thought
        return chosen[0]

    def plan(self, run: RunContext) -> None:
        """The planning agent: the task progress after the latest correct operation."""
        memory, done = run.memory, self.correct[-1]
        prompt = render_prompt(
            "v2_planning",
            {
                "instruction": memory.instruction,
                "progress": memory.progress if self.planned else "(nothing done yet)",
                "memory": memory.notes or "(nothing noted yet)",
                "operation": f"{done.action}: {done.operation}\nThought: {done.thought}",
            },
            run.prompts_dir,
        )
        role = ROLES[PLANNING]
        result: AgentResult[PlanningReply]
        result, _ = run.stage(
            PLANNING,
            lambda: ask(run.client, role, prompt, [], parse_planning, agent=PLANNING, on_turn=run.on_turn),
        )
        memory.progress = require(result, "Planning agent").progress
        self.planned = len(self.correct)

    def judge(
        self, run: RunContext, record: ActionRecord, before: Screen, after: Screen, failure: str | None
    ) -> Screen | None:
        memory, role = run.memory, ROLES[REFLECTION]
        operation = record.text + (f"\nIt stopped early: {failure}" if failure else "")
        prompt = render_prompt(
            "v2_reflection",
            {
                "instruction": memory.instruction,
                "memory": memory.notes or "(nothing noted yet)",
                "operation": operation,
                "expectation": record.description or "(none given)",
                "frame": after.pair_frame(run.client, role, before.encoded(run.client, role).size),
                "before": before.describe(run.client, role),
                "after": after.describe(run.client, role),
            },
            run.prompts_dir,
        )
        images = [before.encoded(run.client, role), after.encoded(run.client, role)]
        result: AgentResult[ReflectionReply]
        result, _ = run.stage(
            REFLECTION,
            lambda: ask(
                run.client, role, prompt, images, parse_reflection, agent=REFLECTION, on_turn=run.on_turn
            ),
        )
        verdict = require(result, "Reflection agent")
        record.outcome = verdict.answer
        if failure and record.outcome == "A":
            record.outcome = "C"
        if record.outcome == "A":
            self.correct.append(Correct(record.text, record.description, self.last_thought))
            self.reflection = ""
        else:
            fallback = "it led to a wrong page" if record.outcome == "B" else "nothing changed"
            why = verdict.thought or fallback
            record.error = "; ".join(x for x in (why, failure) if x)
        run.emit("outcome", outcome=record.outcome, progress=memory.progress, error_description=record.error)
        if record.outcome == "B":
            self.reflection = (
                f"\n### Reflection ###\nYour last operation, {record.text}, was wrong: it led to a page "
                f"unrelated to the instruction ({record.error}). It was undone with Back; choose another "
                "operation.\n"
            )
            return run.undo()
        if record.outcome == "C":
            self.reflection = (
                f"\n### Reflection ###\nYour last operation, {record.text}, was invalid: the screen did not "
                f"change ({record.error}). Choose another operation or other parameters.\n"
            )
        return None

    def declined(self, record: ActionRecord) -> None:
        self.reflection = f"\n### Reflection ###\nYour last operation, {record.text}: {record.error}.\n"
