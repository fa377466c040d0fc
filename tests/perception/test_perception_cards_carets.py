"""A caret never becomes a letter; a card taps on its title; stray digits and magnifier lenses go.

Synthetic crops and elements for the rules, and the virtual phone's own screens (Best Buy's focused
search field, Walmart's results) read by RapidOCR, with and without the accessibility tree.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from mae.actions.reading import parse_action_text
from mae.actions.registry import resolve_call
from mae.device.virtual import VirtualPhone
from mae.device.virtual.realism import Realism
from mae.perception import Perceptor
from mae.perception.a11y import A11yNode, A11yTree
from mae.perception.caret import find_caret, without_caret
from mae.perception.elements import Element
from mae.perception.fusion import fuse
from mae.perception.icons import drop_text_regions, make_icon_detector
from mae.perception.ocr import make_ocr
from mae.perception.tidy import clean_texts, drop_fragments, tidy

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
GREY, BLACK, BLUE, WHITE = (74, 79, 85), (31, 31, 31), (11, 87, 208), (255, 255, 255)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype(FONT, size)
    except OSError:
        return ImageFont.load_default(size)


def line(text: str, colour: tuple[int, int, int], caret_x: int | None = None) -> np.ndarray:
    """A 56 px high line crop as OCR cuts it: ``text`` at x=12, a 5 px accent caret at ``caret_x``."""
    image = Image.new("RGB", (24 + 22 * len(text), 56), WHITE)
    draw = ImageDraw.Draw(image)
    draw.text((12, 8), text, fill=colour, font=_font(36))
    if caret_x is not None:
        draw.rectangle((caret_x, 4, caret_x + 4, 52), fill=BLUE)
    return np.asarray(image)


def test_a_caret_over_the_hint_or_after_the_text_is_found_and_painted_out() -> None:
    over_first_letter = line("Search Best Buy", GREY, caret_x=16)
    found = find_caret(over_first_letter)
    assert found is not None and found[0] <= 16 < found[1]
    typed = line("Segment Anything", BLACK)
    end = int(np.flatnonzero((typed < 200).any(axis=2).any(axis=0))[-1])
    after_text = line("Segment Anything", BLACK, caret_x=end + 6)
    found = find_caret(after_text)
    assert found is not None and found[0] > end
    cleaned = without_caret(after_text)
    coloured = (cleaned.astype(int).max(axis=2) - cleaned.astype(int).min(axis=2)) >= 70
    assert not coloured.any()  # the bar is gone, the text's pixels are untouched
    assert np.array_equal(cleaned[:, : end + 1], after_text[:, : end + 1])


@pytest.mark.parametrize(
    ("text", "colour", "why"),
    [
        ("Install", BLACK, "a real l at a word's end is ink, not accent"),
        ("Illini Union", GREY, "a real I at the start"),
        ("Segment Anything", BLUE, "a blue link: coloured ink is the whole line, not a bar"),
        ("1", BLUE, "a coloured badge alone"),
        ("|", BLUE, "a bar with no text beside it (an empty field's caret, left to strip_cursor)"),
        ("a | b", BLACK, "a bar typed in the text"),
    ],
)
def test_genuine_letters_and_coloured_text_are_not_carets(
    text: str, colour: tuple[int, int, int], why: str
) -> None:
    crop = line(text, colour)
    assert find_caret(crop) is None, why
    assert without_caret(crop) is crop


def test_blue_text_with_a_blue_caret_is_left_alone() -> None:
    """The known limit: a caret in the text's own colour cannot be told from a letter by colour."""
    assert find_caret(line("Segment Anything", BLUE, caret_x=380)) is None


def _phone(*actions: str) -> VirtualPhone:
    phone = VirtualPhone()
    for text in actions:
        for step in resolve_call(parse_action_text(text), {}, phone.screen_size()):
            step.execute(phone)
    return phone


@pytest.fixture(scope="module")
def ocr() -> object:
    return make_ocr("rapidocr")


