"""Reading text a model wrote, below every agent: the reply problem, normalising a reply, and
JSON and call arguments embedded in it, in linear time.

The action layer (``mae.actions.registry``, ``mae.actions.reading``) and the agents' reply reader
(``mae.agents.parsing``, which re-exports these names) both read with these helpers, so the action
layer never imports from the agents above it.
"""

from __future__ import annotations

import ast
import json
import logging
import math
from typing import Any, Literal

log = logging.getLogger(__name__)

ProblemKind = Literal["format", "action"]

MAX_REPLY_CHARS = 64 * 1024
"""Replies longer than this are cut here (with a warning) before they are read."""
MAX_NESTING = 32
"""Deepest bracket nesting accepted in embedded JSON or a call's arguments."""
MAX_NUMBER_DIGITS = 12
"""Longest digit run read as a number (longer ones are refused, never handed to ``int``)."""

_ZERO_WIDTH = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060\u00ad"), None)


class ReplyProblem(Exception):
    """A reply the model must fix: ``kind`` is ``format`` (sections) or ``action`` (invalid action)."""

    def __init__(self, message: str, kind: ProblemKind = "format") -> None:
        super().__init__(message)
        self.message = message
        self.kind: ProblemKind = kind


# --------------------------------------------------------------------------------------------------
# Normalising the whole reply


def normalize_reply(text: str) -> str:
    """``text`` with ``\\n`` line endings, no BOM or zero-width characters, cut to ``MAX_REPLY_CHARS``."""
    if len(text) > MAX_REPLY_CHARS:
        log.warning("a model reply of %d characters was cut to %d before reading", len(text), MAX_REPLY_CHARS)
        text = text[:MAX_REPLY_CHARS]
    return text.replace("\r\n", "\n").replace("\r", "\n").translate(_ZERO_WIDTH)


# --------------------------------------------------------------------------------------------------
# Embedded JSON and calls


def nesting_depth(text: str, stop_above: int = MAX_NESTING) -> int:
    """Deepest ``{[(`` nesting in ``text`` (brackets inside quoted strings ignored); counting stops as
    soon as it passes ``stop_above``."""
    depth = deepest = 0
    quote = ""
    escaped = False
    for char in text:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "\"'":
            quote = char
        elif char in "{[(":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_above:
                    return deepest
        elif char in "}])":
            depth = max(depth - 1, 0)
    return deepest


def balanced_span(text: str, start: int) -> int | None:
    """Index just past the bracket that closes the one at ``start``, or None if it never closes.

    The quote tracking is written out here and in ``nesting_depth`` on purpose: a shared generator of
    unquoted characters made both scans twice as slow on long replies (measured)."""
    pairs = {"{": "}", "[": "]", "(": ")"}
    stack: list[str] = []
    quote = ""
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "\"'" and stack:
            quote = char
        elif char in pairs:
            stack.append(pairs[char])
        elif char in "}])":
            if not stack or char != stack[-1]:
                return None
            stack.pop()
            if not stack:
                return index + 1
    return None


def _check_depth(text: str, what: str) -> None:
    if nesting_depth(text) > MAX_NESTING:
        raise ReplyProblem(f"{what} is nested too deeply (more than {MAX_NESTING} levels): keep it flat")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _check_digits(text: str) -> None:
    run = longest = 0
    for char in text:
        run = run + 1 if char.isdigit() else 0
        longest = max(longest, run)
    if longest > 200:
        raise ReplyProblem("the reply contains a number hundreds of digits long: write ordinary numbers")


_ODD_SPACES = frozenset("\u00a0\u2007\u202f\u3000")
"""Spaces that are no JSON or Python whitespace (no-break, figure, narrow no-break, ideographic):
word processors and some chat front ends put them between tokens."""


def plain_spaces(text: str) -> str:
    """``text`` with ``_ODD_SPACES`` outside quoted strings turned into plain spaces (inside a string
    they are its content and stay)."""
    if not any(char in _ODD_SPACES for char in text):
        return text
    out: list[str] = []
    quote = ""
    escaped = False
    for char in text:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in _ODD_SPACES:
            char = " "
        out.append(char)
    return "".join(out)


def load_json(text: str, what: str) -> Any:
    """``json.loads`` with the depth checked first, NaN/Infinity refused, and every failure a
    ``ReplyProblem``; single quotes, trailing commas and Python literals are read as a fallback.
    No-break spaces between the tokens are read as spaces."""
    _check_depth(text, what)
    _check_digits(text)
    text = plain_spaces(text)
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise ReplyProblem(f"{what} is nested too deeply: keep it flat") from None
    except json.JSONDecodeError as exc:
        strict_error = f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    except ValueError as exc:
        raise ReplyProblem(f"{what} cannot be read: {exc}; use plain numbers (no NaN or Infinity)") from None
    try:
        return literal(text)
    except ReplyProblem:
        raise
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        raise ReplyProblem(f"{what} is not valid JSON ({strict_error})") from None


_NAMED_CONSTANTS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


def literal(text: str) -> Any:
    """A JSON-like or Python literal (dicts, lists, strings, numbers, true/false/null) read with ``ast``.

    The caller has checked the nesting depth; NaN and Infinity are refused.
    """
    tree = ast.parse(text.strip(), mode="eval").body
    return _literal_node(tree)


def _literal_node(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool | type(None)):
        value = node.value
        if isinstance(value, float) and not math.isfinite(value):
            raise ReplyProblem("numbers must be finite (no NaN or Infinity)")
        return value
    if isinstance(node, ast.Name) and node.id in _NAMED_CONSTANTS:
        return _NAMED_CONSTANTS[node.id]
    if isinstance(node, ast.Name) and node.id in ("NaN", "nan", "Infinity", "inf"):
        raise ReplyProblem("numbers must be finite (no NaN or Infinity)")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal_node(node.operand)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("a sign before something that is not a number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Dict):
        keys = [_literal_node(k) if k is not None else None for k in node.keys]
        if any(not isinstance(k, str) for k in keys):
            raise ValueError("object keys must be strings")
        return dict(zip(keys, (_literal_node(v) for v in node.values), strict=True))
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal_node(item) for item in node.elts]
    raise ValueError("not a literal value")


def first_json(text: str, opening: str = "{", what: str = "the JSON") -> str | None:
    """The first ``{...}`` (or ``[...]``) in ``text`` if it is closed, prose around it ignored; None if
    there is none or it never closes."""
    start = text.find(opening)
    if start < 0:
        return None
    if nesting_depth(text[start:]) > MAX_NESTING:
        raise ReplyProblem(f"{what} is nested too deeply (more than {MAX_NESTING} levels): keep it flat")
    end = balanced_span(text, start)
    return text[start:end] if end is not None else None


def parse_call_arguments(inner: str) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments of ``Name(inner)`` as literals (``true``/``null`` read too)."""
    _check_depth(inner, "the action's arguments")
    _check_digits(inner)
    call = ast.parse(f"f({plain_spaces(inner)})", mode="eval").body
    if not isinstance(call, ast.Call):
        raise ValueError("not a call")
    positional = [_literal_node(a) for a in call.args]
    keywords = {kw.arg: _literal_node(kw.value) for kw in call.keywords if kw.arg}
    return positional, keywords
