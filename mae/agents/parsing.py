"""The one place model replies are read: sectioned text, strict field values, embedded JSON and calls.

Replies are read the way real models write them: Windows or old-Mac line endings, a byte-order mark,
zero-width characters, the whole reply inside a code fence, and the header styles models use
(``### Plan ###``, ``## Plan``, ``**Plan:**``, ``Plan:``, any case). Only the section names an agent
expects are headers, so a ``## Step 1`` sub-heading inside a Plan stays part of the Plan.

Everything here runs in time linear in the reply (no pattern with nested quantifiers; replies are
capped at ``MAX_REPLY_CHARS``; JSON and call nesting is measured before ``json``/``ast`` see it). A
reply that cannot be used raises ``ReplyProblem`` with a message written for the model: the agent call
sends it back once as a corrective turn (``mae.agents.base.ask``) before giving up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mae.actions.reply_text import (  # the reading helpers live below the action layer; re-exported here
    MAX_NESTING,
    MAX_NUMBER_DIGITS,
    MAX_REPLY_CHARS,
    ProblemKind,
    ReplyProblem,
    balanced_span,
    first_json,
    literal,
    load_json,
    nesting_depth,
    normalize_reply,
    parse_call_arguments,
)
from mae.memory.working import Outcome

__all__ = [
    "MAX_NESTING",
    "MAX_NUMBER_DIGITS",
    "MAX_REPLY_CHARS",
    "ProblemKind",
    "ReplyProblem",
    "balanced_span",
    "extract_sections",
    "first_json",
    "is_finished",
    "literal",
    "load_json",
    "nesting_depth",
    "normalize_reply",
    "parse_call_arguments",
    "parse_outcome",
    "parse_yes_no",
    "require_sections",
    "says_none",
    "says_nothing",
    "section_versions",
    "split_reasoning",
    "strip_fence",
]

_DECORATION = re.compile(r"[*_`:#]+")
_FENCE = "```"


def strip_fence(text: str) -> str:
    """The content of a fenced code block if ``text`` is one, else ``text`` stripped.

    A missing closing fence is tolerated (models stop early); so is a closing fence with no opening.
    """
    body = text.strip()
    if body.startswith(_FENCE):
        newline = body.find("\n")
        first = body[len(_FENCE) : newline if newline >= 0 else len(body)]
        if newline < 0:
            inner = first.strip().rstrip("`")  # ```{"a": 1}``` on one line
            return inner.strip()
        if first.strip() and not first.strip().replace("-", "").replace("+", "").isalnum():
            return body  # not an info string: leave as written
        body = body[newline + 1 :]
        if body.rstrip().endswith(_FENCE):
            body = body.rstrip()[: -len(_FENCE)]
        return body.strip()
    if body.endswith(_FENCE) and _FENCE not in body[:-3]:
        return body[:-3].strip()
    return body


_OPEN_TAG = re.compile(r"^[ \t]*<(think|thinking|reasoning)>", re.I | re.M)
_LONE_CLOSING_TAG = re.compile(r"^[ \t]*</(think|thinking|reasoning)>", re.I | re.M)


def split_reasoning(text: str) -> tuple[str, bool]:
    """``(answer, cut_off)``: ``text`` without its reasoning blocks (``<think>...</think>``, also
    ``<thinking>`` and ``<reasoning>``, opened at the start of a line), and whether it ends inside a
    block that never closes.

    Qwen3, QwQ and DeepSeek-R1 write their reasoning first; drafts of the answer inside it are not the
    answer. A chat template that opens the block itself leaves only its closing tag, at the start of a
    line: what comes before it is reasoning too. A tag inside a line (``Type("<think>")``) is text.
    """
    lowered = text.lower()
    if "think>" not in lowered and "reasoning>" not in lowered:
        return text, False
    opening = _OPEN_TAG.search(text)
    lone = _LONE_CLOSING_TAG.search(text)
    position = 0
    if lone is not None and (opening is None or lone.start() < opening.start()):
        position = lone.end()  # the template opened the block: all before its closing tag is reasoning
        opening = _OPEN_TAG.search(text, position)
    pieces: list[str] = []
    while opening is not None:
        pieces.append(text[position : opening.start()])
        closing = lowered.find(f"</{opening.group(1).lower()}>", opening.end())
        if closing < 0:
            return "".join(pieces), True
        position = closing + len(opening.group(1)) + 3
        opening = _OPEN_TAG.search(text, position)
    pieces.append(text[position:])
    return "".join(pieces), False


def _answer(text: str) -> tuple[str, bool]:
    """The reply as read for sections: normalised, reasoning dropped, a whole-reply fence removed;
    and whether it was cut off inside its reasoning."""
    answer, cut_off = split_reasoning(_unwrap_whole_reply(normalize_reply(text)))
    return _unwrap_whole_reply(answer), cut_off


def _unwrap_whole_reply(text: str) -> str:
    """A reply that is one fenced block (```markdown ... ```) without its fence."""
    body = text.strip()
    if body.startswith(_FENCE) and body.endswith(_FENCE) and body.count(_FENCE) == 2:
        return strip_fence(body)
    return body


# --------------------------------------------------------------------------------------------------
# Sections


def normalize_header(title: str) -> str:
    """``'  Current   SUBGOAL: '`` -> ``'current subgoal'``."""
    return " ".join(_DECORATION.sub(" ", title).replace("-", " ").split()).lower()


def _strip_wrappers(line: str) -> tuple[str, bool]:
    """A candidate header line without ``#`` marks and bold/italic wrappers; whether it had ``#``."""
    stripped = line.strip()
    hashed = stripped.startswith("#")
    stripped = stripped.lstrip("#").strip()
    if hashed:
        stripped = stripped.rstrip("#").strip()
    return stripped, hashed


