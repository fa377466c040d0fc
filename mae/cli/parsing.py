"""Argument errors that help: the usage of the subcommand that was typed, and "did you mean" for a
mistyped subcommand, choice or flag."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

LEAF = "_mae_parser"
"""Namespace attribute naming the innermost parser that read the arguments."""
_INVALID_CHOICE = re.compile(r"invalid choice: '?(?P<given>[^']*?)'? \(choose from (?P<choices>.*)\)")


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` was most likely meant to be, or None when none is close."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


class MaeParser(argparse.ArgumentParser):
    """``ArgumentParser`` that remembers which (sub)parser read the arguments and suggests the closest
    choice for an invalid one."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if getattr(parsed, LEAF, None) is None:  # a subparser (parsed first) has not claimed it
            setattr(parsed, LEAF, self)
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        match = _INVALID_CHOICE.search(message)
        if match is not None:
            choices = [choice.strip().strip("'") for choice in match.group("choices").split(",")]
            guess = closest(match.group("given"), choices)
            if guess is not None:
                message = f"{message}; did you mean {guess!r}?"
        super().error(message)


def leaf_parser(args: argparse.Namespace, default: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The innermost parser that read ``args`` (``default`` when unknown)."""
    found: Any = getattr(args, LEAF, None)
    return found if isinstance(found, argparse.ArgumentParser) else default


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [option for action in parser._actions for option in action.option_strings]


def suggest_unknown(parser: argparse.ArgumentParser, unknown: Sequence[str]) -> str:
    """The error for arguments ``parser`` does not take, with the flag each mistyped one resembles."""
    hints = []
    for word in unknown:
        if not word.startswith("-"):
            continue
        flag = word.split("=", 1)[0]
        guess = closest(flag, option_strings(parser))
        if guess is not None:
            hints.append(f"{flag}: did you mean {guess}?")
    message = f"unrecognized arguments: {' '.join(unknown)}"
    if hints:
        return f"{message} ({'; '.join(hints)})"
    if all(not word.startswith("-") for word in unknown):
        return f"{message} (put a text of several words in quotes)"
    return f"{message} ({parser.prog} --help lists its options)"
