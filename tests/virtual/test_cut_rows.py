"""Lists like a real app's when scrolled: rows cut by the screen's or a header's edge are drawn cut (in
the screenshot, the element list and the accessibility tree, with their visible bounds), never left
blank; no blank band above the first card; rows stay drawn when scrolling back.

Real case (h_korean_late_night, a real model as the backbone): after Maps' results spinner the list
showed four rows and blank space below; the fifth row, Gangnam BBQ House (the answer), lay partly on
screen but was not drawn, because the phone drew a row whole or not at all, and the model read the
blank space as the end of the list.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PIL import Image

from mae.device.virtual import VirtualPhone
from mae.device.virtual.apps.browser import BrowserApp
from mae.device.virtual.apps.maps import RESULT_H, MapsApp
from mae.device.virtual.apps.shop import ShopApp
from mae.device.virtual.apps.social import SocialApp
from mae.device.virtual.canvas import MIN_VISIBLE_PX
from mae.device.virtual.realism import Realism
from mae.eval.virtual_suite import load_task_suite

REALISM = Realism(
    enabled=True, seed=3, popups=False, sign_in_nag=False, loading=False, slow_open=False, paging=False
)
LONGEST_BLANK_PX = 230
"""Within a list, the longest run of blank pixel rows between two lines of content (the space between
two shop cards is about 180 px; a row left blank leaves a band as high as the row, 400 px or more)."""


def open_list(phone: VirtualPhone, app: str, query: str | None, scholar: bool = False) -> None:
    phone.open_app(app)
    current = phone.current_app
    if scholar:
        assert isinstance(current, BrowserApp)
        current.scholar_search(query or "")
    elif query is not None:
        assert isinstance(current, MapsApp | ShopApp | BrowserApp | SocialApp)
        current.search(query)
    phone.wait(2)  # past any results spinner


LISTS: dict[str, Callable[[VirtualPhone], None]] = {
    "maps": lambda p: open_list(p, "Maps", "korean restaurants"),
    "amazon": lambda p: open_list(p, "Amazon", "laptop"),
    "scholar": lambda p: open_list(p, "Chrome", "llm agent survey", scholar=True),
    "x_feed": lambda p: open_list(p, "X", None),
    "x_search": lambda p: open_list(p, "X", "black myth wukong"),
}


def blank_runs(image: Image.Image, box: tuple[int, int, int, int]) -> int:
    """The longest run of pixel rows inside ``box`` that are all one colour."""
    left, top, right, bottom = box
    if bottom <= top:
        return 0
    longest = run = 0
    grey = image.convert("L").crop((left, top, right, bottom))
    for y in range(grey.height):
        low, high = grey.crop((0, y, grey.width, y + 1)).getextrema()
        run = run + 1 if low == high else 0
        longest = max(longest, run)
    return longest


def check_screen(phone: VirtualPhone, where: str) -> None:
    box = phone.scroll_box()
    assert box is not None, where
    image = phone.screenshot()
    inside = [e for e in phone.ground_truth() if box[1] <= e.center[1] < box[3]]
    assert inside, f"{where}: nothing drawn in the list"
    content = (box[0], box[1], box[2], max(e.box[3] for e in inside))  # below the list's end is blank
    assert blank_runs(image, content) < LONGEST_BLANK_PX, f"{where}: a blank band in the list"
    # every element keeps to the list's viewport (visible bounds), and one is cut by its top or bottom
    assert all(box[1] <= e.box[1] and e.box[3] <= box[3] for e in inside), where
    tree = phone.ui_tree()
    for node in tree.nodes:
        if node.class_name == "android.webkit.WebView":  # the browser's page has no tree inside
            continue
        if node.bounds is not None and box[1] <= (node.bounds[1] + node.bounds[3]) / 2 < box[3]:
            assert box[1] <= node.bounds[1] and node.bounds[3] <= box[3], f"{where}: {node}"


@pytest.mark.parametrize("name", sorted(LISTS))
def test_scrolled_lists_draw_cut_rows_and_no_blank_band(name: str) -> None:
    phone = VirtualPhone(realism_settings=REALISM)  # sponsored decoys make the lists longer
    LISTS[name](phone)
    box = phone.scroll_box()
    assert box is not None
    check_screen(phone, f"{name} at the top")
    app = phone.current_app
    assert app is not None
    positions = []
    for step in range(4):  # swipes of 570 px: not a whole number of rows
        phone.swipe(540, 1700, 540, 1130)
        positions.append(app.screen.scroll)
        if phone.scroll_box() is None:
            break
        if app.screen.scroll < positions[0] * (step + 1) - 1:  # reached the end: blank below it is right
            break
        check_screen(phone, f"{name} after {step + 1} swipes")
    assert positions[0] > 0, f"{name}: the list did not scroll"
    for step in range(2):  # and back up: the rows stay drawn
        phone.swipe(540, 1130, 540, 1700)
        check_screen(phone, f"{name} after {step + 1} swipes back")


def test_maps_rows_cut_by_the_edges_are_drawn_listed_and_tappable() -> None:
    """The real case: a result that lies partly on screen is drawn, its visible texts are listed with
    their visible bounds, and tapping its visible part opens it."""
    phone = VirtualPhone(realism_settings=REALISM)
    open_list(phone, "Maps", "korean restaurants")
    box = phone.scroll_box()
    app = phone.current_app
    assert box is not None and isinstance(app, MapsApp)
    phone.swipe(540, 1700, 540, 1300)  # 400 px: the rows no longer end at the list's edges
    places = {p.name for p in app.results("korean restaurants")}
    # a row whose visible part shows none of its texts is tappable but nameless (see the McDonald's case)
    rows = [
        (label, b) for label, b in phone.tap_targets() if label in places or (not label and b[2] == box[2])
    ]
    above = [(label, b) for label, b in rows if abs(b[1] - box[1]) <= 2 and b[3] < box[3]]
    below = [(label, b) for label, b in rows if abs(b[3] - box[3]) <= 2 and b[1] > box[1]]
    assert above and below, rows  # cut by the search bar's edge and by the bottom of the list
    label, (left, top, right, bottom) = next(row for row in below if row[0])
    listed = [e for e in phone.ground_truth() if top <= e.center[1] < bottom]
    assert listed and all(e.box[3] <= box[3] for e in listed)
    image = phone.screenshot().convert("L")
    assert blank_runs(image, (left, top, right, bottom)) < bottom - top  # its pixels are drawn
    phone.tap((left + right) // 2, (top + bottom) // 2)
    assert app.screen.name == "place" and app.screen.item and label


# The real model's actions in h_korean_late_night (E fast), converted from its 768x1664 screenshots to
# the phone's pixels; the Tap_Type_and_Enter Shortcut written out as its three operations.
KOREAN_FAST_ACTIONS = [
    'Open_App("Maps")',
    "Wait()",
    "Tap(540, 1363)",
    "Tap(796, 1259)",
    "Tap(845, 1260)",
    "Tap(540, 181)",
    'Type("Korean restaurant Champaign IL")',
    "Enter()",
    "Wait()",
    "Swipe(540, 1500, 540, 501)",
    "Tap(540, 2133)",
    "Swipe(540, 1500, 540, 501)",
    "Swipe(540, 1500, 540, 501)",
    "Swipe(540, 703, 540, 1266)",
    "Tap(232, 692)",
    "Back()",
    "Swipe(540, 562, 540, 1688)",
]


def test_a_cut_row_showing_none_of_its_content_is_not_listed_by_name() -> None:
    """The real case (h_korean_late_night, E fast): after scrolling back up, McDonald's row lay 49 px
    on screen above the navigation bar, all of it the row's blank top margin; the picture showed an
    empty strip, yet the element list said ``button "McDonald's"`` there (the row's tap target, named
    by its label). A cut row's target is named only by what its visible part draws."""
    task = next(t for t in load_task_suite(suite="hard") if t.id == "h_korean_late_night")
    phone = VirtualPhone()
    task.prepare(phone)
    for action in KOREAN_FAST_ACTIONS:
        task.replay(phone, [action])
        phone.wait(0.5)
    box = phone.scroll_box()
    assert box is not None
    strip = [(label, b) for label, b in phone.tap_targets() if b[1] > box[3] - 80 and b[3] == box[3]]
    assert strip, "the scroll no longer leaves a row's top margin at the bottom edge"
    assert all(label == "" for label, _ in strip), strip  # still tappable, but nothing names it
    _, top, _, bottom = strip[0][1]
    assert not [e for e in phone.ground_truth() if top <= e.center[1] < bottom]
    assert not [
        n for n in phone.ui_tree().nodes if n.label == "McDonald's" and n.bounds and n.bounds[3] > top
    ]
    # every cut target that keeps its name shows something of it: a listed text or icon inside it
    shown = phone.ground_truth()
    for label, (x0, y0, x1, y1) in phone.tap_targets():
        if label and (y0 == box[1] or y1 == box[3]):
            assert any(x0 <= e.center[0] < x1 and y0 <= e.center[1] < y1 for e in shown), label


def test_a_sliver_of_a_row_is_neither_drawn_nor_listed() -> None:
    phone = VirtualPhone(realism_settings=REALISM)
    open_list(phone, "Maps", "korean restaurants")
    box = phone.scroll_box()
    app = phone.current_app
    assert box is not None and isinstance(app, MapsApp)
    k = phone.screen_size()[0] / 1080
    for visible in (MIN_VISIBLE_PX - 2, MIN_VISIBLE_PX + 30):
        # the third row's top `visible` px above the list's bottom edge
        app.screen.scroll = (box[1] + 2 * RESULT_H * k - box[3] + visible) / k
        phone.wait(0.1)
        strip = [b for _, b in phone.tap_targets() if b[1] >= box[3] - visible - 1 and b[3] == box[3]]
        frame_ops = phone._frame.ops  # what the screenshot paints
        clipped = [op for op in frame_ops if op[0] == "clip" and op[1][3] == box[3]]
        if visible < MIN_VISIBLE_PX:
            assert not strip and not clipped, (visible, strip)
        else:
            assert strip and clipped, visible
