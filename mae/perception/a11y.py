"""The accessibility tree as a perception source: nodes with labels, clickability, editability, bounds.

A phone's accessibility tree names what pixels cannot (the content description of an icon-only
button) and says what can be tapped or typed into. On an ADB phone it comes from ``uiautomator dump``
(``mae.device.adb_a11y``); the virtual phone builds one from its widgets. ``parse_uiautomator`` reads
the XML a dump writes; ``mae.perception.fusion`` merges the nodes with OCR and icon detection.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from mae.errors import DeviceError
from mae.perception.elements import Box

A11yMode = Literal["auto", "on", "off"]
MAX_NODES = 5000
"""Nodes kept from one dump; a list of thousands of rows is cut here (the screen shows few of them)."""
DIALOG_AREA = 0.85
"""A window inset from both sides and covering less than this share of the screen is a dialog."""
DIALOG_CENTRING = 0.05
"""... and whose left and right margins differ by at most this share of the screen's width."""
INNER_LABEL_CHARS = 100
"""A control labelled by its children's texts keeps this many characters of them."""
EDITABLE_CLASSES = ("EditText", "AutoCompleteTextView", "SearchView$SearchAutoComplete")
_STATUS_LINE = re.compile(r"UI hier\w* dumped to: \S+", re.IGNORECASE)
"""What ``uiautomator dump /dev/tty`` prints after the XML (misspelt ``hierchary`` by Android itself)."""
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


class A11yError(DeviceError):
    """The phone could not give its accessibility tree (dump failed, timed out or was unreadable)."""


class A11yNode(BaseModel):
    """One view of the accessibility tree, with its bounds in screen pixels."""

    text: str = ""
    content_desc: str = ""
    inner_label: str = Field("", description="a control's children's texts when it has no label of its own")
    resource_id: str = ""
    class_name: str = ""
    package: str = ""
    clickable: bool = False
    scrollable: bool = False
    editable: bool = False
    password: bool = False
    focused: bool = Field(False, description="an editable node with the cursor in it")
    bounds: Box

    @property
    def label(self) -> str:
        """What a screen reader would say: the content description, else the text."""
        return (self.content_desc or self.text).strip()

    @property
    def spoken_label(self) -> str:
        """The label, else the children's texts a screen reader says for a control without one."""
        return self.label or self.inner_label

    @property
    def area(self) -> int:
        left, top, right, bottom = self.bounds
        return max(0, right - left) * max(0, bottom - top)


class A11yTree(BaseModel):
    """The nodes of one screen's accessibility tree."""

    source: str = Field(description="'uiautomator' or 'virtual'")
    nodes: list[A11yNode] = Field(default_factory=list)
    seconds: float = Field(0.0, description="how long reading it took")
    strategy: str = Field("", description="which dump command worked (ADB)")
    window: Box | None = Field(
        None,
        description="bounds of the focused window when it is a dialog over another app: what is seen "
        "outside it (and outside every node) is the app dimmed behind it, which takes no taps",
    )
    warnings: list[str] = Field(default_factory=list, description="what was odd about the dump it came from")

    @property
    def useful(self) -> bool:
        """Whether the tree says anything: a labelled or an interactive node (a bare WebView does not)."""
        return any(node.label or node.clickable or node.editable for node in self.nodes)


TreeSource = Callable[[], A11yTree | None]
"""Reads the current screen's tree (raising ``A11yError`` when it cannot); ``None`` = no tree here."""


def _bounds(text: str) -> Box | None:
    match = _BOUNDS.fullmatch(text.strip())
    if match is None:
        return None
    left, top, right, bottom = (int(v) for v in match.groups())
    if right <= left or bottom <= top:
        return None
    return left, top, right, bottom


