"""Mapping between screen pixels and the pixels of the image a model saw.

Most hosted models are told screen coordinates in the prompt and answer in screen pixels
(``coordinate_space = "screen"``). Qwen2.5-VL answers in the absolute pixels of the resized image it
received (``"image"``): prompts then give coordinates in image space and replies are mapped back.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CoordinateMapper:
    """Converts points between screen space and model (image) space."""

    screen_size: tuple[int, int]
    model_size: tuple[int, int]

    @classmethod
    def identity(cls, screen_size: tuple[int, int]) -> CoordinateMapper:
        return cls(screen_size, screen_size)

    @property
    def is_identity(self) -> bool:
        return self.screen_size == self.model_size

    def to_model(self, x: int, y: int) -> tuple[int, int]:
        sx = self.model_size[0] / self.screen_size[0]
        sy = self.model_size[1] / self.screen_size[1]
        return round(x * sx), round(y * sy)

    def to_screen(self, x: int, y: int) -> tuple[int, int]:
        sx = self.screen_size[0] / self.model_size[0]
        sy = self.screen_size[1] / self.model_size[1]
        return round(x * sx), round(y * sy)
