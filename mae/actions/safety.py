"""Sensitive actions: a configurable policy that decides when a person must approve an action.

The policy looks at what the action does, not at every word of the Operator's description:

- ``target``: what a Tap hits: the label of the element under the tap point (its a11y name, its
  text, its caption). When nothing named lies there, the start of the description stands in for it
  ("Send the message", "Tap 'Place order'"), never a word further on ("open the first post").
- ``typed``: the text a Type action enters (a card number).
- ``app``: the app an Open_App starts.
- ``action``: the action or Shortcut name.

Each rule is a case-insensitive regex anchored at the start of what it looks at, so "Send" and "Post"
buttons are gated while "Sent items", "open the first post", "remove filter" and "sign in as guest" are
not. A match produces an ``approval_needed`` event and a call of the run's ``approver``; a refusal
is fed back to the agent as the user's answer and the run goes on. Answering a permission prompt
("While using the app", "Only this time", "Allow", "Don't allow") is not sensitive: a task that needs
the location asks for it; granting a permission for good ("Always allow", in Settings) is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mae.actions.registry import ActionCall, AtomicAction, OpenApp, Tap, Type
from mae.perception.elements import Element
from mae.perception.geometry import holds

Field_ = Literal["target", "typed", "app", "action", "description"]
"""What a rule looks at (see the module docstring; ``description`` = the whole description, for
custom rules only)."""

DEFAULT_FIELDS: tuple[Field_, ...] = ("target", "action")
MAX_LABEL_WORDS = 6
"""A tapped text longer than this is content (a post, a review), not a button's label."""
NEAR_PX = 48
"""A tap this close to an element's box (screen pixels) counts as on it."""
_LEAD = re.compile(
    r"^\s*(?:(?:i\s+will|i'll|let's|now|then|next|first|finally)[\s,]+)*"
    r"(?:(?:tap|click|press|hit|select|touch|choose)(?:\s+on)?\s+)?(?:the\s+)?[\"'“‘]?",
    re.I,
)


class SensitiveRule(BaseModel):
    """One kind of sensitive action, recognised by a case-insensitive regex."""

    model_config = ConfigDict(extra="forbid")

    name: str
    pattern: str
    fields: list[Field_] = Field(default_factory=lambda: list(DEFAULT_FIELDS))

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regex: {exc}") from None
        return value

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.I)


def _start(words: str) -> str:
    """A rule pattern matching ``words`` at the start of a label (then a word boundary)."""
    return rf"^\s*(?:{words})\b"


DEFAULT_RULES: tuple[SensitiveRule, ...] = (
    SensitiveRule(
        name="payment",
        pattern=_start(
            r"pay(?! attention)|pay now|payment|checkout|check out|proceed to (?:checkout|payment)|"
            r"place (?:the |your |my )?order|confirm (?:the |your )?(?:order|purchase|payment)|"
            r"complete (?:the )?(?:purchase|payment|order)|add (?:a |new )?(?:card|payment method)"
        ),
    ),
    SensitiveRule(name="card number", pattern=r"\b\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{1,7}\b", fields=["typed"]),
    SensitiveRule(
        name="purchase",
        pattern=_start(
            r"buy|buy now|buy it now|purchase|subscribe|order now|rent|"
            r"book (?:now|the (?:ticket|room|flight|table)|a (?:ticket|room|flight|table))"
        ),
    ),
    SensitiveRule(
        name="sending a message",
        pattern=_start(
            r"send|post|tweet|repost|retweet|reply(?: all)?|publish|share now|submit|forward|"
            r"comment(?= ?$)|call(?= ?$)"
        ),
    ),
    SensitiveRule(
        name="deleting",
        pattern=_start(
            r"delete|erase|discard|empty (?:the )?trash|clear (?:all|data|history|storage|cache)|"
            r"remove (?:account|device|all)|factory reset|wipe|move to (?:the )?(?:trash|bin)"
        ),
    ),
    SensitiveRule(
        name="installing",
        pattern=_start(r"install|uninstall|update(?= ?$)|update (?:the )?app|update all"),
    ),
    SensitiveRule(
        name="permission",
        pattern=_start(
            r"grant|always allow|allow all the time|"
            r"enable (?:access|permission)|turn on (?:location|notifications|access)"
        ),
    ),
    SensitiveRule(
        name="account change",
        pattern=_start(
            r"sign (?:in|up) with|log ?in with|continue with (?:google|facebook|apple|microsoft)|"
            r"sign out|log ?out|create (?:an |a new )?account|delete (?:my |your |the )?account|"
            r"change (?:the |your |my )?(?:password|email|phone number)|switch account|"
            r"add (?:another )?account"
        ),
    ),
)
"""The default policy: payment, purchase, sending, deleting, installing, permissions, account changes."""


