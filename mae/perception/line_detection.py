"""Finding text lines: PP-OCR's DB detector on a downscaled copy of the screen without its blank bands.

The copy is made once, bilinearly, straight at a size the detector takes (its width a multiple of
``MULTIPLE``); its rows, once the long blank bands are shortened (``blank_rows``), are padded to a
multiple by repeating the last row, and normalised in float32 through a lookup table. RapidOCR's own
path resized the copy a second time to reach a multiple and normalised it in float64: about 20 ms more
CPU time per screen; normalising arithmetically in float32 took another 20 ms, the table 2 ms; area
averaging instead of bilinear scaling took 19 ms more, for no better recall (bilinear down to half
size, see ``_interpolation``). The boxes are read from the detector's output as RapidOCR's DB
post-processing reads them, bit for bit, in about half its time (``db_boxes``)."""

from __future__ import annotations

import itertools
import math
import weakref
from typing import Any

import cv2
import numpy as np

from mae.perception.blank_rows import shorten, unshorten

MULTIPLE = 32
"""The detector's input sides must be multiples of this (its feature pyramid halves them five times)."""


def detection_size(width: int, height: int, max_side: int) -> tuple[int, int]:
    """(width, height) of the copy the detector reads: the screen itself when its longest side is at
    most ``max_side``, else scaled down to that with the width rounded down to a multiple of
    ``MULTIPLE`` (the input is padded to multiples in any case; this saves the padding)."""
    scale = max_side / max(width, height)
    if scale >= 1:
        return width, height
    return max(MULTIPLE, int(width * scale) // MULTIPLE * MULTIPLE), max(1, round(height * scale))


def detector_input(image: np.ndarray, mean: Any, std: Any) -> np.ndarray:
    """``(1, 3, H, W)`` float32 input for a BGR image: padded to multiples of ``MULTIPLE`` by repeating
    its last row and column, then normalised per channel (``mean``/``std`` on a 0-1 scale) through a
    256-entry table per channel (the same float32 values as the arithmetic, in a tenth of the time)."""
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"the text detector reads 3-channel uint8 images, not {image.dtype} {image.shape}")
    height, width = image.shape[:2]
    padded = cv2.copyMakeBorder(image, 0, -height % MULTIPLE, 0, -width % MULTIPLE, cv2.BORDER_REPLICATE)
    shift = np.broadcast_to(np.asarray(mean if mean is not None else 0.5, np.float32) * 255, 3)
    spread = np.broadcast_to(np.asarray(std if std is not None else 0.5, np.float32) * 255, 3)
    tables = (np.arange(256, dtype=np.float32)[:, np.newaxis] - shift) / spread
    data = np.empty((1, 3, *padded.shape[:2]), np.float32)
    for channel, plane in enumerate(cv2.split(padded)):
        data[0, channel] = cv2.LUT(plane, np.ascontiguousarray(tables[:, channel]))
    return data


def normalisation(detector: Any) -> tuple[Any, Any]:
    """The per-channel (mean, std) RapidOCR's ``TextDetector`` normalises with: its configuration's
    (rapidocr-onnxruntime 1.4.4 on; ``None`` means 0.5) or its pre-processing step's (earlier)."""
    if hasattr(detector, "mean"):
        return detector.mean, getattr(detector, "std", None)
    step = getattr(detector, "preprocess_op", None)
    return getattr(step, "mean", None), getattr(step, "std", None)


def run_detector(detector: Any, image: np.ndarray) -> list[np.ndarray]:
    """Corner quads (``(4, 2)`` float32, x and y in ``image`` pixels) of the lines RapidOCR's
    ``TextDetector`` finds in a BGR image, with its own post-processing (thresholds, box growth)."""
    height, width = image.shape[:2]
    probabilities = detector.infer(detector_input(image, *normalisation(detector)))[0]
    window = probabilities[:, :, :height, :width]
    post = detector.postprocess_op
    boxes = db_boxes(post, window[0, 0]) if _plain_db(post) else post(window, (height, width))[0]
    if boxes is None or len(boxes) == 0:
        return []
    kept = detector.filter_tag_det_res(boxes, (height, width))
    return [np.asarray(quad, dtype=np.float32) for quad in kept]


_AGREES: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
"""Whether ``db_boxes`` gave a post-processor's own boxes on the drawn map, by post-processor."""


def _plain_db(post: Any) -> bool:
    """Whether ``db_boxes`` reads boxes as ``post`` does: ``post`` is RapidOCR's own ``DBPostProcess``
    (not a subclass), scores boxes by their mean probability ("fast"), does not dilate the text mask,
    and gives the same boxes as ``db_boxes`` on a drawn map (checked once per post-processor, so
    a RapidOCR or shapely release that reads boxes differently keeps its own reading)."""
    kind = type(post)
    if kind.__name__ != "DBPostProcess" or not kind.__module__.startswith("rapidocr_onnxruntime."):
        return False
    if getattr(post, "score_mode", None) != "fast" or getattr(post, "dilation_kernel", None) is not None:
        return False
    agrees = _AGREES.get(post)
    if agrees is None:
        agrees = _AGREES[post] = _same_boxes(post, drawn_map())
    return agrees