_NUMBERED = re.compile(r"^\d{1,2} ?[.)] ?")
"""A section number before a header's title (``### 1. Outcome ###``)."""
_REMARK = re.compile(r"^[(\[][^()\[\]]{0,60}[)\]]$")
"""A remark in brackets after a header's closing hashes (``### Plan ### (updated)``)."""


def _title(text: str, known: frozenset[str], numbered: bool) -> str | None:
    """The known section name ``text`` is (with a section number before it when ``numbered``)."""
    title = normalize_header(text)
    if title in known:
        return title
    if numbered and title[:1].isdigit():
        title = _NUMBERED.sub("", title, count=1)
        return title if title in known else None
    return None


def _header(line: str, known: frozenset[str] | None) -> tuple[str, str] | None:
    """``(title, inline content)`` when ``line`` is a header, else None.

    With ``known`` names, a line is a header only if its title (the whole line, the part before a
    colon, or the part between ``#`` marks) is one of them, after a section number (``1.``) on a
    ``#`` line or a line that is the title alone; words after the closing ``#`` marks are inline
    content, or a remark that is dropped when in brackets (``### Plan ### (updated)``). Without, only
    ``##``-style lines are headers (any title).
    """
    stripped, hashed = _strip_wrappers(line)
    if not stripped or (len(stripped) > 200 and known is None):
        return None
    if known is None:
        if not hashed or not line.lstrip().startswith("##"):
            return None
        title = normalize_header(stripped)
        return (title, "") if title else None
    whole = normalize_header(stripped)
    if whole in known:
        return whole, ""
    if whole[:1].isdigit() and _NUMBERED.sub("", whole, count=1) in known:
        return _NUMBERED.sub("", whole, count=1), ""
    closing = stripped.find("#") if hashed else -1
    if closing > 0:
        between = _title(stripped[:closing], known, numbered=True)
        trailing = stripped[closing:].lstrip("#").strip()
        if between is not None and trailing:
            return between, "" if _REMARK.match(trailing) else trailing
    colon = stripped.find(":")
    if colon > 0:
        before_colon = _title(stripped[:colon], known, numbered=hashed)
        if before_colon is not None:
            rest = stripped[colon + 1 :].strip()
            if rest.startswith("**") or rest.startswith("__"):
                rest = rest[2:].lstrip()  # **Plan:** text -> "Plan:**" split leaves the bold close
            return before_colon, rest
    return None


def extract_sections(text: str, known: Iterable[str] | None = None) -> dict[str, str]:
    """Map normalized section titles to their stripped content; text before the first header is dropped.

    Without ``known``, headers are lines starting with ``##`` (any title). With ``known`` section names,
    only those names are headers, in any of the styles models use (``### Plan ###``, ``## Plan``,
    ``**Plan:**``, ``Plan:`` with or without content on the same line), so sub-headings inside a
    section stay in it. A repeated section keeps its last occurrence (``section_versions`` has all).
    """
    return {title: versions[-1] for title, versions in section_versions(text, known).items()}


