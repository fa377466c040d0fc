"""Mobile-Agent v1 (Wang et al., 2024) as a strategy on the shared loop.

One agent sees the instruction, the screenshot, the perception list and its own history and answers in
Observation / Thought / Action form (self-planning from the history). Self-reflection, as in §2.2: when
an action leaves the screen unchanged, the next prompt says so and asks for another operation or other
parameters (the step counts as a failure, outcome C); when the agent chooses Stop, a completion check
compares the instruction with the history and the screen, and a task found unfinished goes on. v1 has no
separate judge: every action that changed the screen counts as done (outcome A).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PIL import Image, ImageChops
from pydantic import BaseModel

from mae.agents.base import AgentResult, Screen, ask
from mae.agents.operator import OperatorDecision, keyboard_text, validate_action
from mae.agents.parsing import ReplyProblem, extract_sections, require_sections
from mae.agents.prompting import render_prompt
from mae.agents.strategy import Decision, Finish, Invalid, RunContext, invalid_text, require
from mae.agents.v1_actions import OPERATIONS, V1Action, parse_v1_action
from mae.memory.tips import INITIAL_TIPS
from mae.memory.working import ActionRecord

ROLE = "operator"
"""The model role v1's single agent uses (its backbone settings)."""
AGENT = "v1_agent"
CHECK = "v1_check"

STATUS_BAR = 0.04
"""Top share of the screen ignored when comparing screenshots (the clock may tick)."""
CHANGED_PIXELS = 40
"""Pixels that must differ (by more than ``PIXEL_TOLERANCE``) for the screen to count as changed."""
PIXEL_TOLERANCE = 24

REFLECTION = (
    "\n### Reflection ###\nYour last operation, {action}, did not change the screen: it had no effect. "
    "Do not repeat it unchanged. Try another operation, or the same operation with other parameters "
    "(another text, another icon description, other coordinates).\n"
)


class V1Reply(BaseModel):
    """The agent's Observation, Thought and the operation it chose."""

    observation: str
    thought: str
    action: str
    shown: str = ""
    """The action as people read it (screen pixels) when the model wrote coordinates in another frame."""


class CheckReply(BaseModel):
    """The completion check: whether the instruction is done, and why."""

    thought: str
    completed: bool


def parse_check(text: str) -> CheckReply:
    """Read ``### Completed ###`` (yes/no) and the optional ``### Thought ###``."""
    sections = require_sections(text, ["Completed"], optional=("Thought",))
    answer = sections["Completed"].strip().strip("*`.").lower()
    if answer.startswith("yes"):
        return CheckReply(thought=sections["Thought"], completed=True)
    if answer.startswith("no"):
        return CheckReply(thought=sections["Thought"], completed=False)
    raise ReplyProblem(f"### Completed ### must be Yes or No, not {answer[:60]!r}")


def screen_changed(before: Image.Image, after: Image.Image) -> bool:
    """Whether two screenshots differ below the status bar (a few pixels of tolerance)."""
    if before.size != after.size:
        return True
    width, height = before.size
    box = (0, int(height * STATUS_BAR), width, height)
    diff = ImageChops.difference(before.convert("L").crop(box), after.convert("L").crop(box))
    histogram = diff.histogram()
    return sum(histogram[PIXEL_TOLERANCE + 1 :]) >= CHANGED_PIXELS


def _written(raw: str) -> str:
    """The first line of the Action section of an unusable reply (for the history)."""
    action = extract_sections(raw).get("action", "").strip()
    return (action.splitlines()[0][:200] if action else "") or invalid_text(raw)


@dataclass
class HistoryEntry:
    """One earlier step as the agent wrote it, and how it turned out."""

    observation: str
    thought: str
    action: str
    result: str = ""

    def text(self, number: int) -> str:
        lines = [f"Step {number}:", f"Observation: {self.observation}", f"Thought: {self.thought}"]
        lines.append(f"Action: {self.action}" + (f" ({self.result})" if self.result else ""))
        return "\n".join(lines)