def drawn_map(height: int = 240, width: int = 320, seed: int = 7) -> np.ndarray:
    """A probability map of soft bars in rows, as text lines are, of every length and height, some at
    the borders, some under the box threshold: what ``_plain_db`` checks ``db_boxes`` on."""
    rng = np.random.default_rng(seed)
    drawn = np.zeros((height, width), np.float32)
    for top in range(-4, height, 18):
        left = int(rng.integers(-8, 20))
        while left < width:
            length, thickness = int(rng.integers(2, 90)), int(rng.integers(2, 14))
            drawn[max(0, top) : top + thickness, max(0, left) : left + length] = rng.uniform(0.3, 1.0)
            left += length + int(rng.integers(4, 40))
    return cv2.GaussianBlur(drawn, (5, 5), 1.5)


def _same_boxes(post: Any, probabilities: np.ndarray) -> bool:
    try:
        expected, _ = post(probabilities[np.newaxis, np.newaxis], probabilities.shape)
        return np.array_equal(db_boxes(post, probabilities), np.asarray(expected, np.int32))
    except Exception:  # a post-processor that fails here is left to fail (or not) on its own
        return False


def db_boxes(post: Any, probabilities: np.ndarray) -> np.ndarray:
    """The int32 corner quads RapidOCR's DB post-processing ``post`` reads from a ``(height, width)``
    probability map, in the map's pixels (RapidOCR's ``ori_shape`` is the map's own size here): the
    same boxes (same thresholds, scores, growth and rounding) in about half the time; its per-box
    scoring and its mask building were most of its cost (numpy calls on 4 points)."""
    height, width = probabilities.shape
    mask = np.ascontiguousarray(probabilities > post.thresh).view(np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    quads = []
    for contour in contours[: post.max_candidates]:
        points, short_side = post.get_mini_boxes(contour)
        if short_side < post.min_size or _mean_inside(probabilities, points) < post.box_thresh:
            continue
        box, short_side = post.get_mini_boxes(_grown(points, post.unclip_ratio))
        if short_side < post.min_size + 2:
            continue
        box[:, 0] = np.clip(np.round(box[:, 0] / width * width), 0, width)
        box[:, 1] = np.clip(np.round(box[:, 1] / height * height), 0, height)
        quads.append(box.astype(np.int32))
    return np.array(quads, dtype=np.int32)


def _mean_inside(probabilities: np.ndarray, quad: np.ndarray) -> float:
    """The mean probability inside ``quad`` (float32 corners, x then y), as RapidOCR's fast box score
    computes it: over the quad filled at its corners truncated to whole pixels."""
    height, width = probabilities.shape
    xs, ys = quad[:, 0], quad[:, 1]
    left = min(max(math.floor(xs.min()), 0), width - 1)
    right = min(max(math.ceil(xs.max()), 0), width - 1)
    top = min(max(math.floor(ys.min()), 0), height - 1)
    bottom = min(max(math.ceil(ys.max()), 0), height - 1)
    inside = np.zeros((bottom - top + 1, right - left + 1), np.uint8)
    corners = (quad - np.array([left, top], np.float32)).astype(np.int32)
    cv2.fillPoly(inside, [corners], 1)
    return float(cv2.mean(probabilities[top : bottom + 1, left : right + 1], inside)[0])


def _grown(quad: np.ndarray, ratio: float) -> np.ndarray:
    """``quad`` grown outwards by its area × ``ratio`` / its perimeter, with rounded corners (DB's box
    growth, as RapidOCR does it: the area and perimeter in the same float64 steps, clipper's offset)."""
    import pyclipper

    ring = [(float(x), float(y)) for x, y in quad]
    ring.append(ring[0])
    twice_area = sum(
        (ring[i][0] - ring[0][0]) * (ring[i - 1][1] - ring[i + 1][1]) for i in range(1, len(ring) - 1)
    )
    perimeter = 0.0
    for (x0, y0), (x1, y1) in itertools.pairwise(ring):
        perimeter += math.sqrt((x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0))
    offset = pyclipper.PyclipperOffset()
    offset.AddPath(quad, pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
    return np.array(offset.Execute(abs(twice_area / 2.0) * ratio / perimeter)).reshape((-1, 1, 2))


def _interpolation(image: np.ndarray, size: tuple[int, int]) -> int:
    """Bilinear down to half size (a 1080x2340 screen at 1600 px: a fifth of area averaging's CPU time,
    19 ms less, recall no lower); area averaging below that, where bilinear sampling skips pixels and
    thin strokes would vanish."""
    return cv2.INTER_LINEAR if size[0] * 2 >= image.shape[1] else cv2.INTER_AREA


def detect_lines(detector: Any, bgr: np.ndarray, max_side: int, blank_keep: int) -> list[np.ndarray]:
    """Corner quads of the text lines of a BGR screenshot, in its pixels: found on a copy at most
    ``max_side`` pixels long with its blank bands shortened to ``blank_keep`` rows (0: every row)."""
    height, width = bgr.shape[:2]
    size = detection_size(width, height, max_side)
    small = bgr if size == (width, height) else cv2.resize(bgr, size, interpolation=_interpolation(bgr, size))
    kept = shorten(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), blank_keep) if blank_keep else None
    if kept is not None and not len(kept):
        return []  # not one row with ink
    quads = run_detector(detector, small if kept is None else small[kept])
    if kept is not None:
        quads = [unshorten(quad, kept) for quad in quads]
    scale = np.array([width / size[0], height / size[1]], np.float32)
    return [quad * scale for quad in quads]
