"""The action space: the paper's nine atomic operations and Shortcuts, validated, and run on a Device.

One pydantic model per operation; ``ATOMIC_ACTIONS`` is the registry that yields both the prompt
text (``describe_atomic_actions``) and the parser (``parse_action``). A ``Shortcut`` is data: a named
sequence of atomic operations whose arguments map to the Shortcut's own arguments or to literals.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mae.agents import parsing
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


ATOMIC_ACTIONS: dict[str, type[AtomicAction]] = {
    cls.name: cls for cls in (OpenApp, Tap, Swipe, Type, Enter, SwitchApp, Back, Home, Wait)
}
"""Registry of the atomic operations by their paper name."""

REPEAT_EXEMPT = frozenset({"Swipe", "Back"})
"""Operations the "same action more than 3 times" exit ignores (paper)."""


def describe_atomic_actions(swipe_example: tuple[int, int, int, int] | None = None) -> str:
    """The atomic operations as the paper lists them in the Operator prompt. ``swipe_example``
    (x, y1, y2, switcher distance) puts the Swipe example in the model's coordinate space
    (``mae.llm.coordinates.describe_swipe_example``)."""
    lines = []
    for cls in ATOMIC_ACTIONS.values():
        doc = cls.doc
        if cls is Swipe and swipe_example is not None:
            x, y1, y2, switch = swipe_example
            doc = Swipe.doc_template.format(x=x, y1=y1, y2=y2, switch=switch)
        lines.append(f"- {cls.signature}: {doc}")
    return "\n".join(lines)


def atomic_argument_names(name: str) -> list[str]:
    """Argument names of an atomic operation, in signature order."""
    return list(ATOMIC_ACTIONS[name].model_fields)


def make_atomic(name: str, arguments: Mapping[str, Any] | None) -> AtomicAction:
    """Build a validated atomic operation; raise ``ActionError`` saying what is wrong."""
    cls = ATOMIC_ACTIONS.get(name)
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
        if not digits or len(digits) > parsing.MAX_NUMBER_DIGITS or not digits.replace(".", "", 1).isdigit():
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
        if value in ATOMIC_ACTIONS:
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
# Parsing an action the model wrote


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


ACTION_ALIASES: dict[str, str] = {
    **dict.fromkeys(("click", "clickon", "tapon"), "Tap"),
    **dict.fromkeys(("typetext", "inputtext", "entertext", "settext"), "Type"),
    **dict.fromkeys(("pressenter", "keyboardenter"), "Enter"),
    **dict.fromkeys(("pressback", "goback", "navigateback"), "Back"),
    **dict.fromkeys(("presshome", "gohome", "navigatehome"), "Home"),
    **dict.fromkeys(("open", "launch", "launchapp", "startapp"), "Open_App"),
    **dict.fromkeys(("recentapps", "appswitch", "switchapps"), "Switch_App"),
    "sleep": "Wait",
}
"""Names other agents' formats give the operations (GUI-agent papers, AndroidWorld's ``action_type``,
computer-use tools), by their lower-case letters and digits."""

ARGUMENT_ALIASES: dict[str, dict[str, str]] = {
    "Type": {"content": "text", "value": "text", "text_input": "text"},
    "Open_App": {"app": "app_name", "app_label": "app_name"},
    "Wait": {"duration": "seconds", "time": "seconds"},
}
"""Other names of an operation's arguments."""
POINT_KEYS = ("coordinate", "coordinates", "point", "position", "location")
"""Keys that hold a tap's ``[x, y]`` as one list."""


def canonical_action_name(name: str, shortcuts: Iterable[str] = ()) -> str:
    """``name`` mapped to the registry (or a Shortcut) ignoring case, ``_``, ``-`` and spaces, then to
    ``ACTION_ALIASES``.

    ``tap`` -> ``Tap``, ``open_app``/``OpenApp`` -> ``Open_App``, ``click`` -> ``Tap``; an unknown name
    comes back as written.
    """
    key = _name_key(name)
    for known in (*ATOMIC_ACTIONS, *shortcuts):
        if _name_key(known) == key:
            return known
    return ACTION_ALIASES.get(key, name.strip())


