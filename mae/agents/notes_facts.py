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
  the items that only its own old lines named (two prices swapped between two shops). A line stands
  under its heading: in ``FINAL CHOICE: Illini Union Hotel`` / ``- Maps: 4.5 stars (733 reviews)`` the
  rating belongs to the hotel, not to another line that named Maps. A moved value counts as lost.

``repair`` puts the old lines holding lost facts back (long lines cut to the clauses holding them),
each once, after the new notes, and strikes a moved value from the new lines that carried it. It never
drops a line the model wrote, unless all that line still says once the value is struck is said by the
rest of the repaired notes ("Amazon DZ201:" next to the restored "Amazon DZ201: $159.99").
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
    r"(?<![\w'’])(?:[A-Z](?:[\w'’&-]|\.(?!\s))*|\d+[A-Za-z][\w-]*)"
    r"(?:(?:\s+|\s*&\s*)(?:(?:of|and|the|de|la|du|del|in|on|for|at|&)\s+)?(?:[A-Z](?:[\w'’&-]|\.(?!\s))*|[A-Z0-9][\w-]*\d[\w-]*))*"
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
        followed = rest[match.end() :].lstrip(" \x00").startswith(":")
        if len(words) == 1 and len(whole) > 1 and words[0].isalpha() and (followed or not at_start):
            words = whole  # "Best Buy:" or "on Best Buy": "Best" is part of the name
        if not words:
            continue
        name = re.sub(r"['’]s$", "", " ".join(words).rstrip(".'’-"))  # "Gangnam BBQ House's page"
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
        if fact.kind == "name" and len(words := fact.key.split()) >= 3:  # "Rollback Fresh Navel Oranges"
            return any(f" {' '.join(part)} " in self.plain for part in (words, words[1:], words[:-1]))
        if fact.kind in ANCHOR_KINDS or fact.kind in {"url", "email"}:
            return normalise(fact.text) in self.plain
        if fact.kind == "time":
            return any(k == "time" and _same_time(fact.key, key) for k, key in self.keys)
        if fact.kind == "number":
            return _core(fact) in self.numbers
        if fact.kind == "quantity":  # "4.0 stars" kept as "rated 4.0"; "0.5 mi" read inside "$ 0.5 mi"
            return ("number", _core(fact)) in self.keys or normalise(fact.text) in self.plain
        return False


def _same_value(fact: Fact, found: Fact) -> bool:
    """``found`` (a value of the new notes) is ``fact`` (a value of the old ones) in another spelling."""
    if fact.kind == found.kind and fact.key == found.key:
        return True
    if fact.kind == "time" == found.kind:
        return _same_time(fact.key, found.key)
    if fact.kind == "number" or (fact.kind == "quantity" and found.kind == "number"):
        return _core(fact) == _core(found)
    return False


def _is_fact(fact: Fact) -> bool:
    """A single capitalised word ("Maps", "Walmart") ties figures to an item but is no fact on its own."""
    return fact.kind != "name" or " " in fact.key


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
    """The facts of the old notes that the new ones do not hold (``missing``), the values they tie to
    another item (``moved``), and, by new line, the values as written there that moved."""

    missing: list[Fact]
    moved: list[Fact]
    moved_at: dict[int, list[str]]

    def __bool__(self) -> bool:
        return bool(self.missing or self.moved)

    @property
    def lost(self) -> list[Fact]:
        """Every fact the repair has to put back, in the old notes' order."""
        return sorted([*self.missing, *self.moved], key=lambda f: f.line)

    def describe(self, limit: int = 8) -> str:
        """``"$144.00", "Gangnam BBQ House" and 3 more`` (for a warning)."""
        return _quote(self.lost, limit)

    def problem(self) -> str:
        """What the corrective message tells the model: the facts really missing, and apart from them
        the values now written under another item (they are there, so "copy them" would mislead)."""
        parts = []
        if self.missing:
            parts.append(
                f"the notes lost facts the old notes held: {_quote(self.missing)}; copy each one exactly "
                "into the notes, or name it under ### Dropped ### if the request no longer needs it"
            )
        if self.moved:
            parts.append(
                f"the notes put {_quote(self.moved)} under another item than the old notes did; write each "
                "value next to the item it belongs to"
            )
        return "; and ".join(parts)


