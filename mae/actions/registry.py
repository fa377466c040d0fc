"""The action space: the paper's nine atomic operations and Shortcuts, validated, and run on a Device.

One pydantic model per operation; ``ATOMIC_ACTIONS`` is the registry that yields both the prompt
text (``describe_atomic_actions``) and the validation (``make_atomic``); ``mae.actions.reading`` reads an
action from a model's reply. A ``Shortcut`` is data: a named sequence of atomic operations whose
arguments map to the Shortcut's own arguments or to literals.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mae.actions import reply_text
from mae.device.base import Device
from mae.errors import ActionError


class AtomicAction(BaseModel):
    """Base of the nine atomic operations (paper Table 8)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ClassVar[str]
    signature: ClassVar[str]
    doc: ClassVar[str]

    def arguments(self) -> dict[str, Any]:
        return self.model_dump()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments()}

    def __str__(self) -> str:
        args = ", ".join(json.dumps(v) if isinstance(v, str) else str(v) for v in self.arguments().values())
        return f"{self.name}({args})"

    def check_on_screen(self, width: int, height: int) -> None:
        """Raise ``ActionError`` if a coordinate lies outside a ``width`` x ``height`` screen."""
        for key, value in self.arguments().items():
            if key.startswith("x") and not 0 <= value < width:
                raise ActionError(f"{self}: {key}={value} is off screen (width {width})")
            if key.startswith("y") and not 0 <= value < height:
                raise ActionError(f"{self}: {key}={value} is off screen (height {height})")

    def execute(self, device: Device) -> None:
        raise NotImplementedError


class OpenApp(AtomicAction):
    name: ClassVar[str] = "Open_App"
    signature: ClassVar[str] = "Open_App(app_name)"
    doc: ClassVar[str] = (
        'Open the app named "app_name" (its launcher label, e.g. "Maps") from any screen; use this '
        "instead of looking for the app's icon."
    )
    app_name: str = Field(min_length=1)

    def execute(self, device: Device) -> None:
        device.open_app(self.app_name)


class Tap(AtomicAction):
    name: ClassVar[str] = "Tap"
    signature: ClassVar[str] = "Tap(x, y)"
    doc: ClassVar[str] = "Tap the position (x, y) in current screen."
    x: int
    y: int

    def execute(self, device: Device) -> None:
        device.tap(self.x, self.y)


class Swipe(AtomicAction):
    name: ClassVar[str] = "Swipe"
    signature: ClassVar[str] = "Swipe(x1, y1, x2, y2)"
    doc_template: ClassVar[str] = (
        "Swipe from position (x1, y1) to position (x2, y2). To scroll, change the y-coordinate by the "
        "distance to scroll: x1 = x2 = {x}, y1 = {y1}, y2 = {y2} swipes up to reveal the content below. "
        "In the App switcher, swipe left or right by at least {switch} pixels to move between open apps."
    )
    doc: ClassVar[str] = doc_template.format(x=540, y1=1500, y2=500, switch=500)
    x1: int
    y1: int
    x2: int
    y2: int

    def execute(self, device: Device) -> None:
        device.swipe(self.x1, self.y1, self.x2, self.y2)


class Type(AtomicAction):
    name: ClassVar[str] = "Type"
    signature: ClassVar[str] = "Type(text)"
    doc: ClassVar[str] = 'Type the "text" in an input box.'
    text: str

    def execute(self, device: Device) -> None:
        device.type_text(self.text)


class Enter(AtomicAction):
    name: ClassVar[str] = "Enter"
    signature: ClassVar[str] = "Enter()"
    doc: ClassVar[str] = "Press the Enter key after typing (useful for searching)."

    def execute(self, device: Device) -> None:
        device.enter()


class SwitchApp(AtomicAction):
    name: ClassVar[str] = "Switch_App"
    signature: ClassVar[str] = "Switch_App()"
    doc: ClassVar[str] = "Show the App switcher for switching between opened apps."

    def execute(self, device: Device) -> None:
        device.switch_app()


class Back(AtomicAction):
    name: ClassVar[str] = "Back"
    signature: ClassVar[str] = "Back()"
    doc: ClassVar[str] = "Return to the previous state."

    def execute(self, device: Device) -> None:
        device.back()


class Home(AtomicAction):
    name: ClassVar[str] = "Home"
    signature: ClassVar[str] = "Home()"
    doc: ClassVar[str] = "Return to home page."

    def execute(self, device: Device) -> None:
        device.home()


