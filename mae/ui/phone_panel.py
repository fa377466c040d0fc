"""The Run tab's phone panel: the live picture, the element boxes and manual control of the phone.

Each method is a Gradio handler; ``mae.ui.phone_column`` lays out the components and wires them to these.
The panel never operates a phone a run is driving (unless that run waits for an approval), and in public
mode it only shows the visitor's own runs.
"""

from __future__ import annotations

import time
from typing import Any

import gradio as gr

from mae.device import VIRTUAL
from mae.public_mode import is_public
from mae.ui import space
from mae.ui.devices import display_image, display_size, manual_action, reset_phone, to_screen
from mae.ui.phone_view import TabState
from mae.ui.runner import Backend
from mae.ui.session import error_markdown, error_message

MANUAL_HINT = (
    "Click the screen to tap there, or use the buttons (when no run is active or a run waits for approval)."
)
MANUAL_BUSY = (
    "A run is operating this phone: manual control works once it has ended, while it waits for an "
    "approval, or after Stop."
)
LIVE_RETRY_S = 10.0
"""After a failed live refresh (phone unplugged, adb down), seconds before the next try."""


class PhonePanel:
    """Handlers for the phone picture and the manual controls of one demo (``backend``)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.registry = backend.runs

    def perceptor(self) -> Any:
        return self.backend.perceptor(self.backend.settings)

    def current_screen(self, tab: TabState | None, device_name: str) -> tuple[Any, Any, str]:
        """A new picture of ``device_name`` for ``tab`` (and the manual-control line to show)."""
        tab = tab or TabState()
        try:
            screen = self.backend.pool.get(device_name).screenshot()
            tab.set_picture(screen)
            tab.quiet_until = 0.0
            if tab.show_boxes:
                tab.refresh(lambda: screen, self.perceptor, force=True)
            return tab, tab.shown(), space.MANUAL_OFF if is_public() else MANUAL_HINT
        except Exception as exc:
            return tab, gr.skip(), f"⚠ {error_markdown(exc)}"

    def on_tick(self, tab: TabState | None, device_name: str) -> Any:
        """The live view: a new picture when the phone changed (idle, or between a run's steps)."""
        if tab is None or time.monotonic() < tab.quiet_until:
            return gr.skip()
        if is_public():  # each visitor's phone is their own: shown by their runs only
            return gr.skip()
        run = self.registry.active(device_name or VIRTUAL)
        if run is not None:
            run.touch()
            if tab.show_boxes or run.view.annotated is not None:
                return gr.skip()  # an action is being shown, or the boxes come with the run's screens
        try:
            screen = self.backend.pool.get(device_name or VIRTUAL).screenshot
            changed = tab.refresh(screen, self.perceptor if tab.show_boxes and run is None else None)
        except Exception:  # an unplugged phone: the picker and manual control say so; retry later
            tab.quiet_until = time.monotonic() + LIVE_RETRY_S
            return gr.skip()
        return tab.shown() if changed else gr.skip()

    def on_overlay(self, tab: TabState | None, show: bool, device_name: str) -> Any:
        """Show or hide the element boxes over the picture."""
        if tab is None:
            return gr.skip()
        tab.show_boxes = bool(show)
        picture = tab.picture
        if show and (picture is None or picture.boxes is None) and self.registry.active(device_name) is None:
            try:
                tab.refresh(self.backend.pool.get(device_name).screenshot, self.perceptor, force=True)
            except Exception as exc:
                gr.Warning(f"Cannot draw the boxes: {error_message(exc)}")
        return tab.shown() if tab.picture is not None else gr.skip()

    def manual(self, tab: TabState | None, name: str, op: str, arguments: dict[str, Any]) -> tuple[Any, str]:
        """Do one manual operation on the phone: the new picture and a line saying what was done."""
        if is_public():  # the shown phone is shared: visitors operate their own phone by runs
            return gr.skip(), space.MANUAL_OFF
        run = self.registry.active(name)
        paused = run is not None and run.view.pending_approval is not None
        if run is not None and not paused:
            return gr.skip(), MANUAL_BUSY
        try:
            screen = manual_action(self.backend.pool.get(name), op, arguments, paused_run=paused)
        except Exception as exc:
            return gr.skip(), f"⚠ {error_markdown(exc)}"
        done = f"{op}({', '.join(str(v) for v in arguments.values())})"
        return self._show(tab, screen), f"Did `{done}`."

    def on_tap(self, tab: TabState | None, name: str, evt: gr.SelectData) -> tuple[Any, str]:
        """A click on the picture taps the phone at that point."""
        try:
            screen_size = self.backend.pool.get(name).screen_size()
            x, y = to_screen(evt.index, display_size(screen_size), screen_size)
        except Exception as exc:
            return gr.skip(), f"⚠ {error_markdown(exc)}"
        return self.manual(tab, name, "Tap", {"x": x, "y": y})

    def on_reset(self, tab: TabState | None, name: str) -> tuple[Any, str]:
        """Put the phone back: the virtual phone to its first state, a real one on its home screen."""
        if is_public():  # each visitor's own phone starts fresh with every run
            return gr.skip(), space.MANUAL_OFF
        if self.registry.active(name) is not None:
            return gr.skip(), "A run is operating this phone: press Stop first, then Reset phone."
        try:
            screen = reset_phone(self.backend.pool.get(name))
        except Exception as exc:
            return gr.skip(), f"⚠ {error_markdown(exc)}"
        self.registry.forget(name)  # its last run no longer describes the phone
        what = "back to its first state" if name == VIRTUAL else "on its home screen"
        return self._show(tab, screen), f"The phone is {what}."

    def _show(self, tab: TabState | None, screen: Any) -> Any:
        if tab is None:
            return display_image(screen)
        tab.refresh(lambda: screen, self.perceptor if tab.show_boxes else None, force=True)
        return tab.shown()
