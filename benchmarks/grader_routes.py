"""The grader corpus's routes: for every hard task, correct routes other than its reference and
plausible wrong ones, each with the rubric items (0-based) it must fail. ``benchmarks/grader_corpus.py``
replays and counts them; see its docstring for the step syntax."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mae.device.virtual import VirtualPhone
from mae.eval.virtual_suite import VirtualTask

Step = str | Callable[[VirtualPhone], str]


@dataclass
class Route:
    """One way through a task; ``fails`` lists the rubric items (0-based) a correct grader fails."""

    name: str
    steps: Sequence[Step]
    fails: set[int] = field(default_factory=set)

    @property
    def correct(self) -> bool:
        return not self.fails


def note(title: str, body: str) -> list[Step]:
    """Plan steps that write a new note in Notes."""
    return [
        "open Notes",
        "tap new note",
        "tap Title",
        f"type {title}",
        "enter",
        f"type {body}",
        "back",
        "tap done",
    ]


def directions_of(place: str) -> Callable[[VirtualPhone], str]:
    """The tap on the Directions button of ``place``'s row in a Maps result list."""

    def tap(phone: VirtualPhone) -> str:
        targets = phone.tap_targets()
        names = [name for name, _ in targets]
        start = names.index(place)
        for name, (left, top, right, bottom) in targets[start + 1 :]:
            if name == "Directions":
                return f"Tap({(left + right) // 2}, {(top + bottom) // 2})"
        raise LookupError(f"no Directions button after {place!r}")

    return tap


MAPS_KOREAN = ["open Maps", "tap Search here", "type korean restaurants in champaign", "enter"]
MAPS_BAKERY = ["open Maps", "tap Search here", "type bakery", "enter"]
MAPS_THAI = ["open Maps", "tap Search here", "type thai restaurants in urbana", "enter"]
SCHOLAR = [
    "open Chrome",
    "tap search box",
    "type google scholar",
    "enter",
    "tap Google Scholar",
    "tap Search Scholar",
]
FANDANGO = [
    "open Chrome",
    "tap search box",
    "type fandango movies in theaters",
    "enter",
    "tap Movies in Theaters Now - Fandango",
]
ORCHARD_TIMES = "12:40 PM, 3:50 PM, 7:10 PM, 10:05 PM"