class Wait(AtomicAction):
    name: ClassVar[str] = "Wait"
    signature: ClassVar[str] = "Wait()"
    doc: ClassVar[str] = "Wait for 10 seconds to give more time for loading."
    seconds: float = Field(default=10.0, ge=0, le=60)

    def execute(self, device: Device) -> None:
        device.wait(self.seconds)


class Done(AtomicAction):
    """Not an operation on the phone: the Operator's word that the whole request is complete (issue 38:
    without it, a real model asked once more after the last step answered ``Wait``). The E agent then
    asks the Manager, which alone ends the task (paper: the Manager's "Finished")."""

    name: ClassVar[str] = "Done"
    signature: ClassVar[str] = "Done()"
    doc: ClassVar[str] = (
        "Every part of the user's request is complete and the screen shows what it asked to end on: say "
        "so instead of acting (nothing is done to the phone; the task ends when the Manager agrees)."
    )

    def execute(self, device: Device) -> None:
        """Nothing to do on the phone (a ``Done`` is never run: the agent ends the task or asks again)."""


ATOMIC_ACTIONS: dict[str, type[AtomicAction]] = {
    cls.name: cls for cls in (OpenApp, Tap, Swipe, Type, Enter, SwitchApp, Back, Home, Wait)
}
"""Registry of the atomic operations by their paper name."""

ACTIONS: dict[str, type[AtomicAction]] = {**ATOMIC_ACTIONS, Done.name: Done}
"""Every action name a reply may use: the atomic operations and the Operator's ``Done``."""

REPEAT_EXEMPT = frozenset({"Swipe", "Back"})
"""Operations the "same action more than 3 times" exit ignores (paper)."""


def describe_atomic_actions(
    swipe_example: tuple[int, int, int, int] | None = None, *, done: bool = False
) -> str:
    """The atomic operations as the paper lists them in the Operator prompt. ``swipe_example``
    (x, y1, y2, switcher distance) puts the Swipe example in the model's coordinate space
    (``mae.llm.coordinates.describe_swipe_example``); ``done`` adds ``Done()`` (the E Operator's)."""
    lines = []
    offered: list[type[AtomicAction]] = [*ATOMIC_ACTIONS.values(), *([Done] if done else [])]
    for cls in offered:
        doc = cls.doc
        if cls is Swipe and swipe_example is not None:
            x, y1, y2, switch = swipe_example
            doc = Swipe.doc_template.format(x=x, y1=y1, y2=y2, switch=switch)
        lines.append(f"- {cls.signature}: {doc}")
    return "\n".join(lines)


def atomic_argument_names(name: str) -> list[str]:
    """Argument names of an atomic operation (or ``Done``), in signature order."""
    return list(ACTIONS[name].model_fields)


def make_atomic(name: str, arguments: Mapping[str, Any] | None) -> AtomicAction:
    """Build a validated atomic operation; raise ``ActionError`` saying what is wrong."""
    cls = ACTIONS.get(name)
    if cls is None:
        raise ActionError(f"unknown action {name!r}; known: {', '.join(ATOMIC_ACTIONS)}")
    try:
        return cls.model_validate(_coerce_arguments(cls, dict(arguments or {})))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors()
        )
        raise ActionError(f"{cls.signature}: {problems}") from None


