"""Fusing the accessibility tree with OCR and icon detection.

- An icon box inside a small labelled node takes the node's label (``named_by="a11y"``) and, when the
  node is clickable, the role ``button``.
- OCR text keeps its own coordinates (a node's bounds are often a whole row); text inside an editable
  node becomes a ``field``.
- A clickable or editable node with a label and nothing seen inside it is added as an element of its
  own (icons drawn too faintly for the detector, controls OCR could not read).
- With a tree whose focused window is a dialog (``tree.window``), texts and icons outside the window and
  outside every node are the app dimmed behind the dialog: its icons are dropped, its texts are listed
  last as plain text marked ``behind`` (a model still reads the page it reached under a sign-in sheet).
- With a tree, an unnamed icon outside every clickable node is decoration (map texture, dividers,
  badges) and is dropped; so is an unnamed icon inside a control whose label the list already shows
  as text inside it (a product's star rating, the magnifier in a search box, the glyph above "Save").
- OCR's line inside a tree node that is that one line is written as the tree writes it, pieces of it
  joined (``mae.perception.tree_text``); a text behind a dialog that runs under the dialog's edge is
  not listed (OCR read a garble of the part that shows).
- Rating stars the tree describes (a ``RatingBar``: "Rated 4.5 out of 5 stars") are listed as it says
  them, in place of the star shapes seen there; the text field with the cursor says so (``focused``).
- A card made of text alone (a saved note: title and first lines) is one button with the tree's words,
  not one entry a line.
- A card (a clickable row whose label is its title, price and rating) is listed by its title: a picture
  inside it does not take the card's label (its centre, on the picture, would be the card's tap
  point), and a card nothing saw is added with the box of the text that starts its label.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from mae.perception.a11y import A11yNode, A11yTree
from mae.perception.elements import Box, Element
from mae.perception.geometry import box_area, holds, reading_order, union_box
from mae.perception.tree_text import tree_words

ICON_NODE_RATIO = 20.0
"""A node names an icon only when it is at most this many times the icon's area (not a whole row).
A 48-56 dp touch target around a 12-16 dp glyph (a thin back arrow) is 9-22 times its area; a list
row is 60 times or more."""


def _contains(node: A11yNode, point: tuple[int, int]) -> bool:
    return holds(node.bounds, point)


def _smallest(nodes: Sequence[A11yNode], element: Element, limit: float) -> A11yNode | None:
    """The smallest of ``nodes`` holding the element's centre and at most ``limit`` times its area."""
    area = max(1, box_area(element.box))
    fits = [n for n in nodes if _contains(n, element.center) and n.area <= limit * area]
    return min(fits, key=lambda n: n.area) if fits else None


MIN_CONTROL_PX = 16
"""A control the tree lists but vision did not see is listed when this much of it shows."""


