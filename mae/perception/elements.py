"""What the Perceptor sees: texts and icons with boxes in screen pixels (the paper's W_V)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Box = tuple[int, int, int, int]
"""``(left, top, right, bottom)`` in screen pixels, right/bottom exclusive."""


class Element(BaseModel):
    """One thing on screen: a piece of text (OCR) or an icon (detector + optional caption)."""

    kind: Literal["text", "icon"]
    text: str = Field("", description="OCR text, or the icon's caption ('' when uncaptioned)")
    box: Box
    source: str = Field("", description="backend that produced it: rapidocr, contour, virtual, ...")
    score: float = 1.0

    @property
    def center(self) -> tuple[int, int]:
        left, top, right, bottom = self.box
        return (left + right) // 2, (top + bottom) // 2

    def describe(self) -> str:
        """One line for prompts, as the paper lists W_V: ``text; coordinates: [x, y]``."""
        x, y = self.center
        label = self.text or "icon"
        return f"{label}; coordinates: [{x}, {y}]"


class Perception(BaseModel):
    """The Perceptor's output for one screenshot."""

    width: int
    height: int
    elements: list[Element] = Field(default_factory=list)
    keyboard_active: bool = False
    timings: dict[str, float] = Field(default_factory=dict, description="seconds per stage")
    warnings: list[str] = Field(default_factory=list, description="stages that degraded (e.g. captions)")

    @property
    def texts(self) -> list[Element]:
        return [e for e in self.elements if e.kind == "text"]

    @property
    def icons(self) -> list[Element]:
        return [e for e in self.elements if e.kind == "icon"]

    def describe(self) -> str:
        """The element list as prompt text, one element per line."""
        return "\n".join(e.describe() for e in self.elements)
