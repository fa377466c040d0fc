"""Sensitive actions: a configurable policy of regexes that decides when a person must approve an action.

The loop asks the policy about every validated Operator action before it runs. A match produces an
``approval_needed`` event and a call of the run's ``approver``; a refusal ends the run with exit reason
``rejected`` (the agent is not asked to try something else: a person said no, and a model that was
refused tends to look for another way to do the same thing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mae.actions import ActionCall, AtomicAction, OpenApp, Type

Field_ = Literal["description", "typed", "app", "action"]
"""What a rule looks at: the Operator's description, typed text, an app opened, the action/Shortcut name."""


DEFAULT_FIELDS: tuple[Field_, ...] = ("description", "action")


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


DEFAULT_RULES: tuple[SensitiveRule, ...] = (
    SensitiveRule(
        name="payment",
        pattern=r"\b(pay|payment|paying|checkout|check out|credit card|debit card|card number|cvv|billing|"
        r"place (the |your |my )?order|confirm (the |your )?order|wallet)\b",
        fields=["description", "action"],
    ),
    SensitiveRule(name="card number", pattern=r"\b\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{1,7}\b", fields=["typed"]),
    SensitiveRule(
        name="purchase",
        pattern=r"\b(buy now|buy it now|purchase|subscribe|order now|"
        r"book (the |a )?(ticket|room|flight|table))\b",
        fields=["description", "action"],
    ),
    SensitiveRule(
        name="sending a message",
        pattern=r"\b(send|sending|post|posting|publish|tweet|share|sharing|"
        r"submit (the |a )?(review|comment))\b",
        fields=["description", "action"],
    ),
    SensitiveRule(
        name="deleting",
        pattern=r"\b(delete|deleting|remove|removing|erase|clear (all|data|history)|factory reset)\b",
        fields=["description", "action"],
    ),
    SensitiveRule(
        name="installing",
        pattern=r"\b(install|installing|uninstall|update (the )?app)\b",
        fields=["description", "action"],
    ),
    SensitiveRule(
        name="signing in",
        pattern=r"\b(sign(ing)? ?in|sign(ing)? ?up|log(ging)? ?in|login|password|passcode|"
        r"verification code)\b",
        fields=["description", "action"],
    ),
)
"""The default policy: payment, purchase, sending messages, deleting, installing, signing in."""


class SafetyPolicy(BaseModel):
    """Which actions need a person's approval. ``SafetyPolicy(rules=[])`` approves everything."""

    model_config = ConfigDict(extra="forbid")

    rules: list[SensitiveRule] = Field(default_factory=lambda: [r.model_copy() for r in DEFAULT_RULES])

    def check(self, call: ActionCall, steps: Sequence[AtomicAction], description: str) -> str | None:
        """A reason ("payment: 'checkout' in the description") if the action is sensitive, else None."""
        texts: dict[str, list[str]] = {
            "description": [description],
            "typed": [s.text for s in steps if isinstance(s, Type)],
            "app": [s.app_name for s in steps if isinstance(s, OpenApp)],
            "action": [call.name.replace("_", " ")],
        }
        for rule in self.rules:
            for field in rule.fields:
                for text in texts[field]:
                    match = rule.regex.search(text)
                    if match:
                        where = {"typed": "the typed text", "app": "the app name", "action": "the action"}
                        return f"{rule.name}: {match.group(0)!r} in {where.get(field, 'the description')}"
        return None
