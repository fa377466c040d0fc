"""Sensitive actions: a configurable policy that decides when a person must approve an action.

The policy looks at what the action does, not at every word of the Operator's description:

- ``target``: what a Tap can activate: the labels of the clickable element whose bounds hold the tap
  point (from the accessibility tree, where the phone has one: a button's tap area is often larger
  than its text) and of every short labelled element within reach (``NEAR_PX``); a long text (a
  product title, a post) is content, not a label, but does not hide a button beside it. When nothing
  named lies there, the start of the description stands in for it ("Send the message", "Tap 'Place
  order'"), never a word further on ("open the first post"). A password field (the tree's password
  flag, or a field labelled password/PIN) is a sensitive target, and so is typing into one.
- ``typed``: the text a Type action enters, checked as it lands: alone, joined to what consecutive
  Type calls entered before it and to the content of the fields on screen, and each with the
  separators between digits removed (a card number split over calls, or written with dots or spaces).
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

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from mae.actions.registry import ActionCall, AtomicAction, Back, Home, OpenApp, SwitchApp, Tap, Type
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
        name="password",
        pattern=r"^\s*password field\b|\b(?:password|passcode|pin)\s*(?:is|:|=)\s*\S",
        fields=["target", "typed"],
    ),
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


def _distance(box: tuple[int, int, int, int], x: int, y: int) -> float:
    dx = max(box[0] - x, 0, x - box[2])
    dy = max(box[1] - y, 0, y - box[3])
    return float((dx * dx + dy * dy) ** 0.5)


def _area(box: tuple[int, int, int, int]) -> int:
    return max(0, box[2] - box[0]) * max(0, box[3] - box[1])


def tap_targets(elements: Sequence[Element], x: int, y: int) -> list[Element]:
    """What a tap at ``(x, y)`` can activate, nearest first: the elements of the clickable node whose
    bounds hold the point (``Element.control``), then every element within ``NEAR_PX`` of it."""
    activated = [e for e in elements if e.control is not None and holds(e.control, (x, y))]
    if activated:
        smallest = min(_area(e.control) for e in activated if e.control is not None)
        activated = [e for e in activated if e.control is not None and _area(e.control) == smallest]
    near = sorted(
        (e for e in elements if e not in activated and _distance(e.box, x, y) <= NEAR_PX),
        key=lambda e: _distance(e.box, x, y),
    )
    return [*activated, *near]


def is_password_field(element: Element) -> bool:
    """A password field: the accessibility tree says so, or a field whose label says password or PIN."""
    if element.password:
        return True
    return element.role == "field" and bool(PASSWORD_LABEL.search(element.text))


PASSWORD_LABEL = re.compile(r"\b(?:password|passcode|pin)\b", re.I)
DIGIT_GAPS = re.compile(r"(?<=\d)[\s.\-_/·•,]+(?=\d)")


def digits_joined(text: str) -> str:
    """``text`` with the separators between digits removed ("4111.1111 1111-1111" -> "4111111111111111")."""
    return DIGIT_GAPS.sub("", text)


def description_target(description: str) -> str:
    """The start of a description with a leading "tap (on) the" and quote removed: its action/target."""
    return _LEAD.sub("", description, count=1).strip()


LEAVES_FIELD = (OpenApp, Back, Home, SwitchApp)
"""Operations after which typing no longer goes on in the same field."""


class SafetyPolicy(BaseModel):
    """Which actions need a person's approval. ``SafetyPolicy(rules=[])`` approves everything."""

    model_config = ConfigDict(extra="forbid")

    rules: list[SensitiveRule] = Field(default_factory=lambda: [r.model_copy() for r in DEFAULT_RULES])
    _typed_run: str = PrivateAttr("")
    """What consecutive Type calls entered so far (reset by an action that leaves the field: opening an
    app, Back, Home, switching apps)."""
    _in_password: bool = PrivateAttr(False)
    """Whether the last Tap landed on a password field (what is typed next goes there)."""
    _pending: tuple[str, bool] | None = PrivateAttr(None)
    """The typed run and password state after the action last checked, kept by ``commit`` once it runs
    (a declined action, or one checked twice while its approval is asked, types nothing)."""

    def _typed_texts(
        self, steps: Sequence[AtomicAction], elements: Sequence[Element]
    ) -> tuple[list[tuple[str, str]], str]:
        """The texts a ``typed`` rule looks at for these steps: each Type's text as it lands (after the
        earlier consecutive Type calls, and after each field's content on screen), also with the
        separators between digits removed; and the run of consecutive Type calls after these steps."""
        out: list[tuple[str, str]] = []
        fields = [e.text for e in elements if e.role == "field" and e.text]
        run = self._typed_run
        for step in steps:
            if not isinstance(step, Type):
                if isinstance(step, LEAVES_FIELD):  # a Tap may refocus the same field, Wait and Enter
                    run = ""  # keep it: the field's content and the run tell
                continue
            landed = [(step.text, "the typed text")]
            if run:
                landed.append((run + step.text, "the text typed over consecutive Type calls"))
            landed += [(f + step.text, "the field's content after typing") for f in fields]
            run += step.text
            for text, where in landed:
                out.append((text, where))
                joined = digits_joined(text)
                if joined != text:
                    out.append((joined, where))
        return out, run

    def commit(self) -> None:
        """The action last checked ran: what it typed joins the run that the next Type calls extend."""
        if self._pending is not None:
            self._typed_run, self._in_password = self._pending
            self._pending = None

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
        on_password = False
        if first_tap is not None:
            hits = tap_targets(elements or [], first_tap.x, first_tap.y)
            for hit in hits:
                if is_password_field(hit):
                    on_password = True
                    targets.append(("password field", f"tapping the password field {hit.text[:40]!r}"))
                elif hit.text and len(hit.text.split()) <= MAX_LABEL_WORDS:  # longer: content
                    targets.append((hit.text, f"tapping {hit.text!r}"))
            if not any(hit.text for hit in hits):
                lead = description_target(description)
                targets.append((lead, f"described as {lead[:60]!r}"))
        elif call.name not in ("Type", "Open_App", "Swipe", "Back", "Home", "Wait", "Switch_App"):
            lead = description_target(description)
            targets.append((lead, f"described as {lead[:60]!r}"))
        into_password = on_password if first_tap is not None else self._in_password
        typed, run = self._typed_texts(steps, elements or [])
        if typed and into_password:
            targets.append(("password field", "typing into a password field"))
        still_in = into_password and not any(not isinstance(s, (Tap, Type)) for s in steps)
        self._pending = (run, still_in)
        texts: dict[str, list[tuple[str, str]]] = {
            "target": targets,
            "typed": typed,
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
