"""``mae device doctor``: what works on an attached phone, measured, and what to change (``docs/device.md``).

The checks, in order, each ``ok``, ``warn``, ``fail`` or ``skip`` with what was found and what to do:

- ``adb``: the adb server's version; ``device``: maker, model, Android version and skin (``getprop``),
  and whether the phone is awake and unlocked (the focused window);
- ``screen``: size, density, orientation and display cut-out;
- ``screenshot``: whether ``screencap`` works and how long a capture takes;
- ``uiautomator``: whether ``uiautomator dump`` works and how long it takes;
- ``keyboard``: the active keyboard, and whether ADB Keyboard is there for non-ASCII text;
- ``tap``: Settings is opened, its search entry (found in the dump) tapped, and the next dump compared;
- ``typing``: text with spaces, quotes, ``&``, ``%s`` (and, through ADB Keyboard, accents and emoji) is
  typed into that search box, read back from the dump, and cleared afterwards.

The verdict is ``ready``, ``limited`` (mae runs, with what the advice says is missing) or ``not usable``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from mae.device import adb_exec, adb_parse, adb_text
from mae.device.adb import FOCUS_QUERY, IME_QUERY, AdbDevice
from mae.errors import DeviceError, MaeError
from mae.perception.a11y import A11yNode, A11yTree

Status = Literal["ok", "warn", "fail", "skip"]
Verdict = Literal["ready", "limited", "not usable"]

MIN_SDK = 21
"""Android 5: ``exec-out`` (screenshots, dumps) needs it."""
TESTED_SDK = 24
"""Android 7: the oldest version mae's app launching and keyboard handling are tested for."""
ASCII_PROBE = "mae 'it' \"q\" a&b 5%s"
"""Spaces, both quotes, ``&`` and a literal ``%s``: what ``input text`` has to survive."""
UNICODE_PROBE = "café 😀"
SLOW_SCREENSHOT_S = 2.0
SLOW_DUMP_S = 3.0
SETTINGS = "am start -W -a android.settings.SETTINGS"
ORIENTATION_QUERY = "dumpsys input | grep -E 'SurfaceOrientation|orientation='"
CUTOUT_QUERY = "dumpsys activity top | grep -E 'mDisplayCutout='"
TAP_ADVICE = (
    "taps do not reach apps: on Xiaomi turn on 'USB debugging (Security settings)' in Developer options, on "
    "other phones turn off screen overlays (blue-light filters, chat heads), then run the doctor again"
)
LOCKED_FOCUS = ("NotificationShade", "Keyguard", "StatusBar")
"""Focused windows that mean the phone shows its lock screen (or is asleep on it)."""
_SEARCH = re.compile(r"search", re.IGNORECASE)
SKINS = {
    "ro.build.version.oneui": "One UI",
    "ro.miui.ui.version.name": "MIUI",
    "ro.vivo.os.version": "Funtouch OS",
    "ro.build.version.emui": "EMUI",
    "ro.build.version.opporom": "ColorOS",
    "ro.os.version.release": "XOS",
}


class Check(BaseModel):
    """One thing the doctor tried on the phone."""

    name: str
    status: Status
    found: str = Field(description="what was measured, in words")
    advice: str = Field("", description="what to change, when something is wrong")
    seconds: float | None = None


class DoctorReport(BaseModel):
    """Every check on one phone, and the verdict."""

    serial: str
    checks: list[Check]
    verdict: Verdict

    @property
    def advice(self) -> list[str]:
        return [c.advice for c in self.checks if c.advice and c.status in ("warn", "fail")]

    def text(self) -> str:
        """The report as a person reads it in a terminal."""
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "skip": "skip"}
        lines = [f"Phone {self.serial}"]
        for check in self.checks:
            took = f" ({check.seconds:.2f} s)" if check.seconds is not None else ""
            lines.append(f"  [{marks[check.status]}] {check.name}: {check.found}{took}")
        lines.append(f"Verdict: {self.verdict}")
        lines += [f"  - {advice}" for advice in self.advice]
        return "\n".join(lines)


