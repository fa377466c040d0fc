"""A fake served VLM for the coordinate doctor: it finds the calibration target a request names and
answers like one coordinate convention, with noise, misses and the reply styles real models write.

``GroundingFake("qwen2.5-vl")`` is a ``FakeModelServer`` responder. It looks the target up by the
description in the prompt (``mae.serving.calibration``), reads the size of the image it received from
the request, and writes the target's centre (plus up to ``noise_px`` screen pixels of noise; a
``miss_rate`` share of replies point anywhere) in its convention's frame:

- ``screen``: pixels of the size the prompt states (what a hosted model told the screen's size does;
  the first "W pixels wide and H pixels high" in the prompt, else the screen's own size);
- ``fractions``: 0-1 fractions of the image; ``qwen3-vl``: a 0-1000 grid;
- ``qwen2.5-vl``: pixels of the received image smart-resized with factor 28 within 1280x28x28 pixels;
- ``ui-tars-1.5``: the same with UI-TARS-1.5's budget, 100x28x28 to 16384x28x28 pixels;
- ``resized``: pixels of the received image smart-resized within ``max_pixels`` (a server whose image
  limit is not what mae assumes);
- ``random``: a random point on the received image, whatever was asked.

Randomness is seeded per request (target and prompt style), so answers do not depend on the order in
which concurrent requests arrive.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from mae.llm.images import smart_resize
from mae.serving.calibration import CalibrationCase, calibration_cases
from mae.testing.fake_model_server import RecordedRequest

_STATED = re.compile(r"(\d{2,5})\s+pixels\s+wide\s+and\s+(\d{2,5})\s+pixels\s+high")
FAKE_CONVENTIONS = ("screen", "qwen2.5-vl", "ui-tars-1.5", "qwen3-vl", "fractions", "resized", "random")


def _styles() -> list[Callable[[float, float, bool], str]]:
    def number(value: float, fraction: bool) -> str:
        return f"{value:.3f}" if fraction else str(round(value))

    def action(x: float, y: float, f: bool) -> str:
        return f'### Action ###\n{{"name": "Tap", "arguments": {{"x": {number(x, f)}, "y": {number(y, f)}}}}}'

    def call(x: float, y: float, f: bool) -> str:
        return f"Sure. Tap({number(x, f)}, {number(y, f)})"

    def point_tag(x: float, y: float, f: bool) -> str:
        return f"<point>{number(x, f)} {number(y, f)}</point>"

    def qwen_json(x: float, y: float, f: bool) -> str:
        point = f"[{number(x, f)}, {number(y, f)}]"
        return f'```json\n[\n  {{"point_2d": {point}, "label": "target"}}\n]\n```'

    def box(x: float, y: float, f: bool) -> str:
        d = 0.01 if f else 10
        values = ", ".join(number(v, f) for v in (x - d, y - d, x + d, y + d))
        return f"The element is at [{values}]."

    def box_tokens(x: float, y: float, f: bool) -> str:
        d = 0.01 if f else 10
        first, second = f"({number(x - d, f)},{number(y - d, f)})", f"({number(x + d, f)},{number(y + d, f)})"
        return f"<|box_start|>{first},{second}<|box_end|>"

    def prose(x: float, y: float, f: bool) -> str:
        return f"I can see it on the screen. I would tap at ({number(x, f)}, {number(y, f)}) to select it."

    return [action, call, point_tag, qwen_json, box, box_tokens, prose]


class GroundingFake:
    """A ``FakeModelServer`` responder that answers calibration requests like ``convention``."""

    def __init__(
        self,
        convention: str,
        *,
        noise_px: float = 15.0,
        miss_rate: float = 0.1,
        seed: int = 0,
        max_pixels: int = 640 * 28 * 28,
    ) -> None:
        if convention not in FAKE_CONVENTIONS:
            raise ValueError(
                f"unknown fake convention {convention!r}; choose one of {', '.join(FAKE_CONVENTIONS)}"
            )
        self.convention = convention
        self.noise_px = noise_px
        self.miss_rate = miss_rate
        self.seed = seed
        self.max_pixels = max_pixels
        self._cases = calibration_cases()
        self._styles = _styles()

    def _case(self, text: str) -> CalibrationCase | None:
        return next((case for case in self._cases if case.description in text), None)

    def frame(self, received: tuple[int, int], stated: tuple[int, int]) -> tuple[float, float]:
        """The size of the frame this fake writes points in, for an image received at ``received`` in a
        prompt that states the size ``stated``."""
        width, height = received
        if self.convention == "screen":
            return float(stated[0]), float(stated[1])
        if self.convention == "fractions":
            return 1.0, 1.0
        if self.convention == "qwen3-vl":
            return 1000.0, 1000.0
        if self.convention == "qwen2.5-vl":
            new_h, new_w = smart_resize(height, width, 28, 4 * 28 * 28, 1280 * 28 * 28)
        elif self.convention == "ui-tars-1.5":
            new_h, new_w = smart_resize(height, width, 28, 100 * 28 * 28, 16384 * 28 * 28)
        elif self.convention == "resized":
            new_h, new_w = smart_resize(height, width, 28, 4 * 28 * 28, self.max_pixels)
        else:
            return float(width), float(height)
        return float(new_w), float(new_h)

    def __call__(self, request: RecordedRequest) -> str | None:
        text = request.text
        case = self._case(text)
        sizes = request.image_sizes
        if case is None or not sizes:
            return None
        operator = "### User Request ###" in text
        rng = random.Random(f"{self.seed}|{self.convention}|{case.description}|{operator}")
        screen_w, screen_h = case.screen.size
        if self.convention == "random" or rng.random() < self.miss_rate:
            fx, fy = rng.random(), rng.random()
        else:
            cx, cy = case.center
            fx = (cx + rng.uniform(-self.noise_px, self.noise_px)) / screen_w
            fy = (cy + rng.uniform(-self.noise_px, self.noise_px)) / screen_h
        said = _STATED.search(text)
        stated = (int(said.group(1)), int(said.group(2))) if said else (screen_w, screen_h)
        frame_w, frame_h = self.frame(sizes[0], stated)
        x, y = fx * frame_w, fy * frame_h
        fraction = self.convention == "fractions"
        answer = self._styles[rng.randrange(len(self._styles))](x, y, fraction)
        if operator:
            return (
                "### Thought ###\r\nThe target is visible on the screen, so I tap it.\r\n"
                f"### Action ###\r\n{answer}\r\n### Description ###\r\nTaps the target; its screen opens.\r\n"
            ).replace("### Action ###\r\n### Action ###", "### Action ###")
        return answer