def _field_text(ocr: object, phone: VirtualPhone) -> list[str]:
    rgb = np.asarray(phone.screenshot().convert("RGB"))
    return [e.text for e in ocr.read(rgb) if 280 <= e.center[1] <= 360 and 140 < e.center[0] < 900]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("", "Search Best Buy"),  # the caret over the hint's S was read "pearch Best Buy"
        ("Segment Anything", "Segment Anything"),  # after the text it was read "Segment Anything["
        ("Pool", "Pool"),  # a real l before the caret stays
        ("Paper 1", "Paper 1"),  # and a real 1
    ],
)
def test_ocr_reads_a_focused_field_without_its_caret(ocr: object, typed: str, expected: str) -> None:
    actions = ['Open_App("Best Buy")', "Tap(540, 318)", *([f'Type("{typed}")'] if typed else [])]
    assert _field_text(ocr, _phone(*actions)) == [expected]


WALMART_RESULTS = ['Open_App("Walmart")', "Tap(540, 318)", 'Type("ribeye steak")', "Enter()"]


@pytest.fixture(scope="module")
def walmart() -> VirtualPhone:
    return _phone(*WALMART_RESULTS)  # realism off: no dialog over the results


@pytest.mark.parametrize("with_tree", [True, False])
def test_a_product_card_taps_on_its_title_and_no_digit_strays_beside_its_price(
    ocr: object, walmart: VirtualPhone, with_tree: bool
) -> None:
    perceptor = Perceptor(ocr, make_icon_detector("contour"))  # type: ignore[arg-type]
    seen = perceptor.perceive(walmart.screenshot(), False, tree=walmart.ui_tree if with_tree else None)
    truth = walmart.ground_truth()
    title = [g for g in truth if g.kind == "text" and g.text in "Beef Choice Angus Ribeye Steak, per pound"]
    picture = [g for g in truth if g.kind == "icon" and g.box[2] - g.box[0] > 150]
    assert title and picture
    naming = [e for e in seen.elements if e.text.startswith("Beef Choice")]
    assert len(naming) == 1, seen.describe()
    x, y = naming[0].center
    assert min(g.box[0] for g in title) <= x <= max(g.box[2] for g in title)
    assert min(g.box[1] for g in title) <= y <= max(g.box[3] for g in title)
    assert not any(g.box[0] <= x < g.box[2] and g.box[1] <= y < g.box[3] for g in picture)
    target = walmart._frame.target_at(x, y)
    assert target is not None and target.label.startswith("Beef Choice")  # the tap opens the product
    texts = [e.text for e in seen.elements if e.kind == "text"]
    assert "$12.98" in texts and "Was $14.98" in texts
    assert not [t for t in texts if t.isdigit() and len(t) == 1], seen.describe()  # the "3" re-read
    assert "O" not in texts  # the magnifier's lens
    if with_tree:
        assert "(1,823)" in texts and "4.4" in texts


def text(name: str, box: tuple[int, int, int, int]) -> Element:
    return Element(kind="text", text=name, box=box, source="rapidocr")


def icon(box: tuple[int, int, int, int], name: str = "") -> Element:
    return Element(kind="icon", text=name, box=box, source="contour")


def test_a_card_picture_without_a_description_does_not_take_the_cards_label() -> None:
    """A real uiautomator card: a clickable row labelled by its texts, an ImageView without a
    description; the picture used to be listed as the card with its centre on the picture."""
    card = A11yNode(
        text="Acer Nitro V 15 Gaming Laptop $849.99 4.5", clickable=True, bounds=(0, 500, 1080, 900)
    )
    tree = A11yTree(source="uiautomator", nodes=[card, A11yNode(bounds=(40, 540, 280, 780))])
    seen = [
        icon((48, 546, 288, 786)),
        text("Acer Nitro V 15 Gaming Laptop", (320, 544, 980, 590)),
        text("$849.99", (320, 700, 470, 745)),
    ]
    fused = fuse(seen, tree)
    assert [e.label for e in fused] == ['button "Acer Nitro V 15 Gaming Laptop"', 'text "$849.99"']
    # an app icon with its one name below stays an icon named by its tile (not a card)
    tile = A11yNode(text="Calendar", clickable=True, bounds=(580, 680, 770, 900))
    seen_tile = [icon((598, 694, 752, 848)), text("Calendar", (610, 855, 740, 890))]
    app = fuse(seen_tile, A11yTree(source="uiautomator", nodes=[tile]))
    assert 'button "Calendar"' in [e.label for e in app if e.kind == "icon"]


