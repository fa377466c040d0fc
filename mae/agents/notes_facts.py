"""Facts in the Notetaker's notes, found without a model, so that a consolidation cannot lose them.

When the notes pass their budget the Notetaker rewrites them shorter (``mae.agents.notes_budget``). A
model can drop a price, cut a name short or attach a number to the wrong item while doing so. This
module finds the facts a later step may type or compare (prices, phone numbers, times, numbers with
units, ratings, plain numbers with a decimal point or three or more digits, URLs, e-mail addresses,
quoted text, names written in capitals, model codes such as ``DZ201``), and checks which of the old
notes' facts the new notes no longer hold:

- a fact is *kept* when the new notes (or the reply's ``### Dropped ###`` list of facts the request no
  longer needs) hold it in any spelling that means the same: ``$144`` keeps ``$144.00``, ``11:00 PM``
  keeps ``11 PM``, ``217-555-0187`` keeps ``(217) 555-0187``, ``Gangnam bbq house`` keeps
  ``Gangnam BBQ House``;
- a value is *moved* when every new line that holds it names another item of the old notes and none of
  the items its old line named (two prices swapped between two shops): it counts as lost, and the new
  lines that carry it are dropped by ``repair``.

``repair`` puts the old lines holding lost facts back (long lines cut to the clauses holding them),
each once, after the new notes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

FactKind = Literal["url", "email", "price", "phone", "time", "quantity", "number", "quoted", "name", "code"]
VALUE_KINDS = frozenset({"price", "phone", "time", "quantity", "number"})
"""Kinds that describe an item; names, codes and quoted text identify one."""
ANCHOR_KINDS = frozenset({"name", "code", "quoted"})
MAX_LINE_CHARS = 200
"""An old line longer than this is put back as the clauses that hold its lost facts."""

_UNITS = {
    "qt": "qt", "quart": "qt", "quarts": "qt", "gb": "gb", "tb": "tb", "mb": "mb", "ghz": "ghz",
    "hz": "hz", "inch": "in", "inches": "in", "in": "in", '"': "in", "mi": "mi", "mile": "mi",
    "miles": "mi", "km": "km", "m": "m", "ft": "ft", "min": "min", "mins": "min", "minute": "min",
    "minutes": "min", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "h": "h", "star": "stars",
    "stars": "stars", "review": "reviews", "reviews": "reviews", "ratings": "reviews", "rating": "reviews",
    "%": "%", "percent": "%", "lb": "lb", "lbs": "lb", "pound": "lb", "pounds": "lb", "oz": "oz",
    "kg": "kg", "g": "g", "fps": "fps", "mp": "mp", "mah": "mah", "w": "w", "k": "k", "million": "m",
    "m+": "m", "likes": "likes", "like": "likes", "views": "views", "citations": "citations",
    "cited": "citations", "copies": "copies", "nights": "nights", "night": "nights", "people": "people",
    "guests": "people", "seats": "seats", "calories": "cal", "cal": "cal", "servings": "servings",
    "days": "days", "day": "days", "weeks": "weeks", "mph": "mph", "kph": "kph", "x": "x",
}  # fmt: skip
_STOP_WORDS = frozenset(
    " ".join(
        [
            "a an and the this that these those it its i we you he she they my our your of on in at to for",
            "from by with as or but if then so also next now here there yes no none not step steps result",
            "results price prices cost costs rating ratings rated review reviews note notes hours hour phone",
            "address total cheapest best lowest highest top cheaper open opened opens closed closes close",
            "checked check found tapped searched search dismissed typed scrolled saw seen went go back home",
            "task plan progress important current summary positive negative mixed sponsored sale deal deals",
            "was is are sold shop stars star item items option options chosen chose choice picked pick keep",
            "kept dropped ruled out still need needs needed later first second third last other others only",
            "all some many few page screen list app apps new added add write wrote tomorrow today tonight",
            "monday tuesday wednesday thursday friday saturday sunday january february march april may june",
            "july august september october november december am pm",
        ]
    ).split()
)
"""Capitalised words that start a sentence or label a value rather than name an item."""
_URL = re.compile(
    r"(?:https?://|www\.)[^\s<>()\"']+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|edu|gov|co|ai|app|dev|us|uk)"
    r"(?:/[^\s<>()\"']*)?",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_PRICE = re.compile(
    rf"(?:(?P<sym>[$€£¥₹]|\b(?:USD|EUR|GBP|CAD|AUD)\s?)\s?(?P<num>{_NUM})(?P<mult>\s?[kKmM]\b)?"
    rf"|(?P<num2>{_NUM})\s?(?P<word>dollars|usd|euros?|eur)\b)",
    re.IGNORECASE,
)
_PHONE = re.compile(r"(?<![\w.])(?:\+?1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])?\d{3}[\s.-]\d{4}(?![\w])")
_TIME = re.compile(
    r"(?<![\d:.,])(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s?(?P<ap>[ap]\.?\s?m\.?)(?![a-z])|(?<![\d:.,$])(?P<h2>\d{1,2}):(?P<m2>\d{2})(?![\d:])",
    re.IGNORECASE,
)
_QUANTITY = re.compile(
    rf"(?<![\w.,])(?P<num>{_NUM})(?:\s?-\s?|\s?)(?P<unit>"
    + "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
    + r")(?![\w])",
    re.IGNORECASE,
)
_RATIO = re.compile(r"(?<![\w.])(?P<a>\d+(?:\.\d+)?)\s?/\s?(?P<b>\d+)(?![\w.])")
_NUMBER = re.compile(
    r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+\.\d+(?![\w])|(?<![\w.])\d{3,}(?![\w])"
)
_QUOTED = re.compile(
    r"\"([^\"\n]{2,120})\"|“([^”\n]{2,120})”|(?<![\w])'([^'\n]{2,120})'(?![\w])|«([^»\n]{2,120})»"
)
_CODE = re.compile(r"(?<![\w-])(?=[A-Za-z-]*\d)(?=[\d-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*(?![\w-])")
_CAPITALISED = re.compile(
    r"(?<![\w'’])(?:[A-Z][\w'’&.-]*|\d+[A-Za-z][\w-]*)"
    r"(?:(?:\s+|\s*&\s*)(?:(?:of|and|the|de|la|du|del|in|on|for|at|&)\s+)?(?:[A-Z][\w'’&.-]*|[A-Z0-9][\w-]*\d[\w-]*))*"
)
_BULLET = re.compile(r"^\s*(?:[-*•·]+|\d+[.)]|[a-z][.)])\s+")
_SIGN_OFF = re.compile(
    r"^\s*(?:let me know|i hope|hope this|feel free|is there anything|these (?:consolidated )?notes|"
    r"the notes above|i(?:'ve| have) (?:kept|merged|removed|consolidated)|note:)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Fact:
    """One fact as written (``text``), its canonical form (``key``) and the line it is on (0-based)."""

    kind: FactKind
    text: str
    key: str
    line: int


def _number(text: str) -> str:
    """``1,299.00`` -> ``1299``; ``4.50`` -> ``4.5`` (the same number however it is written)."""
    value = text.replace(",", "")
    if "." in value:
        value = value.rstrip("0").rstrip(".")
    return value.lstrip("0") or "0"


def normalise(text: str) -> str:
    """Lower case, every run of characters other than letters and digits one space."""
    return " " + " ".join(re.findall(r"[^\W_]+", text.lower())) + " "


def _blank(line: str, start: int, end: int) -> str:
    """``line`` with a span read already made unreadable (and a boundary no name runs across)."""
    return line[:start] + "\x00" * (end - start) + line[end:]


def _line_facts(line: str, index: int) -> list[Fact]:
    """The facts of one line; each span is read once, in order of how specific its pattern is."""
    facts: list[Fact] = []
    rest = line

    def take(kind: FactKind, pattern: re.Pattern[str], key_of: Callable[[re.Match[str]], str]) -> None:
        nonlocal rest
        for match in list(pattern.finditer(rest)):
            key = key_of(match)
            if key:
                facts.append(Fact(kind, match.group(0).strip(), key, index))
                rest = _blank(rest, match.start(), match.end())

    take("email", _EMAIL, lambda m: m.group(0).lower())
    take("url", _URL, lambda m: m.group(0).lower().split("://")[-1].removeprefix("www.").rstrip("/.,;:"))
    take("quoted", _QUOTED, lambda m: normalise(next(g for g in m.groups() if g)).strip())
    take("phone", _PHONE, lambda m: re.sub(r"\D", "", m.group(0))[-7:])
    take("price", _PRICE, _price_key)
    take("time", _TIME, _time_key)
    take("quantity", _QUANTITY, lambda m: f"{_number(m.group('num'))}{_UNITS[m.group('unit').lower()]}")
    take("number", _RATIO, lambda m: f"{_number(m.group('a'))}/{m.group('b')}")
    take("number", _NUMBER, lambda m: _number(m.group(0)))
    take("code", _CODE, lambda m: m.group(0).lower() if len(m.group(0)) >= 3 else "")
    start = _BULLET.match(rest)
    body_start = start.end() if start else 0
    for match in _CAPITALISED.finditer(rest):
        whole = match.group(0).split()
        while whole and (whole[-1].lower().strip("'’.&-") in _STOP_WORDS or whole[-1] in {"&", "of", "and"}):
            whole.pop()
        words = list(whole)
        while words and words[0].lower().strip("'’.&-") in _STOP_WORDS:
            words.pop(0)
        before = rest[: match.start()].rstrip(" \x00")
        at_start = match.start() <= body_start or before.endswith((".", "!", "?", ",", ";", ":", "(", "-"))
        followed = rest[match.end() :].lstrip().startswith(":")
        if len(words) == 1 and len(whole) > 1 and words[0].isalpha() and (followed or not at_start):
            words = whole  # "Best Buy:" or "on Best Buy": "Best" is part of the name
        if not words:
            continue
        name = " ".join(words).rstrip(".'’-")
        if len(words) == 1 and (len(name) < 3 or (at_start and not followed)):
            continue
        facts.append(Fact("name", name, normalise(name).strip(), index))
    return facts


_CURRENCY = {"usd": "$", "dollars": "$", "eur": "€", "euro": "€", "euros": "€", "gbp": "£"}


def _price_key(match: re.Match[str]) -> str:
    symbol = (match.group("sym") or match.group("word") or "$").strip().lower()
    symbol = {"usd": "$", "dollars": "$", "eur": "€", "euro": "€", "euros": "€", "gbp": "£"}.get(
        symbol, symbol
    )
    number = _number(match.group("num") or match.group("num2"))
    multiplier = (match.group("mult") or "").strip().lower() if match.group("num") else ""
    return f"{symbol}{number}{multiplier}"


def _time_key(match: re.Match[str]) -> str:
    if match.group("h") is not None:
        minutes = match.group("m")
        suffix = "pm" if match.group("ap").lower().startswith("p") else "am"
        hour = str(int(match.group("h")))
        return f"{hour}{':' + minutes if minutes and minutes != '00' else ''}{suffix}"
    return f"{int(match.group('h2'))}:{match.group('m2')}"


def extract_facts(text: str) -> list[Fact]:
    """Every fact of ``text``, line by line, in order."""
    out: list[Fact] = []
    for index, line in enumerate(text.splitlines()):
        out.extend(_line_facts(line, index))
    return out


class _Holder:
    """What a text holds, in the forms a fact is looked up by."""

    def __init__(self, text: str) -> None:
        self.facts = extract_facts(text)
        self.keys = {(f.kind, f.key) for f in self.facts}
        self.numbers = {_core(f) for f in self.facts if f.kind in VALUE_KINDS}
        self.plain = normalise(text)

    def holds(self, fact: Fact) -> bool:
        if (fact.kind, fact.key) in self.keys:
            return True
        if fact.kind in ANCHOR_KINDS or fact.kind in {"url", "email"}:
            return normalise(fact.text) in self.plain
        if fact.kind == "time":
            return any(k == "time" and _same_time(fact.key, key) for k, key in self.keys)
        if fact.kind == "number":
            return _core(fact) in self.numbers
        return False


def _core(fact: Fact) -> str:
    """The bare number of a value fact (``$144`` -> ``144``, ``8qt`` -> ``8``)."""
    found = re.search(r"\d+(?:\.\d+)?(?:/\d+)?", fact.key)
    return found.group(0) if found else fact.key


def _same_time(a: str, b: str) -> bool:
    """``11pm`` and ``11:00pm`` are one time; ``12:40`` and ``12:40pm`` too (one side gave no half of day)."""
    digits_a, digits_b = a.rstrip("apm"), b.rstrip("apm")
    if digits_a != digits_b:
        return False
    return a in (b, digits_a) or b == digits_b


@dataclass
class Loss:
    """The facts of the old notes that the new ones lost, and the new lines that move a value."""

    lost: list[Fact]
    moved_lines: list[int]

    def __bool__(self) -> bool:
        return bool(self.lost)

    def describe(self, limit: int = 8) -> str:
        """``"$144.00", "Gangnam BBQ House" and 3 more`` (for a corrective message or a warning)."""
        texts = list(dict.fromkeys(f.text for f in self.lost))
        shown = ", ".join(f'"{t}"' for t in texts[:limit])
        return shown + (f" and {len(texts) - limit} more" if len(texts) > limit else "")


def find_losses(old: str, new: str, dropped: str = "") -> Loss:
    """The facts of ``old`` that ``new`` does not hold, nor ``dropped`` name (facts the model says
    the request no longer needs), plus values that ``new`` moved to another item."""
    holder = _Holder(new)
    accounted = _Holder(dropped)
    old_facts = extract_facts(old)
    lost = [f for f in old_facts if not holder.holds(f) and not accounted.holds(f)]
    moved, moved_lines = _moved_values(old, old_facts, new, holder, accounted)
    lost_keys = {(f.kind, f.key, f.line) for f in lost}
    lost.extend(f for f in moved if (f.kind, f.key, f.line) not in lost_keys)
    lost.sort(key=lambda f: f.line)
    return Loss(lost, moved_lines)


def _moved_values(
    old: str, old_facts: list[Fact], new: str, holder: _Holder, accounted: _Holder
) -> tuple[list[Fact], list[int]]:
    anchors_by_line: dict[int, set[str]] = {}
    for fact in old_facts:
        if fact.kind in ANCHOR_KINDS:
            anchors_by_line.setdefault(fact.line, set()).add(normalise(fact.text))
    all_anchors = set().union(*anchors_by_line.values()) if anchors_by_line else set()
    # an anchor on many lines (the shop every line starts with) says nothing about which item a value is for
    counts = {a: sum(a in anchors for anchors in anchors_by_line.values()) for a in all_anchors}
    common = {a for a, n in counts.items() if n > 1 and n * 2 > len(anchors_by_line)}
    anchors_by_line = {i: (a - common) or a for i, a in anchors_by_line.items()}
    new_lines = new.splitlines()
    line_holders = [_Holder(line) for line in new_lines]
    moved: list[Fact] = []
    bad_lines: set[int] = set()
    for fact in old_facts:
        own = anchors_by_line.get(fact.line)
        if fact.kind not in VALUE_KINDS or not own or accounted.holds(fact):
            continue
        carriers = [i for i, line_holder in enumerate(line_holders) if line_holder.holds(fact)]
        if not carriers:
            continue
        attached, elsewhere = False, []
        for i in carriers:
            here = normalise(new_lines[i])
            named = any(a in here for a in all_anchors)
            # a line naming no item belongs to the line above it (a heading and its figures)
            context = here if named or i == 0 else normalise(new_lines[i - 1]) + here
            if any(a in context for a in own):
                attached = True
                break
            others = all_anchors - common - _anchors_with(fact, old_facts, anchors_by_line)
            if any(a in here for a in others):
                elsewhere.append(i)
        if not attached and elsewhere and len(elsewhere) == len(carriers):
            moved.append(fact)
            bad_lines.update(elsewhere)
    return moved, sorted(bad_lines)


def _anchors_with(value: Fact, old_facts: list[Fact], anchors_by_line: dict[int, set[str]]) -> set[str]:
    """The anchors of every old line holding ``value`` (a value two items share is moved by neither)."""
    lines = {f.line for f in old_facts if f.kind == value.kind and f.key == value.key}
    return set().union(*(anchors_by_line.get(i, set()) for i in lines))


def strip_sign_off(notes: str) -> str:
    """The notes without a chat reply's closing paragraph ("Let me know if ...")."""
    paragraphs = re.split(r"\n\s*\n", notes.strip())
    while len(paragraphs) > 1 and _SIGN_OFF.match(paragraphs[-1]) and not extract_facts(paragraphs[-1]):
        paragraphs.pop()
    return "\n\n".join(paragraphs)


def _compact(line: str, facts: list[Fact]) -> str:
    """``line``, or when it is long its first clause and the clauses holding ``facts``."""
    if len(line) <= MAX_LINE_CHARS:
        return line.strip()
    clauses = [c for c in re.split(r"(?<=[.;,])\s+", line.strip()) if c]
    wanted = [c for c in clauses[1:] if any(f.text in c for f in facts)]
    return " ".join([clauses[0], *wanted]).strip()[: MAX_LINE_CHARS * 2]


def repair(old: str, new: str, loss: Loss) -> str:
    """``new`` without the lines that moved a value, followed by the old lines holding the lost facts
    (each once, in their old order)."""
    new_lines = [line for i, line in enumerate(new.splitlines()) if i not in set(loss.moved_lines)]
    old_lines = old.splitlines()
    by_line: dict[int, list[Fact]] = {}
    for fact in loss.lost:
        by_line.setdefault(fact.line, []).append(fact)
    kept = "\n".join(new_lines).strip()
    for index in sorted(by_line):
        line = _compact(old_lines[index], by_line[index])
        if not line or normalise(line) in normalise(kept):
            continue
        kept = f"{kept}\n{line}" if kept else line
    return kept
