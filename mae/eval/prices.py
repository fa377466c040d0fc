"""Estimated cost of model calls from a dated provider price table (``prices.json``, list prices).

Input tokens a provider served from its prompt cache (``CallRecord.cached_tokens``) are priced at the
model's cached-input rate; the rest of the input at the full rate.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from mae.llm.client import CallRecord

PRICES_FILE = Path(__file__).with_name("prices.json")


@dataclass(frozen=True)
class PriceTable:
    as_of: str
    per_million: dict[str, tuple[float, float]]
    cached_per_million: dict[str, float] = field(default_factory=dict)

    def price(self, provider: str, model: str) -> tuple[float, float] | None:
        """(input, output) dollars per million tokens of ``provider:model``, or None when unknown."""
        return self.per_million.get(f"{provider}:{model}")

    def cached_price(self, provider: str, model: str) -> float | None:
        """Dollars per million cached input tokens (the full input rate when the table has none)."""
        name = f"{provider}:{model}"
        if name in self.cached_per_million:
            return self.cached_per_million[name]
        price = self.per_million.get(name)
        return price[0] if price else None

    def call_cost(self, record: CallRecord) -> float | None:
        """Dollars of one call, or None when its model has no price."""
        price = self.price(record.provider, record.model)
        if price is None:
            return None
        cached = min(record.cached_tokens, record.input_tokens)
        cached_rate = self.cached_price(record.provider, record.model) or price[0]
        fresh = record.input_tokens - cached
        return (fresh * price[0] + cached * cached_rate + record.output_tokens * price[1]) / 1_000_000


@lru_cache(maxsize=1)
def price_table(path: Path = PRICES_FILE) -> PriceTable:
    data = json.loads(path.read_text(encoding="utf-8"))
    models = {name: (float(p[0]), float(p[1])) for name, p in data["models"].items()}
    cached = {name: float(p[2]) for name, p in data["models"].items() if len(p) > 2}
    return PriceTable(as_of=str(data["as_of"]), per_million=models, cached_per_million=cached)


def estimate_cost(records: Iterable[CallRecord], table: PriceTable | None = None) -> tuple[float | None, str]:
    """``(dollars, note)``; dollars is None when no call has a known price, and the note names the
    models without one (their calls count as free in a partial sum)."""
    table = table or price_table()
    total, priced, unknown = 0.0, False, set()
    for record in records:
        cost = table.call_cost(record)
        if cost is None:
            unknown.add(f"{record.provider}:{record.model}")
            continue
        priced = True
        total += cost
    note = f"prices as of {table.as_of}"
    if unknown:
        note += "; no price for " + ", ".join(sorted(unknown))
    return (round(total, 6) if priced else None), note
