"""The one narrow interface every phone implements: a real phone over ADB or the virtual phone.

Everything above this layer talks to a ``Device`` only; only the action layer (``mae.actions``) turns
the paper's atomic operations into calls of these methods, and only ``mae.device.adb`` turns them into
adb commands. Coordinates are always screen pixels of the full-resolution screenshot.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from PIL import Image


@runtime_checkable
class Device(Protocol):
    """A phone that can be seen and operated."""

    @property
    def name(self) -> str:
        """A short identifier: the ADB serial, or ``"virtual"``."""
        ...

    def screen_size(self) -> tuple[int, int]:
        """Width and height of the screen in pixels."""
        ...

    def screenshot(self) -> Image.Image:
        """The current screen as an RGB image of ``screen_size()``, in memory."""
        ...

    def open_app(self, name: str) -> None:
        """Start the app whose launcher label (or package name) is ``name``.

        Raises ``ActionError`` listing close matches when no installed app fits.
        """
        ...

    def tap(self, x: int, y: int) -> None: ...

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 400) -> None: ...

    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused field in one go."""
        ...

    def enter(self) -> None: ...

    def switch_app(self) -> None:
        """Open the recent-apps switcher."""
        ...

    def back(self) -> None: ...

    def home(self) -> None: ...

    def wait(self, seconds: float = 1.0) -> None: ...

    def keyboard_active(self) -> bool:
        """Whether the on-screen keyboard is shown (asked of the phone, never guessed by OCR)."""
        ...

    def foreground_app(self) -> str:
        """Package (or app) name of the app in front."""
        ...

    def installed_apps(self) -> dict[str, str]:
        """Launcher label -> package name of every launchable app."""
        ...

    def settle(self, timeout_s: float = 3.0) -> float:
        """Wait until the screen stops changing (or ``timeout_s``); return the seconds waited."""
        ...

    def close(self) -> None:
        """Release connections and locks."""
        ...
