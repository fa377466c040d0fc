"""A stand-in for ``mae.device.adb_exec._exec`` that replays captured adb outputs and records calls.

Only the lowest function is replaced: ``run_adb``, error translation, parsing, escaping, screencap
decoding and ``AdbDevice`` all run for real. Each rule matches the adb command line (the arguments
after ``adb`` joined by spaces) by substring; the most recently added matching rule answers. A rule's
answers are used in order and the last one repeats; an answer that is an exception is raised, as the
real ``_exec`` would raise it. A command no rule matches fails the test.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

FIXTURES = Path(__file__).parent / "fixtures"
SERIAL = "2B161FDH2002X4"

Answer = str | bytes | BaseException | Callable[[], "str | bytes"]


def fixture(name: str) -> str:
    """A captured output from ``tests/device/fixtures``."""
    return (FIXTURES / name).read_text(encoding="utf-8")


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


class FakeClock:
    """A monotonic clock and sleep that only move when told (adb calls can cost time)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@dataclass
class Rule:
    pattern: str
    answers: list[Answer]
    cost_s: float = 0.0
    used: int = 0


@dataclass
class Replay:
    """Answers adb commands from rules; ``calls`` records every command issued."""

    clock: FakeClock | None = None
    rules: list[Rule] = field(default_factory=list)
    calls: list[list[str]] = field(default_factory=list)

    def on(self, pattern: str, *answers: Answer, cost_s: float = 0.0) -> Replay:
        self.rules.append(Rule(pattern, list(answers) or [""], cost_s))
        return self

    def __call__(self, args: list[str], *, binary: bool = False, timeout: float = 20.0) -> bytes | str:
        self.calls.append(list(args))
        line = " ".join(args)
        for rule in reversed(self.rules):
            if rule.pattern in line:
                break
        else:
            raise AssertionError(f"unexpected adb command: adb {line}")
        answer = rule.answers[min(rule.used, len(rule.answers) - 1)]
        rule.used += 1
        if self.clock is not None:
            self.clock.now += rule.cost_s
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            answer = answer()
        if binary:
            return answer if isinstance(answer, bytes) else answer.encode()
        return answer.decode() if isinstance(answer, bytes) else answer

    @property
    def lines(self) -> list[str]:
        """Every command issued, as ``adb`` argument strings."""
        return [" ".join(args) for args in self.calls]

    @property
    def shell(self) -> list[str]:
        """The shell command lines issued (what the phone's ``sh`` ran)."""
        return [" ".join(args[3:]) for args in self.calls if args[2:3] == ["shell"]]


def usb_phone(clock: FakeClock | None = None) -> Replay:
    """A replay of one Pixel 7 on USB, answering the usual read-only queries."""
    return (
        Replay(clock=clock)
        .on("devices -l", fixture("devices_one_usb.txt"))
        .on("get-state", "device")
        .on("shell wm size", fixture("wm_size.txt"))
        .on("shell dumpsys input_method", fixture("dumpsys_input_method_a14_hidden.txt"))
        .on("shell cmd package query-activities", fixture("query_activities_pixel7_a14.txt"))
        .on("shell input ", "")
    )
