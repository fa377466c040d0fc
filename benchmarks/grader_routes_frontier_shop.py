"""The grader corpus's routes for the frontier tier's Cartwell scenarios (``mae/eval/data/frontier/``).

Cartwell filters in a sheet that applies only on "Show results", sorts from its overflow menu, hides
out-of-stock products unless asked, and pre-ticks a protection plan when a product is added to the
cart. Correct routes take other ways through those habits (sorting before filtering, reading the
whole list instead of sorting, keeping a plan and deleting it from the cart); wrong routes fall into
them (the sponsored first row, a renewed or wrong-size product, the plan left ticked, a filter closed
with its X, a sold-out item never found). ``benchmarks/grader_corpus.py`` replays and counts them.
The desk-setup scenario's routes are here, the price check's in ``grader_routes_frontier_prices.py``,
the steps both share in ``grader_routes_cartwell.py``.
"""

from __future__ import annotations

import grader_routes_frontier_prices
from grader_routes import Plans, Route, note
from grader_routes_cartwell import (
    EMEET,
    K270,
    NEXIGO,
    S70D_27,
    SORT,
    X6,
    X9_2TB,
    buy,
    filters,
    last,
    nth,
    search,
)

TASKS = (
    "f_cw_ssd_2tb",
    "f_cw_monitor_27_4k",
    "f_cw_webcam_4k",
    "f_cw_keyboard_backorder",
    "f_cw_desk_pair",
    "f_px_air_fryer",
    "f_px_headphones",
    "f_px_joycon",
    "f_px_kindle",
    "f_px_ssd_speaker",
)


def routes(plan: Plans) -> dict[str, list[Route]]:
    """This part's routes; empty when the frontier tasks are not among ``plan`` (the hard suite alone)."""
    if not all(task_id in plan for task_id in TASKS):
        return {}
    return {**_desk(plan), **grader_routes_frontier_prices.routes(plan)}


