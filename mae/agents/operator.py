"""The Operator: low-level action decisions (paper §2.1, eq. 4).

Its reply names one atomic operation or Shortcut call as JSON. Parsing validates it completely
(known name, arguments, coordinates on screen, the Shortcut guard) so an invalid action goes back to
the model as a corrective turn instead of reaching the phone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import BaseModel, Field, PrivateAttr, computed_field

from mae.actions.reading import parse_action_text
from mae.actions.registry import (
    ActionCall,
    AtomicAction,
    Shortcut,
    describe_atomic_actions,
    resolve_call,
)
from mae.agents.base import AgentResult, Screen, TurnListener, ask
from mae.agents.manager import describe_shortcuts
from mae.agents.parsing import ReplyProblem, require_sections
from mae.agents.prompting import render_prompt
from mae.errors import ActionError
from mae.llm.client import ChatClient
from mae.llm.coordinates import (
    CoordinateMapper,
    describe_swipe_example,
    describe_tap_example,
    shown_action,
)
from mae.memory.working import ActionRecord, WorkingMemory
from mae.perception.elements import Perception

ROLE = "operator"

ShortcutGuard = Callable[[Shortcut, dict[str, Any], Perception, Image.Image], "str | None"]
"""``(shortcut, arguments in screen pixels, perception, screenshot) -> reason to refuse, or None``."""

_COORD = re.compile(r"^[xy]\d*$")


class OperatorDecision(BaseModel):
    """A validated action: as the model wrote it, and resolved to atomic operations in screen pixels."""

    thought: str = ""
    action: dict[str, Any]
    text: str
    description: str
    shortcut: str | None = None
    screen_action: dict[str, Any]
    atomic: list[str]
    written_atomic: list[str] = Field(
        default_factory=list,
        description="a Shortcut's atomic operations in the model's frame (for prompts); empty otherwise",
    )
    frame: str = Field(
        "", description="the frame the model wrote its points in, for people; empty when screen pixels"
    )
    _steps: list[AtomicAction] = PrivateAttr(default_factory=list)

    @property
    def screen_text(self) -> str:
        """The action in screen pixels, as people read it beside the phone and the annotated screenshot
        (the model's own text when it wrote screen pixels)."""
        return str(self.call) if self.frame else self.text

    @computed_field  # type: ignore[prop-decorator]
    @property
    def shown(self) -> str:
        """What the step card says: screen pixels, then what the model wrote when that differs."""
        return shown_action(self.screen_text, self.text, self.frame)

    @property
    def steps(self) -> list[AtomicAction]:
        """The atomic operations to run, coordinates in screen pixels."""
        return list(self._steps)

    def to_record(self, step: int, completed: int) -> ActionRecord:
        """The history entry of this action after ``completed`` of its atomic steps ran."""
        return ActionRecord(
            step=step,
            name=self.action["name"],
            arguments=self.action["arguments"],
            text=self.text,
            screen_text=self.screen_text if self.screen_text != self.text else None,
            frame=self.frame if self.screen_text != self.text else "",
            description=self.description,
            shortcut=self.shortcut,
            atomic_steps=self.atomic,
            written_steps=self.written_atomic,
            completed_steps=completed,
            executed=completed > 0,
        )

    @classmethod
    def from_call(
        cls,
        call: ActionCall,
        screen_call: ActionCall,
        steps: list[AtomicAction],
        *,
        thought: str = "",
        description: str = "",
        text: str | None = None,
        frame: str = "",
    ) -> OperatorDecision:
        """A decision from a validated call (as written, in screen pixels) and its atomic steps."""
        decision = cls(
            thought=thought,
            action={"name": call.name, "arguments": call.arguments},
            text=text or str(call),
            description=description,
            shortcut=None if call.is_atomic or call.is_done else call.name,
            screen_action={"name": screen_call.name, "arguments": screen_call.arguments},
            atomic=[str(s) for s in steps],
            frame=frame,
        )
        decision._steps = steps
        return decision

    @property
    def call(self) -> ActionCall:
        """The action in screen pixels (what the approver and the safety policy see)."""
        return ActionCall.model_validate(self.screen_action)


def _named_arguments(call: ActionCall, shortcuts: Mapping[str, Shortcut]) -> ActionCall:
    arguments = dict(call.arguments)
    positional = arguments.pop("__positional__", None)
    if positional is not None and call.name in shortcuts:
        names = shortcuts[call.name].arguments
        if len(positional) > len(names):
            raise ReplyProblem(f"{shortcuts[call.name].signature()} takes {len(names)} arguments", "action")
        arguments = {**dict(zip(names, positional, strict=False)), **arguments}
    return ActionCall(name=call.name, arguments=arguments)


def _coordinate_arguments(call: ActionCall, shortcuts: Mapping[str, Shortcut]) -> dict[str, str]:
    """Argument name -> axis ("x"/"y") for every argument of ``call`` that is a screen coordinate."""
    if call.is_atomic:
        return {name: name[0] for name in call.arguments if _COORD.match(name)}
    axes: dict[str, str] = {}
    shortcut = shortcuts.get(call.name)
    for step in shortcut.atomic_action_sequence if shortcut else []:
        for op_arg, value in step.arguments_map.items():
            if _COORD.match(op_arg) and isinstance(value, str) and value in call.arguments:
                axes[value] = op_arg[0]
    return axes


def to_screen(call: ActionCall, shortcuts: Mapping[str, Shortcut], mapper: CoordinateMapper) -> ActionCall:
    """``call`` with its coordinate arguments mapped from model-image pixels to screen pixels."""
    if mapper.is_identity:
        return call
    arguments = dict(call.arguments)
    for name, axis in _coordinate_arguments(call, shortcuts).items():
        value = arguments[name]
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value.strip())  # a quoted number is still a coordinate in image pixels
        if isinstance(value, int | float) and not isinstance(value, bool):
            point = mapper.to_screen(round(value), 0) if axis == "x" else mapper.to_screen(0, round(value))
            arguments[name] = point[0] if axis == "x" else point[1]
    return ActionCall(name=call.name, arguments=arguments)


