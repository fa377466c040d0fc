"""Fusion with a dialog in focus: what is seen outside the dialog's window is the app dimmed behind it."""

from __future__ import annotations

from mae.device.virtual import VirtualPhone
from mae.device.virtual.realism import Realism
from mae.perception.a11y import A11yNode, A11yTree
from mae.perception.elements import Element
from mae.perception.fusion import fuse

DIALOG = (90, 900, 990, 1400)
NAV_BACK = (180, 2208, 360, 2340)


def _tree(window: tuple[int, int, int, int] | None) -> A11yTree:
    nodes = [
        A11yNode(text="Not now", clickable=True, bounds=(600, 1250, 900, 1360)),
        A11yNode(content_desc="back button", clickable=True, bounds=NAV_BACK),
    ]
    return A11yTree(source="virtual", nodes=nodes, window=window)


def _seen() -> list[Element]:
    return [
        Element(kind="text", text="Sign in to Amazon", box=(150, 950, 700, 1000)),
        Element(kind="text", text="Not now", box=(680, 1280, 820, 1330)),
        Element(kind="text", text="Search Amazon", box=(150, 300, 500, 340)),  # dimmed, behind
        Element(kind="icon", text="", box=(40, 500, 120, 580)),  # a dimmed product picture
        Element(kind="icon", text="", box=(250, 2250, 290, 2290)),  # the back glyph in the nav bar
    ]


def test_outside_a_focused_dialog_icons_are_dropped_and_texts_listed_as_dimmed_behind_it() -> None:
    """Real case: a sign-in sheet's "after" list had dropped the whole visible page under it."""
    fused = fuse(_seen(), _tree(DIALOG))
    kept = {e.text for e in fused}
    assert {"Sign in to Amazon", "Not now", "back button"} <= kept
    (page,) = [e for e in fused if e.center[1] < 800]
    assert page.text == "Search Amazon" and page.behind and page.role == ""
    assert page.label == 'text "Search Amazon" (dimmed, behind the dialog)' and fused[-1] is page
    assert not any(e.behind for e in fused if e is not page)


def test_without_a_window_nothing_is_dropped_for_lying_outside_it() -> None:
    kept = {e.text for e in fuse(_seen(), _tree(None))}
    assert "Search Amazon" in kept


def test_the_virtual_phone_tree_gives_the_dialog_window_only_while_a_card_or_sheet_is_up() -> None:
    phone = VirtualPhone(realism_settings=Realism(enabled=True, loading=False, slow_open=False))
    phone.open_app("Maps")
    assert phone.realism.dialog("Maps") is not None
    window = phone.ui_tree().window
    assert window is not None
    for node in phone.ui_tree().nodes:
        inside = window[0] <= node.bounds[0] and node.bounds[2] <= window[2]
        assert inside or node.package == "com.android.systemui"
    while phone.realism.dialog("Maps") is not None:
        phone.back()
    assert phone.ui_tree().window is None
