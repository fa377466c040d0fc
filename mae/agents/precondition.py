"""Checking a Shortcut's precondition before it runs (the paper's Appendix C.1, Figure 10 failure).

The loop calls the guard when the Operator picks a Shortcut; a returned reason refuses the call and goes
back to the Operator as feedback (it then picks another action). Modes (``evolution.precondition``):

- ``operator``: the Operator's own judgement, as in the paper (its prompt lists every precondition),
  plus model-free checks of the call against the current screen: the first operation's tap target
  must be at the height of something the Perceptor recognised (not an empty part of the screen), and
  a Shortcut that starts by typing needs the keyboard shown.
- ``verify``: the same checks, then a short call to the ``verifier`` model with the screenshot, the
  recognised elements and the precondition, which answers Yes or No with a reason.
- ``off``: no check.

The guard counts refusals per Shortcut (``refused``) for usage tracking. A verifier that fails or gives
no usable answer does not block the Shortcut (the problem is recorded in ``problems``).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from PIL import Image
from pydantic import BaseModel

from mae.actions.registry import Shortcut
from mae.agents.base import Screen, TurnListener, ask
from mae.agents.parsing import parse_yes_no, require_sections
from mae.agents.prompting import render_prompt
from mae.llm.client import ChatClient
from mae.llm.errors import ModelError
from mae.perception.elements import Perception

ROLE = "verifier"
PreconditionMode = Literal["operator", "verify", "off"]
MODES: tuple[str, ...] = ("operator", "verify", "off")

log = logging.getLogger(__name__)

_COORD = re.compile(r"^[xy]\d*$")


class Verdict(BaseModel):
    """The verifier's answer."""

    holds: bool
    reason: str = ""


class PreconditionCheck(BaseModel):
    """One check, for the run's record."""

    shortcut: str
    mode: str
    refused: bool
    reason: str = ""
    seconds: float = 0.0


def parse_verdict(text: str) -> Verdict:
    """``### Verdict ###`` must start with Yes or No; ``### Reason ###`` is optional."""
    sections = require_sections(text, ["Verdict"], optional=("Reason",))
    return Verdict(holds=parse_yes_no(sections["Verdict"]), reason=sections["Reason"].strip())


def first_tap(shortcut: Shortcut, arguments: dict[str, Any]) -> tuple[int, int] | None:
    """Where the Shortcut's first operation taps on the current screen, if it starts with a Tap."""
    steps = shortcut.atomic_action_sequence
    if not steps or steps[0].name != "Tap":
        return None
    point: list[int] = []
    for axis in ("x", "y"):
        value = steps[0].arguments_map.get(axis)
        value = arguments.get(value, value) if isinstance(value, str) else value
        try:
            point.append(int(value))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
    return point[0], point[1]


def screen_check(shortcut: Shortcut, arguments: dict[str, Any], perception: Perception) -> str | None:
    """Model-free checks of a Shortcut call against the current screen; a reason to refuse, or None."""
    steps = shortcut.atomic_action_sequence
    if steps and steps[0].name == "Type" and not perception.keyboard_active:
        return (
            f"it starts by typing, but the keyboard is hidden, so no text box has focus (precondition: "
            f"{shortcut.precondition or 'none given'}); tap the input box first"
        )
    point = first_tap(shortcut, arguments)
    if point is None or not perception.elements:
        return None
    _x, y = point
    # Lenient on purpose: wide input boxes show text only at one end, so any element in the same band
    # of rows counts. What this catches is a tap into an empty part of the screen (a blank or loading
    # page, the wrong app, coordinates remembered from another screen).
    margin = max(24, perception.height // 40)
    for element in perception.elements:
        _left, top, _right, bottom = element.box
        if top - margin <= y <= bottom + margin:
            return None
    return (
        "nothing was recognised on the screen at the height of the point where it taps first, so the "
        f"screen does not seem to meet its precondition ({shortcut.precondition or 'none given'}); check "
        "the screen and use atomic operations or tap coordinates from the current screen"
    )


class PreconditionGuard:
    """A ``ShortcutGuard`` for ``run_task``; counts refusals per Shortcut."""

    def __init__(
        self,
        mode: PreconditionMode,
        client: ChatClient | None = None,
        *,
        on_turn: TurnListener | None = None,
        prompts_dir: Path | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown precondition mode {mode!r}; use one of {', '.join(MODES)}")
        if mode == "verify" and client is None:
            raise ValueError("the verify mode needs a model client")
        self.mode = mode
        self.client = client
        self.on_turn = on_turn
        self.prompts_dir = prompts_dir
        self.refused: Counter[str] = Counter()
        self.checks: list[PreconditionCheck] = []
        self.problems: list[str] = []

    def __call__(
        self, shortcut: Shortcut, arguments: dict[str, Any], perception: Perception, image: Image.Image
    ) -> str | None:
        if self.mode == "off":
            return None
        started = time.monotonic()
        reason = screen_check(shortcut, arguments, perception)
        if reason is None and self.mode == "verify":
            reason = self._verify(shortcut, arguments, perception, image)
        self.checks.append(
            PreconditionCheck(
                shortcut=shortcut.name,
                mode=self.mode,
                refused=reason is not None,
                reason=reason or "",
                seconds=round(time.monotonic() - started, 3),
            )
        )
        if reason is not None:
            self.refused[shortcut.name] += 1
            log.info("precondition of %s refused: %s", shortcut.name, reason)
        return reason

    def _verify(
        self, shortcut: Shortcut, arguments: dict[str, Any], perception: Perception, image: Image.Image
    ) -> str | None:
        assert self.client is not None
        screen = Screen(image, perception)
        mapper = screen.mapper(self.client, ROLE)
        shown = dict(arguments)
        for step in shortcut.atomic_action_sequence:
            for op_arg, value in step.arguments_map.items():
                if _COORD.match(op_arg) and isinstance(value, str) and isinstance(shown.get(value), int):
                    point = (shown[value], 0) if op_arg[0] == "x" else (0, shown[value])
                    mapped = mapper.to_model(*point)
                    shown[value] = mapped[0] if op_arg[0] == "x" else mapped[1]
        prompt = render_prompt(
            "precondition",
            {
                "shortcut": shortcut.signature(),
                "description": shortcut.description or "(no description)",
                "precondition": shortcut.precondition or "(none given: judge from the description)",
                "arguments": json.dumps(shown, ensure_ascii=False),
                "frame": screen.frame(self.client, ROLE),
                "keyboard": "The keyboard is shown."
                if perception.keyboard_active
                else "The keyboard is hidden.",
                "perception": screen.describe(self.client, ROLE),
            },
            self.prompts_dir,
        )
        try:
            result = ask(
                self.client,
                ROLE,
                prompt,
                [screen.encoded(self.client, ROLE)],
                parse_verdict,
                agent="precondition",
                on_turn=self.on_turn,
            )
        except ModelError as exc:
            self.problems.append(
                f"precondition check of {shortcut.name} failed ({exc}); the call was allowed"
            )
            return None
        if result.value is None:
            self.problems.append(
                f"precondition check of {shortcut.name} gave no usable answer ({result.problem}); allowed"
            )
            return None
        if result.value.holds:
            return None
        return f"its precondition does not hold: {result.value.reason or shortcut.precondition}"


def make_guard(
    mode: str,
    client: ChatClient | None = None,
    *,
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
) -> PreconditionGuard | None:
    """The guard for ``mode`` (None for ``off``)."""
    if mode == "off":
        return None
    return PreconditionGuard(mode, client, on_turn=on_turn, prompts_dir=prompts_dir)  # type: ignore[arg-type]
