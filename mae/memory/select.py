"""Model-free pre-selection of Tips and Shortcuts: a bounded list of the ones most likely to matter.

The long-term memory grows with every task; everything that reads it (the Experience Retrievers, the
Experience Reflectors, a run whose retriever failed) works on a slice chosen here, without a model:

- **lexical similarity** to the task: words shared with it, rare words weighing more (inverse document
  frequency over the store), with a light stemmer so "prices" meets "price";
- **app names**: capitalised words of the task (Amazon, Notes) count three times, so items about the
  task's apps come first;
- **usage** (Shortcuts): successful calls raise a Shortcut, a failure streak lowers it; recently used
  ones win ties.

Every selection is bounded twice: a number of items and a number of characters, so a few very long items
cannot blow a prompt up. Ranking 10,000 items takes a few tens of milliseconds.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from mae.actions.registry import Shortcut
from mae.memory.models import ShortcutUsage

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+|\d+")
_CAPITALISED = re.compile(r"(^|[.!?:]\s+|\s)([A-Z][A-Za-z0-9]+)")
_STOP_WORDS = """a an and are as at be by do does for from get go has have how i if in into is it its me my
    no not of on one or so than that the then this to up use was we what when where which while who
    will with     you your task tap tips tip shortcut after before each all any can new"""
_STOP = frozenset(_STOP_WORDS.split())


@functools.lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    """The words of ``text`` that carry meaning, lower-cased and stemmed (shortcut names split at ``_``)."""
    words = _WORD.findall(text.replace("_", " ").lower())
    return [_stem(w) for w in words if w not in _STOP]


def app_terms(text: str) -> set[str]:
    """Capitalised words not at a sentence start: app and product names (Amazon, Notes, Walmart)."""
    found = set()
    for match in _CAPITALISED.finditer(text.strip()):
        lead, word = match.group(1), match.group(2)
        if lead.strip() or match.start() == 0:
            continue  # the first word of a sentence is capitalised anyway
        if word.lower() not in _STOP:
            found.add(_stem(word.lower()))
    return found


def similarity_scores(documents: Sequence[str], query: str) -> list[float]:
    """One score per document: the inverse-document-frequency weight of the query words it contains
    (app names of the query three times), divided by a slowly growing function of its length."""
    wanted = set(terms(query))
    if not wanted or not documents:
        return [0.0] * len(documents)
    # one pass of one regular expression per document, over the query's words only
    pattern = re.compile(
        r"(?<![a-z0-9])(?:" + "|".join(sorted(map(re.escape, wanted), key=len, reverse=True)) + r")[a-z0-9]*"
    )
    found: list[set[str]] = []
    frequency: Counter[str] = Counter()
    for doc in documents:
        words = {_stem(w) for w in pattern.findall(doc.replace("_", " ").lower())} & wanted
        found.append(words)
        frequency.update(words)
    total = len(documents)
    apps = app_terms(query)
    weights = {
        word: max(math.log((total + 1) / (frequency.get(word, 0) + 0.5)), 0.05)
        * (3.0 if word in apps else 1.0)
        for word in wanted
    }
    return [
        sum(weights[word] for word in words) / (1.0 + 0.02 * math.sqrt(len(doc)))
        for words, doc in zip(found, documents, strict=True)
    ]


def bounded(ordered: Iterable[int], sizes: Sequence[int], limit: int, budget_chars: int) -> list[int]:
    """The indices of ``ordered``, in order, that fit ``limit`` items and ``budget_chars`` characters
    (``sizes[i]`` each); an item too long for what is left is skipped, a shorter one later may fit."""
    chosen: list[int] = []
    used = 0
    for index in ordered:
        if len(chosen) >= limit:
            break
        if used + sizes[index] > budget_chars:
            continue  # a long item that does not fit; a shorter one further down still may
        chosen.append(index)
        used += sizes[index]
    return chosen


def rank_tips(
    items: Sequence[str],
    query: str,
    *,
    limit: int,
    budget_chars: int,
    first: Sequence[int] = (),
) -> list[int]:
    """0-based indices of the Tips to show for ``query``, best first, at most ``limit`` of them and
    ``budget_chars`` characters together. ``first`` (indices) come before the ranked ones."""
    scores = similarity_scores(items, query)
    ranked = sorted(range(len(items)), key=lambda i: (-scores[i], i))
    ordered = list(dict.fromkeys([*(i for i in first if 0 <= i < len(items)), *ranked]))
    return bounded(ordered, [len(item) + 8 for item in items], limit, budget_chars)


def usage_bonus(usage: ShortcutUsage | None) -> float:
    """How much a Shortcut's record raises (successes) or lowers (a failure streak) its rank."""
    if usage is None:
        return 0.0
    return 0.5 * math.log1p(usage.successes) - 0.75 * usage.failure_streak


def rank_shortcuts(
    shortcuts: Mapping[str, Shortcut],
    query: str,
    *,
    limit: int,
    budget_chars: int,
    usage: Mapping[str, ShortcutUsage] | None = None,
    first: Sequence[str] = (),
) -> list[str]:
    """Names of the Shortcuts to show for ``query``, best first, bounded like ``rank_tips``. Similarity
    to the name, description and precondition, plus the usage bonus; recently used ones win ties."""
    names = list(shortcuts)
    usage = usage or {}
    texts = [f"{n} {shortcuts[n].description} {shortcuts[n].precondition}" for n in names]
    scores = similarity_scores(texts, query)
    totals = [scores[i] + usage_bonus(usage.get(n)) for i, n in enumerate(names)]
    recency = [(getattr(usage.get(n), "last_used", None) or 0.0) for n in names]
    ranked = sorted(range(len(names)), key=lambda i: (-totals[i], -recency[i], i))
    position = {name: i for i, name in enumerate(names)}
    ordered = list(dict.fromkeys([*(position[n] for n in first if n in position), *ranked]))
    sizes = [len(shortcuts[n].describe()) + 1 for n in names]
    return [names[i] for i in bounded(ordered, sizes, limit, budget_chars)]