def corpus(tasks: dict[str, VirtualTask]) -> dict[str, list[Route]]:
    """Every task's routes; the plans of the tasks themselves are reused where a route only adds to them."""
    plan = {task_id: task.plan for task_id, task in tasks.items()}

    def upto(task_id: str, step: str) -> list[Step]:
        steps = plan[task_id]
        return list(steps[: steps.index(step)])

    walmart = upto("h_walmart_sale_items_note", "open Notes")
    movie = upto("h_movie_trending_note", "open Notes")
    horror = upto("h_horror_movie_reviews_note", "open Notes")
    laptop = upto(
        "h_laptop_nvidia_cart",
        "tap Acer Nitro V 15 Gaming Laptop, NVIDIA GeForce RTX 4050, 16GB RAM, 512GB SSD",
    )
    acer = "tap Acer Nitro V 15 Gaming Laptop, NVIDIA GeForce RTX 4050, 16GB RAM, 512GB SSD"
    dell = "tap Dell G15 Gaming Laptop, NVIDIA GeForce RTX 4060, 16GB RAM, 1TB SSD"
    flights = upto("h_cheap_flight_nyc", "see web:bk-flights-chi-nyc:link:web:bk-flight-southwest")
    frontier = "tap Frontier - ORD to LGA, nonstop - $128 round trip"
    spirit = "tap Spirit - ORD to EWR, 1 stop - $139 round trip"
    return {
        "h_korean_late_night": [
            Route(
                "list first, then two places",
                [
                    *MAPS_KOREAN,
                    "see maps:result:han-river",
                    "tap Seoul Garden",
                    "back",
                    "tap Gangnam BBQ House",
                ],
            ),
            Route(
                "another query and order",
                [
                    "open Maps",
                    "tap Search here",
                    "type korean food",
                    "enter",
                    "tap Gangnam BBQ House",
                    "back",
                    "see maps:result:han-river",
                    "tap Kimchi Corner",
                    "back",
                    "tap Gangnam BBQ House",
                ],
            ),
            Route(
                "narrow query, its whole list read",
                [
                    "open Maps",
                    "tap Search here",
                    "type korean open late",
                    "enter",
                    "see maps:list_end:korean open late",
                    "tap Kimchi Corner",
                    "back",
                    "tap Gangnam BBQ House",
                ],
            ),
            # the task's seed lists Maps results five at a time under a "Show more results" button
            Route(
                "loads the rest of the list, then compares two places",
                [
                    *MAPS_KOREAN,
                    "tap Show more results",
                    "see maps:list_end:korean restaurants in champaign",
                    "tap Han River Kitchen",
                    "back",
                    "tap Gangnam BBQ House",
                ],
            ),
            Route(
                "stops at a place that closes at 10 PM",
                [*MAPS_KOREAN, "tap Gangnam BBQ House", "back", "tap Seoul Garden"],
                {5},
            ),
            Route("stops on the result list", [*plan["h_korean_late_night"], "back"], {5}),
            Route(
                "opens only one place",
                [*MAPS_KOREAN, "see maps:result:han-river", "tap Gangnam BBQ House"],
                {3},
            ),
        ],
        "h_nearest_bakery_route": [
            Route(
                "rules out Sweet Crumb from the list and starts the route from it",
                [
                    *MAPS_BAKERY,
                    "see maps:result:sweet-crumb",
                    "see maps:result:golden-loaf",
                    directions_of("Golden Loaf Bakery"),
                ],
            ),
            Route(
                "reads both pages, then directions",
                [
                    *MAPS_BAKERY,
                    "tap Golden Loaf Bakery",
                    "back",
                    "tap Sweet Crumb Bakery",
                    "back",
                    "tap Golden Loaf Bakery",
                    "tap Directions",
                ],
            ),
            Route(
                "route to the closest bakery rated 3.8",
                [*MAPS_BAKERY, "tap Sweet Crumb Bakery", "tap Directions"],
                {4, 5},
            ),
            Route(
                "route to a farther bakery rated 4.7",
                [*MAPS_BAKERY, "tap Sweet Crumb Bakery", "back", "tap Prairie Bake Shop", "tap Directions"],
                {4, 5},
            ),
            Route("finds Golden Loaf but stops on its page", [*plan["h_nearest_bakery_route"][:-1]], {5}),
        ],
        "h_thai_duck_notes": [
            Route(
                "summary written as prose",
                [
                    *upto("h_thai_duck_notes", "open Notes"),
                    "see maps:review:lemongrass-thai:0",
                    *note(
                        "Lemongrass Thai",
                        "People love the crispy duck and the friendly staff; the "
                        "downside is slow service and hard parking.",
                    ),
                ],
            ),
            Route(
                "another query, Lemongrass first",
                [
                    "open Maps",
                    "tap Search here",
                    "type thai food urbana",
                    "enter",
                    "see maps:result:thai-spice",
                    "tap Lemongrass Thai Kitchen",
                    "see maps:highlights:lemongrass-thai",
                    "see maps:review:lemongrass-thai:2",
                    "back",
                    "tap Bangkok Orchid",
                    "back",
                    *note(
                        "Lemongrass Thai Kitchen",
                        "Positive: tasty duck curry, generous portions. Negative: a long wait.",
                    ),
                ],
            ),
            Route(
                "summarises Bangkok Orchid, which has no duck",
                [
                    *MAPS_THAI,
                    "tap Bangkok Orchid",
                    "see maps:review:bangkok-orchid:0",
                    *note("Bangkok Orchid", "Great food, friendly staff, but slow service."),
                ],
                {3, 4, 5, 7},
            ),
            Route(
                "only praise in the summary",
                [
                    *upto("h_thai_duck_notes", "open Notes"),
                    *note("Lemongrass Thai Kitchen", "Amazing crispy duck and friendly staff."),
                ],
                {8},
            ),
            Route(
                "correct scratch note, then a final note about another place",
                [
                    *upto("h_thai_duck_notes", "open Notes"),
                    *note("Lemongrass Thai Kitchen", "Positive: amazing duck. Negative: slow service."),
                    *note("Bangkok Orchid", "Great curry but noisy."),
                ],
                {3, 7},
            ),
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
        "h_laptop_nvidia_cart": [
            Route(
                "narrower query, whole list seen",
                [
                    *laptop[:2],
                    "type nvidia laptop 16gb ram",
                    "enter",
                    "see amazon:price:asus-vivobook-16",
                    acer,
                    "tap Add to cart",
                ],
            ),
            Route(
                "opens the Dell first, rejects it, buys the Acer",
                [
                    *laptop,
                    "see amazon:price:asus-vivobook-16",
                    dell,
                    "back",
                    acer,
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
                    acer,
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
                    acer,
                    "tap Add to cart",
                ],
            ),
            Route(
                "reads only the first page of results",
                [*laptop[:4], "see amazon:price:dell-g15", acer, "tap Add to cart", "tap cart"],
                {2},
            ),
            Route(
                "buys the Dell over $1000",
                [*laptop, "see amazon:price:asus-vivobook-16", dell, "tap Add to cart"],
                {4},
            ),
            Route(
                "buys a laptop that breaks the constraints next to one that meets them",
                [
                    *laptop,
                    "see amazon:price:asus-vivobook-16",
                    acer,
                    "tap Add to cart",
                    "back",
                    dell,
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
        "h_cheap_flight_nyc": [
            Route(
                "searches with NYC",
                [
                    *flights[:2],
                    "type chicago to nyc flights booking",
                    *flights[3:],
                    "see web:bk-flights-chi-nyc:link:web:bk-flight-southwest",
                    frontier,
                ],
            ),
            Route(
                "opens the cheap-looking Spirit, goes back, stops at Frontier",
                [
                    *flights,
                    "see web:bk-flights-chi-nyc:link:web:bk-flight-southwest",
                    spirit,
                    "back",
                    frontier,
                ],
            ),
            Route(
                "stops at Spirit",
                [*flights, "see web:bk-flights-chi-nyc:link:web:bk-flight-southwest", spirit],
                {4, 5},
            ),
            Route(
                "opens Frontier, goes back and stops on the dearer Spirit",
                [
                    *flights,
                    "see web:bk-flights-chi-nyc:link:web:bk-flight-southwest",
                    frontier,
                    "back",
                    spirit,
                ],
                {4, 5},
            ),
            Route(
                "stops at the first flight without reading the list",
                [*flights, "tap United - ORD to LGA, nonstop - $248 round trip"],
                {4, 5},
            ),
        ],
        "h_movie_trending_note": [
            Route(
                "24-hour showtimes",
                [
                    *movie,
                    *note(
                        "The Last Orchard", "Highest rated (4.8). Showtimes today: 12:40, 15:50, 19:10, 22:05"
                    ),
                ],
            ),
            Route(
                "compares the films by name",
                [
                    *movie,
                    *note(
                        "Best rated: The Last Orchard",
                        f"The Last Orchard (4.8) beats Skyward Bound (4.6), Paper "
                        f"Lanterns (4.4) and Quantum Heist (4.2). "
                        f"Showtimes today: {ORCHARD_TIMES}",
                    ),
                ],
            ),
            Route(
                "picks Skyward Bound with its times",
                [*movie, *note("Skyward Bound", "Rated 4.6. Showtimes today: 1:15 PM, 4:30 PM, 7:45 PM")],
                {5, 6, 7},
            ),
            Route(
                "names The Last Orchard with another film's showtimes",
                [*movie, *note("The Last Orchard", "Rated 4.8. Showtimes today: 1:15 PM, 4:30 PM, 7:45 PM")],
                {6, 7},
            ),
            Route(
                "correct scratch note, then a final note for Quantum Heist",
                [
                    *movie,
                    *note("The Last Orchard", f"Showtimes {ORCHARD_TIMES}"),
                    *note("Quantum Heist", "Showtimes today: 2:00 PM, 5:20 PM, 8:40 PM"),
                ],
                {5, 6, 7},
            ),
        ],
        "h_horror_movie_reviews_note": [
            Route(
                "opens Hollow Pines first",
                [
                    *FANDANGO,
                    "tap 6. Hollow Pines",
                    "back",
                    "tap 3. Night Harbor",
                    "back",
                    *upto("h_horror_movie_reviews_note", "open Notes")[9:],
                    *note(
                        "Night Harbor", "Reviews are mostly good: tense and scary, though some find it slow."
                    ),
                ],
            ),
            Route(
                "sentiment in other words",
                [
                    *horror,
                    *note("Night Harbor on X", "Mixed to positive: worth watching, the ending felt rushed."),
                ],
            ),
            Route(
                "picks the older horror film",
                [
                    *horror[:8],
                    "open X",
                    "tap explore",
                    "tap Search",
                    "type hollow pines",
                    "enter",
                    *note("Hollow Pines", "Mostly positive, scary."),
                ],
                {4, 5, 6, 8},
            ),
            Route("never checks X", [*horror[:9], *note("Night Harbor", "Scary and tense.")], {3, 4, 5, 6}),
            Route(
                "note without a sentiment",
                [*horror, *note("Night Harbor", "Released recently, rated R.")],
                {9},
            ),
        ],
        "h_bakery_birthday_phone": [
            Route(
                "goes straight to Prairie Bake Shop, number without dashes",
                [
                    *MAPS_BAKERY,
                    "tap Prairie Bake Shop",
                    "see maps:highlights:prairie-bake-shop",
                    "see maps:phone:prairie-bake-shop",
                    *note("Prairie Bake Shop", "Birthday cakes. Call 2175550187"),
                ],
            ),
            Route(
                "name and number in the body only",
                [
                    *upto("h_bakery_birthday_phone", "open Notes"),
                    "see maps:phone:prairie-bake-shop",
                    *note("Bakery", "Prairie Bake Shop: (217) 555-0187, makes birthday cakes"),
                ],
            ),
            Route(
                "picks the bakery 5.8 miles away",
                [
                    *MAPS_BAKERY,
                    "tap Celebration Cakes Co",
                    "see maps:phone:celebration-cakes",
                    *note("Celebration Cakes Co", "(217) 555-0142"),
                ],
                {2, 3, 4, 6},
            ),
            Route(
                "right bakery, wrong number",
                [
                    *upto("h_bakery_birthday_phone", "open Notes"),
                    *note("Prairie Bake Shop", "(217) 555-0190"),
                ],
                {6},
            ),
            Route(
                "never writes the note",
                [
                    *upto("h_bakery_birthday_phone", "open Notes"),
                    "see maps:phone:prairie-bake-shop",
                    "open Notes",
                ],
                {6},
            ),
        ],
        "h_chinese_ohare_x_route": [
            Route(
                "route started from the result list",
                [
                    "open Maps",
                    "tap Search here",
                    "type chinese restaurant near chicago ohare airport",
                    "enter",
                    "see maps:result:golden-dragon",
                    *plan["h_chinese_ohare_x_route"][6:-2],
                    "open Maps",
                    directions_of("Golden Dragon Palace"),
                ],
            ),
            Route(
                "X first with a shorter query",
                [
                    *plan["h_chinese_ohare_x_route"][:6],
                    "open X",
                    "tap explore",
                    "tap Search",
                    "type golden dragon",
                    "enter",
                    "see x:post:g2",
                    *note("Golden Dragon", "Everyone recommends the Peking duck and the soup dumplings."),
                    "open Maps",
                    "tap Directions",
                ],
            ),
            Route(
                "route to the wrong restaurant",
                [
                    *plan["h_chinese_ohare_x_route"][:-1],
                    "back",
                    "tap Search here",
                    "type wok express ohare",
                    "enter",
                    "tap Wok Express O'Hare",
                    "tap Directions",
                ],
                {9},
            ),
            Route(
                "writes the note but never returns to Maps",
                [*plan["h_chinese_ohare_x_route"][:-2]],
                {8, 9},
            ),
            Route(
                "note without the dishes",
                [
                    *upto("h_chinese_ohare_x_route", "open Notes"),
                    *note("Golden Dragon Palace", "Popular with travelers near the airport."),
                    "open Maps",
                    "tap Directions",
                ],
                {7},
            ),
        ],
        "h_segment_anything_most_cited": [
            Route(
                "opens a less-cited paper first, then the right one",
                [
                    *plan["h_segment_anything_most_cited"][:10],
                    "tap Track Anything in Videos with Promptable Masks",
                    "back",
                    "tap Track Anything in Videos with Promptable Masks",
                ],
            ),
            Route(
                "another query",
                [
                    *SCHOLAR,
                    "type segment anything kirillov",
                    "enter",
                    *plan["h_segment_anything_most_cited"][8:],
                ],
            ),
            Route(
                "stops at the citing list",
                [*plan["h_segment_anything_most_cited"][:10]],
                {5, 6},
            ),
            Route(
                "opens the most-cited paper, then leaves it",
                [*plan["h_segment_anything_most_cited"], "back"],
                {6},
            ),
            Route(
                "opens Segment Anything itself",
                [*SCHOLAR, "type segment anything", "enter", "tap Segment Anything"],
                {3, 4, 5, 6},
            ),
        ],
        "h_llm_agent_surveys_note": [
            Route(
                "short titles",
                [
                    *upto("h_llm_agent_surveys_note", "open Notes"),
                    *note(
                        "Surveys",
                        "1) The Rise of LLM Agents 2) Tool Use in Language "
                        "Agents 3) Memory Mechanisms of LLM Agents",
                    ),
                ],
            ),
            Route(
                "another query",
                [
                    *SCHOLAR,
                    "type llm agent survey",
                    "enter",
                    "see scholar:paper:memory-agents-survey",
                    *note(
                        "LLM agent surveys",
                        "Large Language Model Agents: A Survey of Methods and Benchmarks; The Rise of "
                        "LLM Agents: A Survey; Memory Mechanisms of LLM Agents: A Survey",
                    ),
                ],
            ),
            Route(
                "only two titles",
                [
                    *upto("h_llm_agent_surveys_note", "open Notes"),
                    *note("Surveys", "The Rise of LLM Agents; Tool Use in Language Agents"),
                ],
                {6},
            ),
            Route(
                "adds a benchmark paper",
                [
                    *upto("h_llm_agent_surveys_note", "open Notes"),
                    *note(
                        "Surveys",
                        "The Rise of LLM Agents; Tool Use in Language Agents; "
                        "Memory Mechanisms of LLM Agents; AgentBench",
                    ),
                ],
                {6},
            ),
            Route("never writes the note", [*upto("h_llm_agent_surveys_note", "open Notes")], {4, 5, 6}),
        ],
        "h_recipe_video": [
            Route(
                "opens the quick recipe directly",
                [
                    *plan["h_recipe_video"][:4],
                    "tap Chinese Red-Braised Beef with Potatoes and Onions (2 hours)",
                    "back",
                    *plan["h_recipe_video"][6:],
                ],
            ),
            Route(
                "video query in other words",
                [
                    *plan["h_recipe_video"][:8],
                    "tap Search or type URL",
                    "type youtube beef and potato stir fry video",
                    "enter",
                    "tap Chinese Beef and Potato Stir-Fry with Onions, 40 Minute Recipe - YouTube",
                ],
            ),
            Route(
                "the three-hour stew video",
                [*plan["h_recipe_video"][:11], "tap Slow-Cooked Beef Stew with Potatoes, 3 Hours - YouTube"],
                {5, 6},
            ),
            Route(
                "stops at the recipe",
                [*plan["h_recipe_video"][:8]],
                {4, 5, 6},
            ),
            Route(
                "opens the video then goes back",
                [*plan["h_recipe_video"], "back"],
                {6},
            ),
        ],
        "h_mcdonalds_deal_route": [
            Route(
                "reads the pickup on the deals page, route from the list",
                [
                    *plan["h_mcdonalds_deal_route"][:7],
                    "open Maps",
                    "tap Search here",
                    "type mcdonalds green st",
                    "enter",
                    "see maps:result:mcdonalds-green",
                    directions_of("McDonald's"),
                ],
            ),
            Route(
                "opens the place first, then directions",
                plan["h_mcdonalds_deal_route"],
            ),
            Route(
                "adds the Big Mac deal instead",
                [
                    *plan["h_mcdonalds_deal_route"][:5],
                    "tap Deal: Big Mac combo for $6",
                    "tap Add to Mobile Order",
                    *plan["h_mcdonalds_deal_route"][8:],
                ],
                {1, 2},
            ),
            Route(
                "route to the Neil Street McDonald's",
                [
                    *plan["h_mcdonalds_deal_route"][:8],
                    "open Maps",
                    "tap Search here",
                    "type mcdonalds neil street",
                    "enter",
                    "tap McDonald's Neil Street",
                    "tap Directions",
                ],
                {5, 6},
            ),
            Route(
                "stops at the order",
                plan["h_mcdonalds_deal_route"][:8],
                {4, 5, 6},
            ),
        ],
        "h_headphones_reviews_note": [
            Route(
                "sentiment in other words",
                [
                    *upto("h_headphones_reviews_note", "open Notes"),
                    *note(
                        "QuietComfort 45",
                        "Reviewers love the comfort and the noise cancelling; a few dislike the price.",
                    ),
                ],
            ),
            Route(
                "another query",
                [
                    "open Amazon",
                    "tap Search Amazon",
                    "type bose quietcomfort 45",
                    "enter",
                    *plan["h_headphones_reviews_note"][4:],
                ],
            ),
            Route(
                "reviews of the ear cushions",
                [
                    "open Amazon",
                    "tap Search Amazon",
                    "type bose qc45",
                    "enter",
                    "tap Replacement Ear Cushions for Bose QuietComfort 45 QC45 Headphones",
                    *note("QC45", "Mostly positive."),
                ],
                {2, 3, 4},
            ),
            Route(
                "one review only",
                [*plan["h_headphones_reviews_note"][:6], *note("Bose QC45", "Mostly positive, comfortable.")],
                {4},
            ),
            Route("no note", upto("h_headphones_reviews_note", "open Notes"), {5, 6}),
        ],
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
        "h_wukong_highlights_note": [
            Route(
                "highlights in other words",
                [
                    *upto("h_wukong_highlights_note", "open Notes"),
                    *note("Wukong on X", "Black Myth: Wukong - 10M copies sold in 3 days, huge Steam peak."),
                ],
            ),
            Route(
                "trending topic instead of a search",
                [
                    "open X",
                    "tap explore",
                    "tap Search",
                    "type wukong",
                    "enter",
                    "see x:post:w4",
                    "tap Game Pulse",
                    "back",
                    *note("Black Myth Wukong", "2.2 million players on Steam; boss fights praised."),
                ],
            ),
            Route("no note", upto("h_wukong_highlights_note", "open Notes"), {5, 6}),
            Route(
                "note about another game",
                [
                    *upto("h_wukong_highlights_note", "open Notes"),
                    *note("Highlights", "Elden Ring DLC sold 5 million copies."),
                ],
                {6},
            ),
            Route(
                "reads only the first post",
                [*plan["h_wukong_highlights_note"][:5], *note("Wukong", "Sold 10 million copies.")],
                {3, 4},
            ),
        ],
        "h_x_trending_note": [
            Route(
                "summary in other words",
                [
                    *upto("h_x_trending_note", "open Notes"),
                    *note(
                        "What is trending",
                        "1. Black Myth: Wukong sales. 2. Saturday's solar "
                        "eclipse. 3. UCL final, Madrid v Dortmund.",
                    ),
                ],
            ),
            Route(
                "reads the topics in another order",
                [
                    "open X",
                    "tap explore",
                    "tap Champions League Final",
                    "back",
                    "tap Black Myth Wukong",
                    "back",
                    "tap Solar Eclipse",
                    "back",
                    *note("Trending", "Wukong, eclipse, Champions League final"),
                ],
            ),
            Route(
                "reads only one topic",
                [
                    "open X",
                    "tap explore",
                    "tap Solar Eclipse",
                    "back",
                    *note("Trending", "Wukong, eclipse, Champions League final"),
                ],
                {4},
            ),
            Route(
                "note about two topics",
                [
                    *upto("h_x_trending_note", "open Notes"),
                    *note("Trending", "Wukong sales and the eclipse."),
                ],
                {6},
            ),
            Route("no note", upto("h_x_trending_note", "open Notes"), {5, 6}),
        ],
        "h_watercolor_creators_note": [
            Route(
                "names instead of handles",
                [
                    *upto("h_watercolor_creators_note", "open Notes"),
                    *note("Watercolor", "Ink and Water, Paint with Mei, Studio Lumen"),
                ],
            ),
            Route(
                "mentions the creator with few likes as left out",
                [
                    *upto("h_watercolor_creators_note", "open Notes"),
                    *note(
                        "Watercolor creators",
                        "@inkandwater, @paintwithmei, @studiolumen. Not Doodle Dan: only 85 likes.",
                    ),
                ],
            ),
            Route(
                "includes the creator with few likes",
                [
                    *upto("h_watercolor_creators_note", "open Notes"),
                    *note("Watercolor creators", "@inkandwater, @paintwithmei, @studiolumen, @doodledan"),
                ],
                {6},
            ),
            Route(
                "only one creator",
                [*upto("h_watercolor_creators_note", "open Notes"), *note("Watercolor", "@inkandwater")],
                {6},
            ),
            Route(
                "reads two posts only",
                [*plan["h_watercolor_creators_note"][:5], *note("Watercolor", "@inkandwater, @paintwithmei")],
                {6},
            ),
        ],
        "h_la_attractions_note": [
            Route(
                "searches LA in short",
                [
                    "open Chrome",
                    "tap search box",
                    "type things to do in LA tripadvisor",
                    "enter",
                    *plan["h_la_attractions_note"][4:],
                ],
            ),
            Route(
                "short names",
                [
                    *upto("h_la_attractions_note", "open Notes"),
                    *note("LA", "Griffith Observatory; Getty Center; Universal Studios"),
                ],
            ),
            Route(
                "top 3 missing one",
                [
                    *upto("h_la_attractions_note", "open Notes"),
                    *note("LA", "Griffith Observatory; Getty Center; Santa Monica Pier"),
                ],
                {5},
            ),
            Route(
                "never opens Tripadvisor",
                [
                    *plan["h_la_attractions_note"][:4],
                    *note("LA", "Griffith Observatory; Getty Center; Universal Studios"),
                ],
                {2, 3},
            ),
            Route("no note", upto("h_la_attractions_note", "open Notes"), {4, 5}),
        ],
        "h_palo_alto_itinerary_note": [
            Route(
                "another plan without seafood",
                [
                    *upto("h_palo_alto_itinerary_note", "open Notes"),
                    *note(
                        "Palo Alto",
                        "10 AM Anderson Collection, 12 PM Coupa Cafe, 2 PM Cantor Arts Center, 7 PM Tamarine",
                    ),
                ],
            ),
            Route(
                "says which restaurants it skipped",
                [
                    *upto("h_palo_alto_itinerary_note", "open Notes"),
                    *note(
                        "Palo Alto",
                        "Cantor Arts Center, Anderson Collection, lunch at Oren's "
                        "Hummus. Skipped Sea Harvest and Nobu (seafood).",
                    ),
                ],
            ),
            Route(
                "dinner at a seafood place",
                [
                    *upto("h_palo_alto_itinerary_note", "open Notes"),
                    *note(
                        "Palo Alto",
                        "Cantor Arts Center, Anderson Collection, lunch at Oren's Hummus, dinner at Nobu.",
                    ),
                ],
                {9},
            ),
            Route(
                "one museum",
                [
                    *upto("h_palo_alto_itinerary_note", "open Notes"),
                    *note("Palo Alto", "Cantor Arts Center, Baylands, lunch at Tamarine."),
                ],
                {7},
            ),
            Route(
                "no food",
                [
                    *upto("h_palo_alto_itinerary_note", "open Notes"),
                    *note("Palo Alto", "Cantor Arts Center, Anderson Collection."),
                ],
                {8, 9},
            ),
        ],
        "h_chicago_food_note": [
            Route(
                "dishes in other words",
                [
                    *upto("h_chicago_food_note", "open Notes"),
                    *note("Lou Malnati's", "Must-try: the deep-dish Chicago Classic on buttercrust."),
                ],
            ),
            Route(
                "another query",
                [
                    "open Chrome",
                    "tap search box",
                    "type best chicago restaurants tripadvisor",
                    "enter",
                    *plan["h_chicago_food_note"][4:],
                ],
            ),
            Route(
                "summarises Portillo's",
                [
                    *plan["h_chicago_food_note"][:5],
                    "tap 2. Portillo's - 4.5 of 5, 6,120 reviews",
                    *note("Portillo's", "Italian beef and the chocolate cake shake."),
                ],
                {4, 6, 7},
            ),
            Route(
                "no dishes",
                [
                    *upto("h_chicago_food_note", "open Notes"),
                    *note("Lou Malnati's", "Very popular, go early."),
                ],
                {7},
            ),
            Route(
                "never opens the restaurant",
                [*plan["h_chicago_food_note"][:5], *note("Lou Malnati's", "Deep dish with butter crust.")],
                {3, 4},
            ),
        ],
        "h_champaign_hotel_booking": [
            Route(
                "skips the Hilton, Maps by street",
                [
                    *plan["h_champaign_hotel_booking"][:5],
                    "tap Illini Union Hotel - queen bed - $149 - rated 8.6",
                    *plan["h_champaign_hotel_booking"][8:],
                ],
            ),
            Route(
                "back to the hotel page by re-opening it",
                [
                    *plan["h_champaign_hotel_booking"],
                    "back",
                    "tap Illini Union Hotel - queen bed - $149 - rated 8.6",
                ],
            ),
            Route(
                "stops at the Campus Suites over budget",
                [
                    *plan["h_champaign_hotel_booking"],
                    "back",
                    "tap The Campus Suites - queen bed - $215 - rated 9.1",
                ],
                {7},
            ),
            Route("stops in Maps", plan["h_champaign_hotel_booking"][:-1], {6, 7}),
            Route(
                "stops at the Prairie Motel rated 6.4",
                [
                    *plan["h_champaign_hotel_booking"],
                    "back",
                    "tap Prairie Motel - queen bed - $89 - rated 6.4",
                ],
                {7},
            ),
        ],
    }