def verdict_of(checks: list[Check]) -> Verdict:
    essential = {"device", "screenshot", "tap"}
    if any(c.status == "fail" and c.name in essential for c in checks):
        return "not usable"
    if any(c.status in ("warn", "fail") for c in checks):
        return "limited"
    return "ready"


class _Doctor:
    def __init__(self, device: AdbDevice, clock: Callable[[], float]) -> None:
        self.device = device
        self.clock = clock
        self.checks: list[Check] = []
        self.tree: A11yTree | None = None
        self.props: dict[str, str] = {}

    def add(
        self, name: str, status: Status, found: str, advice: str = "", seconds: float | None = None
    ) -> None:
        self.checks.append(
            Check(
                name=name,
                status=status,
                found=found,
                advice=advice,
                seconds=round(seconds, 3) if seconds is not None else None,
            )
        )

    def timed(self, action: Callable[[], object]) -> tuple[object, float]:
        started = self.clock()
        result = action()
        return result, self.clock() - started

    def dump(self) -> A11yTree | None:
        try:
            return self.device.ui_tree()
        except DeviceError:
            return None

    # -- the checks ---------------------------------------------------------------------------------

    def adb_version(self) -> None:
        try:
            version = adb_exec.server_version()
        except DeviceError as exc:
            self.add("adb", "fail", str(exc), "start adb with `adb start-server`, then run the doctor again")
            return
        self.add("adb", "ok", f"adb server version {version}")

    def device_facts(self) -> bool:
        props = adb_parse.getprop(self.device.shell("getprop"))
        maker = props.get("ro.product.manufacturer", "") or props.get("ro.product.brand", "")
        model = props.get("ro.product.model", "unknown model")
        release = props.get("ro.build.version.release", "?")
        sdk_text = props.get("ro.build.version.sdk", "")
        skin = next(
            (f", {name} {_skin_version(props[key])}" for key, name in SKINS.items() if props.get(key)), ""
        )
        found = f"{maker} {model}, Android {release} (API {sdk_text or '?'}){skin}".strip()
        sdk = int(sdk_text) if sdk_text.isdigit() else None
        if sdk is not None and sdk < MIN_SDK:
            self.add(
                "device",
                "fail",
                found,
                f"Android {release} is too old for mae (screenshots and dumps need Android 5 or newer): "
                "use a phone with a newer Android",
            )
            return False
        focus = self.device.shell(FOCUS_QUERY)
        if any(re.search(rf"mCurrentFocus=Window\{{\S+ u\d+ {name}\}}", focus) for name in LOCKED_FOCUS):
            self.add(
                "device",
                "fail",
                f"{found}; the lock screen is in front",
                "wake the phone and unlock it (and set the screen timeout to 10 minutes while mae runs), "
                "then run the doctor again",
            )
            return False
        if sdk is not None and sdk < TESTED_SDK:
            self.add(
                "device",
                "warn",
                found,
                f"Android {release} is older than Android 7, the oldest mae is tested on: expect apps to "
                "open from the home screen only",
            )
        else:
            self.add("device", "ok", found)
        self.props = props
        return True

    def screen(self) -> None:
        size = self.device.screen_size()
        dpi = adb_parse.density(self.device.shell("wm density"), self.props)
        turns = adb_parse.orientation(self.device.shell(ORIENTATION_QUERY))
        insets = adb_parse.cutout(self.device.shell(CUTOUT_QUERY))
        parts = [f"{size[0]}x{size[1]}", f"{dpi} dpi" if dpi else "density unknown"]
        parts.append(
            {0: "portrait", 1: "landscape", 2: "portrait (upside down)", 3: "landscape"}.get(turns or 0, "")
            if turns is not None
            else "orientation unknown"
        )
        if insets is not None:
            parts.append(f"cut-out insets (left, top, right, bottom) {insets}")
        else:
            parts.append("no cut-out")
        found = ", ".join(p for p in parts if p)
        if turns in (1, 3) and size[0] < size[1]:
            self.add(
                "screen",
                "warn",
                found,
                "the phone is turned sideways: turn on auto-rotate lock in portrait, since apps and the "
                "agents' tips assume a portrait phone",
            )
            return
        self.add("screen", "ok", found)

    def screenshot(self) -> bool:
        try:
            _, seconds = self.timed(self.device.screenshot)
        except DeviceError as exc:
            self.add("screenshot", "fail", str(exc), "mae cannot see this phone's screen: update its Android")
            return False
        method = self.device.screenshot_method or "png"
        seconds = self.device.screenshot_timings.get(method, seconds)
        others = [f"{m} {t:.2f} s" for m, t in self.device.screenshot_timings.items() if m != method]
        found = f"screencap works, as {method}" + (f" (the other way: {', '.join(others)})" if others else "")
        if seconds > SLOW_SCREENSHOT_S:
            self.add(
                "screenshot",
                "warn",
                found,
                "screenshots are slow: use a USB cable (USB 3 if you can) instead of Wi-Fi",
                seconds,
            )
        else:
            self.add("screenshot", "ok", found, seconds=seconds)
        return True

    def uiautomator(self) -> None:
        started = self.clock()
        try:
            tree = self.device.ui_tree()
        except DeviceError as exc:
            tried = self.device.ui_dumper.attempts
            first = tried[0][1] if tried else str(exc)
            self.add(
                "uiautomator",
                "warn",
                f"uiautomator dump failed each way tried ({', '.join(n for n, _ in tried)}): {first[:200]}",
                "mae works from OCR alone on this phone: set MAE_A11Y=off to skip the dump's attempts "
                "(and if another automation tool, such as Appium's uiautomator2 server, is running, stop it)",
                self.clock() - started,
            )
            return
        seconds = self.clock() - started
        self.tree = tree
        found = f"{len(tree.nodes)} nodes via {tree.strategy}"
        if tree.warnings:
            found += f" ({'; '.join(tree.warnings)})"
        if seconds > SLOW_DUMP_S:
            self.add("uiautomator", "warn", found, "dumps are slow: close animated screens", seconds)
        else:
            self.add("uiautomator", "ok", found, seconds=seconds)

    def keyboard(self) -> bool:
        current = adb_parse.current_ime(self.device.shell("dumpsys input_method")) or "unknown"
        ime = adb_parse.ime_state(self.device.shell(IME_QUERY))
        has_adb = adb_text.ADB_KEYBOARD_IME in ime.installed
        found = f"active keyboard {current}; ADB Keyboard {'installed' if has_adb else 'not installed'}"
        if has_adb:
            self.add("keyboard", "ok", found)
        else:
            hint = adb_text.ADB_KEYBOARD_INSTALL_HINT.format(serial=self.device.serial)
            self.add(
                "keyboard", "warn", found, f"non-ASCII text (accents, CJK, emoji) cannot be typed: {hint}"
            )
        return has_adb

    def tap_and_type(self, has_adb: bool) -> None:
        if self.tree is None:
            for name in ("tap", "typing"):
                self.add(name, "skip", "needs uiautomator dump, which does not work here")
            return
        self.device.shell(SETTINGS)
        self.device.settle()
        before = self.dump()
        entry = _search_entry(before.nodes) if before is not None else None
        if before is None or entry is None:
            for name in ("tap", "typing"):
                self.add(name, "skip", "Settings shows no search entry to tap (a skin without one?)")
            self.device.home()
            return
        x, y = (entry.bounds[0] + entry.bounds[2]) // 2, (entry.bounds[1] + entry.bounds[3]) // 2
        try:
            self.device.tap(x, y)
        except MaeError as exc:
            problem = f"tapping Settings' search at ({x}, {y}) failed: {str(exc)[:200]}"
            after = None
        else:
            problem = f"tapped Settings' search at ({x}, {y}); the screen did not change"
            self.device.settle()
            after = self.dump()
        field = _field(after.nodes) if after is not None else None
        if after is None or _signature(after) == _signature(before):
            self.add("tap", "fail", problem, TAP_ADVICE)
            self.device.home()
            return
        self.add("tap", "ok", f"tapped Settings' search at ({x}, {y}); the screen changed")
        if field is None:
            self.add("typing", "skip", "no text field came up after the tap")
            self.device.home()
            return
        try:
            self.typing(has_adb)
        finally:
            self.device.back()
            self.device.home()

    def typing(self, has_adb: bool) -> None:
        results: list[str] = []
        problems: list[str] = []
        probes = [ASCII_PROBE] + ([UNICODE_PROBE] if has_adb else [])
        for probe in probes:
            typed = ""
            try:
                self.device.type_text(probe)
                self.device.settle()
                tree = self.dump()
                now = _field(tree.nodes) if tree is not None else None
                typed = now.text if now is not None else ""
            except MaeError as exc:
                problems.append(f"typing {probe!r} failed: {str(exc)[:160]}")
            finally:
                self.clear(len(probe) + 4)
            if typed == probe:
                results.append(f"{probe!r} typed exactly")
            elif not problems or not problems[-1].startswith(f"typing {probe!r}"):
                problems.append(f"{probe!r} came out as {typed!r}")
        tree = self.dump()
        left = _field(tree.nodes) if tree is not None else None
        cleared = left is not None and left.text == ""
        found = "; ".join(results + problems)
        found += (
            "; the field was cleared afterwards"
            if cleared
            else "; the field could not be cleared: clear it by hand"
        )
        if problems:
            self.add(
                "typing",
                "fail" if not results else "warn",
                found,
                "text does not arrive as sent: install ADB Keyboard (see above) and make it the keyboard mae "
                "switches to, and turn off the phone's autocorrect for the duration",
            )
        else:
            self.add("typing", "ok", found)

    def clear(self, count: int) -> None:
        keys = " ".join([str(adb_text.KEYCODE_MOVE_END)] + [str(adb_text.KEYCODE_DEL)] * count)
        self.device.shell(f"input keyevent {keys}")


