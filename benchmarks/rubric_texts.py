"""The texts a hard-suite grader needs the agent to see, screen by screen along the reference routes.

A task's checks name what matters: the words and values its note must hold (``note`` checks: a
restaurant's name, ``12.98``, ``12:40``) and the items it must have seen, opened, routed to or put in
the cart (``bestbuy:price:bb-samsung-s90c-55``, ``maps:hours:gangnam-bbq``). Item ids are looked up in
the virtual phone's data (a product's title and price, a place's name, rating, hours or phone, a
post's author and text, a paper's title). On every distinct screen of the task's reference route, a
ground-truth text of the virtual phone that holds one of these terms (or is a line of one: a wrapped
title) is a rubric label, unless the keyboard covers it; ``found`` says whether an element list shows it.

Used by ``element_list.py`` (rubric-label recall); not a script.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from mae.actions.reading import parse_action_text
from mae.actions.registry import resolve_call
from mae.device.virtual import VirtualPhone, theme
from mae.eval.virtual_suite import VirtualTask, load_task_suite
from mae.perception import Perception
from mae.perception.a11y import A11yTree

DATA = Path(__file__).resolve().parents[1] / "mae" / "device" / "virtual" / "data"
FIELDS = {
    "price": ("title", "price"),
    "result": ("name",),
    "rating": ("name", "rating"),
    "hours": ("hours", "status"),
    "phone": ("phone",),
    "address": ("address",),
    "highlights": ("highlights",),
    "post": ("author", "text"),
    "post_detail": ("author", "text"),
    "topic": ("topic",),
    "citations": ("title",),
    "abstract": ("title",),
    "paper": ("title",),
}
"""Which fields of an item a ``seen`` key's middle part (``store:price:id``) points at."""
DEFAULT_FIELDS = ("title", "name", "topic", "price")
MIN_LINE = 4
"""A ground-truth text shorter than this (squashed) does not count as a line of a longer term."""


def squash(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _items() -> dict[str, dict[str, Any]]:
    """Every object with an ``id`` in the virtual phone's data, by id."""
    found: dict[str, dict[str, Any]] = {}

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("id"), str):
                found.setdefault(value["id"], value)
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for path in sorted(DATA.rglob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return found


def _values(item: dict[str, Any], fields: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for name in fields:
        value = item.get(name)
        if isinstance(value, float) and name == "price":
            out.append(f"{value:.2f}")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out.append(str(value))
        elif isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out += [v for v in value if isinstance(v, str)]
    return out


def _checks(checks: list[Any]) -> Iterator[dict[str, Any]]:
    for check in checks:
        raw = check if isinstance(check, dict) else check.model_dump()
        if raw.get("kind") in ("any", "all"):
            yield from _checks(raw.get("checks") or [])
        else:
            yield raw


def task_terms(task: VirtualTask, items: dict[str, dict[str, Any]]) -> list[str]:
    """The words and values ``task``'s checks need the agent to see."""
    terms: list[str] = []
    for check in _checks(list(task.checks)):
        kind = check.get("kind")
        if kind == "note":
            for group in check.get("groups") or []:
                terms += group
            for fact in check.get("facts") or []:
                terms += [*fact.get("item", []), *fact.get("values", [])]
            continue
        keys = [str(v) for v in check.get("values") or []]
        if check.get("item"):
            keys.append(str(check["item"]))
        for key in keys:
            parts = key.split(":")
            ids = [p for p in parts if p in items]
            middle = parts[1] if len(parts) >= 3 else ""
            for item_id in ids[-1:]:
                terms += _values(items[item_id], FIELDS.get(middle, DEFAULT_FIELDS))
    seen: set[str] = set()
    unique = []
    for term in terms:
        key = squash(term)
        if key and key not in seen:
            seen.add(key)
            unique.append(term)
    return unique


def is_rubric_label(text: str, terms: list[str]) -> bool:
    """Whether a ground-truth text holds a term, or is a line of one (a title wrapped or cut)."""
    key = squash(text.removesuffix("...").removesuffix("…"))
    if not key:
        return False
    return any((t := squash(term)) and (t in key or (len(key) >= MIN_LINE and key in t)) for term in terms)


def _keyboard_top(phone: VirtualPhone) -> int:
    """Where the on-screen keyboard starts: texts below it are drawn under the keys, not seen."""
    width, height = phone.screen_size()
    k = width / theme.DESIGN_WIDTH
    return round((height / k - theme.NAV_H - theme.KEYBOARD_H) * k)


@dataclass
class RubricShot:
    task: str
    image: Image.Image
    keyboard: bool
    tree: A11yTree
    labels: list[tuple[str, tuple[int, int, int, int]]] = field(default_factory=list)

    def tree_source(self) -> A11yTree:
        return self.tree


def collect_rubric_screens(limit: int) -> list[RubricShot]:
    """Distinct screens of the hard suite's reference routes (realism as each task sets it) that show
    at least one rubric label, at most ``limit``."""
    items = _items()
    shots: list[RubricShot] = []
    digests: set[str] = set()
    for task in load_task_suite(suite="hard"):
        terms = task_terms(task, items)
        phone = VirtualPhone()
        task.prepare(phone)
        for text in ["Home()", *task.reference_actions, "Wait()"]:
            image = phone.screenshot()
            digest = hashlib.sha1(image.tobytes()).hexdigest()
            if digest not in digests and len(shots) < limit:
                digests.add(digest)
                hidden = _keyboard_top(phone) if phone.keyboard_active() else image.height
                labels = [
                    (e.text, e.box)
                    for e in phone.ground_truth()
                    if e.kind == "text" and e.text and e.center[1] < hidden and is_rubric_label(e.text, terms)
                ]
                if labels:
                    shots.append(RubricShot(task.id, image, phone.keyboard_active(), phone.ui_tree(), labels))
            for step in resolve_call(parse_action_text(text), {}, phone.screen_size()):
                step.execute(phone)
    return shots


def found(perception: Perception, text: str, box: tuple[int, int, int, int]) -> bool:
    """Whether the list shows ``text``: one element holds it whole, or the elements whose centres lie
    in its box do together (a line OCR split in two)."""
    key = squash(text.removesuffix("...").removesuffix("…"))
    if any(key in squash(e.text) for e in perception.elements):
        return True
    inside = [
        e for e in perception.elements if box[0] <= e.center[0] < box[2] and box[1] <= e.center[1] < box[3]
    ]
    return bool(inside) and key in squash(" ".join(e.text for e in inside))
