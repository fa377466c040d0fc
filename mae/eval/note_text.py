"""Reading a note the way a person grading it would: equivalent forms, sentences, negations, facts.

The graders of the virtual suite compare a note with phrases. A person accepts "15:50" for "3:50 PM",
"$144" for "144.00" and "1,197.99" for "1197.99"; they read "oranges are not on sale" as a statement
*against* oranges, and they want a price next to the item it belongs to. These helpers give the
graders the same reading:

- :func:`normalise` lower-cases, drops commas (thousands separators too) and ``$``, writes 24-hour
  times as 12-hour ones and ``.00`` prices as whole numbers;
- :func:`contains` matches a phrase without letting a number match inside a longer number;
- :func:`sentences` and :func:`clauses` cut a note into the pieces a fact must sit in;
- :func:`negated` says whether a sentence speaks against what it names.
"""

from __future__ import annotations

import re

_TIME = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?!\d)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_WHOLE_PRICE = re.compile(r"(?<=\d)\.00(?!\d)")
_SENTENCE = re.compile(r"[;\n!?]|\.(?:\s|$)")
_CLAUSE = re.compile(r",\s|\s(?:and|but|while|whereas|vs\.?|versus)\s|[()]")
_NEGATIONS = re.compile(
    r"\b(?:not|no|never|none|neither|nor|without|skip|skipped|skipping|avoid|avoided|avoiding|"
    r"except|excluding|excluded|ruled out|rule out|instead of|rather than|lower|worse)\b|n't\b"
)


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


def contains(text: str, phrase: str) -> bool:
    """Whether normalised ``text`` holds ``phrase``; a phrase that starts or ends with a digit must not
    touch another digit there ("1:30" is not in "11:30", "12.98" not in "112.98")."""
    wanted = normalise(phrase)
    if not wanted:
        return False
    left = r"(?<![\d.:])" if wanted[0].isdigit() else ""
    right = r"(?![\d:]|\.\d)" if wanted[-1].isdigit() else ""
    return re.search(left + re.escape(wanted) + right, text) is not None


def sentences(raw: str) -> list[str]:
    """The normalised sentences of ``raw`` (cut at full stops, semicolons and line breaks)."""
    return [s for s in (normalise(part) for part in _SENTENCE.split(raw.replace("\r", ""))) if s]


def clauses(raw: str) -> list[str]:
    """The normalised clauses of ``raw``: sentences cut further at commas, brackets and "and"."""
    out: list[str] = []
    for sentence in _SENTENCE.split(raw.replace("\r", "")):
        out.extend(c for c in (normalise(part) for part in _CLAUSE.split(_THOUSANDS.sub("", sentence))) if c)
    return out


def negated(sentence: str) -> bool:
    """Whether a normalised sentence speaks against what it names ("oranges are not on sale")."""
    return _NEGATIONS.search(sentence) is not None
