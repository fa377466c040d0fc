"""The grader corpus's routes for what a real model's runs showed the graders misjudging (issue 38).

Notes written the way a model writes them: products' own names with commas in them ("Beef Choice Angus
Ribeye Steak, per pound - $12.98"), headings with bullets under them, tables, a rejected candidate
named to say why it was rejected; summaries whose sentiment runs against what was read, with real or
invented quotes; trending topics with wrong facts or names only; and side effects no task asked for (an
Add to cart where the task says to stop at the screen where the item can be added, a navigation
started, a place saved). Each route names the rubric items (0-based) it must fail;
``benchmarks/grader_corpus.py`` adds them to the routes of the scenario files.
"""

from __future__ import annotations

from grader_routes import Plans, Route, note, upto

WALMART_COMMA_NAMES = (
    "Beef Choice Angus Ribeye Steak, per pound - $12.98\n"
    "Charmin Ultra Soft Toilet Paper, 18 Mega Rolls - $21.97"
)
WALMART_HEADINGS = (
    "On sale (Rollback):\n\n## Ribeye steak\n- Beef Choice Angus Ribeye Steak, per pound\n"
    "- Now $12.98, was $14.98"
    "\n\n## Toilet paper\n- Charmin Ultra Soft Toilet Paper, 18 Mega Rolls\n- Now $21.97, was $24.97"
    "\n\nNot on sale:\n- Fresh Navel Oranges, 4 pound bag - $5.47"
)
WALMART_TABLE = (
    "| Item | Price | Was |\n|---|---|---|\n| Beef Choice Angus Ribeye Steak, per pound | $12.98 | $14.98 |"
    "\n| Charmin Ultra Soft Toilet Paper, 18 Mega Rolls | $21.97 | $24.97 |"
)
QC45_QUOTES = "'Good headphones but expensive, and the ear cushions get warm.' 'Wish it supported aptX.'"
TRENDING_HEADINGS = (
    "## Black Myth Wukong\n- Sold 10 million copies in 3 days\n## Solar Eclipse\n"
    "- Partial eclipse on Saturday morning, use eclipse glasses\n"
    "## Champions League Final\n- Madrid vs Dortmund at Wembley, June 1"
)


