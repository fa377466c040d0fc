"""The facts of the Notetaker's notes, read without a model (``mae.agents.notes_facts`` checks them).

A fact is something a later step may type or compare: a price, a phone number, a time, a number with a
unit, a rating, a plain number with a decimal point or three or more digits, a URL, an e-mail address,
quoted text, a name written in capitals or a model code such as ``DZ201``. Each is read with a canonical
key, so that two spellings that mean the same (``$144`` and ``$144.00``, ``11 PM`` and ``11:00 PM``)
compare equal; ``Holder`` answers whether a text holds a fact in any of those spellings.
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
STOP_WORDS = frozenset(
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
    r"(?<![\w'’])(?:[A-Z](?:[\w'’&-]|\.(?!\s))*|\d+[A-Za-z][\w-]*)"
    r"(?:(?:\s+|\s*&\s*)(?:(?:of|and|the|de|la|du|del|in|on|for|at|&)\s+)?(?:[A-Z](?:[\w'’&-]|\.(?!\s))*|[A-Z0-9][\w-]*\d[\w-]*))*"
)
_BULLET = re.compile(r"^\s*(?:[-*•·]+|\d+[.)]|[a-z][.)])\s+")


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


def line_facts(line: str, index: int) -> list[Fact]:
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
    for start_at, end_at in _name_spans(rest, body_start):
        whole = rest[start_at:end_at].split()
        while whole and (whole[-1].lower().strip("'’.&-") in STOP_WORDS or whole[-1] in {"&", "of", "and"}):
            whole.pop()
        words = list(whole)
        while words and words[0].lower().strip("'’.&-") in STOP_WORDS:
            words.pop(0)
        before = rest[:start_at].rstrip(" \x00")
        at_start = start_at <= body_start or before.endswith((".", "!", "?", ",", ";", ":", "(", "-"))
        followed = rest[end_at:].lstrip(" \x00").startswith(":")
        if len(words) == 1 and len(whole) > 1 and words[0].isalpha() and (followed or not at_start):
            words = whole  # "Best Buy:" or "on Best Buy": "Best" is part of the name
        if not words:
            continue
        name = re.sub(r"['’]s$", "", " ".join(words).rstrip(".'’-"))  # "Gangnam BBQ House's page"
        if len(words) == 1 and (len(name) < 3 or (at_start and not followed)):
            continue
        facts.append(Fact("name", name, normalise(name).strip(), index))
    return facts


_LINKS = re.compile(r"\s+(?:on|at|in|for)\s+")
"""Words that join the parts of one name ("Cafe in the Park") or, in a heading phrase, two names."""


def _name_spans(rest: str, body_start: int) -> list[tuple[int, int]]:
    """Where the capitalised runs of a line (its values blanked) stand. In a heading phrase, a label
    that holds no value and starts with other words ("Cheapest brand-new Joy-Con on Amazon:"), "on",
    "at", "in" and "for" join two names, not one: the phrase says where an item was seen, and names
    nothing a later step may type or compare."""
    colon = rest.find(":", body_start)
    label = rest[body_start:colon] if colon >= 0 else ""
    spans: list[tuple[int, int]] = []
    for match in _CAPITALISED.finditer(rest):
        heading = (
            bool(label)
            and "\x00" not in label
            and match.end() <= colon
            and re.search(r"[a-z]", rest[body_start : match.start()]) is not None
        )
        if not heading:
            spans.append((match.start(), match.end()))
            continue
        at = match.start()
        for link in _LINKS.finditer(match.group(0)):
            spans.append((at, match.start() + link.start()))
            at = match.start() + link.end()
        spans.append((at, match.end()))
    return spans


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
        out.extend(line_facts(line, index))
    return out


class Holder:
    """What a text holds, in the forms a fact is looked up by."""

    def __init__(self, text: str) -> None:
        self.facts = extract_facts(text)
        for fact in [f for f in self.facts if f.kind == "quoted"]:  # "4.6 stars (220)": a rating, a count
            inner = line_facts(fact.text[1:-1], fact.line)
            self.facts.extend(f for f in inner if f.kind in VALUE_KINDS)
        self.keys = {(f.kind, f.key) for f in self.facts}
        self.numbers = {core(f) for f in self.facts if f.kind in VALUE_KINDS}
        self.plain = normalise(text)

    def holds(self, fact: Fact) -> bool:
        if (fact.kind, fact.key) in self.keys:
            return True
        if fact.kind == "name" and len(words := fact.key.split()) >= 3:  # "Rollback Fresh Navel Oranges"
            if any(f" {' '.join(part)} " in self.plain for part in (words, words[1:], words[:-1])):
                return True
            return self._holds_head(words)
        if fact.kind in ANCHOR_KINDS or fact.kind in {"url", "email"}:
            return normalise(fact.text) in self.plain
        if fact.kind == "time":
            return any(k == "time" and _same_time(fact.key, key) for k, key in self.keys)
        if fact.kind == "number":
            return core(fact) in self.numbers
        if fact.kind == "quantity":  # "4.0 stars" kept as "rated 4.0"; "0.5 mi" read inside "$ 0.5 mi"
            return ("number", core(fact)) in self.keys or normalise(fact.text) in self.plain
        return False

    def _holds_head(self, words: list[str]) -> bool:
        """Whether the text names an item "<head> for <use>" by a shorter form of its head: "Silicone
        Thumb Grips" or "PowerA controller" for "PowerA Enhanced Wireless Controller for Nintendo
        Switch" (its first and last words, in order, with only words of the head between them)."""
        if "for" not in words or words.index("for") < 2:
            return False
        head = words[: words.index("for")]
        between = "|".join(re.escape(w) for w in head[1:-1])
        middle = rf"(?: (?:{between}))*" if between else ""
        return re.search(rf" {re.escape(head[0])}{middle} {re.escape(head[-1])} ", self.plain) is not None


def same_value(fact: Fact, found: Fact) -> bool:
    """``found`` (a value of the new notes) is ``fact`` (a value of the old ones) in another spelling."""
    if fact.kind == found.kind and fact.key == found.key:
        return True
    if fact.kind == "time" == found.kind:
        return _same_time(fact.key, found.key)
    if fact.kind == "number" or (fact.kind == "quantity" and found.kind == "number"):
        return core(fact) == core(found)
    return False


def is_fact(fact: Fact) -> bool:
    """A single capitalised word ("Maps", "Walmart") ties figures to an item but is no fact on its own."""
    return fact.kind != "name" or " " in fact.key


def core(fact: Fact) -> str:
    """The bare number of a value fact (``$144`` -> ``144``, ``8qt`` -> ``8``)."""
    found = re.search(r"\d+(?:\.\d+)?(?:/\d+)?", fact.key)
    return found.group(0) if found else fact.key


def _same_time(a: str, b: str) -> bool:
    """``11pm`` and ``11:00pm`` are one time; ``12:40`` and ``12:40pm`` too (one side gave no half of day)."""
    digits_a, digits_b = a.rstrip("apm"), b.rstrip("apm")
    if digits_a != digits_b:
        return False
    return a in (b, digits_a) or b == digits_b


def headings(lines: list[str]) -> list[str]:
    """For each line, the heading it stands under: the nearest line above it that is not a bullet, when
    it is a bullet or indented ("" otherwise, and after a blank line)."""
    out: list[str] = []
    heading = ""
    for line in lines:
        if not line.strip():
            heading = ""
            out.append("")
        elif _BULLET.match(line) or line[:1] in (" ", "\t"):
            out.append(heading)
        else:
            heading = line
            out.append("")
    return out
