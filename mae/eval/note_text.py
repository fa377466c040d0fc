"""Reading a note the way a person grading it would: equivalent forms, sentences, negations, facts.

The graders of the virtual suite compare a note with phrases. A person accepts "15:50" for "3:50 PM",
"$144" for "144.00" and "1,197.99" for "1197.99"; they read "oranges are not on sale" as a statement
*against* oranges, and they want a price next to the item it belongs to. These helpers give the
graders the same reading:

- :func:`normalise` lower-cases, drops commas (thousands separators too) and ``$``, writes 24-hour
  times as 12-hour ones and ``.00`` prices as whole numbers;
- :func:`contains` matches a phrase without letting a number match inside a longer number;
- :func:`sentences` cuts a note into sentences, :func:`lines` into lines that know their heading;
- :func:`owners` ties each mention of a value to the item it is written under or next to, across
  the punctuation inside a product's own name ("Beef Choice Angus Ribeye Steak, per pound - $12.98")
  and from a heading to the bullets or table rows below it;
- :func:`negated` says whether a sentence speaks against what it names ("X was rejected because ...");
  :func:`spoken_against` says it of a mention, reading the next sentence and the heading too;
- :func:`verdicts` reads the overall sentiment a summary states ("mostly positive").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_TIME = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?!\d)")
_WHOLE_PRICE = re.compile(r"(?<=\d)\.00(?!\d)")
_SENTENCE = re.compile(r"[;\n!?]|\.(?:\s|$)")
_NEGATIONS = re.compile(
    r"\b(?:not|no|never|none|neither|nor|without|skip|skipped|skipping|avoid|avoided|avoiding|"
    r"except|excluding|excluded|ruled out|rule out|instead of|rather than|lower|worse|"
    r"reject|rejected|rejecting|eliminated|discarded|disqualified|lacks|lacking|left out|leave out|"
    r"passed on)\b|n't\b"
)
_HEADING = re.compile(r"^\s*(?:#+\s*.+|\*\*[^*]+\*\*:?|__[^_]+__:?|[^|]{1,80}:)\s*$")
_BULLET = re.compile(r"^\s*(?:[-*•·]+|\d+[.)])\s+")

_DIRECTIONS = {
    "positive": "positive",
    "favorable": "positive",
    "favourable": "positive",
    "enthusiastic": "positive",
    "negative": "negative",
    "unfavorable": "negative",
    "unfavourable": "negative",
    "critical": "negative",
    "poor": "negative",
    "good": "positive",
    "bad": "negative",
    "mixed": "mixed",
    "divided": "mixed",
    "split": "mixed",
}
_DIRECTION = "|".join(_DIRECTIONS)
_QUALIFIER = (
    "mostly|generally|overall|largely|broadly|predominantly|overwhelmingly|very|highly|strongly|fairly|"
    "mainly|quite|consistently|universally|solidly|clearly|decidedly|somewhat|rather|extremely"
)
_VERDICT = re.compile(
    rf"\b(?:{_QUALIFIER})\W{{1,3}}(?P<a>{_DIRECTION})\b"
    rf"|\b(?P<b>{_DIRECTION})\W{{1,3}}overall\b"
    rf"|\bsentiment\W{{1,3}}(?:(?:is|was|seems|appears|looks|remains)\s+)?(?:\w+\s+)?(?P<c>{_DIRECTION})\b"
    r"|\b(?:reviews?|reviewers|feedback|reception|opinions?|reactions?|posts|users|customers|buyers|viewers"
    r"|audiences?|critics|people)\s+(?:is|are|was|were|seems?|appears?|remains?|looks?)\s+(?:\w+\s+)?"
    rf"(?P<d>{_DIRECTION})\b"
)
_PRAISE = re.compile(
    r"\b(?:love[ds]?|loving|great|excellent|amazing|awesome|fantastic|superb|outstanding|impressive|"
    r"praised?|praising|recommend(?:ed|s)?|comfortable|happy|satisfied|enjoy(?:ed|s)?|best|stunning|"
    r"incredible|worth|good|fun|scary|scariest|tense|gripping|thrilling|beautiful|beautifully)\b"
)
_BLAME = re.compile(
    r"\b(?:hate[ds]?|terrible|awful|horrible|poor|bad|worst|disappoint(?:ed|ing|s)?|complain(?:ed|s|ts?)?|"
    r"uncomfortable|broke|broken|useless|waste|regret(?:ted|s)?|avoid|unhappy|boring)\b"
)
_FLIP = re.compile(r"\b(?:not|never|no|hardly)\s+(?:\w+\s+)?$|n't\s+(?:\w+\s+)?$")


def _twelve_hour(match: re.Match[str]) -> str:
    hour, minute = int(match.group(1)), match.group(2)
    hour = hour - 12 if hour > 12 else (12 if hour == 0 else hour)
    return f"{hour}:{minute}"


def normalise(text: str) -> str:
    """``text`` in the one form phrases are compared in (see the module's docstring)."""
    text = text.lower().replace("\u2019", "'").replace("$", "")
    text = text.replace(",", "")
    text = _WHOLE_PRICE.sub("", text)
    text = _TIME.sub(_twelve_hour, text)
    return re.sub(r"\s+", " ", text).strip()


def _pattern(phrase: str) -> re.Pattern[str] | None:
    wanted = normalise(phrase)
    if not wanted:
        return None
    left = r"(?<![\d.:])" if wanted[0].isdigit() else ""
    right = r"(?![\d:]|\.\d)" if wanted[-1].isdigit() else ""
    return re.compile(left + re.escape(wanted) + right)


def contains(text: str, phrase: str) -> bool:
    """Whether normalised ``text`` holds ``phrase``; a phrase that starts or ends with a digit must not
    touch another digit there ("1:30" is not in "11:30", "12.98" not in "112.98")."""
    pattern = _pattern(phrase)
    return pattern is not None and pattern.search(text) is not None


def _spans(text: str, phrase: str) -> list[tuple[int, int]]:
    pattern = _pattern(phrase)
    return [] if pattern is None else [m.span() for m in pattern.finditer(text)]


def sentences(raw: str) -> list[str]:
    """The normalised sentences of ``raw`` (cut at full stops, semicolons and line breaks)."""
    return [s for s in (normalise(part) for part in _SENTENCE.split(raw.replace("\r", ""))) if s]


@dataclass(frozen=True)
class Line:
    """One non-empty line of a note, normalised, with the heading it stands under (normalised too;
    empty at the top level). A heading is a line that ends with a colon, a markdown heading, or a line
    in bold; the bullets and rows below it are under it until the next heading or a blank line."""

    text: str
    heading: str
    is_heading: bool


def lines(raw: str) -> list[Line]:
    """The note's lines with their headings."""
    out: list[Line] = []
    heading = ""
    for raw_line in raw.replace("\r", "").split("\n"):
        if not raw_line.strip():
            heading = ""
            continue
        is_heading = _HEADING.match(raw_line) is not None and _BULLET.match(raw_line) is None
        text = normalise(raw_line.replace("|", " | "))
        if is_heading:
            heading = text
        out.append(Line(text, "" if is_heading else heading, is_heading))
    return out


def owners(raw: str, items: Sequence[str], value: str) -> set[str]:
    """The phrases of ``items`` that the mentions of ``value`` in ``raw`` belong to.

    A value belongs to the item named closest before it in its sentence, or when none is, to the first
    one named after it in its sentence ("$12.98 - ribeye"), or when its sentence names no item, to the
    item named last above it (an earlier sentence, a heading and its bullets, a table's item column and
    its figures). Commas do not end a sentence: they are part of many products' names."""
    found: set[str] = set()
    above = ""
    for line in lines(raw):
        for part in _SENTENCE.split(line.text):
            mentions = sorted((span, item) for item in items for span in _spans(part, item))
            for start, end in _spans(part, value):
                before = [(span, item) for span, item in mentions if span[1] <= start]
                after = [(span, item) for span, item in mentions if span[0] >= end]
                if before:
                    found.add(max(before, key=lambda m: m[0][1])[1])
                elif after:
                    found.add(after[0][1])
                elif above:
                    found.add(above)
            if mentions:
                above = max(mentions, key=lambda m: m[0][1])[1]
    return found


def negated(sentence: str) -> bool:
    """Whether a normalised sentence speaks against what it names ("oranges are not on sale", "Bangkok
    Orchid was rejected because it has no duck")."""
    return _NEGATIONS.search(sentence) is not None


def spoken_against(raw: str, phrase: str) -> list[bool]:
    """For each sentence of ``raw`` that names ``phrase``: whether it speaks against it, itself, in the
    sentence right after it on its line ("Bangkok Orchid (4.8). Rejected: no duck."), by the heading it
    stands under ("Ruled out:" over a list of candidates), or, when it is a heading, by a line under it
    ("Bangkok Orchid:" / "- no duck dishes")."""
    out: list[bool] = []
    note = lines(raw)
    for index, line in enumerate(note):
        below: list[str] = []
        for under in note[index + 1 :] if line.is_heading else []:
            if under.heading != line.text:
                break
            below.append(under.text)
        parts = sentences(line.text)
        for i, part in enumerate(parts):
            if contains(part, phrase):
                nxt = parts[i + 1] if i + 1 < len(parts) else ""
                out.append(any(negated(t) for t in (part, nxt, line.heading, *below)))
    return out


def verdicts(raw: str) -> set[str]:
    """The overall sentiments ``raw`` states: ``positive``, ``negative`` or ``mixed``.

    Stated ones ("mostly positive", "negative overall", "Sentiment: mixed") win; a note that states none
    is read by its words of praise and of blame ("reviewers love the comfort" against "poor battery",
    a "not" just before one turns it round): only praise is positive, only blame negative, both mixed;
    a note with neither states no sentiment."""
    text = normalise(raw)
    stated = {_DIRECTIONS[next(g for g in m.groups() if g)] for m in _VERDICT.finditer(text)}
    if stated:
        return stated
    praise = blame = 0
    for pattern, positive in ((_PRAISE, True), (_BLAME, False)):
        for match in pattern.finditer(text):
            flipped = _FLIP.search(text[max(0, match.start() - 30) : match.start()]) is not None
            if positive != flipped:
                praise += 1
            else:
                blame += 1
    if praise and blame:
        return {"mixed"}
    return {"positive"} if praise else ({"negative"} if blame else set())
