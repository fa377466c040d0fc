"""The grader corpus's routes for shopping (Mobile-Eval-E scenario 3): Amazon, Walmart and Best Buy.

For every task, correct routes other than its reference and plausible wrong ones, each with the rubric
items (0-based) it must fail; ``benchmarks/grader_corpus.py`` replays and counts them.
"""

from __future__ import annotations

from grader_routes import Plans, Route, note, upto

ACER = "tap Acer Nitro V 15 Gaming Laptop, NVIDIA GeForce RTX 4050, 16GB RAM, 512GB SSD"
DELL = "tap Dell G15 Gaming Laptop, NVIDIA GeForce RTX 4060, 16GB RAM, 1TB SSD"


def routes(plan: Plans) -> dict[str, list[Route]]:
    """This part's routes; ``plan`` holds every task's plan (reused where a route only adds to one)."""
    walmart = upto(plan, "h_walmart_sale_items_note", "open Notes")
    laptop = upto(plan, "h_laptop_nvidia_cart", ACER)
    return {
        "h_oled_tv_best_deal": [
            Route(
                "whole list first, then the Samsung",
                [
                    *plan["h_oled_tv_best_deal"][:4],
                    "see bestbuy:price:bb-samsung-s90c-55",
                    "tap Samsung 55 inch Class S90C OLED 4K UHD Smart Tizen TV",
                ],
            ),
            Route(
                "opens the out-of-stock LG B3, backs out",
                [
                    *plan["h_oled_tv_best_deal"][:4],
                    "tap LG 55 inch Class B3 Series OLED 4K UHD Smart webOS TV",
                    "back",
                    "tap Samsung 55 inch Class S90C OLED 4K UHD Smart Tizen TV",
                ],
            ),
            Route(
                "stops at the out-of-stock LG B3",
                [
                    *plan["h_oled_tv_best_deal"][:4],
                    "see bestbuy:price:bb-samsung-s90c-55",
                    "tap LG 55 inch Class B3 Series OLED 4K UHD Smart webOS TV",
                ],
                {5, 6},
            ),
            Route(
                "stops at the 48-inch LG",
                [
                    *plan["h_oled_tv_best_deal"][:4],
                    "see bestbuy:price:bb-samsung-s90c-55",
                    "tap LG 48 inch Class C3 Series OLED 4K UHD Smart webOS TV",
                ],
                {4, 5, 6},
            ),
            Route("stops at the list", [*plan["h_oled_tv_best_deal"][:7]], {5, 6, 7}),
        ],
        "h_laptop_nvidia_cart": [
            Route(
                "narrower query, whole list seen",
                [
                    *laptop[:2],
                    "type nvidia laptop 16gb ram",
                    "enter",
                    "see amazon:price:asus-vivobook-16",
                    ACER,
                    "tap Add to cart",
                ],
            ),
            Route(
                "opens the Dell first, rejects it, buys the Acer",
                [
                    *laptop,
                    "see amazon:price:asus-vivobook-16",
                    DELL,
                    "back",
                    ACER,
                    "tap Add to cart",
                    "tap cart",
                ],
            ),
            Route(
                "narrow query, to the end of its list",
                [
                    *laptop[:2],
                    "type nvidia rtx laptop under 1000",
                    "enter",
                    "see amazon:list_end:nvidia rtx laptop under 1000",
                    ACER,
                    "tap Add to cart",
                ],
            ),
            # the task's seed pages Amazon's results four at a time ("Page 1 of 2", Next / Previous)
            Route(
                "pages to the end of the list and back, buys the Acer from page 1",
                [
                    *laptop[:4],
                    "tap Next",
                    "see amazon:list_end:laptop nvidia 16gb",
                    "tap Previous",
                    ACER,
                    "tap Add to cart",
                ],
            ),
            Route(
                "reads only the first page of results",
                [*laptop[:4], "see amazon:price:dell-g15", ACER, "tap Add to cart", "tap cart"],
                {2},
            ),
            Route(
                "buys the Dell over $1000",
                [*laptop, "see amazon:price:asus-vivobook-16", DELL, "tap Add to cart"],
                {4},
            ),
            Route(
                "buys a laptop that breaks the constraints next to one that meets them",
                [
                    *laptop,
                    "see amazon:price:asus-vivobook-16",
                    ACER,
                    "tap Add to cart",
                    "back",
                    DELL,
                    "tap Add to cart",
                ],
                {4},
            ),
            Route(
                "buys the Vivobook without an Nvidia GPU",
                [
                    *laptop,
                    "see amazon:price:asus-vivobook-16",
                    "tap ASUS Vivobook 16 Laptop, Intel Iris Xe Graphics, 16GB RAM, 512GB SSD",
                    "tap Add to cart",
                ],
                {5},
            ),
        ],
        "h_air_fryer_best_deal": [
            Route(
                "Walmart first, then Amazon, back to Walmart",
                [
                    "open Walmart",
                    "tap Search Walmart",
                    "type ninja air fryer 8 qt",
                    "enter",
                    "open Amazon",
                    "tap Search Amazon",
                    "type ninja 8 qt air fryer",
                    "enter",
                    "see amazon:price:ninja-dz201",
                    "open Walmart",
                    "tap Ninja Foodi 8 Qt 2-Basket Air Fryer with DualZone, DZ201",
                ],
            ),
            Route(
                "prices from both lists",
                [
                    *plan["h_air_fryer_best_deal"][:4],
                    "see amazon:price:ninja-dz201",
                    *plan["h_air_fryer_best_deal"][6:],
                ],
            ),
            Route(
                "stops at the Amazon page",
                [
                    *plan["h_air_fryer_best_deal"][:4],
                    *plan["h_air_fryer_best_deal"][6:10],
                    "open Amazon",
                    "tap Ninja DZ201 Foodi 8 Quart 2-Basket Air Fryer with DualZone",
                ],
                {6},
            ),
            Route(
                "stops at the renewed one",
                [
                    *plan["h_air_fryer_best_deal"],
                    "open Amazon",
                    "tap Ninja DZ201 Foodi 8 Quart 2-Basket Air Fryer with DualZone (Renewed)",
                ],
                {6},
            ),
            Route("never opens Walmart", plan["h_air_fryer_best_deal"][:5], {3, 4, 5, 6}),
        ],
        "h_walmart_sale_items_note": [
            Route(
                "names oranges as not on sale",
                [
                    *walmart,
                    *note(
                        "Walmart sale",
                        "Ribeye steak on sale at $12.98/lb. Charmin toilet paper on "
                        "sale for $21.97. Oranges are not on sale.",
                    ),
                ],
            ),
            Route(
                "prices first, one line each",
                [
                    *walmart,
                    *note(
                        "On sale at Walmart",
                        "12.98 dollars - ribeye steak; 21.97 dollars - toilet paper (Charmin)",
                    ),
                ],
            ),
            Route(
                "prices swapped between the items",
                [*walmart, *note("Walmart sale items", "Ribeye steak $21.97; Charmin toilet paper $12.98")],
                {8},
            ),
            Route(
                "right prices, invented item names",
                [*walmart, *note("Walmart sale items", "Sirloin roast $12.98; paper towels $21.97")],
                {8},
            ),
            Route(
                "correct scratch note, then a wrong final note",
                [
                    *walmart,
                    *note("Walmart sale items", "Ribeye steak $12.98; Charmin toilet paper $21.97"),
                    *note("Walmart sale items", "Ribeye steak $12.98; oranges $5.47 on sale"),
                ],
                {8, 9},
            ),
            Route(
                "lists an item that is not on sale as on sale",
                [*walmart, *note("Walmart sale items", "Ribeye $12.98, toilet paper $21.97, oranges $5.47")],
                {9},
            ),
        ],
        "h_joycon_three_stores": [
            Route(
                "Walmart first",
                [
                    "open Walmart",
                    "tap Search Walmart",
                    "type joycon",
                    "enter",
                    "see walmart:price:joycon-gray",
                    *plan["h_joycon_three_stores"][:10],
                    "open Walmart",
                    "tap Nintendo Switch Joy-Con (L)/(R), Gray",
                ],
            ),
            Route(
                "plan order, different queries",
                [
                    step.replace("type nintendo switch joy-con", "type joy con")
                    for step in plan["h_joycon_three_stores"]
                ],
            ),
            Route(
                "stops at the out-of-stock bundle",
                [
                    *plan["h_joycon_three_stores"][:-1],
                    "tap Nintendo Switch Joy-Con (L/R), Gray, Value Bundle",
                ],
                {9, 10},
            ),
            Route(
                "stops at Best Buy's refurbished pair",
                [
                    *plan["h_joycon_three_stores"],
                    "open Best Buy",
                    "tap Nintendo Switch Joy-Con (L/R), Neon Red and Neon Blue - Refurbished",
                ],
                {10},
            ),
            Route(
                "skips Best Buy",
                [*plan["h_joycon_three_stores"][:5], *plan["h_joycon_three_stores"][10:]],
                {6, 7, 8},
            ),
        ],
    }