def _quote(facts: list[Fact], limit: int = 8) -> str:
    texts = list(dict.fromkeys(f.text for f in facts))
    shown = ", ".join(f'"{t}"' for t in texts[:limit])
    return shown + (f" and {len(texts) - limit} more" if len(texts) > limit else "")


def find_losses(old: str, new: str, dropped: str = "") -> Loss:
    """The facts of ``old`` that ``new`` does not hold, nor ``dropped`` name (facts the model says
    the request no longer needs), plus values that ``new`` moved to another item."""
    holder = _Holder(new)
    accounted = _Holder(dropped)
    old_facts = extract_facts(old)
    dropped_lines = _lines_of_dropped_items(old_facts, accounted)
    old_lines, new_lines = old.splitlines(), new.splitlines()
    missing = [
        f
        for f in old_facts
        if _is_fact(f)
        and not holder.holds(f)
        and not accounted.holds(f)
        and f.line not in dropped_lines
        and not _rating_kept(f, old_facts, new_lines)
        and not _dropped_by_kind(f, old_lines[f.line], dropped)
    ]
    moved, moved_at = _moved_values(old_facts, new, accounted)
    missing_keys = {(f.kind, f.key, f.line) for f in missing}
    return Loss(missing, [f for f in moved if (f.kind, f.key, f.line) not in missing_keys], moved_at)


def _rating_kept(fact: Fact, old_facts: list[Fact], new_lines: list[str]) -> bool:
    """A rating ``5 stars`` kept in another wording of the same fact: ``(5)``, ``5/5``, ``5★``, ``5-star``
    on a new line (or under a heading) that names an item of the rating's old line ("Nora B. (5 stars)"
    written "Nora B. (5)", as a real consolidation did). The bare number elsewhere does not keep it."""
    if fact.kind != "quantity" or not fact.key.endswith("stars"):
        return False
    anchors = [normalise(f.text) for f in old_facts if f.line == fact.line and f.kind in ANCHOR_KINDS]
    if not anchors:
        return False
    n = re.escape(_core(fact)) + r"(?:\.0)?"
    form = re.compile(
        rf"\(\s*{n}\s*\)|(?<![\d.]){n}\s*(?:/\s*5(?!\d)|★|-?\s*stars?\b)|★\s*{n}(?![\d.])", re.IGNORECASE
    )
    for head, line in zip(headings(new_lines), new_lines, strict=True):
        if form.search(line) and any(a in normalise(f"{head} {line}") for a in anchors):
            return True
    return False


_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "hours": ("open until", "opens", "closes", "closing", "opening", "hours"),
    "distance": ("distance", "distances", "miles", "mi", "km"),
    "reviews": ("review count", "review counts", "number of reviews"),
    "rating": ("rating", "ratings"),
    "price": ("price", "prices", "cost", "costs"),
}
"""Words that name a kind of value, in an old line before the value and in ``### Dropped ###``."""


def _kind_of(fact: Fact, line: str) -> str:
    """The kind of value ``fact`` is on its old ``line`` ("open until 10 PM": hours), or ``""``."""
    if fact.kind == "price":
        return "price"
    if fact.kind == "quantity":
        unit = re.sub(r"^[\d.,/]+", "", fact.key)
        return {"mi": "distance", "km": "distance", "reviews": "reviews", "stars": "rating"}.get(unit, "")
    if fact.kind == "time":
        at = line.find(fact.text)
        clause = re.split(r"[,;:()\[\]]", line[: max(at, 0)])[-1]
        label = normalise(clause)
        return "hours" if any(f" {w} " in label for w in _KIND_WORDS["hours"]) else ""
    return ""


