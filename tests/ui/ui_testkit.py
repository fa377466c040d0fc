"""Shared pieces of the UI tests: scripted agent replies, a fast Perceptor, an in-process demo server."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from mae.config import Settings, load_settings
from mae.device.virtual import VirtualPhone
from mae.perception.elements import Perception
from mae.testing.fake_model_server import FakeModelServer, FakeReply
from mae.ui.devices import DevicePool
from mae.ui.runner import Backend

MODEL = "fake-vlm"


def manager(subgoal: str, plan: str = "1. Open Notes\n2. Go back to the home screen") -> str:
    thought = "The task is done." if subgoal == "Finished" else f"Next: {subgoal[0].lower()}{subgoal[1:]}."
    return f"### Thought ###\n{thought}\n### Plan ###\n{plan}\n### Current Subgoal ###\n{subgoal}\n"


def operator(action: dict[str, Any], description: str, thought: str = "This is the next move.") -> str:
    body = f"### Action ###\n{json.dumps(action)}\n### Description ###\n{description}\n"
    return f"### Thought ###\n{thought}\n{body}"


def reflector(progress: str, outcome: str = "A") -> str:
    return (
        f"### Outcome ###\n{outcome}\n### Error Description ###\nNone\n### Progress Status ###\n{progress}\n"
    )


def notetaker(notes: str = "None") -> str:
    return f"### Important Notes ###\n{notes}\n"


@dataclass
class Script:
    """Replies per role for a run, added to the fake server's role queues."""

    manager: list[str | FakeReply]
    operator: list[str | FakeReply]
    reflector: list[str | FakeReply]
    notetaker: list[str | FakeReply]

    def load(self, server: FakeModelServer) -> None:
        for role in ("manager", "operator", "reflector", "notetaker"):
            server.add(*getattr(self, role), role=role)


SEND_TAP = {"name": "Tap", "arguments": {"x": 640, "y": 284}}
"""A tap on a blank spot of the Notes list (900, 399 on the screen; the model sees a 768x1664 image):
with a "Send ..." description, the safety gate asks."""


@contextmanager
def held() -> Iterator[threading.Event]:
    """An event for ``two_step_script(hold=...)``: set by the test when it no longer needs the run busy,
    and set anyway when the block ends (a failed test does not leave the reply waiting)."""
    gate = threading.Event()
    try:
        yield gate
    finally:
        gate.set()


def two_step_script(
    second_description: str = "Return to the home screen",
    delay_s: float = 0.0,
    second_action: dict[str, object] | None = None,
    hold: threading.Event | None = None,
) -> Script:
    """Open Notes, then Home (or ``second_action``), then finished: two actions, three Manager turns.
    The second Manager turn waits ``delay_s``, and for ``hold`` to be set when one is given."""
    second_manager: str | FakeReply = manager("Go back to the home screen")
    if delay_s or hold is not None:
        second_manager = FakeReply(text=str(second_manager), delay_s=delay_s, hold=hold)
    return Script(
        manager=[manager("Open the Notes app"), second_manager, manager("Finished")],
        operator=[
            operator({"name": "Open_App", "arguments": {"app_name": "Notes"}}, "The Notes app opens"),
            operator(second_action or {"name": "Home", "arguments": {}}, second_description),
        ],
        reflector=[reflector("Notes is open"), reflector("Back on the home screen")],
        notetaker=[notetaker("None"), notetaker("Notes app checked")],
    )


class TruthPerceptor:
    """W_V straight from the virtual phone's own element list: instant and deterministic."""

    def __init__(self, phone: VirtualPhone) -> None:
        self.phone = phone
        self.calls = 0

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
        self.calls += 1
        width, height = image.size
        active = self.phone.keyboard_active() if keyboard_active is None else keyboard_active
        return Perception(
            width=width, height=height, elements=self.phone.ground_truth(), keyboard_active=active
        )


def settings_for(tmp_path: Path, base_url: str, **extra: Any) -> Settings:
    overrides = {
        "backbone": "custom",
        "base_url": base_url,
        "model": MODEL,
        "device": "virtual",
        "log_dir": str(tmp_path / "runs"),
        "memory_dir": str(tmp_path / "memory"),
        "evolution.evolve": False,
        **extra,
    }
    return load_settings(overrides=overrides, environ={})


def make_backend(settings: Settings, phone: VirtualPhone, **kwargs: Any) -> Backend:
    pool = DevicePool(opener=lambda name: phone)
    return Backend(settings, pool=pool, perceptor_factory=lambda s: TruthPerceptor(phone), **kwargs)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
