"""Waiting for a screen to stop changing, instead of sleeping a fixed time after every action.

``wait_until_stable`` polls a capture function for small grey-scale frames until two consecutive
frames match within a tolerance, or a time cap is hit. Any ``Device`` can use it: the ADB phone
captures over adb, the virtual phone renders.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from PIL import Image
from pydantic import BaseModel

THUMB_WIDTH = 96
"""Width of the grey-scale frames compared (1080-pixel screens shrink about 11x)."""

PIXEL_DELTA = 24
"""A thumbnail pixel counts as changed when its grey level moves by more than this (0-255)."""

MAX_CHANGED_FRACTION = 0.004
"""Frames match when at most this share of thumbnail pixels changed: a blinking cursor, a ticking
clock or a tiny spinner passes; a page transition, a scroll or a dialog does not."""


class SettleResult(BaseModel):
    """How a wait for a still screen went."""

    seconds: float
    frames: int
    stable: bool


def thumbnail(image: Image.Image, width: int = THUMB_WIDTH) -> np.ndarray:
    """A small grey-scale copy of ``image`` as a ``uint8`` array, for frame comparison."""
    height = max(1, round(image.height * width / max(1, image.width)))
    return np.asarray(image.convert("L").resize((width, height), Image.Resampling.BILINEAR), dtype=np.uint8)


def frames_match(
    a: np.ndarray,
    b: np.ndarray,
    pixel_delta: int = PIXEL_DELTA,
    max_changed_fraction: float = MAX_CHANGED_FRACTION,
) -> bool:
    """Whether two thumbnails show the same screen, up to small local changes."""
    if a.shape != b.shape:
        return False
    changed = np.abs(a.astype(np.int16) - b.astype(np.int16)) > pixel_delta
    return float(changed.mean()) <= max_changed_fraction


def wait_until_stable(
    capture: Callable[[], np.ndarray],
    timeout_s: float = 3.0,
    *,
    first_delay_s: float = 0.1,
    interval_s: float = 0.05,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    match: Callable[[np.ndarray, np.ndarray], bool] = frames_match,
) -> SettleResult:
    """Poll ``capture()`` until two consecutive frames ``match`` or ``timeout_s`` passes.

    ``first_delay_s`` lets the phone start reacting to the action before the first frame;
    ``interval_s`` is slept between captures (captures over adb take long enough by themselves).
    """
    start = clock()
    if first_delay_s > 0:
        sleep(first_delay_s)
    previous = capture()
    frames = 1
    while clock() - start < timeout_s:
        if interval_s > 0:
            sleep(interval_s)
        current = capture()
        frames += 1
        if match(previous, current):
            return SettleResult(seconds=clock() - start, frames=frames, stable=True)
        previous = current
    return SettleResult(seconds=clock() - start, frames=frames, stable=False)