def canonical_arguments(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` of the operation ``name`` with ``ARGUMENT_ALIASES`` renamed and a tap's point
    list (``{"coordinate": [540, 1200]}``) split into ``x`` and ``y``; anything else as given."""
    aliases = ARGUMENT_ALIASES.get(name, {})
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        target = aliases.get(key, key)
        out[key if target in arguments else target] = value  # a name given both ways: both kept, refused
    if name == "Tap" and "x" not in out and "y" not in out:
        for key in POINT_KEYS:
            point = out.get(key)
            if isinstance(point, list) and len(point) == 2:
                del out[key]
                out["x"], out["y"] = point
                break
    return out


def _name_key(name: str) -> str:
    return "".join(char for char in name.lower() if char.isalnum())


_NAME_KEYS = ("name", "action", "action_name", "action_type", "function", "type", "tool")
_ARGUMENT_KEYS = ("arguments", "args", "parameters", "params", "input")


def _call_from_json(data: Any, shortcuts: Iterable[str]) -> ActionCall:
    if not isinstance(data, dict):
        raise ActionError('the action JSON needs a "name" string and an "arguments" object')
    name_key = next((k for k in _NAME_KEYS if isinstance(data.get(k), str) and data.get(k)), None)
    if name_key is None:
        raise ActionError('the action JSON needs a "name" string and an "arguments" object')
    argument_key = next((k for k in _ARGUMENT_KEYS if k in data), None)
    if argument_key is not None:
        arguments = data[argument_key]
        if isinstance(arguments, str) and arguments.strip().startswith("{"):
            arguments = parsing.load_json(arguments, "the action's arguments")  # OpenAI tool-call style
        arguments = arguments or {}
        if not isinstance(arguments, dict):
            raise ActionError('"arguments" must be a JSON object mapping argument names to values')
    else:
        arguments = {k: v for k, v in data.items() if k != name_key}
    name = canonical_action_name(data[name_key], shortcuts)
    return ActionCall(name=name, arguments=canonical_arguments(name, arguments))


_CALL_START = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z][A-Za-z0-9_]*) {0,3}\(")
_FENCE_MARK = re.compile(r"^[ \t]*```[A-Za-z0-9_+-]*|```[ \t]*$", re.M)
MAX_ACTION_CANDIDATES = 32
"""Most JSON objects and calls looked at in one action text (the reading stays linear in its length)."""

_STATEMENT_PREFIX = re.compile(r"[\s\-*•>`'\"]*(?:\d{1,3}[.)]\s*)?")
"""What may stand before a call that begins its line (indentation, a bullet, a list number)."""


@dataclasses.dataclass
class _Candidates:
    """What an action text holds, by how surely each piece is the action."""

    json: dict[tuple[Any, ...], ActionCall] = dataclasses.field(default_factory=dict)
    """JSON objects naming a known action with valid arguments: the format the prompt asks for."""
    statements: dict[tuple[Any, ...], ActionCall] = dataclasses.field(default_factory=dict)
    """Calls of known actions that begin a line."""
    mentions: list[ActionCall] = dataclasses.field(default_factory=list)
    """Calls of known actions inside a line of prose, in order."""
    unknown: list[ActionCall] = dataclasses.field(default_factory=list)
    """Names that are no known action (they get their own message)."""
    problems: list[str] = dataclasses.field(default_factory=list)
    """Why the pieces that could not be read could not be, in order."""

    def pick(self) -> ActionCall:
        for group in (self.json, self.statements):
            if len(group) > 1:
                first, second = list(group.values())[:2]
                raise ActionError(
                    f"the action holds more than one action ({first} and {second}); write exactly one "
                    "action for this step (the next step can do the other)"
                )
            if group:
                return next(iter(group.values()))
        if self.mentions or self.unknown:
            return (self.mentions or self.unknown)[0]
        if self.problems:
            raise ActionError(self.problems[0])
        raise ActionError('write the action as JSON: {"name": "Tap", "arguments": {"x": 540, "y": 1200}}')


def parse_action_text(text: str, shortcuts: Iterable[str] = ()) -> ActionCall:
    """Read the one action in ``text``: a JSON object (paper format ``{"name": ..., "arguments": {...}}``)
    or a call like ``Tap(540, 1200)``, with prose and code fences around it ignored.

    Every JSON object and every call of a known action in ``text`` is read. A JSON action decides over
    calls; without one, a call that begins a line decides over calls mentioned inside prose (``If this
    fails, I will use Back() next``), and without either, the first call mentioned. Two different JSON
    actions, or two different calls that each begin a line (``Tap(540, 300)`` then ``Type("pizza")``),
    are refused, never one of them picked; the same action written twice is one. Names are matched to
    the registry (and ``shortcuts``) ignoring case and separators. Raises ``ActionError`` with a message
    fit to send back to the model.
    """
    body = _FENCE_MARK.sub(" ", parsing.normalize_reply(text)).strip()
    names = (*ATOMIC_ACTIONS, *shortcuts)
    keys = {_name_key(n) for n in names} | set(ACTION_ALIASES)
    found = _Candidates()
    position = 0
    call = _next_call(body, 0, keys)
    for _ in range(MAX_ACTION_CANDIDATES):
        brace = body.find("{", position)
        if call is not None and call[2] < position:
            call = _next_call(body, position, keys)  # searched again only once passed: linear overall
        if brace < 0 and call is None:
            break
        if brace >= 0 and (call is None or brace < call[1]):
            read, position = _json_candidate(body, brace, shortcuts)
            if isinstance(read, ActionCall) and read.name in names:
                problem = _invalid(read)
                if problem is None:
                    found.json.setdefault(_sameness(read), read)
                else:
                    found.problems.append(problem)  # e.g. a description of the element: not the action
                continue_reading = len(found.json) < 2
            else:
                continue_reading = True
        else:
            assert call is not None
            read, position = _call_candidate(body, call, shortcuts)
            if isinstance(read, ActionCall) and read.name in names:
                line_start = body.rfind("\n", 0, call[2]) + 1
                if _STATEMENT_PREFIX.fullmatch(body, line_start, call[2]):
                    found.statements.setdefault(_sameness(read), read)
                else:
                    found.mentions.append(read)
            continue_reading = True
        if isinstance(read, ActionCall) and read.name not in names:
            found.unknown.append(read)
        elif isinstance(read, str):
            found.problems.append(read)
        if position < 0 or not continue_reading:
            break  # something never closes (the rest is its inside), or two JSON actions: enough read
    return found.pick()


def _invalid(call: ActionCall) -> str | None:
    """Why a JSON action's arguments do not fit its operation (None when they do, or for a Shortcut,
    whose arguments are checked when it is resolved)."""
    if call.name not in ATOMIC_ACTIONS:
        return None
    try:
        make_atomic(call.name, call.arguments)
    except ActionError as exc:
        return str(exc)
    return None


def _sameness(call: ActionCall) -> tuple[Any, ...]:
    """What two ways of writing one action share (``"540"`` and ``540``, ``"Maps"`` and ``"maps"``)."""

    def plain(value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip().lower()
            try:
                return float(text)
            except ValueError:
                return text
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, list):
            return tuple(plain(v) for v in value)
        return repr(value)

    return call.name, tuple(sorted((key, plain(value)) for key, value in call.arguments.items()))


def _next_call(body: str, position: int, keys: set[str]) -> tuple[str, int, int] | None:
    """``(name, index of its opening parenthesis, index of the name)`` of the next call of a known
    action from ``position``, or of a call at the very start of ``body`` (so an unknown name gets its
    own message)."""
    for match in _CALL_START.finditer(body, position):
        if _name_key(match.group(1)) in keys or match.start() == 0:
            return match.group(1), match.end() - 1, match.start()
    return None


def _json_candidate(body: str, brace: int, shortcuts: Iterable[str]) -> tuple[ActionCall | str, int]:
    """The action in the JSON object at ``brace`` (or why not), and where reading goes on (-1: never
    closes)."""
    end = parsing.balanced_span(body, brace)
    if end is None:
        return "the action is not valid JSON (a { is never closed)", -1
    try:
        data = parsing.load_json(body[brace:end], "the action JSON")
        return _call_from_json(data, shortcuts), end
    except parsing.ReplyProblem as exc:
        return exc.message, end
    except ActionError as exc:
        return str(exc), end


def _call_candidate(
    body: str, call: tuple[str, int, int], shortcuts: Iterable[str]
) -> tuple[ActionCall | str, int]:
    """The action written as the call ``call`` (or why not), and where reading goes on (-1: the call
    never closes, the rest of ``body`` is its arguments)."""
    written, paren, _ = call
    name = canonical_action_name(written, shortcuts)
    end = parsing.balanced_span(body, paren)
    inner = body[paren + 1 : (end - 1) if end is not None else len(body)].strip()
    if end is None:
        inner = inner.rstrip(")").strip()
    going_on = end if end is not None else -1
    try:
        return _call_from_arguments(name, inner), going_on
    except ActionError as exc:
        return str(exc), going_on


def _call_from_arguments(name: str, inner: str) -> ActionCall:
    """``name(inner)`` as a call; ``ActionError`` when its arguments cannot be read."""
    try:
        positional, keywords = parsing.parse_call_arguments(inner)
    except parsing.ReplyProblem as exc:
        raise ActionError(exc.message) from None
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        if name == OpenApp.name and inner and inner[0] not in "'\"=" and "=" not in inner:
            # the paper writes the app name bare: Open_App(Notes), Open_App(Google Maps)
            return ActionCall(name=name, arguments={"app_name": inner})
        if name in ATOMIC_ACTIONS and not atomic_argument_names(name) and inner[:1].isalpha():
            return ActionCall(name=name)  # Back (to close the pop-up): a remark, not arguments
        raise ActionError(f"cannot read the arguments of {name}(...): {inner[:80]!r}") from None
    if positional:
        names = atomic_argument_names(name) if name in ATOMIC_ACTIONS else []
        if name in ("Tap", "Swipe") and len(positional) == 1 and isinstance(positional[0], list):
            positional = list(positional[0])  # Tap([540, 1200])
        if name == "Swipe" and len(positional) == 2 and all(isinstance(p, list) for p in positional):
            positional = [*positional[0], *positional[1]]  # Swipe([x1, y1], [x2, y2])
        if len(positional) > len(names):
            if name in ATOMIC_ACTIONS:
                raise ActionError(f"{ATOMIC_ACTIONS[name].signature} takes {len(names)} arguments")
            return ActionCall(name=name, arguments={"__positional__": positional, **keywords})
        keywords = {**dict(zip(names, positional, strict=False)), **keywords}
    return ActionCall(name=name, arguments=canonical_arguments(name, keywords))


def resolve_call(
    call: ActionCall, shortcuts: Mapping[str, Shortcut], screen: tuple[int, int] | None = None
) -> list[AtomicAction]:
    """Turn a parsed call into the atomic operations it stands for, validating everything.

    Raises ``ActionError`` (unknown action, missing arguments, coordinates off screen).
    """
    if call.is_atomic:
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