def element_at(elements: Sequence[Element], x: int, y: int) -> Element | None:
    """The named element a tap at ``(x, y)`` hits: the smallest box holding the point, else the nearest
    within ``NEAR_PX``."""
    holding = [e for e in elements if e.text and holds(e.box, (x, y))]
    if holding:
        return min(holding, key=lambda e: (e.box[2] - e.box[0]) * (e.box[3] - e.box[1]))
    best: tuple[float, Element] | None = None
    for element in elements:
        if not element.text:
            continue
        dx = max(element.box[0] - x, 0, x - element.box[2])
        dy = max(element.box[1] - y, 0, y - element.box[3])
        distance = (dx * dx + dy * dy) ** 0.5
        if distance <= NEAR_PX and (best is None or distance < best[0]):
            best = (distance, element)
    return best[1] if best else None


def description_target(description: str) -> str:
    """The start of a description with a leading "tap (on) the" and quote removed: its action/target."""
    return _LEAD.sub("", description, count=1).strip()


class SafetyPolicy(BaseModel):
    """Which actions need a person's approval. ``SafetyPolicy(rules=[])`` approves everything."""

    model_config = ConfigDict(extra="forbid")

    rules: list[SensitiveRule] = Field(default_factory=lambda: [r.model_copy() for r in DEFAULT_RULES])

    def check(
        self,
        call: ActionCall,
        steps: Sequence[AtomicAction],
        description: str,
        elements: Sequence[Element] | None = None,
    ) -> str | None:
        """A reason ("payment: tapping 'Place your order'", "sending a message: described as 'Send it'")
        if the action is sensitive, else None.

        ``elements`` is the current screen's element list: the first Tap's target is looked up in it.
        """
        targets: list[tuple[str, str]] = []
        first_tap = next((s for s in steps if isinstance(s, Tap)), None)
        if first_tap is not None:
            hit = element_at(elements or [], first_tap.x, first_tap.y)
            if hit is not None:
                if len(hit.text.split()) <= MAX_LABEL_WORDS:  # a longer text is content, not a control
                    targets.append((hit.text, f"tapping {hit.text!r}"))
            else:
                lead = description_target(description)
                targets.append((lead, f"described as {lead[:60]!r}"))
        elif call.name not in ("Type", "Open_App", "Swipe", "Back", "Home", "Wait", "Switch_App"):
            lead = description_target(description)
            targets.append((lead, f"described as {lead[:60]!r}"))
        texts: dict[str, list[tuple[str, str]]] = {
            "target": targets,
            "typed": [(s.text, "the typed text") for s in steps if isinstance(s, Type)],
            "app": [(s.app_name, "the app name") for s in steps if isinstance(s, OpenApp)],
            "action": [(call.name.replace("_", " "), "the action name")],
            "description": [(description, "the description")],
        }
        for rule in self.rules:
            for field in rule.fields:
                for text, where in texts[field]:
                    match = rule.regex.search(text)
                    if match:
                        if field == "target":
                            return f"{rule.name}: {where}"
                        return f"{rule.name}: {match.group(0).strip()!r} in {where}"
        return None