def _skin_version(value: str) -> str:
    """A skin's version as people say it: One UI writes 8.5 as ``80500``."""
    if value.isdigit() and len(value) == 5:
        return f"{int(value) // 10000}.{int(value) % 10000 // 100}"
    return value


def _search_entry(nodes: list[A11yNode]) -> A11yNode | None:
    """Settings' search bar or button: a clickable node whose id, label or description says search."""
    candidates = [
        n
        for n in nodes
        if (n.clickable or n.editable) and (_SEARCH.search(n.resource_id) or _SEARCH.search(n.label))
    ]
    return min(candidates, key=lambda n: (n.bounds[1], n.area)) if candidates else None


def _field(nodes: list[A11yNode]) -> A11yNode | None:
    fields = [n for n in nodes if n.editable]
    return fields[0] if fields else None


def _signature(tree: A11yTree) -> list[tuple[str, str, tuple[int, int, int, int]]]:
    return [(n.class_name, n.label, n.bounds) for n in tree.nodes]


def run_doctor(
    serial: str | None = None,
    *,
    device: AdbDevice | None = None,
    clock: Callable[[], float] = time.monotonic,
    progress: Callable[[str], None] | None = None,
) -> DoctorReport:
    """Check the phone ``serial`` (or ``device``) and say what to change; ``DeviceError`` if none answers."""
    phone = device or AdbDevice(serial)
    doctor = _Doctor(phone, clock)

    def step(label: str) -> None:
        if progress is not None:
            progress(label)

    def report() -> DoctorReport:
        return DoctorReport(serial=phone.serial, checks=doctor.checks, verdict=verdict_of(doctor.checks))

    step("adb")
    doctor.adb_version()
    step("device")
    if not doctor.device_facts():
        return report()
    step("screen")
    doctor.screen()
    step("screenshot")
    if not doctor.screenshot():
        return report()
    step("uiautomator")
    doctor.uiautomator()
    step("keyboard")
    has_adb = doctor.keyboard()
    step("tap and typing")
    doctor.tap_and_type(has_adb)
    return report()