def test_a_card_nothing_saw_is_added_at_the_text_that_starts_its_label() -> None:
    card = A11yNode(text="Sony 55 inch BRAVIA XR A80L $1,398.00", clickable=True, bounds=(0, 500, 1080, 900))
    title = A11yNode(text="Sony 55 inch BRAVIA XR A80L", bounds=(320, 540, 980, 590))
    price = A11yNode(text="$1,398.00", bounds=(320, 700, 470, 745))
    photo = A11yNode(bounds=(40, 540, 280, 780))
    added = fuse([], A11yTree(source="uiautomator", nodes=[card, photo, title, price]))
    assert [(e.text, e.box) for e in added] == [("Sony 55 inch BRAVIA XR A80L $1,398.00", title.bounds)]
    # without a text inside (an icon-only button) the node's own bounds stay
    button = A11yNode(content_desc="Share", clickable=True, bounds=(900, 100, 1040, 240))
    assert fuse([], A11yTree(source="uiautomator", nodes=[button]))[0].box == button.bounds


def test_a_short_text_inside_a_longer_one_is_a_fragment_and_real_lone_digits_stay() -> None:
    price = text("$24.99", (319, 738, 468, 784))
    fragments = [text("9", (451, 741, 467, 780)), text("1", (322, 740, 338, 782))]
    quantity = [text("Qty", (60, 1200, 130, 1240)), text("1", (160, 1200, 180, 1240))]
    page = [text("Page", (400, 2000, 500, 2040)), text("2", (520, 2000, 540, 2040))]
    rating = [text("4.5", (318, 666, 373, 707)), text("(1,823)", (664, 662, 788, 708))]
    kept = drop_fragments([price, *fragments, *quantity, *page, *rating])
    assert [e.text for e in kept] == ["$24.99", "Qty", "1", "Page", "2", "4.5", "(1,823)"]
    # a one-letter word beside another (not inside it) stays too
    words = [text("a", (100, 50, 120, 90)), text("cat", (130, 50, 190, 90))]
    assert [e.text for e in drop_fragments(words)] == ["a", "cat"]


def test_a_ring_letter_on_a_detected_icon_is_its_lens_and_elsewhere_it_stays() -> None:
    lens = text("O", (89, 299, 110, 332))
    magnifier = icon((80, 293, 136, 349))
    kept, icons = clean_texts([lens, text("ribeye steak", (155, 295, 381, 341))], [magnifier])
    assert [e.text for e in kept] == ["ribeye steak"] and icons == [magnifier]
    kept, _ = clean_texts([text("O", (89, 299, 110, 332))], [icon((400, 293, 456, 349))])
    assert [e.text for e in kept] == ["O"]  # no icon under it: left as read


NAV = [icon((194, 2250, 238, 2300)), icon((518, 2252, 562, 2296)), icon((844, 2254, 886, 2296))]


def _listed(texts: list[Element], icons: list[Element]) -> list[str]:
    """The labels the Perceptor's tidy-up gives OCR's ``texts`` and the detector's ``icons`` (no tree)."""
    kept, found = clean_texts(texts, icons)
    elements = [*kept, *drop_text_regions(found, kept)]
    return [e.label for e in tidy(elements, 2340, keyboard_active=False, width=1080).elements]


def test_the_home_buttons_ring_read_as_o_is_the_home_button() -> None:
    """OCR's box of a ring that fills its icon is taller than the icon (the line's padding): read as
    "O" (as the 7:41 PM clock's strip mates made it), it used to be listed as a text and to take the
    icon with it as that letter's outline, leaving the navigation bar unnamed."""
    ring = text("O", (517, 2246, 553, 2301))
    assert _listed([ring], NAV) == ['icon "back"', 'icon "home"', 'icon "recent apps"']
    # a ring letter centred on an icon but mostly off it is not that icon's glyph
    kept, _ = clean_texts([text("O", (525, 2190, 555, 2320))], [NAV[1]])
    assert [e.text for e in kept] == ["O"]