def section_versions(text: str, known: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Like ``extract_sections``, with every occurrence of each section, in the order written."""
    return {title: [text for text, _ in found] for title, found in _versions(_answer(text)[0], known).items()}


def _versions(body: str, known: Iterable[str] | None) -> dict[str, list[tuple[str, bool]]]:
    """Every occurrence of each section: its text, and whether its header had content on the same
    line (``Action: Tap(1, 2)``, which may be prose quoting a header rather than a header)."""
    names = frozenset(normalize_header(name) for name in known) if known is not None else None
    found: dict[str, list[tuple[str, bool]]] = {}
    title: str | None = None
    lines: list[str] = []
    same_line = False

    def close() -> None:
        if title is not None:
            found.setdefault(title, []).append((_clean_section("\n".join(lines)), same_line))

    for line in body.split("\n"):
        header = _header(line, names)
        if header is not None and header[1] and (header[0] == title or _HISTORY_LINE.search(header[1])):
            header = None  # "Action: {...}" inside the Action section, or a quoted history line: text
        if header is None:
            if title is not None:
                lines.append(line)
            continue
        close()
        title, inline = header
        lines, same_line = ([inline], True) if inline else ([], False)
    close()
    return found


_HISTORY_LINE = re.compile(r"\|\s*(?:Description|Outcome|Feedback)\s*:")
"""A line quoted from the prompt's action history (``Action: Tap(1, 2) | Description: ... | Outcome:
...``): it names an earlier action, it is not a header."""


def _all_of(occurrences: list[tuple[str, bool]]) -> str:
    """The non-empty occurrences of a section joined by blank lines; those under a header line of
    their own when there are any (``Action: Back() if nothing happens.`` in prose is then not one)."""
    own_line = [text for text, same_line in occurrences if text and not same_line]
    return "\n\n".join(own_line or [text for text, _ in occurrences if text])


def _clean_section(content: str) -> str:
    """Section text stripped, without a stray closing fence left by a fenced reply."""
    content = content.strip()
    if content.endswith(_FENCE) and content.count(_FENCE) % 2 == 1:
        content = content[:-3].rstrip()
    return content


def require_sections(
    text: str, required: list[str], optional: tuple[str, ...] = (), *, every: tuple[str, ...] = ()
) -> dict[str, str]:
    """The sections of ``text``; ``ReplyProblem`` naming every required section missing or empty.

    A repeated section keeps its last occurrence, except those named in ``every``: all their non-empty
    occurrences are kept, joined by blank lines (an action written twice must be read twice, so that
    two different actions are refused rather than one picked), only those under a header line of their
    own when there are any.
    """
    wanted = [*required, *optional]
    body, cut_off = _answer(text)
    if cut_off:
        raise ReplyProblem(
            "the reply stopped inside its <think> reasoning, before the answer (it was cut off); reason "
            "briefly, close the reasoning, then write the sections"
        )
    if not body.strip():
        layout = " ".join(f"### {name} ###" for name in wanted)
        raise ReplyProblem(f"the reply was empty; write each section under its header: {layout}")
    versions = _versions(body, wanted)
    every_key = {normalize_header(name) for name in every}
    found = {
        title: _all_of(occurrences) if title in every_key else occurrences[-1][0]
        for title, occurrences in versions.items()
    }
    if not found:
        layout = " ".join(f"### {name} ###" for name in wanted)
        raise ReplyProblem(f"the reply has no sections; write each section under its header: {layout}")
    missing = [name for name in required if not found.get(normalize_header(name))]
    if missing:
        names = ", ".join(f"### {name} ###" for name in missing)
        raise ReplyProblem(f"the reply lacks the required section(s) {names} (or they are empty)")
    return {name: found.get(normalize_header(name), "") for name in wanted}


NONE_WORDS = ("none", "n/a", "na", "nil", "null", "nothing", "no", "-", "[]", "无", "没有", "なし")
"""Answers that mean "nothing" on their own."""

_NOTHING = re.compile(
    r"(?:there (?:is|are) )?(?:no|nothing|none)(?: of (?:the|these|them|those))?"
    r"(?: (?:new|additional|further|other|more|relevant|important|useful|notable|applicable|suitable))*"
    r"(?: (?:notes?|information|info|details?|data|facts?|content|updates?|changes?|tips?|shortcuts?"
    r"|ones?))?"
    r"(?: (?:appl(?:y|ies)|fits?|helps?|(?:is|are) (?:relevant|needed|useful|applicable|required)|needed"
    r"|to (?:add|note|record|report|keep|select|use|propose|revise)|(?:(?:on|from|in|for|to) )?(?:this|the) "
    r"(?:screen|page|task|request)|(?:was |were )?(?:found|seen|shown|visible|noted|recorded|selected)))*"
)
"""A first sentence that says there is nothing: "No new information.", "None of the tips apply.",
"There are no new Shortcuts to propose." """


_SIGN_OFF = re.compile(
    r"^\W*(?=[^\d\n]*$).*\b(?:let me know|hope this helps|anything else|feel free|happy to help|you)\b", re.I
)
"""A chat sign-off after the answer ("Let me know if you need anything else!"), not a fact."""

_NOTES_KEPT = re.compile(
    r"\bnotes?\b.*\b(?:unchanged|same|as (?:they are|before|is)|still|kept|keep|remains?|stays?)\b"
    r"|\b(?:keep|keeping|kept|unchanged)\b.*\bnotes?\b"
)
"""A remark that the notes stay as they are ("the existing notes stay the same")."""


def says_nothing(text: str, *, then_anything: bool = False) -> bool:
    """Whether a section says there is nothing: a ``NONE_WORDS`` answer, or a short first paragraph
    without numbers or brackets that is a sentence saying so ("No new information.", "None of the tips
    apply."), followed by nothing but a remark that the notes stay as they are ("Nothing new; the
    existing notes stay the same."), or by anything when ``then_anything``.

    "No changes. The cart total is twelve dollars." is an answer: a fact follows."""
    if says_none(text, NONE_WORDS):
        return True
    first, *later = normalize_reply(text).strip().split("\n\n")
    first = first.strip().strip("*_`").strip()
    if len(first) > 160 or any(char.isdigit() or char in "[{" for char in first):
        return False
    sentence, *rest = re.split(r"[.;:!(\n—–]| - ", first.lower(), maxsplit=1)
    if _NOTHING.fullmatch(" ".join(sentence.split())) is None:
        return False
    if then_anything:
        return True
    after = " ".join(rest).strip(" .;:!()-—–")
    return (not after or _NOTES_KEPT.search(after) is not None) and all(
        _SIGN_OFF.search(paragraph) or _NOTES_KEPT.search(paragraph.lower()) for paragraph in later
    )


def says_none(text: str, words: Iterable[str] = ("none", "n/a", "na", "nothing", "no", "null", "[]")) -> bool:
    """Whether a section says "nothing": its first line is one of ``words`` (decoration and a final
    full stop ignored), whatever sign-off follows after a blank line."""
    body = normalize_reply(text).strip()
    if not body:
        return True
    first = body.split("\n\n", 1)[0].strip().strip("*_`").strip().rstrip(".").strip().lower()
    return first in set(words)


# --------------------------------------------------------------------------------------------------
# Single values: outcome letters, yes/no verdicts, Finished


def _words(text: str) -> list[str]:
    """Lower-case words and the separators that make a choice ambiguous (``/``, ``|``)."""
    out: list[str] = []
    word: list[str] = []
    for char in text:
        if char.isalnum():
            word.append(char)
            continue
        if word:
            out.append("".join(word))
            word = []
        if char in "/|&":
            out.append(char)
    if word:
        out.append("".join(word))
    return out


_OUTCOME = re.compile(
    r"^\W*(?:(?:the|outcome|answer|option|result|is|verdict)\W+){0,4}\(?([abc])\)?(?![a-z0-9])", re.I
)
_SECOND_OUTCOME = re.compile(
    r"^\W{0,3}(?:,|/|\||\bor\b|\band\b)\s*(?:maybe\s+|possibly\s+|perhaps\s+)?\(?[abc]\)?(?![a-z0-9])", re.I
)


_ARTICLE = re.compile(r" +[a-z]")
"""After an ``A``: a lower-case word, as when the ``A`` is the article of a sentence (``A new page``)."""
_LATER_LETTER = re.compile(
    r"(?:[:=>→]|\b(?:so|is|outcome|answer|verdict|result|therefore|thus|hence|actually))\W{0,3}\(?[BC]\)?[\s.!)*]*$",
    re.I,
)
"""Another outcome letter given as the answer at the end of the line (``..., so: B``), not a mention
(``not option C``, ``now on step B``)."""


def parse_outcome(text: str) -> Outcome:
    """The outcome letter: exactly one of A, B or C at the start of the section.

    Read: ``A``, ``a``, ``(A)``, ``**B**: wrong page``, ``Outcome: C``, ``Option A``, and an explanation
    that mentions other capitals (``B. Failed: A popup appeared``). Refused: ``A, B``, ``A or B``,
    ``A (or maybe B)``, ``A/B``, ``D``, words that are not a letter, and a sentence that starts with the
    article A and names another outcome later (``A new page opened, so: B``).
    """
    first_line = normalize_reply(text).strip().split("\n", 1)[0][:300]
    original = first_line.replace("*", "").replace("`", "")
    match = _OUTCOME.match(original)
    if match is None:
        raise ReplyProblem(
            "### Outcome ### must start with exactly one letter, A, B or C (e.g. 'B. Failed: wrong page'), "
            f"not {text.strip()[:80]!r}"
        )
    if _SECOND_OUTCOME.match(original[match.end() :]):
        raise ReplyProblem(
            "### Outcome ### must name one outcome only: write just one letter (A, B or C), "
            f"not {first_line.strip()[:80]!r}"
        )
    rest = original[match.end() :]
    if match.group(1) in "Aa" and _ARTICLE.match(rest) and _LATER_LETTER.search(rest):
        raise ReplyProblem(
            "### Outcome ### must start with the outcome letter alone (A, B or C), then the explanation "
            f"(e.g. 'B. Failed: wrong page'), not the sentence {first_line.strip()[:80]!r}"
        )
    return match.group(1).upper()  # type: ignore[return-value]


def parse_yes_no(text: str, section: str = "Verdict") -> bool:
    """``Yes`` or ``No`` at the start of ``text`` (``Verdict: Yes``, ``**No** - ...`` read too).

    Refused: ``Yes or No``, ``Yes/No``, ``Maybe``, a line that starts with one and concludes the other
    (``Yes, but the box has text, so no``) and anything not starting with one of the two words.
    """
    first_line = normalize_reply(text).strip().split("\n", 1)[0][:300]
    tokens = _words(first_line.lower())
    index = 0
    while index < len(tokens) - 1 and tokens[index] in ("verdict", "answer", "the", "is"):
        index += 1
    if index >= len(tokens) or tokens[index] not in ("yes", "no"):
        raise ReplyProblem(f"### {section} ### must be exactly Yes or No, not {first_line.strip()[:60]!r}")
    rest = tokens[index + 1 : index + 4]
    if rest and rest[0] in ("or", "/", "|") and any(word in ("yes", "no") for word in rest[1:]):
        raise ReplyProblem(f"### {section} ### must be one answer: write Yes or write No, not both")
    if (
        len(tokens) > index + 2
        and tokens[-1] in ("yes", "no")
        and tokens[-1] != tokens[index]
        and tokens[-2] in ("so", "therefore", "thus", "hence", "is", "verdict", "answer", "actually", "final")
    ):
        raise ReplyProblem(
            f"### {section} ### must be one answer: it starts with {tokens[index].title()} and ends with "
            f"{tokens[-1].title()}; write just one of them first"
        )
    return tokens[index] == "yes"


_DONE_SENTENCES = (
    ["finished"],
    ["task", "finished"],
    ["all", "finished"],
    ["the", "task", "is", "finished"],
    ["task", "is", "finished"],
)


_NOT_YET = re.compile(
    r"\s*(?:[:?\-—–]\s*)?(?:(?:no|nope)(?=\s*(?:[,.;:!?)\-—–]|$))"
    r"|not (?:yet|quite|done|finished|complete|really)\b|wait\b|almost\b|nearly\b)"
)
"""What after ``Finished`` takes it back: ``? Not yet``, ``: no, ...``, ``- wait``; not ``. No further
action is needed``."""


def is_finished(subgoal: str) -> bool:
    """Whether the Manager's subgoal says the whole task is done.

    ``Finished`` at the start followed by nothing or punctuation (``Finished: the note is saved``,
    ``Finished - ...``, ``Finished, ...``, ``Finished (...)``), or as the last sentence
    (``All subgoals completed. Finished.``), but not ``Finished the search, now ...``, ``Finished? Not
    yet ...`` or ``Finished: no, ...``. Only the first
    line counts: a model's sign-off after the subgoal is not part of it.
    """
    text = normalize_reply(subgoal).strip().split("\n", 1)[0]  # prose after the subgoal is not it
    text = text.strip().strip("*_`\"' ").lstrip("#").strip().strip("*_`\"' ")
    lowered = text.lower()
    if lowered.startswith("finished"):
        after = lowered[len("finished") :]
        if _NOT_YET.match(after):
            return False  # Finished? Not yet... / Finished: no, ...
        if not after or not (after[0].isalnum() or (after[0] == " " and after.strip()[:1].isalnum())):
            return True
    sentences = [s for s in re.split(r"[.!\n]", lowered[-400:]) if s.strip()]
    first = _words(re.split(r"[.!\n]", lowered[:400], maxsplit=1)[0])
    last = _words(sentences[-1]) if sentences else []
    return first in _DONE_SENTENCES or last in _DONE_SENTENCES
