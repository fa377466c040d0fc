"""Fixtures for loop tests: a fresh virtual phone, a client on the fake server, and a run helper."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loop_scripting import GroundTruthPerceptor, make_client

import mae.cli.run_cmd as run_cmd
from mae.config import LoopSettings, Settings
from mae.device.virtual import VirtualPhone
from mae.run.events import Event
from mae.run.loop import run_task
from mae.run.results import TaskResult
from mae.run.runtime import Runtime, build_runtime
from mae.testing.fake_model_server import FakeModelServer


@pytest.fixture
def phone() -> VirtualPhone:
    return VirtualPhone()


RunFn = Callable[..., tuple[TaskResult, list[Event]]]


@pytest.fixture
def run(phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path) -> RunFn:
    """``run(instruction, **run_task_kwargs) -> (result, events)`` against ``fake_server``."""

    def go(instruction: str = "Do the task", **kwargs: Any) -> tuple[TaskResult, list[Event]]:
        events: list[Event] = []
        loop = kwargs.pop("loop", {})
        kwargs.setdefault("settings", LoopSettings.model_validate(loop))
        kwargs.setdefault("perceptor", GroundTruthPerceptor(phone))
        kwargs.setdefault("client", make_client(fake_server))
        device = kwargs.pop("device", phone)
        extra = kwargs.pop("listener", None)

        def listener(event: Event) -> None:
            events.append(event)
            if extra is not None:
                extra(event)

        result = run_task(instruction, device=device, listener=listener, log_dir=tmp_path / "runs", **kwargs)
        return result, events

    return go


@pytest.fixture
def cli_phone(monkeypatch: pytest.MonkeyPatch) -> VirtualPhone:
    """The CLI builds its runtime as usual, but with a known virtual phone and ground-truth perception."""
    phone = VirtualPhone()

    def fake_build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
        assert settings.device == "virtual"
        return build_runtime(settings, api_keys, device=phone, perceptor=GroundTruthPerceptor(phone))

    monkeypatch.setattr(run_cmd, "build_runtime", fake_build_runtime)
    return phone