def routes(plan: Plans) -> dict[str, list[Route]]:
    """This part's routes, added to each task's routes in the scenario files."""
    walmart = upto(plan, "h_walmart_sale_items_note", "open Notes")
    thai = upto(plan, "h_thai_duck_notes", "open Notes")
    qc45 = upto(plan, "h_headphones_reviews_note", "open Notes")
    horror = upto(plan, "h_horror_movie_reviews_note", "open Notes")
    trending = upto(plan, "h_x_trending_note", "open Notes")
    palo_alto = upto(plan, "h_palo_alto_itinerary_note", "open Notes")
    return {
        "h_walmart_sale_items_note": [
            Route(
                "copies the products' own names, commas and all",
                [*walmart, *note("Sale", WALMART_COMMA_NAMES)],
            ),
            Route(
                "headings with bullets, oranges under Not on sale",
                [*walmart, *note("Walmart", WALMART_HEADINGS)],
            ),
            Route("a table of the items on sale", [*walmart, *note("Walmart sale", WALMART_TABLE)]),
            Route(
                "names the oranges to say why they were rejected",
                [
                    *walmart,
                    *note(
                        "Walmart",
                        "Ribeye steak $12.98 (Rollback)\nToilet paper $21.97 (Rollback)\n"
                        "Fresh oranges were rejected: $5.47 is their regular price.",
                    ),
                ],
            ),
            Route(
                "the products' own names with the prices swapped",
                [
                    *walmart,
                    *note(
                        "Sale",
                        "Beef Choice Angus Ribeye Steak, per pound - $21.97\n"
                        "Charmin Ultra Soft Toilet Paper, 18 Mega Rolls - $12.98",
                    ),
                ],
                {8},
            ),
            Route(
                "headings with each price under the other item",
                [*walmart, *note("Walmart", "## Ribeye steak\n- Now $21.97\n## Toilet paper\n- Now $12.98")],
                {8},
            ),
            Route(
                "a table that lists the oranges as on sale",
                [
                    *walmart,
                    *note("Walmart sale", WALMART_TABLE + "\n| Fresh Navel Oranges, 4 pound bag | $5.47 | |"),
                ],
                {9},
            ),
        ],
        "h_thai_duck_notes": [
            Route(
                "names the rejected restaurant to say why",
                [
                    *thai,
                    *note(
                        "Lemongrass Thai Kitchen",
                        "Bangkok Orchid was rejected because its menu is vegetarian.\n"
                        "Positive: crispy duck with basil is amazing, friendly staff.\n"
                        "Negative: slow service, parking is hard to find.",
                    ),
                ],
            ),
            Route(
                "a Ruled out heading over the rejected restaurant",
                [
                    *thai,
                    *note(
                        "Thai in Urbana",
                        "FINAL CHOICE: Lemongrass Thai Kitchen\n- Duck red curry, crispy duck with basil\n\n"
                        "Ruled out:\n- Bangkok Orchid (4.8), vegetarian menu\n\n"
                        "Positive:\n- Rich, fragrant curry\n- Generous portions\n"
                        "Negative:\n- Waited 40 minutes",
                    ),
                ],
            ),
            Route(
                "a heading per candidate, the rejected one's bullets say why",
                [
                    *thai,
                    *note(
                        "Thai in Urbana",
                        "Lemongrass Thai Kitchen (chosen):\n- Crispy duck with basil is amazing\n"
                        "- Service was slow, parking is hard\n"
                        "Bangkok Orchid (4.8):\n- Vegetarian menu, no duck dishes",
                    ),
                ],
            ),
            Route(
                "recommends the restaurant without duck too",
                [
                    *thai,
                    *note(
                        "Thai",
                        "Lemongrass Thai Kitchen: amazing crispy duck, slow service.\n"
                        "Also worth a visit: Bangkok Orchid (4.8).",
                    ),
                ],
                {3},
            ),
            Route(
                "feedback that is in no review",
                [
                    *thai,
                    *note("Lemongrass Thai Kitchen", "Positive: great vibes, good music.\nNegative: noisy."),
                ],
                {8},
            ),
        ],
        "h_headphones_reviews_note": [
            Route(
                "a sentiment heading with pros and cons from the reviews",
                [
                    *qc45,
                    *note(
                        "Bose QC45",
                        "Overall sentiment: Positive (4.5 stars)\nPros:\n- Comfortable on long flights\n"
                        "- Excellent noise cancelling, great battery\n"
                        "Cons:\n- Expensive, ear cushions get warm",
                    ),
                ],
            ),
            Route(
                "no verdict, reviewers' praise in other words",
                [
                    *qc45,
                    *note(
                        "QC45", "Reviewers love the comfort and the noise cancelling; one finds them pricey."
                    ),
                ],
            ),
            Route(
                "mostly negative, with real quotes",
                [*qc45, *note("Bose QC45", f"General sentiment: mostly negative. {QC45_QUOTES}")],
                {6},
            ),
            Route(
                "mostly negative, with invented quotes",
                [
                    *qc45,
                    *note(
                        "Bose QC45",
                        "Mostly negative: 'the headband broke after a week', 'terrible call quality'.",
                    ),
                ],
                {6},
            ),
            Route(
                "positive, with invented points",
                [
                    *qc45,
                    *note(
                        "Bose QC45", "Mostly positive. 'Best bass I have ever heard', 'perfect for the gym'."
                    ),
                ],
                {6},
            ),
        ],
        "h_horror_movie_reviews_note": [
            Route(
                "a sentiment line with bullets",
                [
                    *horror,
                    *note(
                        "Night Harbor",
                        "Sentiment: positive\n- Scariest movie of the year (the lighthouse scene)\n"
                        "- Slow second act, rushed ending",
                    ),
                ],
            ),
            Route(
                "mostly negative about a well-liked film",
                [
                    *horror,
                    *note("Night Harbor", "Reviews are mostly negative: slow second act, rushed ending."),
                ],
                {9},
            ),
        ],
        "h_x_trending_note": [
            Route(
                "headings with the facts as bullets", [*trending, *note("Trending on X", TRENDING_HEADINGS)]
            ),
            Route(
                "the right topics with wrong facts",
                [
                    *trending,
                    *note(
                        "Trending",
                        "1. Black Myth Wukong: delayed to next year\n"
                        "2. Solar eclipse: a total eclipse over Europe on Sunday\n"
                        "3. Champions League final: Barcelona beat PSG 3-1",
                    ),
                ],
                {6},
            ),
            Route(
                "the topics' names only, after reading all three",
                [
                    *trending,
                    *note(
                        "Trending on X", "1. Black Myth Wukong\n2. Solar Eclipse\n3. Champions League Final"
                    ),
                ],
                {6},
            ),
        ],
        "h_palo_alto_itinerary_note": [
            Route(
                "headings, seafood places under Left out",
                [
                    *palo_alto,
                    *note(
                        "Palo Alto",
                        "## Morning\n- Cantor Arts Center\n## Lunch\n- Oren's Hummus\n## Afternoon\n"
                        "- Anderson Collection\n## Dinner\n- Tamarine\n\n"
                        "Left out (seafood):\n- Sea Harvest\n- Nobu",
                    ),
                ],
            ),
            Route(
                "headings with a seafood dinner",
                [
                    *palo_alto,
                    *note(
                        "Palo Alto",
                        "## Morning\n- Cantor Arts Center\n## Lunch\n- Oren's Hummus\n## Afternoon\n"
                        "- Anderson Collection\n## Dinner\n- Nobu",
                    ),
                ],
                {9},
            ),
        ],
        "h_joycon_three_stores": [
            Route(
                "adds the cheapest Joy-Con to the cart",
                [*plan["h_joycon_three_stores"], "tap Add to cart"],
                {10},
            ),
        ],
        "h_oled_tv_best_deal": [
            Route("adds the Samsung to the cart", [*plan["h_oled_tv_best_deal"], "tap Add to cart"], {7}),
        ],
        "h_air_fryer_best_deal": [
            Route(
                "adds the Walmart fryer to the cart", [*plan["h_air_fryer_best_deal"], "tap Add to cart"], {6}
            ),
        ],
        "h_nearest_bakery_route": [
            Route("starts the navigation", [*plan["h_nearest_bakery_route"], "tap Start"], {5}),
        ],
        "h_korean_late_night": [
            Route("saves the place and unsaves it", [*plan["h_korean_late_night"], "tap Save", "tap Saved"]),
            Route("saves the place to a list", [*plan["h_korean_late_night"], "tap Save"], {5}),
        ],
    }
