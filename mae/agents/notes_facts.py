"""Facts in the Notetaker's notes, found without a model, so that a consolidation cannot lose them.

When the notes pass their budget the Notetaker rewrites them shorter (``mae.agents.notes_budget``). A
model can drop a price, cut a name short or attach a number to the wrong item while doing so. This
module takes the facts a later step may type or compare (read by ``mae.agents.notes_text``: prices,
phone numbers, times, numbers with units, ratings, names, quoted text ...) and checks which of the old
notes' facts the new notes no longer hold:

- a fact is *kept* when the new notes (or the reply's ``### Dropped ###`` list of facts the request no
  longer needs) hold it in any spelling that means the same: ``$144`` keeps ``$144.00``, ``11:00 PM``
  keeps ``11 PM``, ``217-555-0187`` keeps ``(217) 555-0187``, ``Gangnam bbq house`` keeps
  ``Gangnam BBQ House``. ``### Dropped ###`` may name a fact briefly: by its value (anywhere, also
  inside a quote such as ``"4.6 stars (220)"``), by its item, or by its kind ("review counts",
  "star ratings, distances, review scores/counts", "per-night prices" for prices per night only),
  an item excepted from a kind ("... of all hotels except Capitol Suites") keeping its values;
- a value is *moved* when every new line that holds it names another item of the old notes and none of
  the items that only its own old lines named (two prices swapped between two shops). A line stands
  under its heading: in ``FINAL CHOICE: Illini Union Hotel`` / ``- Maps: 4.5 stars (733 reviews)`` the
  rating belongs to the hotel, not to another line that named Maps. An item may be named by a shorter
  form of its old line and heading ("Amazon Renewed $52.00" for a "(Renewed)" result listed under
  "Amazon search"). A moved value counts as lost.

``repair`` puts the old lines holding lost facts back (long lines cut to the clauses holding them),
each once, after the new notes, and strikes a moved value from the new lines that carried it. It never
drops a line the model wrote, unless all that line still says once the value is struck is said by the
rest of the repaired notes ("Amazon DZ201:" next to the restored "Amazon DZ201: $159.99").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mae.agents.notes_text import (
    ANCHOR_KINDS,
    STOP_WORDS,
    VALUE_KINDS,
    Fact,
    Holder,
    core,
    extract_facts,
    headings,
    is_fact,
    line_facts,
    normalise,
    same_value,
)

__all__ = [
    "VALUE_KINDS",
    "Fact",
    "Loss",
    "extract_facts",
    "find_losses",
    "normalise",
    "repair",
    "strip_sign_off",
]

MAX_LINE_CHARS = 200
"""An old line longer than this is put back as the clauses that hold its lost facts."""

_SIGN_OFF = re.compile(
    r"^\s*(?:let me know|i hope|hope this|feel free|is there anything|these (?:consolidated )?notes|"
    r"the notes above|i(?:'ve| have) (?:kept|merged|removed|consolidated)|note:)",
    re.IGNORECASE,
)


_ENTRY_BREAK = re.compile(r"[;:|,]|\s+and\s+")
"""What ends one entry of a line before the next ("...; Amazon Renewed $52.00 and Best Buy ...")."""


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
                f"the notes lost facts the old notes held: {_quote(self.missing)}; keep each one the "
                "request still needs in the notes, copied exactly, or name it briefly under ### Dropped ### "
                "(by its value, its item's name, or its kind of value, such as review counts)"
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
    holder = Holder(new)
    accounted = Holder(dropped)
    old_facts = extract_facts(old)
    dropped_lines = _lines_of_dropped_items(old_facts, accounted)
    old_lines, new_lines = old.splitlines(), new.splitlines()
    missing = [
        f
        for f in old_facts
        if is_fact(f)
        and not holder.holds(f)
        and not accounted.holds(f)
        and f.line not in dropped_lines
        and not _rating_kept(f, old_facts, new_lines)
        and not _dropped_by_kind(f, old_lines[f.line], dropped)
    ]
    moved, moved_at = _moved_values(old, old_facts, new, accounted)
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
    n = re.escape(core(fact)) + r"(?:\.0)?"
    form = re.compile(
        rf"\(\s*{n}\s*\)|(?<![\d.]){n}\s*(?:/\s*5(?!\d)|★|-?\s*stars?\b)|★\s*{n}(?![\d.])", re.IGNORECASE
    )
    for head, line in zip(headings(new_lines), new_lines, strict=True):
        if form.search(line) and any(a in normalise(f"{head} {line}") for a in anchors):
            return True
    return False


_HOURS_WORDS = ("open until", "opens", "closes", "closing", "opening", "hours")
"""Words that, in an old line before a time, make it opening hours."""

_KIND_NAMES: dict[str, re.Pattern[str]] = {
    "hours": re.compile(r" (?:open until|opens|closes|closing|opening|hours) "),
    "distance": re.compile(r" (?:distances?|miles|mi|km) "),
    "reviews": re.compile(
        r" (?:(?:reviews?|ratings?|scores?) (?:and )?counts?|numbers? of (?:reviews|ratings)|reviews) "
    ),
    "rating": re.compile(r" (?:stars?|ratings?(?! counts?)|star class(?:es)?|classes) "),
    "score": re.compile(r" (?:scores?|(?<! star )ratings?(?! counts?)) "),
    "price": re.compile(r" (?:prices?|costs?) "),
}
"""How ``### Dropped ###`` names each kind of value, read in its normalised text with a shared word
spread over a slash ("review scores/counts": review scores and review counts). "Star ratings" are
star classes and "ratings" alone also guest scores, but neither names review counts."""

_PER_UNIT = re.compile(r" (?:per (\w+)|(night|month|week|day|hour)ly) (?:prices?|costs?|rates?) ")
"""A price kind bound to a unit ("per-night prices", "nightly rates"): it names only prices per that unit."""

_SCORE_WORDS = (
    r"(?:exceptional|wonderful|superb|fabulous|excellent|very good|good|pleasant|okay|fair|poor|great)\b"
)
_SHARED_WORD = re.compile(r"\b(review|reviews|guest|user|customer|star|rating)\s+(\w+)\s*/\s*(\w+)", re.I)
_EXCEPT = re.compile(r"\b(?:except(?: for)?|but not|other than|apart from|besides|excluding)\b", re.I)


def _kind_of(fact: Fact, line: str) -> str:
    """The kind of value ``fact`` is on its old ``line`` ("open until 10 PM": hours), or ``""``."""
    if fact.kind == "price":
        return "price"
    if fact.kind == "quantity":
        unit = re.sub(r"^[\d.,/]+", "", fact.key)
        return {"mi": "distance", "km": "distance", "reviews": "reviews", "stars": "rating"}.get(unit, "")
    if fact.kind == "number":  # "4.7 stars (40,210)": the count of reviews behind a rating
        count = rf"(?:stars?|★|/\s*5)\s*\(\s*{re.escape(fact.text)}\s*(?:reviews|ratings)?\s*\)"
        if re.search(count, line, re.IGNORECASE):
            return "reviews"
        # "8.6 Excellent", "9.0/10", "score 8.6": a guest score
        value = re.escape(fact.text)
        after = rf"(?<![\d.,]){value}(?:\s*/\s*10\b|\s+{_SCORE_WORDS})"
        before = rf"\b(?:score|scored|rated|rating)\s*:?\s*{value}(?![\d.,])"
        if re.search(after, line, re.IGNORECASE) or re.search(before, line, re.IGNORECASE):
            return "score"
        return ""
    if fact.kind == "time":
        at = line.find(fact.text)
        clause = re.split(r"[,;:()\[\]]", line[: max(at, 0)])[-1]
        label = normalise(clause)
        return "hours" if any(f" {w} " in label for w in _HOURS_WORDS) else ""
    return ""


def _kinds_named(said: str) -> set[str]:
    """The kinds of value a line of ``### Dropped ###`` names ("Star ratings, distances, review
    scores/counts": rating, distance, score, reviews)."""
    plain = normalise(_SHARED_WORD.sub(r"\1 \2 and \1 \3", said))
    return {kind for kind, pattern in _KIND_NAMES.items() if pattern.search(plain)}