def _norm(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _shows_label(node: A11yNode, texts: Sequence[Element]) -> bool:
    """Whether a text seen inside ``node`` is (part of) its label, so the list already shows it: three
    or more of its characters, or the whole label however short (the app called ``X``)."""
    label = _norm(node.label)
    return any(
        (key := _norm(t.text))
        and (key == label or (len(key) >= 3 and key in label))
        and _contains(node, t.center)
        for t in texts
    )


def _namer(nodes: Sequence[A11yNode], element: Element, seen: Sequence[Element]) -> A11yNode | None:
    """The node that names ``element``: the smallest holding its centre that is either small (at most
    ``ICON_NODE_RATIO`` times the element) or holds nothing else that was seen (a wide nav button)."""
    area = max(1, box_area(element.box))
    fits = sorted((n for n in nodes if _contains(n, element.center)), key=lambda n: n.area)
    for node in fits:
        if node.area <= ICON_NODE_RATIO * area:
            return node
        if not any(other is not element and _contains(node, other.center) for other in seen):
            return node
    return None


def _is_card(node: A11yNode, element: Element, texts: Sequence[Element]) -> bool:
    """Whether ``node`` is a card around ``element`` (its picture): a control with two or more texts
    seen inside it, beside the picture, that show its label (a product's title, price and rating; not
    an app icon with its one name below)."""
    beside = [t for t in texts if not holds(element.box, t.center) and _contains(node, t.center)]
    return node.clickable and len(beside) >= 2 and _shows_label(node, beside)


def _label_box(node: A11yNode, nodes: Sequence[A11yNode]) -> Box:
    """Where a person reads ``node``'s label: the first text inside it that starts the label (a card's
    title), else the node itself."""
    label = _norm(node.spoken_label)
    inside = [
        n
        for n in nodes
        if n is not node
        and n.text.strip()
        and n.area < node.area
        and holds(node.bounds, ((n.bounds[0] + n.bounds[2]) // 2, (n.bounds[1] + n.bounds[3]) // 2))
        and _norm(n.text)
        and label.startswith(_norm(n.text))
    ]
    return min(inside, key=lambda n: (n.bounds[1], n.bounds[0])).bounds if inside else node.bounds


def _reach(node: A11yNode) -> dict[str, object]:
    """What an element inside ``node`` records of it: the bounds a tap activates, the password flag,
    whether it is the field with the cursor."""
    return {"control": node.bounds, "password": node.password, "focused": node.editable and node.focused}


CUT_MARGIN = 0.25
"""A text behind a dialog that ends within this share of its height from the dialog's edge is cut by it."""


def _cut_by(window: Box, box: Box) -> bool:
    """Whether a text seen behind a dialog runs under the dialog's edge: OCR read only the part that
    shows, a garble ("Rolllha" for a "Rollback" badge half under a card) or a fragment."""
    margin = CUT_MARGIN * max(1, box[3] - box[1])
    left, top, right, bottom = window
    return (
        box[0] < right + margin
        and box[2] > left - margin
        and box[1] < bottom + margin
        and box[3] > top - margin
    )


def is_rating(node: A11yNode) -> bool:
    """A row of rating stars (``RatingBar``) the tree describes ("Rated 4.5 out of 5 stars")."""
    return node.class_name.endswith("RatingBar") and bool(node.label)


def _one_column(texts: Sequence[Element]) -> bool:
    """Whether ``texts`` are lines one under another, none side by side (a post's counts in a row are
    separate controls to a reader, a note's title over its first lines are not)."""
    rows = sorted(texts, key=lambda t: t.box[1])
    return all(upper.box[3] <= lower.center[1] for upper, lower in pairwise(rows))


def _text_cards(
    elements: Sequence[Element], clickable: Sequence[A11yNode], ratings: Sequence[A11yNode]
) -> list[tuple[A11yNode, list[Element]]]:
    """Cards made of text alone (a saved note: its title and its first lines), with the texts seen in
    each: a clickable, not editable node that is the smallest control around two or more texts and
    holds no icon, rating or other control, its texts in one column. A screen reader says such a card as
    one thing."""
    cards: list[tuple[A11yNode, list[Element]]] = []
    for node in clickable:
        if node.editable or not node.spoken_label:
            continue
        inside = [e for e in elements if _contains(node, e.center)]
        texts = [e for e in inside if e.kind == "text" and _smallest(clickable, e, float("inf")) is node]
        if len(texts) < 2 or len(texts) != len(inside) or not _one_column(texts):
            continue
        nested = any(
            other is not node
            and holds(
                node.bounds,
                ((other.bounds[0] + other.bounds[2]) // 2, (other.bounds[1] + other.bounds[3]) // 2),
            )
            for other in [*clickable, *ratings]
            if other.area < node.area
        )
        if not nested and sum(_shows_label(node, [t]) for t in texts) * 2 >= len(texts):
            cards.append((node, texts))
    return cards


def fuse(elements: Sequence[Element], tree: A11yTree) -> list[Element]:
    """``elements`` (OCR texts and detected icons) named and typed by ``tree``, plus unseen controls."""
    # A node names an icon when it describes an image (content description) or is a labelled control;
    # a plain text view next to a map pin does not name the pin.
    naming = [n for n in tree.nodes if n.content_desc.strip() or ((n.clickable or n.editable) and n.label)]
    clickable = [n for n in tree.nodes if n.clickable or n.editable]
    editable = [n for n in tree.nodes if n.editable]
    behind: list[Element] = []
    if tree.window is not None:
        window = tree.window
        focused = [
            e for e in elements if holds(window, e.center) or any(_contains(n, e.center) for n in tree.nodes)
        ]
        # the page under a card or a sheet is still seen, dimmed: its texts stay, as plain text (a real
        # sign-in sheet's list had lost the whole visible page); its icons are decoration
        behind = [
            e.model_copy(update={"behind": True, "role": ""})
            for e in elements
            if e.kind == "text" and not any(e is kept for kept in focused) and not _cut_by(window, e.box)
        ]
        elements = focused
    elements = tree_words(elements, tree)  # the tree's spelling of a line over OCR's
    # Rating stars are listed as the tree says them, once, in place of the star shapes seen in them.
    ratings = [
        n
        for n in tree.nodes
        if is_rating(n) and min(n.bounds[2] - n.bounds[0], n.bounds[3] - n.bounds[1]) >= MIN_CONTROL_PX
    ]
    elements = [e for e in elements if e.kind == "text" or not any(_contains(n, e.center) for n in ratings)]
    fused: list[Element] = []
    for node, seen in _text_cards(elements, clickable, ratings):
        # one entry for the card, with the tree's words, where its texts are (a tap there opens it)
        fused.append(
            Element(
                kind="text",
                text=node.spoken_label,
                box=union_box([t.box for t in seen]),
                source=tree.source,
                role="button",
                named_by="a11y",
                **_reach(node),
            )
        )
        elements = [e for e in elements if not any(e is t for t in seen)]
    for node in editable:
        # a field's wrapped lines are one field, with the tree's text (a real model saw a typed note body
        # listed as two fields, both "focused")
        lines = [e for e in elements if e.kind == "text" and _smallest(editable, e, float("inf")) is node]
        if len(lines) < 2 or not _one_column(lines):
            continue
        words = " ".join(node.text.split()) or " ".join(" ".join(t.text.split()) for t in lines)
        fused.append(
            lines[0].model_copy(
                update={
                    "text": words,
                    "box": union_box([t.box for t in lines]),
                    "role": "field",
                    **_reach(node),
                }
            )
        )
        elements = [e for e in elements if not any(e is t for t in lines)]
    texts = [e for e in elements if e.kind == "text"]
    for node in ratings:
        if any(_norm(t.text) == _norm(node.label) for t in texts if _contains(node, t.center)):
            continue
        holder = _smallest(clickable, Element(kind="text", box=node.bounds), float("inf"))
        fused.append(
            Element(
                kind="text",
                text=node.label,
                box=node.bounds,
                source=tree.source,
                named_by="a11y",
                **(_reach(holder) if holder is not None else {}),
            )
        )
    named_at: dict[int, int] = {}
    for element in elements:
        holder = _smallest(clickable, element, float("inf"))
        reach: dict[str, object] = {} if holder is None else _reach(holder)
        if element.kind == "text":
            if any(_contains(n, element.center) for n in editable):
                fused.append(element.model_copy(update={"role": "field", **reach}))
            elif _smallest(clickable, element, ICON_NODE_RATIO) is not None:
                fused.append(element.model_copy(update={"role": "button", **reach}))
            else:
                fused.append(element.model_copy(update=reach) if reach else element)
            continue
        control = _namer(clickable, element, elements)
        named = _namer(naming, element, elements)
        if named is None and not element.text:
            holder = _smallest(clickable, element, float("inf"))
            if holder is not None and _shows_label(holder, texts):
                continue  # a part of a control the list shows by its text
        update: dict[str, object] = {}
        if named is not None and not element.text:
            label = named.label
            box = element.box
            # The outline of a labelled chip or button, found as an icon: its text already says it.
            if any(_norm(t.text) == _norm(label) and holds(box, t.center) for t in texts):
                continue
            if _is_card(named, element, texts):
                continue  # a card's picture: the card is listed by its title, where a tap on it lands
            holder = _smallest(clickable, element, float("inf"))
            if (
                holder is not None
                and holder is not named
                and _norm(holder.label) == _norm(label)
                and _shows_label(holder, texts)
            ):
                continue  # the glyph of a button listed by its text ("Directions"), not on its icon
            update.update(text=label, named_by="a11y")
        if control is not None:
            update["role"] = "field" if control.editable else "button"
        elif not (element.text or update.get("text")) and not any(
            _contains(n, element.center) for n in clickable
        ):
            continue  # unnamed and not interactive: decoration
        update.update(reach)
        result = element.model_copy(update=update) if update else element
        if update.get("named_by") == "a11y" and named is not None:
            # Several shapes inside one labelled node (a photo's parts) are one thing: keep the largest.
            earlier = named_at.get(id(named))
            if earlier is not None:
                if box_area(result.box) > box_area(fused[earlier].box):
                    fused[earlier] = result
                continue
            named_at[id(named)] = len(fused)
        fused.append(result)
    for node in clickable:
        left, top, right, bottom = node.bounds
        if not node.spoken_label or min(right - left, bottom - top) < MIN_CONTROL_PX:
            continue  # unnamed, or a sliver of a control cut by a list's edge: nothing to read or tap there
        if any(_contains(node, e.center) for e in fused):
            continue
        shown = bool((node.text or node.inner_label) and not node.content_desc)
        fused.append(
            Element(
                kind="text" if shown else "icon",
                text=node.spoken_label,
                box=_label_box(node, tree.nodes) if shown else node.bounds,
                source=tree.source,
                role="field" if node.editable else "button",
                named_by="a11y",
                **_reach(node),
            )
        )
    fused_texts = [e for e in fused if e.kind == "text"]
    icons = [e for e in fused if e.kind != "text"]
    return [*reading_order(fused_texts), *reading_order(icons), *reading_order(behind)]
