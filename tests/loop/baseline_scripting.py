"""Scripted Mobile-Agent v1 and v2 replies for loop tests (answers by model role and prompt)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mae.testing.fake_model_server import RecordedRequest

Reply = str | Callable[[RecordedRequest], str]


def v1_reply(action: str, thought: str = "Next operation.") -> str:
    return f"### Observation ###\nThe screen.\n\n### Thought ###\n{thought}\n\n### Action ###\n{action}\n"


def check_reply(done: bool, thought: str = "Checked.") -> str:
    return f"### Thought ###\n{thought}\n\n### Completed ###\n{'Yes' if done else 'No'}\n"


def decision_reply(action: dict[str, Any] | str, operation: str = "Do it.", memory: str = "None") -> str:
    text = action if isinstance(action, str) else json.dumps(action)
    return (
        f"### Thought ###\nDeciding.\n\n### Action ###\n{text}\n\n### Operation ###\n{operation}\n\n"
        f"### Memory ###\n{memory}\n"
    )


def planning_reply(progress: str) -> str:
    return f"### Thought ###\nUpdating.\n\n### Completed Contents ###\n{progress}\n"


def reflection_reply(answer: str, thought: str = "Compared the screens.") -> str:
    return f"### Thought ###\n{thought}\n\n### Answer ###\n{answer}\n"


def _label(line: str) -> str:
    """An element line's text: ``text "Ninja DZ201 ..."; coordinates: [x, y]`` -> ``Ninja DZ201 ...``."""
    head = line.split("; coordinates:")[0]
    return head.split('"', 2)[1] if head.count('"') >= 2 else head


def price_on_screen(request: RecordedRequest) -> str | None:
    """The first price listed after the Ninja DZ201 title in the prompt's perception list."""
    labels = [_label(line) for line in request.text.splitlines()]
    for index, label in enumerate(labels):
        if label.startswith("Ninja DZ201"):
            price = next((x for x in labels[index:] if x.startswith("$")), None)
            if price is not None:
                return price
    return None


@dataclass
class V1Script:
    """v1: one reply per step from ``actions``; completion checks answered from ``checks``."""

    actions: list[Reply]
    checks: list[bool] = field(default_factory=lambda: [True])
    agent_requests: list[RecordedRequest] = field(default_factory=list)
    check_requests: list[RecordedRequest] = field(default_factory=list)

    def __call__(self, request: RecordedRequest) -> str | None:
        if request.role != "operator":
            return None
        if "### Completed ###" in request.text:
            done = self.checks[min(len(self.check_requests), len(self.checks) - 1)]
            self.check_requests.append(request)
            return check_reply(done, "All parts are done." if done else "The note is not written yet.")
        index = min(len(self.agent_requests), len(self.actions) - 1)
        self.agent_requests.append(request)
        reply = self.actions[index]
        return v1_reply(reply(request) if callable(reply) else reply)


@dataclass
class V2Script:
    """v2: decisions in order, reflection answers in order (default A), planning echoes the history."""

    decisions: list[Reply]
    answers: list[str] = field(default_factory=list)
    memory: Callable[[RecordedRequest], str] = lambda request: "None"
    requests: dict[str, list[RecordedRequest]] = field(default_factory=dict)

    def _log(self, role: str, request: RecordedRequest) -> int:
        seen = self.requests.setdefault(role, [])
        seen.append(request)
        return len(seen) - 1

    def __call__(self, request: RecordedRequest) -> str | None:
        role = request.role or ""
        if role == "manager":
            index = self._log(role, request)
            return planning_reply(f"{index + 1} operation(s) done.")
        if role == "operator":
            index = self._log(role, request)
            reply = self.decisions[min(index, len(self.decisions) - 1)]
            text = reply(request) if callable(reply) else reply
            return text if text.startswith("###") else decision_reply(text, memory=self.memory(request))
        if role == "reflector":
            index = self._log(role, request)
            return reflection_reply(self.answers[index] if index < len(self.answers) else "A")
        return None
