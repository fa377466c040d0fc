"""The accessibility tree's words over OCR's: a text the tree gives is listed as the tree writes it.

OCR misreads what the tree spells out: a half-cut line (``Openuntit`` for "Open until 1 AM"), a
glyph read into a label (``天18min`` for "18 min"), a dropped space (``Signin``), a misplaced
separator (``10696. 484``). When an OCR line lies in a tree node that holds one line of text (a text
view; a button or chip with one label, seen as one line), the node's text replaces it, and pieces of
one node read separately (the two halves of a cut line) become one element; a wrapped title OCR read
as one text takes the words of the line nodes it covers. A node that holds other lines (a paragraph,
a whole row), or that an OCR line runs out of (two nodes read as one line), is not used: those lines
are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from mae.perception.a11y import A11yNode, A11yTree
from mae.perception.elements import Element
from mae.perception.geometry import holds, union_box

LINE_NODE_HEIGHT = 5.0
"""A node holding one seen line is at most this many times its height (a chip or button's padding)."""
OCR_LINE_HEIGHT = 2.2
"""... and an OCR text at most this many times the node's height (a sliver cut by an edge is read with
padding; a paragraph OCR merged from several lines is not one of its lines)."""
INSIDE_SHARE = 0.8
"""At least this share of an OCR line's width lies across the node it is read from (not two nodes read as
one line); its height may run past a node cut by an edge (OCR pads the sliver it reads)."""


def _one_line(node: A11yNode, element: Element, texts: Sequence[Element]) -> bool:
    """Whether every text seen inside ``node`` is on ``element``'s line: the node is that one line."""
    top, bottom = element.box[1], element.box[3]
    return all(
        t.box[1] < bottom and t.box[3] > top
        for t in texts
        if holds(node.bounds, t.center) and t is not element
    )


def _line_node(element: Element, nodes: Sequence[A11yNode], texts: Sequence[Element]) -> A11yNode | None:
    """The smallest node with one line of text that holds ``element`` and is that line."""
    height = max(1, element.box[3] - element.box[1])
    width = max(1, element.box[2] - element.box[0])
    fits = [
        n
        for n in nodes
        if n.text.strip()
        and "\n" not in n.text.strip()
        and not n.password
        and holds(n.bounds, element.center)
        and n.bounds[3] - n.bounds[1] <= LINE_NODE_HEIGHT * height
        and height <= OCR_LINE_HEIGHT * (n.bounds[3] - n.bounds[1])
        and min(n.bounds[2], element.box[2]) - max(n.bounds[0], element.box[0]) >= INSIDE_SHARE * width
    ]
    node = min(fits, key=lambda n: n.area) if fits else None
    return node if node is not None and _one_line(node, element, texts) else None


def _wrapped(element: Element, nodes: Sequence[A11yNode], texts: Sequence[Element]) -> str:
    """The tree's words for an OCR text that is a wrapped title's lines read as one (``merge_lines``):
    two or more one-line text nodes stacked inside its box, with no other text seen in them; else ""."""
    left, top, right, bottom = element.box
    lines = sorted(
        (
            n
            for n in nodes
            if n.text.strip()
            and not n.clickable
            and "\n" not in n.text.strip()
            and holds(element.box, ((n.bounds[0] + n.bounds[2]) // 2, (n.bounds[1] + n.bounds[3]) // 2))
        ),
        key=lambda n: n.bounds[1],
    )
    if len(lines) < 2:
        return ""
    slack = min(n.bounds[3] - n.bounds[1] for n in lines) // 2
    inside = all(
        n.bounds[0] >= left - slack
        and n.bounds[1] >= top - slack
        and n.bounds[2] <= right + slack
        and n.bounds[3] <= bottom + slack
        for n in lines
    )
    stacked = all(upper.bounds[3] <= lower.bounds[1] + slack for upper, lower in pairwise(lines))
    alone = not any(t is not element and holds(n.bounds, t.center) for t in texts for n in lines)
    return " ".join(" ".join(n.text for n in lines).split()) if inside and stacked and alone else ""


def tree_words(elements: Sequence[Element], tree: A11yTree) -> list[Element]:
    """``elements`` with each OCR text that lies in a one-line text node written as the node writes it;
    texts named by the tree already and icons are left as they are."""
    texts = [e for e in elements if e.kind == "text"]
    by_node: dict[int, list[int]] = {}
    nodes: dict[int, A11yNode] = {}
    replaced: dict[int, Element | None] = {}
    for index, element in enumerate(elements):
        if element.kind != "text" or element.named_by == "a11y":
            continue
        node = _line_node(element, tree.nodes, texts)
        if node is None and (wrapped := _wrapped(element, tree.nodes, texts)):
            if wrapped != element.text:
                replaced[index] = element.model_copy(update={"text": wrapped})
            continue
        if node is not None:
            by_node.setdefault(id(node), []).append(index)
            nodes[id(node)] = node
    for key, indexes in by_node.items():
        node = nodes[key]
        pieces = [elements[i] for i in indexes]
        text = " ".join(node.text.split())
        box = union_box([p.box for p in pieces])
        first = pieces[0]
        if len(pieces) == 1 and first.text == text:
            continue
        replaced[indexes[0]] = first.model_copy(update={"text": text, "box": box})
        for index in indexes[1:]:
            replaced[index] = None  # a piece of the same line, now part of the first
    result: list[Element] = []
    for index, element in enumerate(elements):
        if index in replaced:
            kept = replaced[index]
            if kept is not None:
                result.append(kept)
        else:
            result.append(element)
    return result
