"""Box arithmetic shared by the OCR, icon and merge code. Boxes are ``(left, top, right, bottom)``."""

from __future__ import annotations

import math
from collections.abc import Sequence

from mae.perception.elements import Box, Element


def box_area(box: Box) -> int:
    """Area in pixels (0 for an empty box)."""
    left, top, right, bottom = box
    return max(0, right - left) * max(0, bottom - top)


def holds(box: Box, point: tuple[int, int]) -> bool:
    """Whether ``point`` lies in ``box`` (left and top edges in, right and bottom out)."""
    return box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]


def intersection(a: Box, b: Box) -> int:
    """Area of the overlap of two boxes."""
    left, top = max(a[0], b[0]), max(a[1], b[1])
    right, bottom = min(a[2], b[2]), min(a[3], b[3])
    return max(0, right - left) * max(0, bottom - top)


def iou(a: Box, b: Box) -> float:
    """Intersection over union, 0.0 for disjoint or empty boxes."""
    inter = intersection(a, b)
    union = box_area(a) + box_area(b) - inter
    return inter / union if union > 0 else 0.0


def union_box(boxes: Sequence[Box]) -> Box:
    """The smallest box containing all ``boxes``."""
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def clip_box(box: Sequence[float], width: int, height: int) -> Box:
    """Round outward and clip to the screen."""
    left, top, right, bottom = box
    return (
        max(0, min(width, math.floor(left))),
        max(0, min(height, math.floor(top))),
        max(0, min(width, math.ceil(right))),
        max(0, min(height, math.ceil(bottom))),
    )


def quad_to_box(points: Sequence[Sequence[float]], width: int, height: int) -> Box:
    """Axis-aligned bounding box of a polygon (OCR detectors return 4-point quads)."""
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]
    return clip_box((min(xs), min(ys), max(xs), max(ys)), width, height)


def dedupe(elements: Sequence[Element], iou_threshold: float = 0.5) -> list[Element]:
    """Greedy non-maximum suppression: keep the best-scoring of boxes overlapping by ``iou_threshold``."""
    kept: list[Element] = []
    for element in sorted(elements, key=lambda e: -e.score):
        if all(iou(element.box, k.box) < iou_threshold for k in kept):
            kept.append(element)
    return kept


def reading_order(elements: Sequence[Element]) -> list[Element]:
    """Top-to-bottom, then left-to-right for elements on the same row (centres within half a height)."""
    rows: list[list[Element]] = []
    for element in sorted(elements, key=lambda e: (e.center[1], e.box[0])):
        if rows:
            anchor = rows[-1][0]
            half = max(4, (anchor.box[3] - anchor.box[1]) // 2)
            if abs(element.center[1] - anchor.center[1]) <= half:
                rows[-1].append(element)
                continue
        rows.append([element])
    return [e for row in rows for e in sorted(row, key=lambda e: e.box[0])]


def filter_detections(
    elements: Sequence[Element],
    width: int,
    height: int,
    *,
    max_area_fraction: float = 0.05,
    iou_threshold: float = 0.5,
) -> list[Element]:
    """Drop boxes over ``max_area_fraction`` of the screen, then duplicates (IoU ≥ ``iou_threshold``)."""
    limit = max_area_fraction * width * height
    small = [e for e in elements if 0 < box_area(e.box) <= limit]
    return sorted(dedupe(small, iou_threshold), key=lambda e: (e.box[1], e.box[0]))
