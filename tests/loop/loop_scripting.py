"""Scripted agents for loop tests: a fake-server responder that answers by role and step.

Actions are computed from the virtual phone's ground truth, so the scripts do not hard-code layout
coordinates. ``GroundTruthPerceptor`` stands in for the real Perceptor where perception is not under test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from mae.device.virtual import VirtualPhone
from mae.llm import ChatClient, ModelProfile
from mae.perception.elements import Perception
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest


class GroundTruthPerceptor:
    """W_V straight from the virtual phone's display list (fast, exact)."""

    def __init__(self, phone: VirtualPhone) -> None:
        self.phone = phone
        self.calls = 0

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
        self.calls += 1
        width, height = image.size
        return Perception(
            width=width,
            height=height,
            elements=self.phone.ground_truth(),
            keyboard_active=bool(keyboard_active),
        )


def make_client(server: FakeModelServer, **profile: Any) -> ChatClient:
    """A client of the fake server that sends screenshots unresized, so the scripts' taps (screen
    pixels from the phone's ground truth) are in the model's frame; ``test_loop_coordinates`` covers
    resized images in every convention."""
    settings: dict[str, Any] = {
        "provider": "test",
        "base_url": server.base_url,
        "model": "fake-vlm",
        "api_key_env": None,
        "max_retries": 0,
        "image": {"resize": "none"},
    }
    settings.update(profile)
    return ChatClient(ModelProfile.model_validate(settings))


def manager_reply(plan: str, subgoal: str) -> str:
    return f"### Thought ###\nPlanning.\n\n### Plan ###\n{plan}\n\n### Current Subgoal ###\n{subgoal}\n"


def operator_reply(action: dict[str, Any] | str, description: str = "Do it.") -> str:
    text = action if isinstance(action, str) else json.dumps(action)
    return f"### Thought ###\nActing.\n\n### Action ###\n{text}\n\n### Description ###\n{description}\n"


def reflector_reply(outcome: str = "A", progress: str = "Progress made.", error: str = "None") -> str:
    return (
        f"### Outcome ###\n{outcome}\n\n### Error Description ###\n{error}\n\n"
        f"### Progress Status ###\n{progress}\n"
    )


def notes_reply(notes: str = "None") -> str:
    return f"### Important Notes ###\n{notes}\n"


def center_of(phone: VirtualPhone, text: str) -> tuple[int, int]:
    """Centre of the first on-screen element whose text is ``text``."""
    for element in phone.ground_truth():
        if element.text == text:
            return element.center
    raise AssertionError(f"{text!r} is not on screen {phone.screen_name}")


def tap(phone: VirtualPhone, text: str) -> dict[str, Any]:
    x, y = center_of(phone, text)
    return {"name": "Tap", "arguments": {"x": x, "y": y}}


def section(request_text: str, title: str) -> str:
    """The content of ``### title ###`` in a recorded prompt."""
    match = re.search(rf"### {re.escape(title)} ###\n(.*?)(?:\n### |\Z)", request_text, re.S)
    return match.group(1).strip() if match else ""


ActionSource = Callable[[RecordedRequest], "dict[str, Any] | str"]


@dataclass
class Step:
    """One scripted step: the subgoal, the Operator's action (or a function of the request), outcome."""

    subgoal: str
    action: dict[str, Any] | str | ActionSource
    outcome: str = "A"
    error: str = "None"
    description: str = "Do it."


@dataclass
class Script:
    """Answers every role from a list of steps; the Manager says Finished after the last one."""

    steps: list[Step]
    notes: Callable[[RecordedRequest], str] = lambda request: "None"
    finish: bool = True
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def plan(self) -> str:
        return "\n".join(f"{i}. {s.subgoal}" for i, s in enumerate(self.steps, 1))

    def _next(self, role: str) -> int:
        index = self.counts.get(role, 0)
        self.counts[role] = index + 1
        return index

    def __call__(self, request: RecordedRequest) -> str | None:
        role = request.role or ""
        if role == "manager":
            index = self._next(role)
            if index >= len(self.steps):
                return manager_reply(self.plan, "Finished" if self.finish else self.steps[-1].subgoal)
            return manager_reply(self.plan, self.steps[index].subgoal)
        if role == "operator":
            step = self.steps[min(self._next(role), len(self.steps) - 1)]
            action = step.action(request) if callable(step.action) else step.action
            return operator_reply(action, step.description)
        if role == "reflector":
            step = self.steps[min(self._next(role), len(self.steps) - 1)]
            return reflector_reply(step.outcome, f"Done: {step.subgoal}", step.error)
        if role == "notetaker":
            self._next(role)
            return notes_reply(self.notes(request))
        return None
