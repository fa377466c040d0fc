"""The grader corpus's routes for the frontier tier's Cartwell scenarios (``mae/eval/data/frontier/``).

Cartwell filters in a sheet that applies only on "Show results", sorts from its overflow menu, hides
out-of-stock products unless asked, and pre-ticks a protection plan when a product is added to the
cart. Correct routes take other ways through those habits (sorting before filtering, reading the
whole list instead of sorting, keeping a plan and deleting it from the cart); wrong routes fall into
them (the sponsored first row, a renewed or wrong-size product, the plan left ticked, a filter closed
with its X, a sold-out item never found). ``benchmarks/grader_corpus.py`` replays and counts them.
"""

from __future__ import annotations

from collections.abc import Callable

from grader_routes import Plans, Route, Step, note

from mae.device.virtual import VirtualPhone

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


def routes(plan: Plans) -> dict[str, list[Route]]:
    """This part's routes; empty when the frontier tasks are not among ``plan`` (the hard suite alone)."""
    if not all(task_id in plan for task_id in TASKS):
        return {}
    return {**_desk(plan), **_price_check(plan)}


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


def _price_check(plan: Plans) -> dict[str, list[Route]]:
    fryer = search("ninja 8 qt air fryer")
    walmart_fryer = ["open Walmart", "tap Search Walmart", "type ninja dualzone air fryer", "enter"]
    fryer_note = note("Air fryer", "Walmart: 144 dollars\nCartwell: 134.99 dollars, the cheaper one")
    bose = search("bose qc45")
    amazon_bose = ["open Amazon", "tap Search Amazon", "type bose quietcomfort 45", "enter"]
    bose_note = note("Headphones", "Amazon: $229.00\nCartwell: $249.00\nBuying on Amazon.")
    joycon = search("nintendo switch joy-con")
    walmart_joycon = ["open Walmart", "tap Search Walmart", "type joy-con neon", "enter"]
    kindle = search("kindle paperwhite")
    amazon_kindle = ["open Amazon", "tap Search Amazon", "type kindle paperwhite", "enter"]
    kindle_note = note("Kindle", "Amazon: $139.99\nCartwell: $129.99 but sold out")
    px5 = plan["f_px_ssd_speaker"]
    return {
        "f_px_air_fryer": [
            Route(
                "Walmart first, then Cartwell read without sorting",
                [
                    *walmart_fryer,
                    "see walmart:price:ninja-dz201-wm",
                    *fryer,
                    *filters("8 qt", "New"),
                    *buy(DZ201, "17.99"),
                    *fryer_note,
                ],
            ),
            Route(
                "note first, then the cart",
                [*plan["f_px_air_fryer"][:16], *fryer_note, "open Cartwell", *buy(DZ201, "17.99")],
            ),
            Route(
                "buys the renewed one and notes its price",
                [
                    *fryer,
                    *SORT,
                    *buy("tap Ninja Foodi 8 qt DualZone 2-Basket Air Fryer, DZ201 (Renewed)", "12.99"),
                    *walmart_fryer,
                    "see walmart:price:ninja-dz201-wm",
                    *note("Air fryer", "Cartwell $99.99, Walmart $144.00"),
                ],
                {5, 6, 7},
            ),
            Route(
                "leaves the pre-ticked plan",
                [*plan["f_px_air_fryer"][:17], *buy(DZ201, "17.99", False), *fryer_note],
                {7},
            ),
            Route(
                "buys at Walmart",
                [
                    *plan["f_px_air_fryer"][:16],
                    "tap Ninja Foodi 8 Qt 2-Basket Air Fryer with DualZone, DZ201",
                    "tap Add to cart",
                    *fryer_note,
                ],
                {6, 7},
            ),
            Route(
                "never checks Walmart",
                [*plan["f_px_air_fryer"][:10], *buy(DZ201, "17.99"), *note("Air fryer", "Cartwell $134.99")],
                {3, 4, 5},
            ),
        ],
        "f_px_headphones": [
            Route(
                "Amazon first; Cartwell read without filters",
                [
                    *amazon_bose,
                    "tap Bose QuietComfort 45 Wireless Noise Cancelling Headphones",
                    "tap Add to cart",
                    *bose,
                    "see cartwell:price:cw-bose-qc45",
                    *bose_note,
                ],
            ),
            Route(
                "opens the Cartwell page to check, backs out",
                [
                    *bose,
                    "tap Bose QuietComfort 45 Wireless Noise Cancelling Headphones",
                    "back",
                    *plan["f_px_headphones"][9:],
                ],
            ),
            Route(
                "takes the QC SE for the QC45 and buys it at Cartwell",
                [
                    *bose,
                    *SORT,
                    *buy("tap Bose QuietComfort SE Wireless Noise Cancelling Headphones", "24.99"),
                    *amazon_bose,
                    "see amazon:price:bose-qc45",
                    *note("Headphones", "Cartwell $199.00, Amazon $229.00"),
                ],
                {4, 5, 6},
            ),
            Route(
                "buys at the dearer store",
                [
                    *bose,
                    *buy("tap Bose QuietComfort 45 Wireless Noise Cancelling Headphones", "29.99"),
                    *amazon_bose,
                    "see amazon:price:bose-qc45",
                    *bose_note,
                ],
                {5, 6},
            ),
            Route(
                "notes the renewed price for Cartwell",
                [
                    *plan["f_px_headphones"][:15],
                    *note("Headphones", "Cartwell $179.00 (renewed), Amazon $229.00"),
                ],
                {4},
            ),
        ],
        "f_px_joycon": [
            Route(
                "reads the list without filters",
                [
                    *joycon,
                    "see cartwell:price:cw-joycon-neon",
                    *walmart_joycon,
                    "see walmart:price:joycon-neon-wm",
                    "open Cartwell",
                    *buy(NEON, "9.99"),
                    *note("Joy-Con", "Walmart $74.00\nCartwell $69.99"),
                ],
            ),
            Route(
                "buys before writing the note",
                [*joycon, *buy(NEON, "9.99"), *plan["f_px_joycon"][11:16], *plan["f_px_joycon"][-8:]],
            ),
            Route(
                "buys the single Joy-Con and notes its price",
                [
                    *joycon,
                    *SORT,
                    *buy("tap Nintendo Switch Joy-Con (L), Neon Red", "5.99"),
                    *walmart_joycon,
                    "see walmart:price:joycon-neon-wm",
                    *note("Joy-Con", "Cartwell $39.99, Walmart $74.00"),
                ],
                {4, 5, 6},
            ),
            Route(
                "leaves the pre-ticked plan",
                [*plan["f_px_joycon"][:17], *buy(NEON, "9.99", False), *plan["f_px_joycon"][-8:]],
                {6},
            ),
            Route(
                "buys at Walmart",
                [
                    *plan["f_px_joycon"][:16],
                    "tap Nintendo Switch Joy-Con Pair, Neon Red and Neon Blue",
                    "tap Add to cart",
                    *plan["f_px_joycon"][-8:],
                ],
                {5, 6},
            ),
            Route(
                "buys the refurbished pair",
                [
                    *joycon,
                    *buy("tap Nintendo Switch Joy-Con (L/R), Neon Red and Neon Blue (Refurbished)", "7.99"),
                    *walmart_joycon,
                    "see walmart:price:joycon-neon-wm",
                    *note("Joy-Con", "Cartwell $49.99 (refurbished), Walmart $74.00"),
                ],
                {4, 5, 6},
            ),
        ],
        "f_px_kindle": [
            Route(
                "Amazon first, then the sold-out page at Cartwell",
                [
                    *amazon_kindle,
                    "tap Kindle Paperwhite E-Reader with Adjustable Warm Light",
                    "tap Add to cart",
                    *kindle,
                    *filters("Include out of stock"),
                    "tap Kindle Paperwhite 16 GB, Black",
                    *kindle_note,
                ],
            ),
            Route(
                "filters by condition too, reads the list",
                [
                    *kindle,
                    *filters("New", "Include out of stock"),
                    "see cartwell:price:cw-kindle-paperwhite",
                    *plan["f_px_kindle"][8:],
                ],
            ),
            Route(
                "never finds the sold-out listing, notes and buys the renewed one",
                [
                    *kindle,
                    *buy("tap Kindle Paperwhite 16 GB (Renewed)", "12.99"),
                    *amazon_kindle,
                    "see amazon:price:kindle-paperwhite",
                    *note("Kindle", "Cartwell $89.99, Amazon $139.99"),
                ],
                {1, 4, 5, 6},
            ),
            Route(
                "notes the Kids model's price for Cartwell",
                [
                    *kindle,
                    "see cartwell:price:cw-kindle-paperwhite-kids",
                    *plan["f_px_kindle"][8:-8],
                    *note("Kindle", "Cartwell $169.99, Amazon $139.99"),
                ],
                {1, 4},
            ),
            Route(
                "adds the Kids model at Cartwell instead",
                [
                    *plan["f_px_kindle"][:8],
                    *buy("tap Kindle Paperwhite Kids 16 GB", "19.99"),
                    *amazon_kindle,
                    "see amazon:price:kindle-paperwhite",
                    *kindle_note,
                ],
                {5, 6},
            ),
        ],
        "f_px_ssd_speaker": [
            Route(
                "Best Buy first",
                [*px5[13:23], *px5[:13], *px5[-8:]],
            ),
            Route(
                "keeps the plan, deletes it in the Cartwell cart",
                [
                    *px5[:4],
                    *buy("tap SanDisk Extreme Portable SSD 1TB", "11.99", False),
                    "tap cart",
                    last("Delete"),
                    "back",
                    "back",
                    *px5[9:],
                ],
            ),
            Route(
                "leaves the pre-ticked plan",
                [*px5[:4], *buy("tap SanDisk Extreme Portable SSD 1TB", "11.99", False), *px5[8:]],
                {6},
            ),
            Route(
                "buys both at Cartwell",
                [
                    *px5[:13],
                    *buy("tap JBL Flip 6 Portable Waterproof Bluetooth Speaker, Blue", "14.99"),
                    *px5[13:21],
                    "see bestbuy:price:bb-jbl-flip-6",
                    *px5[-8:],
                ],
                {6, 7},
            ),
            Route(
                "buys the renewed Flip 6 at Cartwell and notes its price",
                [
                    *px5[:13],
                    *buy("tap JBL Flip 6 Portable Waterproof Bluetooth Speaker (Renewed)", "9.99"),
                    *px5[13:21],
                    "see bestbuy:price:bb-jbl-flip-6",
                    *note(
                        "SSD and speaker",
                        "SanDisk SSD: Cartwell $79.99, Best Buy $89.99. JBL Flip 6: Cartwell "
                        "$69.99, Best Buy $99.99.",
                    ),
                ],
                {5, 6, 7},
            ),
        ],
    }
