"""Reading a phone's accessibility tree with ``uiautomator dump`` (see ``docs/device.md``).

``uiautomator dump`` fails on some screens (``ERROR: could not get idle state`` while something
animates, ``null root node`` on secure windows, nothing useful in WebViews and games), so several ways
are tried in turn and the one that worked is tried first next time:

- ``tty``: ``exec-out uiautomator dump /dev/tty``, the XML on stdout (one round trip);
- ``sdcard``: ``shell uiautomator dump /sdcard/...`` then ``exec-out cat`` of the file;
- ``compressed``: the same with ``--compressed`` (fewer nodes, faster on long lists).

A timeout stops the attempt at once (another strategy would wait as long again).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mae.errors import DeviceError
from mae.perception.a11y import A11yError, A11yTree, parse_uiautomator

DUMP_TIMEOUT_S = 8.0
DUMP_FILE = "/sdcard/mae_window_dump.xml"
STRATEGIES: dict[str, list[tuple[str, str]]] = {
    "tty": [("exec-out", "uiautomator dump /dev/tty")],
    "sdcard": [
        ("shell", f"uiautomator dump {DUMP_FILE}"),
        ("exec-out", f"cat {DUMP_FILE}; rm -f {DUMP_FILE}"),
    ],
    "compressed": [
        ("shell", f"uiautomator dump --compressed {DUMP_FILE}"),
        ("exec-out", f"cat {DUMP_FILE}; rm -f {DUMP_FILE}"),
    ],
}

Runner = Callable[[str, str, float], str]
"""``(verb, command, timeout) -> output`` where verb is ``shell`` or ``exec-out``."""


class UiDumper:
    """Dumps the tree of one phone, remembering which strategy works on it."""

    def __init__(self, run: Runner, clock: Callable[[], float] = time.monotonic) -> None:
        self._run = run
        self._clock = clock
        self.preferred = "tty"
        self.attempts: list[tuple[str, str]] = []
        """``(strategy, problem or "ok")`` of the last dump, for logs and tests."""

    def _order(self) -> list[str]:
        return [self.preferred, *(name for name in STRATEGIES if name != self.preferred)]

    def dump(self, screen: tuple[int, int] | None = None) -> A11yTree:
        """The current screen's tree; ``A11yError`` saying what each strategy answered if none worked."""
        started = self._clock()
        self.attempts = []
        for name in self._order():
            try:
                output = ""
                for verb, command in STRATEGIES[name]:
                    output = self._run(verb, command, DUMP_TIMEOUT_S)
                    if verb == "shell" and _failed(output):
                        break
                tree = parse_uiautomator(output, screen)
            except A11yError as exc:
                self.attempts.append((name, str(exc)))
                continue
            except DeviceError as exc:
                self.attempts.append((name, str(exc)))
                if "did not answer" in str(exc):
                    break  # timed out: another strategy would wait as long again
                continue
            self.attempts.append((name, "ok"))
            self.preferred = name
            return tree.model_copy(update={"seconds": round(self._clock() - started, 4), "strategy": name})
        reasons = "; ".join(f"{name}: {problem}" for name, problem in self.attempts)
        raise A11yError(f"uiautomator dump failed ({reasons[:400]})")


def _failed(output: str) -> bool:
    """Whether ``uiautomator dump FILE`` reported an error instead of writing the file."""
    low = output.lower()
    return "error" in low or "exception" in low or "killed" in low
