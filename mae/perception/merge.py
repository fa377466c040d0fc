"""Merging OCR lines that belong together (a title wrapped over two lines), as the paper's Perceptor does.

Conservative on purpose: lines merge only when they are vertically adjacent (gap under ``max_gap`` of
the line height), of similar height, left-aligned, and the upper line runs close to the right edge of
the lower one's column (a wrapped line, not a title over a different field). Separate fields (a price
under a product name, a rating under a title) stay separate so the agent can tap the right one.
"""

from __future__ import annotations

from collections.abc import Sequence

from mae.perception.elements import Element
from mae.perception.geometry import reading_order, union_box


def _height(element: Element) -> int:
    return max(1, element.box[3] - element.box[1])


def _first_word_width(element: Element) -> float:
    """Estimated pixel width of the first word of ``element`` (its width shared out per character)."""
    text = element.text.strip()
    if not text:
        return 0.0
    per_char = (element.box[2] - element.box[0]) / len(text)
    return per_char * (len(text.split()[0]) + 1)


def belongs_below(
    upper: Element,
    lower: Element,
    *,
    max_gap: float = 0.6,
    align_px: int = 12,
    column_right: int | None = None,
) -> bool:
    """Whether ``lower`` continues ``upper``: a wrapped line of the same paragraph.

    With ``column_right`` (the right edge of the text column), a line is only a continuation if its
    first word would not have fitted at the end of the line above: two stacked fields (a place's
    details over its opening hours) stay apart.
    """
    if upper.kind != "text" or lower.kind != "text":
        return False
    h_up, h_low = _height(upper), _height(lower)
    if max(h_up, h_low) > 1.3 * min(h_up, h_low):
        return False
    gap = lower.box[1] - upper.box[3]
    if gap < -0.2 * h_up or gap > max_gap * h_up:
        return False
    if abs(lower.box[0] - upper.box[0]) > align_px:
        return False
    # A wrapped line fills its row: the upper line is at least as wide as the lower one.
    upper_width = upper.box[2] - upper.box[0]
    lower_width = lower.box[2] - lower.box[0]
    if column_right is not None and upper.box[2] + _first_word_width(lower) < column_right:
        return False
    return upper_width >= 0.8 * lower_width and upper_width >= 6 * h_up


def _same_row(a: Element, b: Element) -> bool:
    half = max(4, min(_height(a), _height(b)) // 2)
    return abs(a.center[1] - b.center[1]) <= half


def merge_lines(elements: Sequence[Element], width: int | None = None, **options: float) -> list[Element]:
    """Merge wrapped text lines into one element each; icons pass through unchanged.

    ``width`` (the screen's) lets a line count as wrapped only when it filled its column, the column
    reaching as far right as the text's left margin is from the left edge.
    """
    texts = sorted((e for e in elements if e.kind == "text"), key=lambda e: (e.box[1], e.box[0]))
    others = [e for e in elements if e.kind != "text"]
    # Only a line alone in its row can be part of a wrapped paragraph: a row with several texts is a
    # set of fields (rating, stars, review count) and stays apart.
    alone = [not any(o is not e and _same_row(e, o) for o in texts) for e in texts]
    used = [False] * len(texts)
    merged: list[Element] = []
    for index, element in enumerate(texts):
        if used[index]:
            continue
        if not alone[index]:
            merged.append(element)
            continue
        group = [element]
        used[index] = True
        current = element
        for other_index in range(index + 1, len(texts)):
            if used[other_index] or not alone[other_index]:
                continue
            candidate = texts[other_index]
            if candidate.box[1] > current.box[3] + _height(current):
                break
            column = None if width is None else max(width - current.box[0], current.box[2])
            if belongs_below(current, candidate, column_right=column, **options):  # type: ignore[arg-type]
                group.append(candidate)
                used[other_index] = True
                current = candidate
        if len(group) == 1:
            merged.append(element)
        else:
            merged.append(
                Element(
                    kind="text",
                    text=" ".join(e.text for e in group),
                    box=union_box([e.box for e in group]),
                    source=element.source,
                    score=min(e.score for e in group),
                )
            )
    return [*reading_order(merged), *others]