@dataclass
class MobileAgentV1:
    """The single v1 agent with its own Observation / Thought / Action history."""

    name: str = "v1"
    stages: tuple[str, ...] = (AGENT, CHECK)
    history: list[HistoryEntry] = field(default_factory=list)
    unchanged: str | None = None
    tips: str = INITIAL_TIPS
    """The initial Tips, as in the Mobile-Agent-E paper's comparison (§4); they never change."""

    def history_text(self) -> str:
        return "\n\n".join(e.text(i) for i, e in enumerate(self.history, 1)) or "(no operations yet)"

    def decide(self, run: RunContext, screen: Screen) -> Decision:
        mapper, frame = screen.mapper(run.client, ROLE), screen.model_frame(run.client, ROLE)
        prompt = render_prompt(
            AGENT,
            {
                "instruction": run.memory.instruction,
                "frame": screen.frame(run.client, ROLE),
                "keyboard": keyboard_text(screen.perception),
                "perception": screen.describe(run.client, ROLE),
                "history": self.history_text(),
                "reflection": REFLECTION.format(action=self.unchanged) if self.unchanged else "",
                "operations": OPERATIONS,
                "tips": self.tips.strip() or "(none)",
            },
            run.prompts_dir,
        )
        chosen: dict[str, V1Action | OperatorDecision] = {}

        def parse(text: str) -> V1Reply:
            sections = require_sections(text, ["Action"], optional=("Observation", "Thought"))
            action = sections["Action"]
            mapped = parse_v1_action(action, screen, mapper.to_model)
            if mapped is not None:
                chosen["action"] = mapped
                observation, thought = sections["Observation"], sections["Thought"]
                return V1Reply(observation=observation, thought=thought, action=mapped.written)
            try:
                call, screen_call, steps = validate_action(action, shortcuts={}, screen=screen, mapper=mapper)
            except ReplyProblem as exc:
                raise ReplyProblem(
                    "write one operation as listed, e.g. Click text (Settings) or Open app (Notes), or an "
                    f"atomic operation as JSON ({exc.message})",
                    "action",
                ) from None
            decision = OperatorDecision.from_call(
                call,
                screen_call,
                steps,
                thought=sections["Thought"],
                description=sections["Thought"],
                frame=frame,
            )
            chosen["action"], written = decision, decision.text
            return V1Reply(
                observation=sections["Observation"],
                thought=sections["Thought"],
                action=written,
                shown=decision.shown,
            )

        image = [screen.encoded(run.client, ROLE)]
        result, _ = run.stage(
            AGENT, lambda: ask(run.client, ROLE, prompt, image, parse, agent=AGENT, on_turn=run.on_turn)
        )
        if result.value is None and result.problem_kind == "action":
            invalid = Invalid(_written(result.raw), result.problem or "invalid operation")
            sections = extract_sections(result.raw)
            entry = HistoryEntry(sections.get("observation", ""), sections.get("thought", ""), invalid.text)
            entry.result = f"invalid, not executed: {invalid.problem}"
            self.history.append(entry)
            return invalid
        reply = require(result, "Mobile-Agent v1")
        self.unchanged = None
        entry = HistoryEntry(reply.observation, reply.thought, reply.action)
        self.history.append(entry)
        picked = chosen["action"]
        if isinstance(picked, OperatorDecision):
            return picked
        if picked.is_stop:
            return self.check(run, screen, entry)
        assert picked.call is not None
        return OperatorDecision.from_call(
            picked.call,
            picked.call,
            picked.steps,
            thought=reply.thought,
            description=reply.thought,
            text=f"{picked.written} -> {picked.steps[0]}",
        )

    def check(self, run: RunContext, screen: Screen, entry: HistoryEntry) -> Decision:
        """Self-reflection on Stop: is the instruction really complete?"""
        prompt = render_prompt(
            CHECK,
            {
                "instruction": run.memory.instruction,
                "history": self.history_text(),
                "perception": screen.describe(run.client, ROLE),
            },
            run.prompts_dir,
        )
        image = [screen.encoded(run.client, ROLE)]
        result: AgentResult[CheckReply]
        result, _ = run.stage(
            CHECK, lambda: ask(run.client, ROLE, prompt, image, parse_check, agent=CHECK, on_turn=run.on_turn)
        )
        verdict = require(result, "Mobile-Agent v1 completion check")
        if verdict.completed:
            return Finish("Mobile-Agent v1 chose Stop and its completion check confirmed the task is done")
        entry.result = "not done yet: " + (verdict.thought or "the completion check found parts missing")
        return Invalid("Stop", "the completion check found the instruction unfinished: " + entry.result)

    def declined(self, record: ActionRecord) -> None:
        if self.history:
            self.history[-1].result = record.error or ""

    def judge(
        self, run: RunContext, record: ActionRecord, before: Screen, after: Screen, failure: str | None
    ) -> Screen | None:
        entry = self.history[-1] if self.history else None
        if failure:
            record.outcome, record.error = "C", failure
        elif not screen_changed(before.image, after.image):
            record.outcome, record.error = "C", "the screen did not change after this operation"
            self.unchanged = entry.action if entry else record.text
        else:
            record.outcome = "A"
        if entry is not None:
            entry.result = "done" if record.outcome == "A" else f"failed: {record.error}"
        memory = run.memory
        run.emit("outcome", outcome=record.outcome, progress=memory.progress, error_description=record.error)
        return None
