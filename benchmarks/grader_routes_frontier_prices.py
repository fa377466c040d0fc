"""The grader corpus's routes for the frontier scenario ``CARTWELL_PRICE_CHECK``: the same product at
Cartwell and at Walmart, Amazon or Best Buy, both prices in a note, the product bought where it is
cheaper. Registered through ``grader_routes_frontier_shop.routes``."""

from __future__ import annotations

from grader_routes import Plans, Route, note
from grader_routes_cartwell import DZ201, NEON, SORT, buy, filters, last, search


def routes(plan: Plans) -> dict[str, list[Route]]:
    """The price-check scenario's routes; ``plan`` holds every task's plan."""
    return _price_check(plan)


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