def _coerce_arguments(cls: type[AtomicAction], arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the operation takes them: numeric strings and floats become rounded integers;
    booleans, NaN/Infinity, overlong numbers and empty text or app names are refused (``ActionError``
    saying the exact fix)."""
    out = dict(arguments)
    for key, value in arguments.items():
        field = cls.model_fields.get(key)
        if field is None:
            continue
        wanted = field.annotation
        if wanted in (int, float):
            out[key] = _number(cls, key, value, integer=wanted is int)
        elif wanted is str:
            if not isinstance(value, str):
                if isinstance(value, bool) or value is None or not isinstance(value, int | float):
                    raise ActionError(f'{cls.signature}: {key} must be text in quotes, e.g. "Notes"')
                value = str(value)
            if not value.strip():
                what = "the app's name" if key == "app_name" else "the text to type"
                raise ActionError(f"{cls.signature}: {key} is empty; write {what} in quotes")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ActionError(
                    f"{cls.signature}: {key} contains a broken character (an unpaired surrogate); write "
                    "plain text"
                ) from None
            control = next((c for c in value if (ord(c) < 32 and c not in "\n\r\t") or ord(c) == 127), None)
            if control is not None:
                raise ActionError(
                    f"{cls.signature}: {key} contains the control character {control!r}, which cannot be "
                    "typed; write plain text (a line break is Enter)"
                )
            out[key] = value.strip() if key == "app_name" else value
    return out


def _number(cls: type[AtomicAction], key: str, value: Any, *, integer: bool) -> int | float:
    example = f"{cls.signature} with {key} a plain number such as 540"
    if isinstance(value, bool) or value is None or isinstance(value, list | dict):
        shown = json.dumps(value)[:40]
        raise ActionError(f"{cls.signature}: {key} must be a number, not {shown}; write {example}")
    if isinstance(value, str):
        text = value.strip()
        digits = text.lstrip("+-")
        too_long = len(digits) > reply_text.MAX_NUMBER_DIGITS
        if not digits or too_long or not digits.replace(".", "", 1).isdigit():
            raise ActionError(f"{cls.signature}: {key} must be a number, not {value[:40]!r}; write {example}")
        value = float(text)
    if isinstance(value, float) and not math.isfinite(value):
        raise ActionError(f"{cls.signature}: {key} must be a finite number (not NaN or Infinity)")
    if not isinstance(value, int | float):
        raise ActionError(f"{cls.signature}: {key} must be a number; write {example}")
    if abs(value) > 10**9:
        raise ActionError(f"{cls.signature}: {key}={value} is far outside any screen")
    if integer and 0 < abs(value) < 1:
        raise ActionError(
            f"{cls.signature}: {key}={value} looks like a fraction of the screen; coordinates are pixels "
            f"of the screenshot, such as 540"
        )
    if integer:
        return round(value)
    return float(value)


# --------------------------------------------------------------------------------------------------
# Shortcuts


class ShortcutStep(BaseModel):
    """One atomic operation of a Shortcut; each op argument maps to a Shortcut argument or a literal."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments_map: dict[str, Any] = Field(default_factory=dict)


class Shortcut(BaseModel):
    """A reusable sequence of atomic operations (paper §2.2, Figure 12)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    arguments: list[str] = Field(default_factory=list)
    description: str = ""
    precondition: str = ""
    atomic_action_sequence: list[ShortcutStep] = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", value):
            raise ValueError("a Shortcut name is letters, digits and underscores, starting with a letter")
        if value in ACTIONS:
            raise ValueError(f"{value!r} is an atomic operation")
        return value

    def problems(self) -> list[str]:
        """Everything that makes this Shortcut unusable: unknown ops, unmapped or unknown arguments."""
        found: list[str] = []
        if len(set(self.arguments)) != len(self.arguments):
            found.append("duplicate argument names")
        declared = set(self.arguments)
        used: set[str] = set()
        for index, step in enumerate(self.atomic_action_sequence, 1):
            cls = ATOMIC_ACTIONS.get(step.name)
            if cls is None:
                found.append(f"step {index}: unknown operation {step.name!r}")
                continue
            fields = cls.model_fields
            for op_arg in step.arguments_map:
                if op_arg not in fields:
                    found.append(f"step {index}: {step.name} has no argument {op_arg!r}")
            for op_arg, field in fields.items():
                if op_arg not in step.arguments_map:
                    if field.is_required():
                        found.append(f"step {index}: {step.name} argument {op_arg!r} is not mapped")
                    continue
                value = step.arguments_map[op_arg]
                if isinstance(value, str) and value in declared:
                    used.add(value)
                    continue
                if not _literal_fits(cls, op_arg, value):
                    found.append(
                        f"step {index}: {step.name}.{op_arg} = {value!r} is neither a Shortcut argument "
                        f"({', '.join(self.arguments) or 'none declared'}) nor a valid literal"
                    )
        for unused in declared - used:
            found.append(f"argument {unused!r} is never used")
        return found

    def validate_usable(self) -> None:
        """Raise ``ActionError`` listing every problem, if any."""
        found = self.problems()
        if found:
            raise ActionError(f"Shortcut {self.name}: " + "; ".join(found))

    def expand(self, arguments: Mapping[str, Any]) -> list[AtomicAction]:
        """The concrete atomic operations for a call with ``arguments``."""
        self.validate_usable()
        missing = [a for a in self.arguments if a not in arguments]
        extra = [a for a in arguments if a not in self.arguments]
        if missing or extra:
            raise ActionError(
                f"{self.signature()}: "
                + "; ".join(
                    ([f"missing {', '.join(missing)}"] if missing else [])
                    + ([f"unexpected {', '.join(extra)}"] if extra else [])
                )
            )
        steps: list[AtomicAction] = []
        for step in self.atomic_action_sequence:
            concrete = {
                op_arg: arguments[value] if isinstance(value, str) and value in self.arguments else value
                for op_arg, value in step.arguments_map.items()
            }
            steps.append(make_atomic(step.name, concrete))
        return steps

    def signature(self) -> str:
        return f"{self.name}({', '.join(self.arguments)})"

    def describe(self) -> str:
        """Prompt text: signature, description and precondition."""
        text = f"- {self.signature()}: {self.description}"
        if self.precondition:
            text += f" | Precondition: {self.precondition}"
        return text


def _literal_fits(cls: type[AtomicAction], op_arg: str, value: Any) -> bool:
    try:
        field_type = cls.model_fields[op_arg].annotation
        if field_type is int:
            if isinstance(value, str):  # the paper's Shortcuts quote literal coordinates: "929"
                return re.fullmatch(r"\s*-?\d+\s*", value) is not None
            return isinstance(value, int) and not isinstance(value, bool)
        if field_type is float:
            return isinstance(value, int | float) and not isinstance(value, bool)
        if field_type is str:
            return isinstance(value, str)
    except KeyError:
        return False
    return False


INITIAL_SHORTCUTS: dict[str, Shortcut] = {
    "Tap_Type_and_Enter": Shortcut(
        name="Tap_Type_and_Enter",
        arguments=["x", "y", "text"],
        description=(
            'Tap an input box at position (x, y), Type the "text", and then perform the Enter operation. '
            "Very useful for searching and sending messages!"
        ),
        precondition="There is a text input box on the screen with no previously entered content.",
        atomic_action_sequence=[
            ShortcutStep(name="Tap", arguments_map={"x": "x", "y": "y"}),
            ShortcutStep(name="Type", arguments_map={"text": "text"}),
            ShortcutStep(name="Enter", arguments_map={}),
        ],
    )
}
"""The paper's initial Shortcut."""


# --------------------------------------------------------------------------------------------------
# An action as the model chose it (read from its reply by ``mae.actions.reading``)


class ActionCall(BaseModel):
    """A parsed action: an atomic operation or a Shortcut call, not yet executed."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)

    def __str__(self) -> str:
        args = ", ".join(json.dumps(v) if isinstance(v, str) else str(v) for v in self.arguments.values())
        return f"{self.name}({args})"

    @property
    def is_atomic(self) -> bool:
        return self.name in ATOMIC_ACTIONS

    @property
    def is_done(self) -> bool:
        """The Operator's ``Done()``: the request is complete (nothing to run)."""
        return self.name == Done.name


def resolve_call(
    call: ActionCall, shortcuts: Mapping[str, Shortcut], screen: tuple[int, int] | None = None
) -> list[AtomicAction]:
    """Turn a parsed call into the atomic operations it stands for, validating everything.

    Raises ``ActionError`` (unknown action, missing arguments, coordinates off screen).
    """
    if call.is_atomic or call.is_done:
        steps = [make_atomic(call.name, call.arguments)]
    elif call.name in shortcuts:
        shortcut = shortcuts[call.name]
        arguments = dict(call.arguments)
        positional = arguments.pop("__positional__", None)
        if positional is not None:
            arguments = {**dict(zip(shortcut.arguments, positional, strict=False)), **arguments}
        steps = shortcut.expand(arguments)
    else:
        known = [*ATOMIC_ACTIONS, *shortcuts]
        raise ActionError(f"unknown action {call.name!r}; use one of: {', '.join(known)}")
    if screen is not None:
        for step in steps:
            step.check_on_screen(*screen)
    return steps


StepCallback = Callable[[int, AtomicAction], None]


def run_steps(device: Device, steps: list[AtomicAction], after_each: StepCallback | None = None) -> None:
    """Execute ``steps`` in order, settling after each; stop at the first failure.

    ``after_each(index, step)`` runs after every completed step (e.g. to take a screenshot). A failing
    step raises ``ActionError`` naming which step (1-based) failed.
    """
    for index, step in enumerate(steps, 1):
        try:
            step.execute(device)
        except ActionError as exc:
            if len(steps) == 1:
                raise
            raise ActionError(f"step {index} of {len(steps)} ({step}) failed: {exc}") from exc
        device.settle()
        if after_each is not None:
            after_each(index, step)