def _dropped_by_kind(fact: Fact, line: str, dropped: str) -> bool:
    """Whether a line of ``### Dropped ###`` names the kind of value ``fact`` is rather than each value
    ("open until" times, distances, "review scores/counts"), as real consolidations did. Only values of
    that kind are accounted for (a price is not dropped by "open until times", nor a pickup time by
    "hours"), and a line that names items drops only their values ("Bangkok Orchid address/hours" keeps
    the chosen place's hours), while an item it excepts keeps its own ("distances of all hotels except
    Capitol Suites"). The kind is read before the line's reason: "Ratings ...: not needed for the price
    comparison" drops ratings, not prices."""
    kind = _kind_of(fact, line)
    if not kind:
        return False
    old_line = normalise(line)
    old_items = {f.key for f in line_facts(line, 0) if f.kind == "name"}
    for said in dropped.splitlines():
        said = re.split(r":\s", said, maxsplit=1)[0]
        said, *excepted = _EXCEPT.split(said, maxsplit=1)  # "... of all hotels except Capitol Suites"
        if kind not in _kinds_named(said) or (kind == "price" and not _per_unit_named(fact, line, said)):
            continue
        if _excepted(fact, old_items, " ".join(excepted)):
            continue
        items = [f.key for f in line_facts(said, 0) if f.kind == "name" and is_fact(f)]
        if not items or any(f" {item} " in old_line for item in items):
            return True
    return False