@pytest.mark.parametrize("cross", ["X", "×", "✕"])
def test_a_pop_ups_cross_read_as_any_cross_character_is_a_close_button(cross: str) -> None:
    """OCR reads a close button's cross as "X" or "×" depending on the lines it is recognised with;
    "×" used to be dropped as glyph junk inside the detected icon, leaving an unnamed icon."""
    title = text("What's new in Amazon", (267, 912, 818, 970))
    corner = icon((972, 168, 1008, 204))
    listed = _listed([title, text(cross, (980, 176, 994, 198))], [corner, *NAV])
    assert listed[:2] == ['text "What\'s new in Amazon"', 'icon "close"'], listed
    # with no icon found at all it stays the text it was read as (as an "X" label does)
    assert _listed([text(cross, (980, 176, 994, 198))], []) == [f'text "{cross}"']


def _perceive(phone: VirtualPhone, ocr: object, with_tree: bool) -> list[str]:
    perceptor = Perceptor(ocr, make_icon_detector("contour"))  # type: ignore[arg-type]
    seen = perceptor.perceive(phone.screenshot(), False, tree=phone.ui_tree if with_tree else None)
    return [e.label for e in seen.elements]


def _opened_with_a_close_cross(app: str) -> VirtualPhone:
    """``app`` just opened on the first seed whose top dialog has a close cross (dialogs, their order
    and their dismiss words are drawn per app and seed)."""
    for seed in range(60):
        phone = VirtualPhone(realism_settings=Realism(enabled=True, seed=seed))
        for action in ("Home()", f'Open_App("{app}")', "Wait(5)"):
            for step in resolve_call(parse_action_text(action), {}, phone.screen_size()):
                step.execute(phone)
        if "close" in [t.label for t in phone._frame.targets]:
            return phone
    raise AssertionError(f"no seed below 60 opens {app} with a dialog that has a close cross")


@pytest.mark.parametrize("app", ["Chrome", "Amazon"])
def test_a_pop_ups_cross_is_a_close_button_and_the_navigation_bar_is_named(ocr: object, app: str) -> None:
    """Chrome is a WebView (no usable tree), Amazon has one; both pop a "What's new" card whose
    close cross OCR reads as "X"."""
    phone = _opened_with_a_close_cross(app)
    for with_tree in (True, False):
        labels = _perceive(phone, ocr, with_tree)
        assert not [label for label in labels if label.endswith(('"X"', '"x"'))], labels
        close = [label for label in labels if label.endswith('"close"')]
        assert len(close) == 1, labels
        nav = [label for label in labels if label.split(" ", 1)[-1].startswith(('"back', '"home', '"recent'))]
        assert len(nav) == 3, labels


def test_the_app_called_x_keeps_its_name_on_the_home_screen(ocr: object) -> None:
    labels = _perceive(VirtualPhone(), ocr, with_tree=False)
    assert 'text "X"' in labels and not [label for label in labels if label.endswith('"close"')]


def test_a_cross_is_named_close_only_where_it_cannot_be_an_apps_label() -> None:
    title, cross = text("What's new in Chrome", (150, 1030, 620, 1080)), text("X", (897, 1033, 928, 1069))
    nav = [icon((194, 2250, 238, 2300)), icon((518, 2252, 562, 2296)), icon((844, 2254, 886, 2296))]
    listed = tidy([title, cross, *nav], 2340, keyboard_active=False, width=1080).elements
    assert [e.label for e in listed][:2] == ['text "What\'s new in Chrome"', 'icon "close"']
    app_icon = icon((880, 480, 1010, 610))  # the app called X: its label sits under its icon
    label = text("X", (938, 615, 952, 637))
    listed = tidy([label, app_icon, *nav], 2340, keyboard_active=False, width=1080).elements
    assert 'text "X"' in [e.label for e in listed]
    # no icon found at all (no detector): nothing tells a label from a cross, so it stays text
    assert [e.label for e in tidy([title, cross], 2340, keyboard_active=False).elements][1] == 'text "X"'
