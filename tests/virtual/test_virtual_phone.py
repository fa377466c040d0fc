"""The virtual phone behaves like a phone: Device protocol, navigation, keyboard, scrolling, state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from mae.actions.reading import parse_action_text
from mae.actions.registry import resolve_call, run_steps
from mae.device import open_device
from mae.device.base import Device
from mae.device.virtual import VirtualPhone
from mae.errors import ActionError, ConfigError


def center(phone: VirtualPhone, text: str, kind: str = "text") -> tuple[int, int]:
    """Centre of the first drawn element with exactly this text (as a user would aim)."""
    for element in phone.ground_truth():
        if element.kind == kind and element.text == text:
            return element.center
    raise AssertionError(f"{text!r} not on {phone.screen_name}: {[e.text for e in phone.ground_truth()]}")


def texts(phone: VirtualPhone) -> list[str]:
    return [e.text for e in phone.ground_truth() if e.kind == "text"]


@pytest.fixture
def phone() -> VirtualPhone:
    return VirtualPhone()


def test_implements_device_protocol(phone: VirtualPhone) -> None:
    assert isinstance(phone, Device)
    assert phone.name == "virtual"
    assert phone.screen_size() == (1080, 2340)
    assert phone.settle() == 0.0
    assert phone.foreground_app() == "com.mae.launcher"
    apps = phone.installed_apps()
    assert {"Maps", "Notes", "Chrome", "X", "Amazon", "Walmart"} <= set(apps)
    assert apps["Maps"] == "com.mae.maps"


def test_open_device_virtual() -> None:
    assert isinstance(open_device("virtual"), VirtualPhone)


def test_screenshot_is_a_fresh_rgb_image(phone: VirtualPhone) -> None:
    first = phone.screenshot()
    assert first.mode == "RGB" and first.size == (1080, 2340)
    first.paste((255, 0, 0), (0, 0, 500, 500))
    second = phone.screenshot()
    assert second.getpixel((10, 10)) != (255, 0, 0)


def test_home_screen_shows_labelled_app_icons(phone: VirtualPhone) -> None:
    truth = phone.ground_truth()
    labels = {e.text for e in truth if e.kind == "text"}
    assert {"Maps", "Notes", "Chrome", "Amazon", "Walmart", "7:41 PM"} <= labels
    icons = {e.text for e in truth if e.kind == "icon"}
    assert {"Maps app", "Notes app", "back button", "home button", "recent apps button", "battery"} <= icons
    for element in truth:
        left, top, right, bottom = element.box
        assert 0 <= left < right <= 1080 and 0 <= top < bottom <= 2340
        assert element.source == "virtual"


def test_tapping_an_icon_opens_the_app(phone: VirtualPhone) -> None:
    phone.tap(*center(phone, "Notes app", kind="icon"))
    assert phone.foreground_app() == "com.mae.notes"
    assert phone.screen_name == "Notes/list"
    assert "Groceries" in texts(phone)


def test_open_app_by_label_alias_or_package(phone: VirtualPhone) -> None:
    phone.open_app("google maps")
    assert phone.screen_name == "Maps/home"
    phone.open_app("com.mae.notes")
    assert phone.screen_name == "Notes/list"
    phone.open_app("Amazon Shopping")
    assert phone.foreground_app() == "com.mae.shop.amazon"


def test_open_unknown_app_lists_close_matches(phone: VirtualPhone) -> None:
    with pytest.raises(ActionError, match="Notes"):
        phone.open_app("Notez")


def test_tap_outside_widgets_changes_nothing(phone: VirtualPhone) -> None:
    before = phone.screenshot().tobytes()
    phone.tap(540, 1300)
    assert phone.screenshot().tobytes() == before
    assert phone.log[-1].effect == "nothing there"
    with pytest.raises(ActionError, match="off the"):
        phone.tap(1080, 10)


def test_keyboard_appears_with_focus_and_types(phone: VirtualPhone) -> None:
    phone.open_app("Maps")
    assert not phone.keyboard_active()
    phone.type_text("ignored")
    assert phone.log[-1].effect == "no text field has focus"
    phone.tap(*center(phone, "Search here"))
    assert phone.keyboard_active()
    assert {"q", "w", "?123"} <= set(texts(phone))
    phone.tap(*center(phone, "k"))
    phone.type_text("orean")
    assert "korean" in texts(phone)
    phone.back()
    assert not phone.keyboard_active() and phone.screen_name == "Maps/home"


def test_enter_submits_a_search_and_back_returns(phone: VirtualPhone) -> None:
    phone.open_app("Maps")
    phone.tap(*center(phone, "Search here"))
    phone.type_text("korean restaurants in champaign")
    phone.enter()
    assert phone.screen_name == "Maps/results"
    assert not phone.keyboard_active()
    assert {"Seoul Garden", "Gangnam BBQ House", "Open until 12 AM"} <= set(texts(phone))
    phone.back()
    assert phone.screen_name == "Maps/home"
    phone.back()
    assert phone.screen_name == "home"


def test_swipe_scrolls_lists_and_stops_at_the_end(phone: VirtualPhone) -> None:
    phone.open_app("Maps")
    phone.tap(*center(phone, "Search here"))
    phone.type_text("thai restaurants in urbana")
    phone.enter()
    phone.tap(*center(phone, "Lemongrass Thai Kitchen"))
    first = set(texts(phone))
    phone.swipe(540, 1700, 540, 700)
    assert phone.log[-1].effect == "scrolled down"
    second = set(texts(phone))
    assert second - first and "Korean" not in second
    assert "(688)" in first and "(688)" not in second
    for _ in range(5):
        phone.swipe(540, 1700, 540, 700)
    assert phone.log[-1].effect == "already at the end of the list"
    assert "is hard to find." in texts(phone)
    phone.swipe(540, 600, 540, 2000)
    phone.swipe(540, 600, 540, 2000)
    phone.swipe(540, 600, 540, 2000)
    assert set(texts(phone)) == first


def test_rows_are_drawn_whole_inside_the_viewport(phone: VirtualPhone) -> None:
    phone.open_app("Maps")
    phone.tap(*center(phone, "Restaurants"))
    for _ in range(3):
        phone.swipe(540, 1500, 540, 1137)
        for element in phone.ground_truth():
            top, bottom = element.box[1], element.box[3]
            # nothing of the list is drawn under the search bar or the navigation bar
            assert bottom <= 96 + 170 or top >= 96 + 170 or element.text in {"back", "search"}
            assert bottom <= 2208 or top >= 2208


def test_home_and_app_switcher(phone: VirtualPhone) -> None:
    phone.open_app("Maps")
    phone.open_app("Notes")
    phone.home()
    assert phone.screen_name == "home"
    phone.switch_app()
    assert phone.screen_name == "switcher"
    assert "Notes" in texts(phone) and "Clear all" in texts(phone)
    phone.swipe(200, 1200, 900, 1200)
    assert "Maps" in texts(phone)
    phone.tap(540, 1100)
    assert phone.screen_name == "Maps/home"
    phone.switch_app()
    phone.back()
    assert phone.screen_name == "Maps/home"
    phone.switch_app()
    phone.tap(*center(phone, "Clear all"))
    assert phone.screen_name == "home" and phone.state().recents == []


def test_apps_resume_where_they_were(phone: VirtualPhone) -> None:
    phone.open_app("Chrome")
    phone.tap(*center(phone, "Scholar"))
    phone.home()
    phone.open_app("Chrome")
    assert phone.screen_name == "Chrome/scholar"


def test_notes_are_created_and_edited(phone: VirtualPhone) -> None:
    phone.open_app("Notes")
    phone.tap(*center(phone, "new note", kind="icon"))
    assert phone.keyboard_active()
    phone.type_text("Call Sam\nabout dinner")
    phone.tap(*center(phone, "Title"))
    phone.type_text("Todo")
    phone.back()
    phone.back()
    assert phone.screen_name == "Notes/list"
    note = phone.state().notes[-1]
    assert (note.title, note.body, note.seeded) == ("Todo", "Call Sam\nabout dinner", False)
    phone.tap(*center(phone, "Todo"))
    phone.tap(*center(phone, "about dinner"))
    phone.type_text(" on Friday")
    assert phone.state().notes[-1].body == "Call Sam\nabout dinner on Friday"
    assert len(phone.state().notes) == 3


def test_empty_new_note_is_not_saved(phone: VirtualPhone) -> None:
    phone.open_app("Notes")
    phone.tap(*center(phone, "new note", kind="icon"))
    phone.back()
    phone.back()
    assert len(phone.state().notes) == 2


def test_search_field_text_is_replaced_after_refocus(phone: VirtualPhone) -> None:
    phone.open_app("Walmart")
    phone.tap(*center(phone, "Search Walmart"))
    phone.type_text("ribeye")
    phone.enter()
    phone.tap(*center(phone, "ribeye"))
    phone.type_text("oranges")
    phone.enter()
    assert phone.state().item == "oranges"
    assert "Fresh Navel Oranges, 4 pound bag" in texts(phone)


def test_cart_and_directions_state(phone: VirtualPhone) -> None:
    phone.open_app("Walmart")
    phone.tap(*center(phone, "Search Walmart"))
    phone.type_text("joy-con")
    phone.enter()
    phone.tap(*center(phone, "Nintendo Switch Joy-Con (L)/(R), Gray"))
    phone.tap(*center(phone, "Add to cart"))
    assert [i.product_id for i in phone.state().carts["walmart"]] == ["joycon-gray"]
    assert "Added to cart (1)" in texts(phone)
    phone.open_app("Maps")
    phone.tap(*center(phone, "Bakeries"))
    phone.tap(*center(phone, "Golden Loaf Bakery"))
    phone.tap(*center(phone, "Directions"))
    route = phone.state().route
    assert route is not None and route.place_id == "golden-loaf" and route.minutes == 4
    assert phone.screen_name == "Maps/directions"
    assert "4 min (0.9 mi)" in texts(phone)


def test_wait_uses_virtual_time(phone: VirtualPhone) -> None:
    phone.wait(120)
    state = phone.state()
    assert state.clock_s == 120
    assert state.log[-1].action == "Wait(120)"
    assert "7:43 PM" in texts(phone)


def test_reset_and_determinism() -> None:
    one, two = VirtualPhone(), VirtualPhone()
    for phone in (one, two):
        phone.open_app("X")
        phone.tap(*center(phone, "explore", kind="icon"))
        phone.tap(*center(phone, "Solar Eclipse"))
    assert one.screenshot().tobytes() == two.screenshot().tobytes()
    assert one.state().model_dump() == two.state().model_dump()
    one.reset()
    assert one.screen_name == "home" and one.state().log == [] and one.state().recents == []
    assert one.screenshot().tobytes() == VirtualPhone().screenshot().tobytes()


def test_other_screen_sizes_scale(phone: VirtualPhone) -> None:
    small = VirtualPhone(width=720, height=1560)
    shot = small.screenshot()
    assert shot.size == (720, 1560)
    small.tap(*center(small, "Maps"))
    assert small.screen_name == "Maps/home"
    big = phone.ground_truth()
    scaled = {e.text: e.box for e in VirtualPhone(width=720, height=1560).ground_truth()}
    maps_big = next(e.box for e in big if e.text == "Maps app")
    assert abs(scaled["Maps app"][0] - maps_big[0] * 2 / 3) <= 2


def test_user_data_dir_extends_content(tmp_path: Path) -> None:
    place = {
        "id": "test-ramen", "name": "Test Ramen Bar", "category": "Ramen restaurant", "tags": ["ramen"],
        "city": "Champaign", "address": "1 Test St", "phone": "(217) 555-9999", "rating": 4.9,
        "reviews_count": 10, "distance_mi": 0.1, "drive_min": 1, "hours": "11 AM - 9 PM",
        "status": "Open until 9 PM",
    }  # fmt: skip
    (tmp_path / "maps.json").write_text(json.dumps({"places": [place]}))
    phone = VirtualPhone(data_dir=tmp_path)
    phone.open_app("Maps")
    phone.tap(*center(phone, "Search here"))
    phone.type_text("ramen")
    phone.enter()
    assert "Test Ramen Bar" in texts(phone)
    assert any(p.id == "seoul-garden" for p in phone.content.maps.places)


def test_invalid_user_data_is_reported(tmp_path: Path) -> None:
    (tmp_path / "maps.json").write_text(json.dumps({"places": [{"id": "broken"}]}))
    with pytest.raises(ConfigError, match="maps"):
        VirtualPhone(data_dir=tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        VirtualPhone(data_dir=tmp_path / "missing")
    with pytest.raises(ConfigError, match="too small"):
        VirtualPhone(width=200, height=300)


def test_action_log_records_every_operation(phone: VirtualPhone) -> None:
    phone.open_app("Notes")
    phone.swipe(540, 1500, 540, 800)
    phone.back()
    actions = [entry.action for entry in phone.state().log]
    assert actions == ['Open_App("Notes")', "Swipe(540, 1500, 540, 800)", "Back()"]
    assert phone.state().log[0].app == "" and phone.state().log[1].app == "Notes"


def test_screenshot_pixels_match_ground_truth_boxes(phone: VirtualPhone) -> None:
    phone.open_app("Amazon")
    shot = phone.screenshot()
    for element in phone.ground_truth():
        if element.kind != "text":
            continue
        low, high = shot.crop(element.box).convert("L").getextrema()
        assert isinstance(low, int) and isinstance(high, int)
        assert high - low > 60, f"{element.text!r} has no visible ink in its box"
    assert isinstance(shot, Image.Image)


def test_paper_style_action_text_runs_on_the_phone(phone: VirtualPhone) -> None:
    for text in ("Open_App(Notes)", "Tap(930, 2058)", 'Type("Buy milk")', "Back()", "Back()"):
        run_steps(phone, resolve_call(parse_action_text(text), {}, phone.screen_size()))
    assert phone.screen_name == "Notes/list"
    assert phone.state().notes[-1].body == "Buy milk"


def test_a_wrapped_link_is_one_tap_area(phone: VirtualPhone) -> None:
    phone.open_app("Chrome")
    phone.tap(*center(phone, "Scholar"))
    phone.tap(*center(phone, "Search Scholar"))
    phone.type_text("segment anything")
    phone.enter()
    assert phone.screen_name == "Chrome/scholar_results"
    wrapped = []
    for element in phone.ground_truth():
        target = phone._frame.target_at(*element.center)
        if element.kind == "text" and target is not None and element.text in target.label != element.text:
            wrapped.append((element, target))
    assert wrapped, "no title wraps over two lines on this page"
    target = wrapped[0][1]
    lines = [e for e, t in wrapped if t is target]
    assert len(lines) >= 2  # every line of the title lies in the same tap area
    top, bottom = target.box[1], target.box[3]
    assert all(top <= e.box[1] and e.box[3] <= bottom for e in lines)
    x, y = lines[-1].center
    phone.tap(x, y)
    assert phone.screen_name == "Chrome/paper"
