"""The virtual phone's accessibility tree, built from its own widgets (what ``uiautomator dump`` gives).

Only the focused window is in the tree: with a dialog up, the dialog (the app dimmed behind it is
pixels only), and the tree says the dialog's bounds (``window``).

Every tap target becomes a clickable node (editable for text fields): labelled by the texts drawn
inside it, or, for an icon-only button, by a content description (its caption). Texts outside targets
become plain text nodes, drawn icons image nodes; the lines of a target with several (a card) are
text nodes inside it as well. The status bar and the keyboard are other windows
on a real phone, so they are not in the tree; the navigation bar's buttons are System UI's, labelled
whichever app is in front. Realistic gaps, so that fusion and fallback are both
exercised:

- ``UNLABELLED_ICON_APPS``: apps whose icon-only buttons have no content description (a common a11y
  bug). None of the built-in apps since issue 38: a real model met Walmart's back arrow, cart and
  pop-up cross unnamed where Amazon's were named, which real apps do not do; tests set it to exercise
  captions and fusion without names;
- ``WEBVIEW_APPS``: the whole screen is one WebView node with nothing inside (no usable tree), unless
  a dialog has the focus.

Rating stars are a ``RatingBar`` node described as a screen reader says them ("Rated 4.5 out of 5
stars"), and the text field with the cursor is ``focused``, as in a real dump.
"""

from __future__ import annotations

import re

from mae.device.virtual import theme
from mae.device.virtual.canvas import Frame
from mae.perception.a11y import A11yNode, A11yTree
from mae.perception.elements import Box, Element
from mae.perception.geometry import holds

UNLABELLED_ICON_APPS: frozenset[str] = frozenset()
WEBVIEW_APPS = frozenset({"Chrome"})
SYSTEM_UI = "com.android.systemui"
_RATING = re.compile(r"Rated \d+(\.\d+)? out of 5 stars")
"""The caption ``mae.device.virtual.icons.stars`` gives a row of rating stars."""


def _image_class(caption: str) -> str:
    return "android.widget.RatingBar" if _RATING.fullmatch(caption) else "android.widget.ImageView"


def _inside(box: Box, element: Element) -> bool:
    return holds(box, element.center)


def build_tree(frame: Frame, app: str, package: str, keyboard: bool, window: Box | None = None) -> A11yTree:
    """The tree of ``frame`` as app ``app`` (``""`` on the home screen) exposes it; ``window``: the
    bounds of a dialog that has the focus (the frame then holds only its widgets and the nav bar)."""
    width, height = frame.width, frame.height
    k = width / theme.DESIGN_WIDTH
    if app in WEBVIEW_APPS and window is None:  # a dialog over a WebView is a native window
        webview = A11yNode(class_name="android.webkit.WebView", package=package, bounds=(0, 0, width, height))
        return A11yTree(source="virtual", nodes=[webview])
    top = round(theme.STATUS_H * k)
    nav_top = round((height / k - theme.NAV_H) * k)
    bottom = height
    if keyboard:
        bottom = round((height / k - theme.NAV_H - theme.KEYBOARD_H) * k)

    def shown(box: Box) -> bool:
        y = (box[1] + box[3]) // 2
        return top <= y < bottom or (keyboard and y >= bottom + round(theme.KEYBOARD_H * k))

    nodes: list[A11yNode] = []
    claimed: set[int] = set()
    for target in frame.targets:
        if not shown(target.box):
            continue
        box = target.box
        if keyboard and box[1] < bottom < box[3]:  # a control running under the keyboard: its part above
            box = (box[0], box[1], box[2], bottom)
        inside = [i for i, e in enumerate(frame.elements) if _inside(box, e)]
        claimed.update(inside)
        texts = [frame.elements[i].text for i in inside if frame.elements[i].kind == "text"]
        glyphs = [frame.elements[i] for i in inside if frame.elements[i].kind == "icon"] if texts else []
        editable = target.role == "edit"
        system = (target.box[1] + target.box[3]) // 2 >= nav_top
        desc = "" if texts or (app in UNLABELLED_ICON_APPS and not system) else target.label
        nodes.append(
            A11yNode(
                text=" ".join(texts),
                content_desc=desc,
                class_name="android.widget.EditText" if editable else "android.widget.Button",
                package=SYSTEM_UI if system else package,
                clickable=True,
                editable=editable,
                focused=target.focused,
                bounds=box,
            )
        )
        if len(texts) > 1:  # a card's lines are text views of their own inside it, as in a real dump
            nodes.extend(
                A11yNode(
                    text=frame.elements[i].text,
                    class_name="android.widget.TextView",
                    package=package,
                    bounds=frame.elements[i].box,
                )
                for i in inside
                if frame.elements[i].kind == "text"
            )
        for glyph in glyphs:  # an icon beside a button's text (the magnifier in a search box)
            nodes.append(
                A11yNode(
                    content_desc="" if app in UNLABELLED_ICON_APPS else glyph.text,
                    class_name=_image_class(glyph.text),
                    package=package,
                    bounds=glyph.box,
                )
            )
    for index, element in enumerate(frame.elements):
        if index in claimed or not shown(element.box):
            continue
        is_text = element.kind == "text"
        nodes.append(
            A11yNode(
                text=element.text if is_text else "",
                content_desc="" if is_text or app in UNLABELLED_ICON_APPS else element.text,
                class_name="android.widget.TextView" if is_text else _image_class(element.text),
                package=package,
                bounds=element.box,
            )
        )
    if frame.scroll is not None:
        nodes.append(
            A11yNode(
                class_name="android.widget.ScrollView",
                package=package,
                scrollable=True,
                bounds=frame.scroll.box,
            )
        )
    return A11yTree(source="virtual", nodes=nodes, window=window)
