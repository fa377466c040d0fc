"""Reading what the phone prints: ``dumpsys input_method``, ``dumpsys window``, ``wm size``, ``ime list``."""

from __future__ import annotations

import re

from pydantic import BaseModel

from mae.errors import DeviceError

_INPUT_SHOWN = re.compile(r"\bmInputShown=(true|false)\b")
_INPUT_VIEW_SHOWN = re.compile(r"\bmIsInputViewShown=(true|false)\b")
_CURRENT_IME = re.compile(r"\bmCurMethodId=(\S+)")
_FOCUS_WINDOW = re.compile(r"mCurrentFocus=Window\{\S+\s+u\d+\s+([A-Za-z][\w.]*)/")
_FOCUS_APP = re.compile(r"mFocusedApp=.*?\s([A-Za-z][\w.]*)/[\w.$]+")
_SIZE = re.compile(r"(Physical|Override) size:\s*(\d+)x(\d+)")


def keyboard_shown(dumpsys_input_method: str) -> bool:
    """Whether the soft keyboard is up, from ``dumpsys input_method``.

    The input method manager's ``mInputShown`` decides when present (every Android version prints
    it); otherwise the IME service's own ``mIsInputViewShown``.
    """
    shown = _INPUT_SHOWN.findall(dumpsys_input_method)
    if shown:
        return "true" in shown
    return "true" in _INPUT_VIEW_SHOWN.findall(dumpsys_input_method)


def current_ime(dumpsys_input_method: str) -> str | None:
    """The selected input method id (``mCurMethodId``), or ``None`` when not printed."""
    match = _CURRENT_IME.search(dumpsys_input_method)
    if not match or match.group(1) == "null":
        return None
    return match.group(1)


def focused_package(dumpsys_window: str) -> str:
    """Package of the focused app from ``dumpsys window`` lines (``""`` when no app has focus).

    The focused window wins; when it belongs to no app (status bar, pop-up, keyguard) the focused
    activity is used.
    """
    for pattern in (_FOCUS_WINDOW, _FOCUS_APP):
        match = pattern.search(dumpsys_window)
        if match:
            return match.group(1)
    return ""


def screen_size(wm_size: str) -> tuple[int, int]:
    """Screen width and height from ``wm size`` (an override size wins over the physical one)."""
    sizes = {kind: (int(w), int(h)) for kind, w, h in _SIZE.findall(wm_size)}
    size = sizes.get("Override") or sizes.get("Physical")
    if size is None:
        raise DeviceError(f"cannot read the screen size from `wm size`: {wm_size.strip()[:200]!r}")
    return size


class ImeState(BaseModel):
    """Input methods of a phone, from ``ime list -a -s; ime list -s; settings get secure ...``."""

    installed: list[str]
    enabled: list[str]
    default: str | None


def ime_state(output: str, separator: str = "---") -> ImeState:
    """Parse the three sections (all IMEs, enabled IMEs, default IME) split by ``separator`` lines."""
    sections: list[list[str]] = [[]]
    for line in output.splitlines():
        if line.strip() == separator:
            sections.append([])
        elif line.strip():
            sections[-1].append(line.strip())
    while len(sections) < 3:
        sections.append([])
    default = sections[2][0] if sections[2] and sections[2][0] != "null" else None
    return ImeState(installed=sections[0], enabled=sections[1], default=default)


_PROP = re.compile(r"^\[([^\]]+)\]: \[(.*)\]\s*$", re.MULTILINE)
_DENSITY = re.compile(r"(Physical|Override) density:\s*(\d+)")
_ORIENTATION = re.compile(r"\bSurfaceOrientation:\s*(\d)|\borientation=(\d)\b")
_CUTOUT = re.compile(r"DisplayCutout\{insets=Rect\((-?\d+), (-?\d+) - (-?\d+), (-?\d+)\)")


def getprop(output: str) -> dict[str, str]:
    """``getprop``'s ``[key]: [value]`` lines as a dict (values spanning lines are cut at the first)."""
    return {key: value for key, value in _PROP.findall(output)}


def density(wm_density: str, props: dict[str, str]) -> int | None:
    """Screen density in dpi from ``wm density`` (an override wins), else the ``ro.sf.lcd_density`` prop."""
    found = {kind: int(value) for kind, value in _DENSITY.findall(wm_density)}
    value = found.get("Override") or found.get("Physical")
    if value is None and props.get("ro.sf.lcd_density", "").isdigit():
        value = int(props["ro.sf.lcd_density"])
    return value


def orientation(dumpsys_input: str) -> int | None:
    """The built-in display's rotation in quarter turns (0-3) from ``dumpsys input``, if printed."""
    match = _ORIENTATION.search(dumpsys_input)
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def cutout(dumpsys_window: str) -> tuple[int, int, int, int] | None:
    """The display cut-out's insets (left, top, right, bottom pixels) from ``dumpsys window``, if any."""
    for match in _CUTOUT.finditer(dumpsys_window):
        insets = (int(match.group(1)), int(match.group(2)), int(match.group(3)), int(match.group(4)))
        if any(insets):
            return insets
    return None