def _dropped_by_kind(fact: Fact, line: str, dropped: str) -> bool:
    """Whether a line of ``### Dropped ###`` names the kind of value ``fact`` is rather than each value
    ("open until" times, distances), as a real consolidation did. Only values of that kind are accounted
    for (a price is not dropped by "open until times", nor a pickup time by "hours"), and a line that
    names items drops only their values ("Bangkok Orchid address/hours" keeps the chosen place's hours)."""
    kind = _kind_of(fact, line)
    if not kind:
        return False
    old_line = normalise(line)
    for said in dropped.splitlines():
        plain = normalise(said)
        if not any(f" {word} " in plain for word in _KIND_WORDS[kind]):
            continue
        items = [f.key for f in _line_facts(said, 0) if f.kind == "name" and _is_fact(f)]
        if not items or any(f" {item} " in old_line for item in items):
            return True
    return False


def _lines_of_dropped_items(old_facts: list[Fact], accounted: _Holder) -> set[int]:
    """Old lines whose every item (multi-word name) the ``### Dropped ###`` section names: dropping an
    item drops the figures listed with it ("Non-Korean results (McDonald's 3.7, Corner Diner 4.2, ...):
    not candidates" accounts for their hours and review counts, as a real model wrote)."""
    names: dict[int, list[Fact]] = {}
    for fact in old_facts:
        if fact.kind == "name" and _is_fact(fact):
            names.setdefault(fact.line, []).append(fact)
    return {line for line, items in names.items() if all(accounted.holds(item) for item in items)}


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


def _moved_values(
    old_facts: list[Fact], new: str, accounted: _Holder
) -> tuple[list[Fact], dict[int, list[str]]]:
    """Values that every new line holding them ties to another item than the old lines that held them.

    Where a value stands in a new line, each old line is scored by the item names it shares with the
    text before the value: a name weighs less the more old lines it is on (the shop every line starts
    with tells little) and the further it stands from the value (a line may list several items). A value
    with no name before it belongs to the names after it; a line naming nothing belongs to the line
    above it (a heading and its figures). Only old lines holding a value of the same kind compete (a
    price moves to a line with a price, not to "Step 5: back on Booking"); a bullet whose label names
    none ("- Booking: $149") belongs to its heading's item. A value is not moved when its line or its
    heading names an item that only the value's own old lines named."""
    anchors_by_line: dict[int, set[str]] = {}
    for fact in old_facts:
        if fact.kind in ANCHOR_KINDS:
            anchors_by_line.setdefault(fact.line, set()).add(normalise(fact.text).strip())
    counts: dict[str, int] = {}
    for anchors in anchors_by_line.values():
        for anchor in anchors:
            counts[anchor] = counts.get(anchor, 0) + 1
    moved: list[Fact] = []
    moved_at: dict[int, list[str]] = {}
    new_lines = new.splitlines()
    context = [f"{head} \x00 " if head else "" for head in headings(new_lines)]

    def named(prefix: str) -> list[tuple[int, int, str]]:
        """Where each anchor last stands in ``prefix`` (normalised), as spans; "class" inside "class c3
        series oled" is that longer name, not a name of its own."""
        found: list[tuple[int, int, str]] = []
        for anchor in counts:
            at = prefix.rfind(f" {anchor}")
            if at >= 0 and prefix[at + len(anchor) + 1 : at + len(anchor) + 2] in ("", " "):
                found.append((at + 1, at + 1 + len(anchor), anchor))
        return [f for f in found if not any(o != f and o[0] <= f[0] and f[1] <= o[1] for o in found)]

    def owners(text: str, among: set[int] | None = None) -> set[int]:
        """The old lines (of ``among``) that ``text``, up to the value, names most closely."""
        prefix = normalise(text).rstrip()
        scores: dict[int, float] = {}
        for _start, stop, anchor in named(prefix):
            weight = 1 / counts[anchor] / (1 + (len(prefix) - stop) / 10)
            for n, anchors in anchors_by_line.items():
                if anchor in anchors and (among is None or n in among):
                    scores[n] = scores.get(n, 0.0) + weight
        best = max(scores.values(), default=0.0)
        return {n for n, score in scores.items() if best > 0 and score >= best - 1e-9}

    new_facts = [
        [f for f in _line_facts(line, i) if f.kind in VALUE_KINDS] for i, line in enumerate(new_lines)
    ]
    valued: dict[str, set[int]] = {}
    for fact in old_facts:
        if fact.kind in VALUE_KINDS:
            valued.setdefault("number" if fact.kind == "quantity" else fact.kind, set()).add(fact.line)
    tied_at: dict[tuple[int, int, str], set[int]] = {}
    line_owners: list[set[int]] = []
    for i, line in enumerate(new_lines):
        mine = owners(line)
        line_owners.append(mine or (line_owners[i - 1] if i else set()))
    for fact in old_facts:
        if fact.kind not in VALUE_KINDS or fact.line not in anchors_by_line or accounted.holds(fact):
            continue
        holding = {f.line for f in old_facts if f.kind == fact.kind and f.key == fact.key}
        group = "number" if fact.kind == "quantity" else fact.kind
        carriers: list[tuple[int, set[int], str]] = []
        for i, line in enumerate(new_lines):
            for found in new_facts[i]:
                if _same_value(fact, found):
                    end = line.find(found.text)
                    if (i, end, group) not in tied_at:  # a price can only have moved to a line with a price
                        among = valued.get(group, set())
                        tied_at[i, end, group] = (
                            owners(line[:end], among)
                            or owners(context[i], among)  # "- Booking: $149" under "FINAL CHOICE: Illini ..."
                            or line_owners[i]  # "past 11 PM: Gangnam BBQ"
                        )
                    carriers.append((i, tied_at[i, end, group], found.text))
        own = {a for n in holding for a in anchors_by_line.get(n, set())}

        def names_own(i: int, tied: set[int], own: set[str] = own) -> bool:
            """Whether new line ``i`` or its heading names an item that only the value's old lines named."""
            others = {a for n in tied for a in anchors_by_line.get(n, set())}
            return bool(
                {a for _, _, a in named(normalise(context[i] + new_lines[i]).rstrip())} & (own - others)
            )

        # moved: every line holding the value names other items, and no name only its old lines had
        if carriers and all(
            tied and not tied & holding and not names_own(i, tied) for i, tied, _ in carriers
        ):
            moved.append(fact)
            for i, _, text in carriers:
                if text not in moved_at.setdefault(i, []):
                    moved_at[i].append(text)
    return moved, moved_at


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