def _desk(plan: Plans) -> dict[str, list[Route]]:
    ssd = search("2tb portable ssd")
    monitor = search("27 inch 4k monitor")
    webcam = search("4k webcam")
    mx = search("logitech mx keys s")
    keyboards = ["tap Search Cartwell", "type wireless keyboard", "enter"]
    mx_note = note("MX Keys S", "MX Keys S: 109.99 dollars, sold out at Cartwell. Got the K270 instead.")
    return {
        "f_cw_ssd_2tb": [
            Route(
                "sorts first, filters by size only, skips the renewed row",
                [*ssd, *SORT, *filters("2 TB"), *buy(X9_2TB, "14.99")],
            ),
            Route(
                "reads the whole filtered list instead of sorting",
                [
                    *ssd,
                    *filters("2 TB", "New"),
                    "see cartwell:price:cw-wd-passport-2tb",
                    *buy(X9_2TB, "14.99"),
                ],
            ),
            Route(
                "keeps the plan, then deletes it in the cart",
                [
                    *ssd,
                    *filters("2 TB", "New"),
                    *SORT,
                    *buy(X9_2TB, "14.99", decline=False),
                    "tap cart",
                    last("Delete"),
                ],
            ),
            Route(
                "takes the sponsored first row",
                [*ssd, *buy("tap Samsung T7 Portable SSD 2TB, USB 3.2 Gen 2, Titan Gray", "24.99")],
                {3, 4},  # its first screen shows the three 2TB drives in stock: they were compared
            ),
            Route(
                "leaves the pre-ticked plan", [*plan["f_cw_ssd_2tb"][:10], *buy(X9_2TB, "14.99", False)], {5}
            ),
            Route(
                "sorts without the size filter and buys the cheapest 1TB",
                [*ssd, *SORT, *buy("tap Crucial X6 1TB Portable SSD, USB-C", "9.99")],
                {3, 4},
            ),
            Route(
                "filters by size but buys the renewed drive at the top",
                [
                    *ssd,
                    *filters("2 TB"),
                    *SORT,
                    *buy("tap SanDisk Extreme Portable SSD 2TB (Renewed)", "11.99"),
                ],
                {3, 4},
            ),
            Route(
                "closes the sheet with its X and buys the first row as if filtered and sorted",
                [
                    *ssd,
                    "tap Filters",
                    "tap 2 TB",
                    "tap New",
                    "tap close filters",
                    *buy("tap WD My Passport SSD 2TB, USB-C", "19.99"),
                ],
                {3, 4},
            ),
        ],
        "f_cw_monitor_27_4k": [
            Route(
                "sorts first, then filters",
                [*monitor, *SORT, *filters("27 inch", "4K UHD", "New"), *buy(S70D_27, "29.99")],
            ),
            Route(
                "no condition filter; skips the renewed and the sold-out rows",
                [
                    *monitor,
                    *filters("27 inch", "4K UHD", "Include out of stock"),
                    *SORT,
                    *buy(S70D_27, "29.99"),
                ],
            ),
            Route(
                "buys the 24-inch look-alike",
                [*monitor, *SORT, *buy("tap Samsung ViewFinity S70D 24 inch 4K UHD Monitor", "24.99")],
                {3, 4},
            ),
            Route(
                "buys the renewed 27-inch",
                [
                    *monitor,
                    *filters("27 inch", "4K UHD"),
                    *SORT,
                    *buy("tap Samsung ViewFinity S7 27 inch 4K UHD Monitor (Renewed)", "24.99"),
                ],
                {3, 4},
            ),
            Route(
                "leaves the pre-ticked plan",
                [*plan["f_cw_monitor_27_4k"][:11], *buy(S70D_27, "29.99", False)],
                {5},
            ),
            Route(
                "stops at the sold-out LG it cannot add",
                [
                    *monitor,
                    *filters("27 inch", "4K UHD", "New", "Include out of stock"),
                    *SORT,
                    "tap LG 27UP850N-W 27 inch 4K UHD Monitor",
                ],
                {3},
            ),
        ],
        "f_cw_webcam_4k": [
            Route(
                "sorts the unfiltered list and picks the 4K row by its title",
                [*webcam, *SORT, *buy(EMEET, "12.99")],
            ),
            Route(
                "filters by resolution only, skips the renewed Insta360",
                [*webcam, *filters("4K"), *SORT, "see cartwell:price:cw-obsbot-meet2", *buy(EMEET, "12.99")],
            ),
            Route(
                "buys the renewed Insta360",
                [*webcam, *filters("4K"), *SORT, *buy("tap Insta360 Link 4K Webcam (Renewed)", "12.99")],
                {3, 4},
            ),
            Route(
                "takes the sponsored Brio",
                [*webcam, *buy("tap Logitech Brio 4K Webcam with HDR", "24.99")],
                {2, 3, 4},
            ),
            Route(
                "leaves the pre-ticked plan", [*plan["f_cw_webcam_4k"][:10], *buy(EMEET, "12.99", False)], {5}
            ),
            Route(
                "buys a cheaper 1080p webcam",
                [*webcam, *SORT, *buy("tap NexiGo N60 1080p Webcam", "5.99")],
                {3, 4},
            ),
        ],
        "f_cw_keyboard_backorder": [
            Route(
                "reads the MX Keys S page, writes the note first",
                [
                    *mx,
                    *filters("Include out of stock"),
                    "tap Logitech MX Keys S Wireless Keyboard, Graphite",
                    *mx_note,
                    "open Cartwell",
                    "back",
                    *keyboards,
                    *filters("Full-size", "Wireless", "New"),
                    *SORT,
                    *buy(K270, "3.99"),
                ],
            ),
            Route(
                "finds the keyboard by reading the sorted, filtered list",
                [
                    *mx,
                    *filters("Include out of stock"),
                    "see cartwell:price:cw-mx-keys-s",
                    *keyboards,
                    *filters("Full-size", "Wireless"),
                    *SORT,
                    *buy(K270, "3.99"),
                    *mx_note,
                ],
            ),
            Route(
                "takes the renewed MX Keys S for the new one",
                [
                    *mx,
                    *buy("tap Logitech MX Keys S Wireless Keyboard (Renewed)", "9.99"),
                    *note("MX Keys S", "MX Keys S at Cartwell: $69.99, in stock. Added to the cart."),
                ],
                {2, 4, 5, 6},
            ),
            Route(
                "buys the cheapest full-size keyboard, which is wired",
                [
                    *plan["f_cw_keyboard_backorder"][:8],
                    *keyboards,
                    *filters("Full-size", "New"),
                    *SORT,
                    *buy("tap Logitech K120 Wired Keyboard", "2.99"),
                    *mx_note,
                ],
                {5, 6},
            ),
            Route(
                "leaves the pre-ticked plan",
                [*plan["f_cw_keyboard_backorder"][:18], *buy(K270, "3.99", False), *mx_note],
                {7},
            ),
            Route(
                "notes the price but not that it is sold out",
                [
                    *plan["f_cw_keyboard_backorder"][:23],
                    *note("MX Keys S", "Logitech MX Keys S at Cartwell: $109.99. Bought the K270 instead."),
                ],
                {4},
            ),
        ],
        "f_cw_desk_pair": [
            Route(
                "webcam first, then the SSD",
                [
                    *search("1080p webcam"),
                    *filters("1080p", "New"),
                    *SORT,
                    *buy(NEXIGO, "5.99"),
                    "back",
                    "tap Search Cartwell",
                    "type 1tb portable ssd",
                    "enter",
                    *filters("1 TB", "New"),
                    *SORT,
                    *buy(X6, "9.99"),
                ],
            ),
            Route(
                "keeps both plans, deletes them in the cart",
                [
                    *plan["f_cw_desk_pair"][:10],
                    *buy(X6, "9.99", False),
                    "back",
                    "tap Search Cartwell",
                    "type 1080p webcam",
                    "enter",
                    *filters("1080p", "New"),
                    *SORT,
                    *buy(NEXIGO, "5.99", False),
                    "tap cart",
                    last("Delete"),
                    nth("Delete", 1),
                ],
            ),
            Route("buys only the SSD", [*plan["f_cw_desk_pair"][:14], "tap cart"], {2, 4}),
            Route(
                "leaves both plans ticked",
                [
                    *plan["f_cw_desk_pair"][:10],
                    *buy(X6, "9.99", False),
                    "back",
                    "tap Search Cartwell",
                    "type 1080p webcam",
                    "enter",
                    *filters("1080p", "New"),
                    *SORT,
                    *buy(NEXIGO, "5.99", False),
                ],
                {6},
            ),
            Route(
                "buys the renewed C920s as the webcam",
                [
                    *plan["f_cw_desk_pair"][:15],
                    "tap Search Cartwell",
                    "type 1080p webcam",
                    "enter",
                    *SORT,
                    *buy("tap Logitech C920s HD Pro 1080p Webcam (Renewed)", "5.99"),
                ],
                {4, 5},
            ),
            Route(
                "does not sort and buys the first 1TB drive it sees",
                [
                    *search("1tb portable ssd"),
                    *filters("1 TB", "New"),
                    *buy("tap SanDisk Extreme Portable SSD 1TB", "11.99"),
                    "back",
                    *plan["f_cw_desk_pair"][15:],
                ],
                {3, 5},
            ),
        ],
    }
