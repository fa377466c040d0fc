"""Cartwell, the market app: a filter sheet applied only by "Show results", a sort order in the overflow
menu, out-of-stock products hidden unless asked, and a protection plan ticked in the add-to-cart sheet.
Everything is driven through the phone's public API, as a user taps."""

from __future__ import annotations

import pytest

from mae.device.virtual import VirtualPhone
from mae.device.virtual.realism import Realism

ADS_ONLY = Realism(
    enabled=True,
    popups=False,
    sign_in_nag=False,
    loading=False,
    slow_open=False,
    keyboard_covers=False,
    paging=False,
)
"""Realism with sponsored rows and nothing that gets in the way of these checks."""

X9_2TB = "Crucial X9 2TB Portable SSD, up to 1050MB/s"
X9_PRO = "Crucial X9 Pro 2TB Portable SSD, IP55"


def center(phone: VirtualPhone, text: str, kind: str = "text") -> tuple[int, int]:
    for element in phone.ground_truth():
        if element.kind == kind and element.text == text:
            return element.center
    raise AssertionError(f"{text!r} not on {phone.screen_name}: {[e.text for e in phone.ground_truth()]}")


def tap(phone: VirtualPhone, text: str, kind: str = "text") -> None:
    phone.tap(*center(phone, text, kind))


def texts(phone: VirtualPhone) -> list[str]:
    return [e.text for e in phone.ground_truth() if e.kind == "text"]


def prices(phone: VirtualPhone) -> list[float]:
    return [float(t[1:].replace(",", "")) for t in texts(phone) if t.startswith("$")]


def cart_ids(phone: VirtualPhone) -> list[str]:
    return [item.product_id for item in phone.state().carts.get("cartwell", [])]


@pytest.fixture
def phone() -> VirtualPhone:
    phone = VirtualPhone(realism_settings=ADS_ONLY)
    phone.open_app("Cartwell")
    tap(phone, "Search Cartwell")
    phone.type_text("2tb portable ssd")
    phone.enter()
    return phone


def test_filters_apply_only_when_show_results_is_tapped(phone: VirtualPhone) -> None:
    assert "9 results" in texts(phone)
    for close in (lambda: tap(phone, "close filters", "icon"), phone.back):
        tap(phone, "Filters")
        tap(phone, "1 TB")
        assert phone.screen_name == "Cartwell/filters"
        close()  # the X and Back both throw the choice away
        assert phone.screen_name == "Cartwell/results"
        assert "9 results" in texts(phone) and "Filters" in texts(phone)
    tap(phone, "Filters")
    tap(phone, "1 TB")
    tap(phone, "Show results")
    assert "3 results" in texts(phone) and "Filters (1)" in texts(phone)
    events = [(e.kind, e.value) for e in phone.state().events if e.kind == "filter"]
    assert events == [("filter", "Capacity: 1 TB")]
    tap(phone, "Filters (1)")  # the sheet reopens with the applied choice; tapping it again clears it
    tap(phone, "1 TB")
    tap(phone, "Show results")
    assert "9 results" in texts(phone)


def test_sort_hides_in_the_overflow_menu_and_sponsored_rows_stay_on_top(phone: VirtualPhone) -> None:
    assert "Sort by: Price low to high" not in texts(phone)
    tap(phone, "more options", "icon")
    assert "Sort by: Price low to high" in texts(phone)
    phone.back()  # Back closes the menu, not the results
    assert phone.screen_name == "Cartwell/results" and "Sort by: Price low to high" not in texts(phone)
    tap(phone, "more options", "icon")
    tap(phone, "Sort by: Price low to high")
    assert "Sponsored" in texts(phone)
    listed = prices(phone)
    assert listed[0] == 189.99  # the sponsored drive, pinned above the sorted rows
    assert listed[1:] == sorted(listed[1:]) and listed[1] == 59.99
    assert ("sort", "Price low to high") in [(e.kind, e.value) for e in phone.state().events]


def test_out_of_stock_products_show_only_when_included(phone: VirtualPhone) -> None:
    phone.swipe(540, 1800, 540, 400)
    phone.swipe(540, 1800, 540, 400)
    assert "End of results" in texts(phone) and X9_PRO not in texts(phone)
    phone.swipe(540, 400, 540, 1800)
    phone.swipe(540, 400, 540, 1800)
    tap(phone, "Filters")
    tap(phone, "2 TB")
    tap(phone, "Include out of stock")
    tap(phone, "Show results")
    assert "6 results" in texts(phone) and "Filters (2)" in texts(phone)
    tap(phone, "more options", "icon")
    tap(phone, "Sort by: Price low to high")
    assert X9_PRO in texts(phone) and "Out of stock" in texts(phone)
    tap(phone, X9_PRO)
    assert "Currently unavailable" in texts(phone) and "Add to cart" not in texts(phone)


def test_add_to_cart_ticks_a_protection_plan_unless_declined(phone: VirtualPhone) -> None:
    tap(phone, "Crucial X9 2TB Portable SSD, up to")  # the title wraps over two lines
    tap(phone, "Add to cart")
    assert phone.screen_name == "Cartwell/protect"
    assert any(e.text == "checkbox checked" for e in phone.ground_truth())
    phone.back()  # leaving the sheet adds nothing
    assert cart_ids(phone) == []
    tap(phone, "Add to cart")
    tap(phone, "Add to cart")
    assert cart_ids(phone) == ["cw-x9-2tb", "cw-x9-2tb:protection"]
    assert phone.screen_name == "Cartwell/product"
    tap(phone, "cart", "icon")
    assert "Subtotal (2 items): $134.98" in texts(phone)
    tap(phone, "Delete")  # deleting the drive deletes its plan too
    assert cart_ids(phone) == []
    phone.back()
    tap(phone, "Add to cart")
    tap(phone, "Add 2-year protection $14.99")
    assert any(e.text == "checkbox" for e in phone.ground_truth())
    tap(phone, "Add to cart")
    assert cart_ids(phone) == ["cw-x9-2tb"]
    assert [e.value for e in phone.state().events if e.kind == "add_protection"] == ["cw-x9-2tb"]


def test_other_shops_keep_adding_straight_to_the_cart() -> None:
    phone = VirtualPhone()
    phone.open_app("Walmart")
    tap(phone, "Search Walmart")
    phone.type_text("joy-con")
    phone.enter()
    assert "more options" not in [e.text for e in phone.ground_truth()]
    tap(phone, "Nintendo Switch Joy-Con (L)/(R), Gray")
    tap(phone, "Add to cart")
    assert [i.product_id for i in phone.state().carts["walmart"]] == ["joycon-gray"]
    assert phone.screen_name == "Walmart/product"
