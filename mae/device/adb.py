"""A real Android phone over ADB: the only module that turns the atomic operations into adb commands.

Every command goes through ``mae.device.adb_exec.run_adb`` (and from there through ``_exec``, the one
function that talks to adb). Text escaping lives in ``adb_text``, screencap decoding in
``adb_screen``, output parsing in ``adb_parse``, app resolution in ``adb_apps``, and choosing the
phone in ``adb_devices``. The adb command issued for each operation is listed in ``docs/device.md``.
"""

from __future__ import annotations

import difflib
import functools
import logging
import math
import time
from collections.abc import Callable

import numpy as np
from PIL import Image

from mae.device import adb_a11y, adb_apps, adb_exec, adb_parse, adb_screen, adb_text
from mae.device.adb_apps import LauncherApp
from mae.device.adb_devices import AdbDeviceInfo, attached_serials, list_devices, select_serial, state_error
from mae.device.adb_exec import HOST_TIMEOUT_S, SHELL_TIMEOUT_S
from mae.device.adb_screen import ScreencapError
from mae.device.settle import THUMB_WIDTH, SettleResult, thumbnail, wait_until_stable
from mae.errors import ActionError, DeviceError
from mae.perception.a11y import A11yTree
from mae.perception.elements import Element

log = logging.getLogger("mae.device.adb")

TextFinder = Callable[[Image.Image], list[Element]]
"""OCR used by the ``Open_App`` fallback: texts with boxes on a screenshot."""

SCREENCAP = {"png": "screencap -p", "raw": "screencap"}
FOCUS_QUERY = "dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'"
IME_QUERY = "ime list -a -s; echo ---; ime list -s; echo ---; settings get secure default_input_method"
LAUNCH_FLAGS = "0x10200000"  # NEW_TASK | RESET_TASK_IF_NEEDED, as the launcher does
FRAME_REUSE_S = 1.0
"""A frame captured while settling is returned by ``screenshot()`` if no action came after it and it is
at most this old."""
IME_READY_TIMEOUT_S = 3.0


