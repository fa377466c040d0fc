"""Names given without a model and duplicates collapsed (mae.perception.screen_names via tidy)."""

from __future__ import annotations

from mae.perception.elements import Element
from mae.perception.tidy import clean_text, tidy

H, W = 2340, 1080


def text(name: str, box: tuple[int, int, int, int], **extra: object) -> Element:
    return Element.model_validate({"kind": "text", "text": name, "box": box, "source": "rapidocr", **extra})


def icon(box: tuple[int, int, int, int], name: str = "", **extra: object) -> Element:
    return Element.model_validate({"kind": "icon", "text": name, "box": box, "source": "contour", **extra})


NAV = [icon((194, 2250, 238, 2300)), icon((518, 2252, 562, 2296)), icon((844, 2254, 886, 2296))]
PAGE = [text("Groceries", (92, 454, 287, 501)), text("Milk", (97, 522, 170, 566))]


def listed(elements: list[Element], **kwargs: object) -> list[str]:
    kept = tidy(elements, H, keyboard_active=False, width=W, **kwargs).elements  # type: ignore[arg-type]
    return [e.label for e in kept]


def test_navigation_bar_buttons_are_named_on_every_screen() -> None:
    assert listed([*PAGE, *NAV])[-3:] == ['icon "back"', 'icon "home"', 'icon "recent apps"']
    # two icons down there are no three-button bar: left unnamed
    assert listed([*PAGE, *NAV[:2]])[-2:] == ["icon (no name)", "icon (no name)"]


def test_a_ring_read_as_a_letter_is_an_icon_and_alone_it_is_loading() -> None:
    ring = clean_text(text("O", (470, 1100, 610, 1240)))  # OCR's lines are cleaned before fusion
    assert ring is not None and ring.kind == "icon"
    assert listed([ring, *NAV])[0] == 'icon "loading"'
    magnifier = clean_text(text("O", (60, 290, 110, 340)))
    assert magnifier is not None
    search = [magnifier, text("Search Amazon", (130, 290, 500, 340)), *PAGE]
    assert listed(search)[0] == "icon (no name)"  # no longer a text "O"; not loading: the page is there
    assert clean_text(text("O", (60, 290, 200, 330))).kind == "text"  # type: ignore[union-attr]  # wide: a word


def test_a_text_cursor_is_not_part_of_the_text() -> None:
    assert clean_text(text("|Search Best Buy", (60, 290, 500, 340))).text == "Search Best Buy"  # type: ignore[union-attr]
    assert clean_text(text("Segment Anything|", (60, 290, 500, 340))).text == "Segment Anything"  # type: ignore[union-attr]


def test_the_same_control_read_twice_is_listed_once() -> None:
    button = text("Directions", (100, 900, 400, 980), role="button", named_by="a11y", source="uiautomator")
    ocr = text("directions", (120, 1000, 380, 1060))
    assert listed([button, ocr]) == ['button "Directions"']
    app_icon = icon((600, 395, 750, 545), "Amazon app", named_by="a11y")
    label = text("Amazon", (615, 560, 735, 600))
    assert listed([app_icon, label]) == ['icon "Amazon app"']  # the tree's name wins
    # far apart, or two equal rows from one reader: different things
    assert len(listed([button, text("directions", (120, 1800, 380, 1860))])) == 2
    assert len(listed([text("Milk", (97, 522, 170, 566)), text("Milk", (97, 622, 170, 666))])) == 2