def validate_action(
    section: str,
    *,
    shortcuts: Mapping[str, Shortcut],
    screen: Screen,
    mapper: CoordinateMapper,
    guard: ShortcutGuard | None = None,
    done: bool = False,
) -> tuple[ActionCall, ActionCall, list[AtomicAction]]:
    """Parse and check an action section: ``(call as written, call in screen pixels, atomic steps)``;
    ``done``: ``Done()`` is an answer here (the E Operator's; v1 and v2 do not offer it).

    Raises ``ReplyProblem(kind="action")`` with a message for the model.
    """
    try:
        call = _named_arguments(parse_action_text(section, shortcuts), shortcuts)
        if call.is_done and not done:
            raise ActionError("Done() is not one of the operations listed; choose one of them")
        resolve_call(call, shortcuts, screen=mapper.model_size)
        screen_call = to_screen(call, shortcuts, mapper)
        steps = resolve_call(screen_call, shortcuts, screen=screen.size)
    except ActionError as exc:
        hint = f"the screen is {mapper.model_size[0]}x{mapper.model_size[1]} pixels"
        raise ReplyProblem(f"invalid action: {exc} ({hint})", "action") from None
    if guard is not None and call.name in shortcuts and not call.is_atomic:
        reason = guard(shortcuts[call.name], dict(screen_call.arguments), screen.perception, screen.image)
        if reason:
            raise ReplyProblem(f"the Shortcut {call.name} cannot be used on this screen: {reason}", "action")
    return call, screen_call, steps


def history_text(memory: WorkingMemory, m: int) -> str:
    """The last ``m`` actions with their outcomes, oldest first."""
    actions = memory.recent_actions(m)
    return "\n".join(f"- Step {a.step}: {a.summary()}" for a in actions) or "(no actions yet)"


def errors_text(memory: WorkingMemory, m: int) -> str:
    """The last ``m`` errors, or a note that there are none."""
    errors = memory.recent_errors(m)
    if not errors:
        return "(no errors so far)"
    lines = "\n".join(f"- {e.summary()}" for e in errors)
    unresolved = memory.consecutive_failures()
    tail = (
        f"\nThe latest {unresolved} action(s) failed: fix the cause before moving on." if unresolved else ""
    )
    return lines + tail