def _strike(line: str, texts: list[str]) -> str:
    """``line`` without the values ``texts`` (and the brackets or separators they leave empty)."""
    for text in texts:
        line = line.replace(text, "\x00", 1)
    line = re.sub(r"\(\s*[\x00,;/\s]*\)|\x00", "", line)
    line = re.sub(r"\s*([,;/])(?:\s*[,;/])+", r"\1", line)
    line = re.sub(r"([:(])\s*[,;/]\s*", r"\1 ", line)
    return re.sub(r"[ \t]{2,}", " ", line).rstrip(" ,;/-")


def repair(old: str, new: str, loss: Loss) -> str:
    """``new`` with the moved values struck from the lines that carried them, followed by the old lines
    holding the lost facts (each once, in their old order). A new line is dropped only when what it
    still says once struck is all said by the rest of the repaired notes."""
    new_lines = new.splitlines()
    struck = {i: _strike(new_lines[i], texts) for i, texts in loss.moved_at.items()}
    old_lines = old.splitlines()
    by_line: dict[int, list[Fact]] = {}
    for fact in loss.lost:
        by_line.setdefault(fact.line, []).append(fact)
    back: list[str] = []
    for index in sorted(by_line):
        line = _compact(old_lines[index], by_line[index])
        if line and not any(normalise(line) in normalise(b) for b in back):
            back.append(line)
    kept: list[str] = []
    for i, line in enumerate(new_lines):
        line = struck.get(i, line)
        if i in struck:
            rest = normalise(" ".join([*new_lines[:i], *new_lines[i + 1 :], *back]))
            if set(normalise(line).split()) <= set(rest.split()):
                continue
        kept.append(line)
    notes = "\n".join(kept).strip()
    for line in back:
        if normalise(line) not in normalise(notes):
            notes = f"{notes}\n{line}" if notes else line
    return notes
