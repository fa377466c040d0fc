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
    def build(cls) -> PhoneDoctorPanel:
        """Create the components where the caller's layout is (under the Phone picker)."""
        button = gr.Button("Check this phone", size="sm", elem_id="mae-phone-doctor")
        report = gr.Textbox(
            value=PHONE_DOCTOR_HINT,
            show_label=False,
            interactive=False,
            lines=2,
            max_lines=16,
            elem_id="mae-phone-doctor-report",
        )
        return cls(button, report)

    def wire(self, device: Any, pool: DevicePool) -> None:
        """Check the phone the ``device`` picker names on click."""

        def check(name: str | None) -> str:
            return check_phone(pool, name)

        self.button.click(check, [device], [self.report], show_progress="full")