def keyboard_text(perception: Perception) -> str:
    if perception.keyboard_active:
        return "The on-screen keyboard is shown, so you can type into the focused box."
    return "The on-screen keyboard is hidden: tap an input box before typing."


def build_prompt(
    client: ChatClient,
    memory: WorkingMemory,
    screen: Screen,
    tips: str,
    shortcuts: Mapping[str, Shortcut],
    history: int,
    prompts_dir: Path | None = None,
    max_repeats: int = 3,
) -> str:
    """The rendered Operator prompt (coordinates in the space its model answers in); ``max_repeats`` is
    the loop's repeated-action exit (the paper's 3), told to the model so that it never walks into it."""
    mapper = screen.mapper(client, ROLE)
    return render_prompt(
        "operator",
        {
            "instruction": memory.instruction,
            "plan": memory.plan or "(no plan)",
            "subgoal": memory.subgoal or "(no subgoal)",
            "progress": memory.progress or "(nothing yet)",
            "notes": memory.notes or "(none yet)",
            "history": history_text(memory, history),
            "errors": errors_text(memory, history),
            "tips": tips.strip() or "(none)",
            "atomic_actions": describe_atomic_actions(describe_swipe_example(mapper), done=True),
            "tap_x": describe_tap_example(mapper)[0],
            "tap_y": describe_tap_example(mapper)[1],
            "shortcuts": describe_shortcuts(shortcuts),
            "frame": screen.frame(client, ROLE),
            "perception": screen.describe(client, ROLE),
            "keyboard": keyboard_text(screen.perception),
            "max_repeats": max_repeats,
        },
        prompts_dir,
    )


def parse_reply(
    text: str,
    *,
    shortcuts: Mapping[str, Shortcut],
    screen: Screen,
    mapper: CoordinateMapper,
    guard: ShortcutGuard | None = None,
    frame: str = "",
) -> OperatorDecision:
    """Read ``### Thought ###``, ``### Action ###`` and ``### Description ###`` and validate the action;
    ``frame`` names the model's coordinate frame for people (``Screen.model_frame``)."""
    sections = require_sections(text, ["Action", "Description"], optional=("Thought",), every=("Action",))
    call, screen_call, steps = validate_action(
        sections["Action"], shortcuts=shortcuts, screen=screen, mapper=mapper, guard=guard, done=True
    )
    decision = OperatorDecision(
        thought=sections["Thought"],
        action={"name": call.name, "arguments": call.arguments},
        text=str(call),
        description=sections["Description"],
        shortcut=None if call.is_atomic or call.is_done else call.name,
        screen_action={"name": screen_call.name, "arguments": screen_call.arguments},
        atomic=[str(s) for s in steps],
        frame=frame,
    )
    if decision.shortcut:  # its expansion as the model wrote it: the frame every prompt states
        decision.written_atomic = [str(s) for s in resolve_call(call, shortcuts, screen=mapper.model_size)]
    decision._steps = steps
    return decision


def act(
    client: ChatClient,
    memory: WorkingMemory,
    screen: Screen,
    *,
    tips: str,
    shortcuts: Mapping[str, Shortcut],
    history: int = 5,
    max_repeats: int = 3,
    guard: ShortcutGuard | None = None,
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
) -> AgentResult[OperatorDecision]:
    """Ask the Operator for the next action and validate it (one corrective retry when unusable)."""
    mapper, frame = screen.mapper(client, ROLE), screen.model_frame(client, ROLE)

    def parse(text: str) -> OperatorDecision:
        return parse_reply(text, shortcuts=shortcuts, screen=screen, mapper=mapper, guard=guard, frame=frame)

    prompt = build_prompt(client, memory, screen, tips, shortcuts, history, prompts_dir, max_repeats)
    return ask(client, ROLE, prompt, [screen.encoded(client, ROLE)], parse, agent=ROLE, on_turn=on_turn)