def decode_dump(output: str | bytes) -> tuple[str, list[str]]:
    """A dump's text and what was odd about its encoding (a UTF-16 file saved by a Windows shell)."""
    if isinstance(output, str):
        return output.lstrip("\ufeff"), []
    for bom, codec in ((b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if output.startswith(bom):
            text = output[len(bom) :].decode(codec, errors="replace")
            return text, ["the dump is in UTF-16 (a file saved through a Windows shell); it was read as such"]
    text = output.decode("utf-8", errors="replace").lstrip("\ufeff")
    if "\ufffd" in text:
        return text, ["the dump has bytes that are not UTF-8; they were replaced"]
    return text, []


def extract_xml(output: str) -> str:
    """The ``<hierarchy>`` document inside a dump's output (which adds status lines before or after)."""
    start = output.find("<?xml")
    if start < 0:
        start = output.find("<hierarchy")
    end = output.rfind("</hierarchy>")
    if start < 0 or end < 0:
        snippet = " ".join(output.split())[:160] or "no output"
        raise A11yError(f"uiautomator dump gave no accessibility tree ({snippet})")
    return output[start : end + len("</hierarchy>")]


def _clip(bounds: Box, screen: tuple[int, int] | None) -> Box | None:
    """``bounds`` cut to the screen (a row half scrolled off keeps its visible part); ``None`` if off it."""
    if screen is None:
        return bounds
    width, height = screen
    left, top, right, bottom = (
        max(0, bounds[0]),
        max(0, bounds[1]),
        min(width, bounds[2]),
        min(height, bounds[3]),
    )
    if right <= left or bottom <= top:
        return None
    return left, top, right, bottom


def _oriented(screen: tuple[int, int], windows: list[Box]) -> tuple[int, int]:
    """``screen`` turned to the dump's orientation: ``wm size`` gives the natural one, and the
    ``rotation`` attribute is not reliable (real dumps say 1 over portrait bounds), so the bounds decide."""
    width, height = screen
    right, bottom = max(b[2] for b in windows), max(b[3] for b in windows)
    if (right > width or bottom > height) and right <= height and bottom <= width:
        return height, width
    return screen


def _system_window(package: str) -> bool:
    """Whether a top-level window belongs to the system bars or a keyboard rather than the app in front."""
    low = package.lower()
    return low == "com.android.systemui" or "inputmethod" in low or "keyboard" in low


def focused_window(windows: list[tuple[str, Box]], screen: tuple[int, int]) -> Box | None:
    """The bounds of the app's window when it is a dialog floating over what is behind it, else ``None``.

    ``windows`` are the dump's top-level nodes (package, bounds); the largest one outside the system bars
    and keyboards is the app's. A dialog is centred across the screen with margins on both sides and
    covers less than ``DIALOG_AREA`` of it; a full-width window (an app, a bottom sheet) or one on a side
    (a split screen, a car's dock beside it) is not marked.
    """
    apps = [box for package, box in windows if not _system_window(package)]
    if not apps:
        return None
    left, top, right, bottom = max(apps, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))
    width, height = screen
    centred = left > 0 and right < width and abs(left - (width - right)) <= DIALOG_CENTRING * width
    small = (right - left) * (bottom - top) < DIALOG_AREA * width * height
    return (left, top, right, bottom) if centred and small else None


def _inner_label(item: ET.Element) -> str:
    """What a screen reader says for a control with no label of its own: its children's texts."""
    parts: list[str] = []
    for child in item:
        if child.get("clickable") == "true":
            continue
        label = (child.get("content-desc", "") or child.get("text", "")).strip()
        if label:
            parts.append(label)
        else:
            inner = _inner_label(child)
            if inner:
                parts.append(inner)
    return ", ".join(parts)[:INNER_LABEL_CHARS]


def parse_uiautomator(output: str | bytes, screen: tuple[int, int] | None = None) -> A11yTree:
    """The visible nodes of a ``uiautomator dump`` (XML, possibly with status lines around it).

    Raises ``A11yError`` for an error message, a truncated or malformed document, or entity tricks.
    Nodes without an on-screen area (``[0,0][0,0]``, scrolled off, ``visible-to-user="false"``) are
    skipped and the others cut to ``screen``; at most ``MAX_NODES`` are kept. The tree's ``window`` is
    set when the focused window is a dialog; ``warnings`` say what was odd about the output.
    """
    text, warnings = decode_dump(output)
    document = extract_xml(text)
    trailing = text[text.rfind("</hierarchy>") + len("</hierarchy>") :].strip()
    if trailing and not _STATUS_LINE.fullmatch(trailing):
        warnings.append("text after the dump's end was ignored")
    if "<!DOCTYPE" in document or "<!ENTITY" in document:
        raise A11yError("uiautomator dump output declares entities; refusing to read it")
    try:
        root = ET.fromstring(document)
    except ET.ParseError as exc:
        raise A11yError(f"uiautomator dump output is not valid XML ({exc})") from None
    windows = [(item.get("package", ""), box) for item in root if (box := _bounds(item.get("bounds", "")))]
    if screen is not None and windows:
        screen = _oriented(screen, [box for _, box in windows])
    nodes: list[A11yNode] = []
    for item in root.iter("node"):
        bounds = _bounds(item.get("bounds", ""))
        bounds = _clip(bounds, screen) if bounds is not None else None
        if bounds is None or item.get("visible-to-user") == "false":
            continue
        class_name = item.get("class", "")
        clickable = item.get("clickable") == "true" or item.get("long-clickable") == "true"
        own = item.get("content-desc", "").strip() or item.get("text", "").strip()
        nodes.append(
            A11yNode(
                text=item.get("text", ""),
                content_desc=item.get("content-desc", ""),
                inner_label="" if own or not clickable else _inner_label(item),
                resource_id=item.get("resource-id", ""),
                class_name=class_name,
                package=item.get("package", ""),
                clickable=clickable,
                scrollable=item.get("scrollable") == "true",
                editable=class_name.endswith(EDITABLE_CLASSES),
                password=item.get("password") == "true",
                focused=item.get("focused") == "true" and class_name.endswith(EDITABLE_CLASSES),
                bounds=bounds,
            )
        )
        if len(nodes) >= MAX_NODES:
            warnings.append(f"the dump has more than {MAX_NODES} visible nodes; the rest were left out")
            break
    if windows and screen is None:
        screen = (max(b[2] for _, b in windows), max(b[3] for _, b in windows))
    window = focused_window(windows, screen) if windows and screen is not None else None
    return A11yTree(source="uiautomator", nodes=nodes, window=window, warnings=warnings)
