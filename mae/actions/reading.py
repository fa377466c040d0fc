"""Reading the action a model wrote: a JSON object or a call, in the ways real models write them.

The paper's format is ``{"name": "Tap", "arguments": {"x": 540, "y": 1200}}``; also read are calls
(``Tap(540, 1200)``, ``Open_App(Google Maps)``), names in any case or separator style, the names other
agents give the operations (``ACTION_ALIASES``) and their argument names. Exactly one action is taken
from a reply: ``parse_action_text`` says how a JSON action, a call that begins a line and a call
mentioned in prose rank, and refuses two different actions. Reading is linear in the text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Any

from mae.actions import reply_text
from mae.actions.registry import ACTIONS, ActionCall, OpenApp, atomic_argument_names, make_atomic
from mae.errors import ActionError

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
    for known in (*ACTIONS, *shortcuts):
        if _name_key(known) == key:
            return known
    return ACTION_ALIASES.get(key, name.strip())


_COORDINATE_KEY = re.compile(r"^[xy]\d*$")
_PIXELS = re.compile(r"^\s*([+-]?\d{1,12}(?:\.\d{1,6})?)\s*(?:px|pixels?)\s*$", re.I)
"""A coordinate written with its unit (``"540px"``, ``"540 px"``): the number is the coordinate."""


def _without_unit(key: str, value: Any) -> Any:
    """``value`` as a number when ``key`` is a coordinate written with a pixel unit, else as given."""
    if not isinstance(value, str) or not _COORDINATE_KEY.match(key):
        return value
    match = _PIXELS.match(value)
    if match is None:
        return value
    number = float(match.group(1))
    return int(number) if number.is_integer() else number


def canonical_arguments(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` of the operation ``name`` with ``ARGUMENT_ALIASES`` renamed, a tap's point list
    (``{"coordinate": [540, 1200]}``) split into ``x`` and ``y`` and a pixel unit after a coordinate
    (``"540px"``) dropped; anything else as given."""
    aliases = ARGUMENT_ALIASES.get(name, {})
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        target = aliases.get(key, key)
        value = _without_unit(target, value)
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
            arguments = reply_text.load_json(arguments, "the action's arguments")  # OpenAI tool-call style
        arguments = arguments or {}
        if isinstance(arguments, list) and all(not isinstance(v, dict) for v in arguments):
            # "arguments": [540, 1200]: in the operation's order, as a call writes them
            return _positional_call(canonical_action_name(data[name_key], shortcuts), arguments, {})
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

    def add(
        self,
        read: ActionCall | str,
        known: tuple[str, ...],
        *,
        is_json: bool = False,
        begins_line: bool = False,
    ) -> None:
        """File one piece read from the text (an action, or why it could not be read)."""
        if isinstance(read, str):
            self.problems.append(read)
        elif read.name not in known:
            self.unknown.append(read)
        elif is_json:
            problem = _invalid(read)  # e.g. a description of the element, not the action
            if problem is None:
                self.json.setdefault(_sameness(read), read)
            else:
                self.problems.append(problem)
        elif begins_line:
            self.statements.setdefault(_sameness(read), read)
        else:
            self.mentions.append(read)

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
    body = _FENCE_MARK.sub(" ", reply_text.normalize_reply(text)).strip()
    names = (*ACTIONS, *shortcuts)
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
            found.add(read, names, is_json=True)
        else:
            assert call is not None
            read, position = _call_candidate(body, call, shortcuts)
            line_start = body.rfind("\n", 0, call[2]) + 1
            found.add(
                read, names, begins_line=_STATEMENT_PREFIX.fullmatch(body, line_start, call[2]) is not None
            )
        if position < 0 or len(found.json) > 1:
            break  # something never closes (the rest is its inside), or two JSON actions: enough read
    return found.pick()


def _invalid(call: ActionCall) -> str | None:
    """Why a JSON action's arguments do not fit its operation (None when they do, or for a Shortcut,
    whose arguments are checked when it is resolved)."""
    if call.name not in ACTIONS:
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
    end = reply_text.balanced_span(body, brace)
    if end is None:
        return "the action is not valid JSON (a { is never closed)", -1
    try:
        data = reply_text.load_json(body[brace:end], "the action JSON")
        return _call_from_json(data, shortcuts), end
    except reply_text.ReplyProblem as exc:
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
    end = reply_text.balanced_span(body, paren)
    inner = body[paren + 1 : (end - 1) if end is not None else len(body)].strip()
    if end is None:
        inner = inner.rstrip(")").strip()
    going_on = end if end is not None else -1
    try:
        return _call_from_arguments(name, inner), going_on
    except ActionError as exc:
        return str(exc), going_on


_BARE_TEXT = {OpenApp.name: "app_name", "Type": "text"}
"""Operations whose one argument is text a model may write unquoted."""
_PIXEL_UNITS = re.compile(r"(?<=\d) ?(?:px|pixels?)\b", re.I)


def _bare_text_call(name: str, inner: str) -> ActionCall | None:
    """``name(inner)`` with unquoted text as its one text argument: the paper writes
    ``Open_App(Google Maps)``, models write ``Type(hello world)`` and ``Type(text=hello)``. None when
    it is not that: no text, other keyword arguments, a stray quote, or the argument's own name
    (``Type(text)`` copies the signature, it does not say what to type)."""
    key = _BARE_TEXT.get(name)
    if key is None:
        return None
    named = re.match(rf"{key}\s*=\s*", inner)
    text = inner[named.end() :].strip() if named else inner
    if not text or "=" in (text if named else inner) or text[0] in "'\"" or text[-1] in "'\"":
        return None
    if text.lower() == key.replace("_", " ") or text.lower() == key:
        return None
    return ActionCall(name=name, arguments={key: text})


def _call_from_arguments(name: str, inner: str) -> ActionCall:
    """``name(inner)`` as a call; ``ActionError`` when its arguments cannot be read."""
    if name in ("Tap", "Swipe"):
        inner = _PIXEL_UNITS.sub("", inner)  # Tap(540px, 1200px): only numbers there
    try:
        positional, keywords = reply_text.parse_call_arguments(inner)
    except reply_text.ReplyProblem as exc:
        raise ActionError(exc.message) from None
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        bare = _bare_text_call(name, inner)
        if bare is not None:
            return bare
        if name in ACTIONS and not atomic_argument_names(name) and inner[:1].isalpha():
            return ActionCall(name=name)  # Back (to close the pop-up): a remark, not arguments
        raise ActionError(f"cannot read the arguments of {name}(...): {inner[:80]!r}") from None
    return _positional_call(name, positional, keywords)


def _positional_call(name: str, positional: list[Any], keywords: dict[str, Any]) -> ActionCall:
    """``name`` called with ``positional`` arguments in the operation's order, then ``keywords``."""
    if positional:
        names = atomic_argument_names(name) if name in ACTIONS else []
        if name in ("Tap", "Swipe") and len(positional) == 1 and isinstance(positional[0], list):
            positional = list(positional[0])  # Tap([540, 1200])
        if name == "Swipe" and len(positional) == 2 and all(isinstance(p, list) for p in positional):
            positional = [*positional[0], *positional[1]]  # Swipe([x1, y1], [x2, y2])
        if len(positional) > len(names):
            if name in ACTIONS:
                raise ActionError(f"{ACTIONS[name].signature} takes {len(names)} arguments")
            return ActionCall(name=name, arguments={"__positional__": positional, **keywords})
        keywords = {**dict(zip(names, positional, strict=False)), **keywords}
    return ActionCall(name=name, arguments=canonical_arguments(name, keywords))
