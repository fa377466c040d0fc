"""The one place model replies are parsed: sectioned text (``### Plan ###``) and strict field values.

A reply that cannot be used raises ``ReplyProblem`` with a message written for the model: the agent
call sends it back once as a corrective turn (``mae.agents.base.ask``) before giving up.
"""

from __future__ import annotations

import re
from typing import Literal

from mae.memory.working import Outcome

ProblemKind = Literal["format", "action"]

_HEADER = re.compile(r"^[ \t]*#{2,6}[ \t]*(?P<title>[^#\n]*?)[ \t]*#*[ \t]*$", re.M)
_DECORATION = re.compile(r"[*_`:]+")


class ReplyProblem(Exception):
    """A reply the model must fix: ``kind`` is ``format`` (sections) or ``action`` (invalid action)."""

    def __init__(self, message: str, kind: ProblemKind = "format") -> None:
        super().__init__(message)
        self.message = message
        self.kind: ProblemKind = kind


def normalize_header(title: str) -> str:
    """``'  Current   SUBGOAL: '`` -> ``'current subgoal'``."""
    return " ".join(_DECORATION.sub(" ", title).split()).lower()


def extract_sections(text: str) -> dict[str, str]:
    """Map normalized section titles to their stripped content; text before the first header is dropped.

    Headers are lines of two or more ``#`` around a title, tolerant of case, spacing, a trailing colon
    and a missing closing ``###``. A repeated section keeps its last occurrence.
    """
    matches = list(_HEADER.finditer(text))
    found: dict[str, str] = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        title = normalize_header(match.group("title"))
        if title:
            found[title] = text[match.end() : end].strip()
    return found


def require_sections(text: str, required: list[str], optional: tuple[str, ...] = ()) -> dict[str, str]:
    """The sections of ``text``; ``ReplyProblem`` naming every required section missing or empty."""
    found = extract_sections(text)
    wanted = [*required, *optional]
    if not found:
        layout = " ".join(f"### {name} ###" for name in wanted)
        raise ReplyProblem(f"the reply has no sections; write each section under its header: {layout}")
    missing = [name for name in required if not found.get(normalize_header(name))]
    if missing:
        names = ", ".join(f"### {name} ###" for name in missing)
        raise ReplyProblem(f"the reply lacks the required section(s) {names} (or they are empty)")
    return {name: found.get(normalize_header(name), "") for name in wanted}


_OUTCOME = re.compile(r"^\(?(?P<letter>[ABC])\)?(?:$|[\s.:)\-,])")


def parse_outcome(text: str) -> Outcome:
    """The outcome letter: the section must *start* with exactly one of A, B or C.

    ``"A"``, ``"B. Failed: wrong page"``, ``"**C**: no change"`` and ``"(A)"`` are read; ``"The outcome
    is A"``, ``"A or B"`` and ``"Answer"`` are not.
    """
    cleaned = text.strip().replace("*", "").replace("`", "").strip()
    match = _OUTCOME.match(cleaned)
    if match is None:
        raise ReplyProblem(
            "### Outcome ### must start with exactly one letter, A, B or C (e.g. 'B. Failed: wrong page'), "
            f"not {text.strip()[:80]!r}"
        )
    letter = match.group("letter")
    rest = cleaned[match.end() :]
    if re.search(r"\b(?:or|and)\s*\(?[ABC]\b", rest[:20]):
        raise ReplyProblem("### Outcome ### must name one outcome only (A, B or C), not several")
    return letter  # type: ignore[return-value]


def is_finished(subgoal: str) -> bool:
    """Whether the Manager's subgoal says the whole task is done: ``Finished`` (any case or
    punctuation), optionally followed by a sentence of explanation (``Finished. The note is saved.``),
    but not a subgoal that merely starts with the word (``Finished the search, now ...``)."""
    first = re.split(r"[.!\n]", subgoal.strip(), maxsplit=1)[0]
    words = re.sub(r"[^a-z ]", " ", first.lower()).split()
    done = (["finished"], ["task", "finished"], ["all", "finished"], ["the", "task", "is", "finished"])
    return words in done


def strip_fence(text: str) -> str:
    """The content of a fenced code block if ``text`` is one, else ``text`` stripped."""
    match = re.fullmatch(r"\s*```[a-zA-Z]*\s*(.*?)\s*```\s*", text, re.S)
    return match.group(1).strip() if match else text.strip()
