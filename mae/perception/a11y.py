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
EDITABLE_CLASSES = ("EditText", "AutoCompleteTextView", "SearchView$SearchAutoComplete")
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


class A11yError(DeviceError):
    """The phone could not give its accessibility tree (dump failed, timed out or was unreadable)."""


class A11yNode(BaseModel):
    """One view of the accessibility tree, with its bounds in screen pixels."""

    text: str = ""
    content_desc: str = ""
    resource_id: str = ""
    class_name: str = ""
    package: str = ""
    clickable: bool = False
    scrollable: bool = False
    editable: bool = False
    password: bool = False
    bounds: Box

    @property
    def label(self) -> str:
        """What a screen reader would say: the content description, else the text."""
        return (self.content_desc or self.text).strip()

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


def parse_uiautomator(output: str, screen: tuple[int, int] | None = None) -> list[A11yNode]:
    """The visible nodes of a ``uiautomator dump`` (XML, possibly with status lines around it).

    Raises ``A11yError`` for an error message, a truncated or malformed document, or entity tricks.
    Nodes without an on-screen area are skipped; at most ``MAX_NODES`` are kept.
    """
    document = extract_xml(output)
    if "<!DOCTYPE" in document or "<!ENTITY" in document:
        raise A11yError("uiautomator dump output declares entities; refusing to read it")
    try:
        root = ET.fromstring(document)
    except ET.ParseError as exc:
        raise A11yError(f"uiautomator dump output is not valid XML ({exc})") from None
    nodes: list[A11yNode] = []
    for item in root.iter("node"):
        bounds = _bounds(item.get("bounds", ""))
        if bounds is None:
            continue
        if screen is not None:
            width, height = screen
            if bounds[0] >= width or bounds[1] >= height or bounds[2] <= 0 or bounds[3] <= 0:
                continue
        class_name = item.get("class", "")
        nodes.append(
            A11yNode(
                text=item.get("text", ""),
                content_desc=item.get("content-desc", ""),
                resource_id=item.get("resource-id", ""),
                class_name=class_name,
                package=item.get("package", ""),
                clickable=item.get("clickable") == "true" or item.get("long-clickable") == "true",
                scrollable=item.get("scrollable") == "true",
                editable=class_name.endswith(EDITABLE_CLASSES),
                password=item.get("password") == "true",
                bounds=bounds,
            )
        )
        if len(nodes) >= MAX_NODES:
            break
    return nodes
