"""What the Perceptor sees: texts and icons with boxes in screen pixels (the paper's W_V)."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field

Box = tuple[int, int, int, int]
"""``(left, top, right, bottom)`` in screen pixels, right/bottom exclusive."""

Role = Literal["", "button", "field"]
"""What the accessibility tree says an element is: ``button`` (clickable), ``field`` (editable)."""

KEYBOARD_LINE = "on-screen keyboard shown (enter text with Type, not by tapping keys)"
LOADING_LINE = "the screen is still loading (blank, or a spinner or progress bar): Wait for its content"
"""Said where the picture shows a loading screen, whose list would hold only the navigation buttons."""
LOADING_NAMES = frozenset(("loading", "loading spinner", "spinner", "please wait", "progress bar", "busy"))
"""Names of a loading indicator (captions, accessibility labels, the Perceptor's own name for one)."""
CONTENT_BAND = (0.05, 0.93)
"""The part of the screen between the status bar and the navigation bar, as fractions of its height."""


def is_loading_indicator(element: Element) -> bool:
    """Whether ``element`` is a spinner or a "Loading..." text."""
    name = " ".join(element.text.lower().strip(" .…").split())
    return name in LOADING_NAMES or name.startswith("loading")


class Element(BaseModel):
    """One thing on screen: a piece of text (OCR) or an icon (detector + optional caption)."""

    kind: Literal["text", "icon"]
    text: str = Field("", description="OCR text, or the icon's caption ('' when uncaptioned)")
    box: Box
    source: str = Field("", description="backend that produced it: rapidocr, contour, virtual, ...")
    score: float = 1.0
    role: Role = Field("", description="from the accessibility tree: button (clickable), field (editable)")
    named_by: Literal["", "ocr", "a11y", "caption", "virtual", "layout"] = Field(
        "",
        description="where an icon's name came from ('' for unnamed icons and plain OCR text; 'layout': "
        "its place on screen, as the navigation bar's buttons)",
    )
    control: Box | None = Field(
        None,
        description="bounds of the smallest clickable or editable accessibility node holding this element: "
        "where a tap activates it (None without a tree)",
    )
    password: bool = Field(False, description="a password field (the accessibility tree's password flag)")

    selected: bool = Field(False, description="a field's text shown selected (typing replaces it)")
    focused: bool = Field(False, description="in the text field with the cursor (the tree's focused node)")
    behind: bool = Field(False, description="a text of the page dimmed behind a focused dialog")

    @property
    def center(self) -> tuple[int, int]:
        left, top, right, bottom = self.box
        return (left + right) // 2, (top + bottom) // 2

    @property
    def label(self) -> str:
        """Kind and name as the element list shows them: ``text "Menu"``, ``button "Save"``, ``icon``."""
        kind: str = self.role or ("text" if self.kind == "text" else "icon")
        if not self.text:
            return f"{kind} (no name)" if kind != "text" else kind
        named = f"{kind} {json.dumps(self.text, ensure_ascii=False)}"
        if self.behind:
            return f"{named} (dimmed, behind the dialog)"
        if self.selected:
            return f"{named} (its text is selected: typing replaces it)"
        return f"{named} (focused: typing goes here)" if self.focused and self.role == "field" else named

    def line(self, x: int, y: int) -> str:
        """One element-list line with the centre given in the caller's coordinate space."""
        return f"{self.label}; coordinates: [{x}, {y}]"

    def describe(self) -> str:
        """One prompt line (the paper's W_V with the element's kind): ``text "Menu"; coordinates: [x, y]``."""
        return self.line(*self.center)


class Perception(BaseModel):
    """The Perceptor's output for one screenshot."""

    width: int
    height: int
    elements: list[Element] = Field(default_factory=list)
    keyboard_active: bool = False
    keyboard_collapsed: bool = Field(
        False, description="the keyboard's keys were left out of the element list (one line says it is shown)"
    )
    a11y: str = Field(
        "", description="accessibility tree used: 'uiautomator', 'virtual', or '' (vision only)"
    )
    timings: dict[str, float] = Field(default_factory=dict, description="seconds per stage")
    warnings: list[str] = Field(default_factory=list, description="stages that degraded (e.g. captions)")

    @property
    def still_loading(self) -> bool:
        """Whether the screen is still loading: nothing between the status and navigation bars, or a
        loading indicator with at most three other things there (a spinner over a blank page)."""
        top, bottom = CONTENT_BAND[0] * self.height, CONTENT_BAND[1] * self.height
        content = [e for e in self.elements if top <= e.center[1] <= bottom]
        loading = [e for e in content if is_loading_indicator(e)]
        return not content or (bool(loading) and len(content) - len(loading) <= 3)

    @property
    def texts(self) -> list[Element]:
        return [e for e in self.elements if e.kind == "text"]

    @property
    def icons(self) -> list[Element]:
        return [e for e in self.elements if e.kind == "icon"]

    @property
    def status_lines(self) -> list[str]:
        """Lines the element list ends with: the keyboard left out, a screen still loading."""
        lines = [KEYBOARD_LINE] if self.keyboard_collapsed else []
        if self.still_loading:
            lines.append(LOADING_LINE)
        return lines

    def describe(self) -> str:
        """The element list as prompt text, one element per line."""
        return "\n".join([*(e.describe() for e in self.elements), *self.status_lines])
