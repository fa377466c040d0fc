"""Estimated cost of model calls from a dated provider price table (``prices.json``, list prices)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from mae.llm.client import CallRecord

PRICES_FILE = Path(__file__).with_name("prices.json")


@dataclass(frozen=True)
class PriceTable:
    as_of: str
    per_million: dict[str, tuple[float, float]]

    def price(self, provider: str, model: str) -> tuple[float, float] | None:
        """(input, output) dollars per million tokens of ``provider:model``, or None when unknown."""
        return self.per_million.get(f"{provider}:{model}")


@lru_cache(maxsize=1)
def price_table(path: Path = PRICES_FILE) -> PriceTable:
    data = json.loads(path.read_text(encoding="utf-8"))
    models = {name: (float(p[0]), float(p[1])) for name, p in data["models"].items()}
    return PriceTable(as_of=str(data["as_of"]), per_million=models)


def estimate_cost(records: Iterable[CallRecord], table: PriceTable | None = None) -> tuple[float | None, str]:
    """``(dollars, note)``; dollars is None when no call has a known price, and the note names the
    models without one (their calls count as free in a partial sum)."""
    table = table or price_table()
    total, priced, unknown = 0.0, False, set()
    for record in records:
        price = table.price(record.provider, record.model)
        if price is None:
            unknown.add(f"{record.provider}:{record.model}")
            continue
        priced = True
        total += (record.input_tokens * price[0] + record.output_tokens * price[1]) / 1_000_000
    note = f"prices as of {table.as_of}"
    if unknown:
        note += "; no price for " + ", ".join(sorted(unknown))
    return (round(total, 6) if priced else None), note
