"""Steps the frontier tier's Cartwell routes share (``grader_routes_frontier_shop.py`` and
``grader_routes_frontier_prices.py``): a search, the filter sheet, the sort menu, adding a product with
or without its ticked protection plan, a tap on one of several same-named targets (a cart's Deletes)."""

from __future__ import annotations

from collections.abc import Callable

from grader_routes import Step

from mae.device.virtual import VirtualPhone

SORT = ["tap more options", "tap Sort by: Price low to high"]
X9_2TB = "tap Crucial X9 2TB Portable SSD, up to 1050MB/s"
S70D_27 = "tap Samsung ViewFinity S70D 27 inch 4K UHD Monitor"
EMEET = "tap EMEET SmartCam S600 4K Webcam"
K270 = "tap Logitech K270 Wireless Keyboard"
X6 = "tap Crucial X6 1TB Portable SSD, USB-C"
NEXIGO = "tap NexiGo N60 1080p Webcam"
DZ201 = "tap Ninja Foodi 8 qt DualZone 2-Basket Air Fryer, DZ201"
NEON = "tap Nintendo Switch Joy-Con (L/R), Neon Red and Neon Blue"


def search(query: str) -> list[Step]:
    return ["open Cartwell", "tap Search Cartwell", f"type {query}", "enter"]


def filters(*choices: str) -> list[Step]:
    return ["tap Filters", *(f"tap {choice}" for choice in choices), "tap Show results"]


def buy(product: str, plan_price: str, decline: bool = True) -> list[Step]:
    """Open ``product`` (a ``tap`` step) and add it, unticking its protection plan when ``decline``."""
    untick = [f"tap Add 2-year protection ${plan_price}"] if decline else []
    return [product, "tap Add to cart", *untick, "tap Add to cart"]


def nth(label: str, index: int) -> Callable[[VirtualPhone], str]:
    """The tap on the target named ``label`` at ``index`` among those on screen (a cart's rows each have
    a Delete; a protection plan's row comes right under its product's)."""

    def tap(phone: VirtualPhone) -> str:
        boxes = [box for name, box in phone.tap_targets() if name == label]
        if not -len(boxes) <= index < len(boxes):
            raise LookupError(f"no {label!r} number {index} on screen")
        left, top, right, bottom = boxes[index]
        return f"Tap({(left + right) // 2}, {(top + bottom) // 2})"

    return tap


def last(label: str) -> Callable[[VirtualPhone], str]:
    return nth(label, -1)