class AdbDevice:
    """A phone attached over USB or Wi-Fi, operated with adb shell commands."""

    def __init__(
        self,
        serial: str | None = None,
        *,
        text_finder: TextFinder | None = None,
        screenshot_method: str = "auto",
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Open ``serial`` (``host:port`` connects over Wi-Fi), or the only phone attached.

        ``screenshot_method`` is ``"png"``, ``"raw"`` or ``"auto"`` (time both once, keep the faster).
        Raises ``DeviceError`` saying what to do when no usable phone is found.
        """
        if screenshot_method not in {"auto", "png", "raw"}:
            raise ValueError("screenshot_method must be 'auto', 'png' or 'raw'")
        self.serial = select_serial(serial)
        self.screenshot_method: str | None = None if screenshot_method == "auto" else screenshot_method
        self.screenshot_timings: dict[str, float] = {}
        self.last_settle_s = 0.0
        self.last_settle: SettleResult | None = None
        self._text_finder = text_finder
        self._clock = clock
        self._sleep = sleep
        self._size: tuple[int, int] | None = None
        self._apps: list[LauncherApp] | None = None
        self._frame: tuple[float, bytes, str] | None = None
        self.ui_dumper = adb_a11y.UiDumper(self._run_for_dump, clock)

    # -- plumbing ---------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.serial

    def __repr__(self) -> str:
        return f"AdbDevice({self.serial!r})"

    def shell(self, command: str, timeout: float = SHELL_TIMEOUT_S) -> str:
        """Run ``command`` with the phone's ``sh`` and return its output (stdout and stderr)."""
        return str(adb_exec.run_adb(["-s", self.serial, "shell", command], timeout=timeout))

    def _exec_out(self, command: str) -> bytes:
        data = adb_exec.run_adb(["-s", self.serial, "exec-out", command], binary=True)
        return data if isinstance(data, bytes) else data.encode()

    def _input(self, command: str) -> None:
        """Run an ``input``/``am`` command; raise ``ActionError`` if the phone reports a failure."""
        self._frame = None
        output = self.shell(command).strip()
        if any(word in output for word in ("Exception", "Error:", "Usage:", "usage:")):
            raise ActionError(f"the phone rejected `{command}`: {output[-400:]}")

    def check_attached(self) -> None:
        """Raise ``DeviceError`` if the phone is no longer attached and ready."""
        state = str(adb_exec.run_adb(["-s", self.serial, "get-state"], timeout=HOST_TIMEOUT_S)).strip()
        error = state_error(AdbDeviceInfo(serial=self.serial, state=state or "unknown"))
        if error is not None:
            raise error

    # -- screen -----------------------------------------------------------------------------------

    def screen_size(self) -> tuple[int, int]:
        if self._size is None:
            self._size = adb_parse.screen_size(self.shell("wm size"))
        return self._size

    def _grab(self, method: str) -> bytes:
        """One screencap with ``method``, validated; a bad capture checks whether the phone is gone."""
        data = self._exec_out(SCREENCAP[method])
        try:
            if method == "png":
                adb_screen.validate_png(data)
            else:
                adb_screen.validate_raw(data)
        except ScreencapError:
            self.check_attached()
            raise
        return data

    def _choose_method(self) -> tuple[bytes, str]:
        """Time PNG and raw captures (twice each, decoding included) and keep the faster for this phone.

        Returns the last capture of the chosen method, so the measurement doubles as a screenshot.
        """
        timings: dict[str, float] = {}
        failures: dict[str, str] = {}
        captured: dict[str, bytes] = {}
        for method in ("png", "raw", "png", "raw"):
            if method in failures:
                continue
            started = self._clock()
            try:
                captured[method] = self._grab(method)
                adb_screen.decode(captured[method], method)
            except ScreencapError as exc:
                failures[method] = str(exc)
                continue
            timings[method] = min(timings.get(method, math.inf), self._clock() - started)
        if not timings:
            raise DeviceError(f"{self.serial}: screencap does not work ({'; '.join(failures.values())})")
        method = min(timings, key=lambda m: timings[m])
        self.screenshot_timings = timings
        self.screenshot_method = method
        log.info("%s: screenshots via %s (%s)", self.serial, method, timings)
        return captured[method], method

    def _capture(self) -> tuple[bytes, str]:
        if self.screenshot_method is None:
            return self._choose_method()
        return self._grab(self.screenshot_method), self.screenshot_method

    def screenshot(self) -> Image.Image:
        frame = self._frame
        if frame is not None and self._clock() - frame[0] <= FRAME_REUSE_S:
            data, method = frame[1], frame[2]
        else:
            data, method = self._capture()
        image = adb_screen.decode(data, method)
        self._size = image.size
        return image

    def _thumbnail(self) -> np.ndarray:
        data, method = self._capture()
        self._frame = (self._clock(), data, method)
        if method == "raw":
            return adb_screen.raw_thumbnail(data, THUMB_WIDTH)
        return thumbnail(adb_screen.decode_png(data))

    def settle(self, timeout_s: float = 3.0) -> float:
        """Poll small screenshots until two in a row match (or ``timeout_s``); record ``last_settle_s``."""
        result = wait_until_stable(self._thumbnail, timeout_s, clock=self._clock, sleep=self._sleep)
        self.last_settle = result
        self.last_settle_s = result.seconds
        return result.seconds

    def _run_for_dump(self, verb: str, command: str, timeout: float) -> str:
        output = adb_exec.run_adb(["-s", self.serial, verb, command], timeout=timeout)
        return output.decode("utf-8", errors="replace") if isinstance(output, bytes) else str(output)

    def ui_tree(self) -> A11yTree:
        """The accessibility tree of the current screen (``uiautomator dump``); ``A11yError`` if it fails."""
        return self.ui_dumper.dump(self._size)

    # -- atomic operations ------------------------------------------------------------------------

    def tap(self, x: int, y: int) -> None:
        self._input(f"input tap {int(x)} {int(y)}")

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 400) -> None:
        self._input(f"input swipe {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}")

    def enter(self) -> None:
        self._input(adb_text.keyevent_command(adb_text.KEYCODE_ENTER))

    def switch_app(self) -> None:
        self._input(adb_text.keyevent_command(adb_text.KEYCODE_APP_SWITCH))

    def back(self) -> None:
        self._input(adb_text.keyevent_command(adb_text.KEYCODE_BACK))

    def home(self) -> None:
        self._input(adb_text.keyevent_command(adb_text.KEYCODE_HOME))

    def wait(self, seconds: float = 1.0) -> None:
        self._frame = None
        self._sleep(seconds)

    def type_text(self, text: str) -> None:
        """Type ``text`` in one shell call: ``input text`` for ASCII, ADB Keyboard for anything else."""
        if not text:
            return
        if adb_text.needs_adb_keyboard(text):
            self._type_with_adb_keyboard(text)
        else:
            self._input(adb_text.input_text_command(text))

    def _type_with_adb_keyboard(self, text: str) -> None:
        command = adb_text.adb_keyboard_command(text)  # validates the text before touching the IME
        ime = adb_parse.ime_state(self.shell(IME_QUERY))
        target = adb_text.ADB_KEYBOARD_IME
        if target not in ime.installed:
            hint = adb_text.ADB_KEYBOARD_INSTALL_HINT.format(serial=self.serial)
            raise ActionError(f"cannot type {text!r}: `input text` only carries ASCII; {hint}")
        switched = ime.default != target
        try:
            if switched:
                output = self.shell(f"ime enable {target} && ime set {target}")
                if "Unknown" in output or "cannot" in output:
                    raise ActionError(f"could not switch to ADB Keyboard: {output.strip()[-300:]}")
                self._wait_for_ime(target)
            self._input(command)
        finally:
            restore = []
            if switched and ime.default:
                restore.append(f"ime set {ime.default}")
            if target not in ime.enabled:
                restore.append(f"ime disable {target}")
            if restore:
                self.shell("; ".join(restore))

    def _wait_for_ime(self, ime_id: str) -> None:
        """Wait until ``ime_id`` is the current input method and its keyboard is shown."""
        deadline = self._clock() + IME_READY_TIMEOUT_S
        while True:
            dump = self.shell("dumpsys input_method")
            current = adb_parse.current_ime(dump)
            if adb_parse.keyboard_shown(dump) and current in (None, ime_id):
                return
            if self._clock() >= deadline:
                raise ActionError(
                    "ADB Keyboard did not come up, so no text field has focus: Tap the text field first, "
                    "then Type"
                )
            self._sleep(0.2)

    def keyboard_active(self) -> bool:
        return adb_parse.keyboard_shown(self.shell("dumpsys input_method"))

    def foreground_app(self) -> str:
        """Package of the app in front (``""`` when none has focus, e.g. on the lock screen)."""
        return adb_parse.focused_package(self.shell(FOCUS_QUERY))

    # -- apps -------------------------------------------------------------------------------------

    def launcher_apps(self, refresh: bool = False) -> list[LauncherApp]:
        """The launchable apps (cached; ``refresh`` asks the package manager again)."""
        if self._apps is None or refresh:
            activities: dict[str, str | None] = dict(
                adb_apps.parse_launcher_activities(self.shell(adb_apps.LAUNCHER_QUERY))
            )
            if not activities:  # Android 6 and older have no `cmd package query-activities`
                packages = adb_apps.parse_package_list(self.shell(adb_apps.PACKAGE_LIST))
                activities = dict.fromkeys(packages)
            if not activities:
                raise DeviceError(
                    f"{self.serial}: the package manager listed no apps; unlock the phone and retry"
                )
            self._apps = adb_apps.build_app_list(activities)
        return self._apps

    def installed_apps(self) -> dict[str, str]:
        apps: dict[str, str] = {}
        for app in self.launcher_apps():
            apps.setdefault(app.label, app.package)
        return apps

    def open_app(self, name: str) -> None:
        """Start ``name`` via the package manager; else tap its label on the home screen (OCR)."""
        app = adb_apps.find_app(self.launcher_apps(), name)
        if app is None:
            app = adb_apps.find_app(self.launcher_apps(refresh=True), name)
        if app is not None:
            self._launch(app)
            return
        problem = self._open_from_home_screen(name)
        if problem:
            error = adb_apps.unknown_app_error(self.launcher_apps(), name)
            raise ActionError(f"{error} ({problem})")

    def _launch(self, app: LauncherApp) -> None:
        if app.component:
            output = self.shell(
                "am start -a android.intent.action.MAIN -c android.intent.category.LAUNCHER "
                f"-f {LAUNCH_FLAGS} -n {adb_text.shell_quote(app.component)}"
            )
            self._frame = None
            if "Error" not in output and "Exception" not in output:
                return
            log.info("am start failed for %s, trying monkey: %s", app.component, output.strip())
        output = self.shell(f"monkey -p {app.package} -c android.intent.category.LAUNCHER 1")
        self._frame = None
        if "No activities found" in output or "aborted" in output or "Error" in output:
            raise ActionError(f"could not start {app.label} ({app.package}): {output.strip()[-300:]}")

    def _open_from_home_screen(self, name: str) -> str:
        """Tap ``name`` on the home screen or in the app drawer; return ``""`` on success, else why not."""
        finder = self._text_finder or default_text_finder()
        if finder is None:
            return "and the home-screen fallback needs OCR: install rapidocr-onnxruntime"
        self.home()
        self.settle()
        width, height = self.screen_size()
        for place in ("home screen", "app drawer"):
            element = best_label(finder(self.screenshot()), name)
            if element is not None:
                self.tap(*element.center)
                return ""
            if place == "home screen":
                self.swipe(width // 2, int(height * 0.85), width // 2, int(height * 0.25))
                self.settle()
        self.home()
        return "its label is not on the home screen or in the app drawer either"

    def close(self) -> None:
        self._frame = None
        self._apps = None


def best_label(elements: list[Element], name: str) -> Element | None:
    """The OCR text that reads as the app label ``name`` (exact, or close, or a truncated label)."""
    key = adb_apps.normalize(name)
    best: tuple[float, Element] | None = None
    for element in elements:
        if element.kind != "text":
            continue
        text = element.text.strip()
        truncated = text.endswith(("...", "…"))
        seen = adb_apps.normalize(text)
        if not seen:
            continue
        if seen == key:
            score = 1.0
        elif truncated and len(seen) >= 4 and key.startswith(seen):
            score = 0.9
        else:
            score = difflib.SequenceMatcher(None, seen, key).ratio()
        if score >= 0.8 and (best is None or score > best[0]):
            best = (score, element)
    return best[1] if best else None


@functools.cache
def default_text_finder() -> TextFinder | None:
    """OCR with rapidocr (loaded once, on first use), or ``None`` when it is not installed."""
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError:
        return None
    engine = RapidOCR()

    def find(image: Image.Image) -> list[Element]:
        result, _ = engine(np.asarray(image.convert("RGB")))
        elements: list[Element] = []
        for points, text, score in result or []:
            xs = [int(p[0]) for p in points]
            ys = [int(p[1]) for p in points]
            box = (min(xs), min(ys), max(xs), max(ys))
            elements.append(
                Element(kind="text", text=str(text), box=box, source="rapidocr", score=float(score))
            )
        return elements

    return find


__all__ = ["AdbDevice", "AdbDeviceInfo", "attached_serials", "best_label", "list_devices"]