def _per_unit_named(price: Fact, line: str, said: str) -> bool:
    """Whether ``said`` names ``price`` by its kind: any price for "prices", but for "per-night prices"
    only a price per night on its old ``line`` ("$79 per night", "$79/night"), not "$158 total"."""
    bound = _PER_UNIT.search(normalise(said))
    if not bound:
        return True
    unit = bound.group(1) or bound.group(2)
    per = rf"{re.escape(price.text)}\s*(?:per|/|an?)\s*{re.escape(unit)}\b"
    return re.search(per, line, re.IGNORECASE) is not None


def _excepted(fact: Fact, old_items: set[str], excepted: str) -> bool:
    """Whether the clause after "except" keeps ``fact``: it names an item of the fact's old line and
    either no value ("except Capitol Suites") or this one ("except Capitol Suites' 3-star")."""
    said = line_facts(excepted, 0)
    if not any(f.kind == "name" and f.key in old_items for f in said):
        return False
    values = [f for f in said if f.kind in VALUE_KINDS]
    return not values or any(same_value(fact, value) for value in values)


def _lines_of_dropped_items(old_facts: list[Fact], accounted: Holder) -> set[int]:
    """Old lines whose every item (multi-word name) the ``### Dropped ###`` section names: dropping an
    item drops the figures listed with it ("Non-Korean results (McDonald's 3.7, Corner Diner 4.2, ...):
    not candidates" accounts for their hours and review counts, as a real model wrote)."""
    names: dict[int, list[Fact]] = {}
    for fact in old_facts:
        if fact.kind == "name" and is_fact(fact):
            names.setdefault(fact.line, []).append(fact)
    return {line for line, items in names.items() if all(accounted.holds(item) for item in items)}


def _moved_values(
    old: str, old_facts: list[Fact], new: str, accounted: Holder
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
        [f for f in line_facts(line, i) if f.kind in VALUE_KINDS] for i, line in enumerate(new_lines)
    ]
    old_lines = old.splitlines()
    words_of = [
        set(normalise(f"{head} {line}").split())
        for head, line in zip(headings(old_lines), old_lines, strict=True)
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
        carriers: list[tuple[int, int, set[int], str]] = []
        for i, line in enumerate(new_lines):
            for found in new_facts[i]:
                if same_value(fact, found):
                    end = line.find(found.text)
                    if (i, end, group) not in tied_at:  # a price can only have moved to a line with a price
                        among = valued.get(group, set())
                        tied_at[i, end, group] = (
                            owners(line[:end], among)
                            or owners(context[i], among)  # "- Booking: $149" under "FINAL CHOICE: Illini ..."
                            or line_owners[i]  # "past 11 PM: Gangnam BBQ"
                        )
                    carriers.append((i, end, tied_at[i, end, group], found.text))
        own = {a for n in holding for a in anchors_by_line.get(n, set())}
        own_words = {w for n in holding for w in words_of[n]}

        def short_form(before: str, tied: set[int], own_words: set[str] = own_words) -> bool:
            """Whether the entry right before the value names its own item by a shorter form of the
            item's old line and heading ("Amazon Renewed $52.00" for "- Nintendo Switch Joy-Con ...
            (Renewed): $52.00" under "Amazon search ..."), with a word none of the tied lines have."""
            entry = set(normalise(_ENTRY_BREAK.split(before)[-1]).split()) - STOP_WORDS
            others = {w for n in tied for w in words_of[n]}
            return bool(entry) and entry <= own_words and bool(entry - others)

        def names_own(i: int, tied: set[int], own: set[str] = own) -> bool:
            """Whether new line ``i`` or its heading names an item that only the value's old lines named."""
            others = {a for n in tied for a in anchors_by_line.get(n, set())}
            return bool(
                {a for _, _, a in named(normalise(context[i] + new_lines[i]).rstrip())} & (own - others)
            )

        # moved: every line holding the value names other items, and no name only its old lines had
        if carriers and all(
            tied
            and not tied & holding
            and not names_own(i, tied)
            and not short_form(new_lines[i][:end], tied)
            for i, end, tied, _ in carriers
        ):
            moved.append(fact)
            for i, _, _, text in carriers:
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
