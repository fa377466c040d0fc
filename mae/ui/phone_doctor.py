"""The demo's "Check this phone" button: ``mae device doctor`` (``mae.device.adb_doctor``) on the phone
the Phone picker names, its report shown as plain text.

Private mode only: the doctor opens Settings, taps and types on the phone, so ``app.py`` does not build
(or register) it when the demo is public. It takes the phone's run lock, so it never runs during a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from mae.device import VIRTUAL
from mae.device.adb import AdbDevice
from mae.device.adb_doctor import run_doctor
from mae.device.lock import DeviceLock
from mae.errors import DeviceBusyError, MaeError
from mae.ui.devices import DevicePool
from mae.ui.session import error_message

PHONE_DOCTOR_HINT = (
    "Checks the phone picked above: screenshots, uiautomator, keyboard, and a tap and some typing in "
    "Settings' search box (cleared afterwards). Takes about half a minute; leave the phone alone meanwhile."
)


def is_adb_phone(name: str | None) -> bool:
    """Whether the Phone picker's ``name`` is a phone on ADB (the only kind the check applies to)."""
    return bool(name) and name != VIRTUAL and not str(name).startswith(f"{VIRTUAL}-")


def check_phone(pool: DevicePool, name: str | None) -> str:
    """The doctor's report on the phone ``name``, or one sentence saying why it could not run."""
    if not name or name == VIRTUAL:
        return "The virtual phone needs no check: pick an ADB phone in Phone, then press Check this phone."
    try:
        device = pool.get(name)
        if not isinstance(device, AdbDevice):
            return "Only phones on ADB can be checked: pick an ADB phone in Phone."
        with DeviceLock(device, owner="the phone check in the demo"):
            return run_doctor(device=device).text()
    except DeviceBusyError:
        return "A run is operating this phone: press Stop or wait for it to end, then check the phone."
    except MaeError as exc:
        return f"The phone could not be checked: {error_message(exc)}"


@dataclass
class PhoneDoctorPanel:
    """The button and the box its report shows in."""

    button: gr.Button
    report: gr.Textbox

    @classmethod
    def build(cls, device_name: str | None = None) -> PhoneDoctorPanel:
        """Create the components where the caller's layout is (under the Phone picker); they show only
        while an ADB phone is picked (``device_name``: the picker's first value)."""
        shown = is_adb_phone(device_name)
        button = gr.Button("Check this phone", size="sm", elem_id="mae-phone-doctor", visible=shown)
        report = gr.Textbox(
            value=PHONE_DOCTOR_HINT,
            show_label=False,
            interactive=False,
            lines=2,
            max_lines=16,
            elem_id="mae-phone-doctor-report",
            visible=shown,
        )
        return cls(button, report)

    def wire(self, device: Any, pool: DevicePool) -> None:
        """Check the phone the ``device`` picker names on click; show the panel only for ADB phones."""

        def check(name: str | None) -> str:
            return check_phone(pool, name)

        def follow(name: str | None) -> tuple[Any, Any]:
            shown = is_adb_phone(name)
            return gr.update(visible=shown), gr.update(visible=shown, value=PHONE_DOCTOR_HINT)

        self.button.click(check, [device], [self.report], show_progress="full")
        device.change(follow, [device], [self.button, self.report], show_progress="hidden")
