"""The grader corpus's routes for restaurants and travel (Mobile-Eval-E scenarios 1 and 5): Maps,
Notes and booking sites in Chrome.

For every task, correct routes other than its reference and plausible wrong ones, each with the rubric
items (0-based) it must fail; ``benchmarks/grader_corpus.py`` replays and counts them.
"""

from __future__ import annotations

from grader_routes import MAPS_BAKERY, MAPS_KOREAN, MAPS_THAI, Plans, Route, directions_of, note, upto

FRONTIER = "tap Frontier - ORD to LGA, nonstop - $128 round trip"
SPIRIT = "tap Spirit - ORD to EWR, 1 stop - $139 round trip"


def routes(plan: Plans) -> dict[str, list[Route]]:
    """This part's routes; ``plan`` holds every task's plan (reused where a route only adds to one)."""
    flights = upto(plan, "h_cheap_flight_nyc", "see web:bk-flights-chi-nyc:link:web:bk-flight-southwest")
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
                    *upto(plan, "h_thai_duck_notes", "open Notes"),
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
                    *upto(plan, "h_thai_duck_notes", "open Notes"),
                    *note("Lemongrass Thai Kitchen", "Amazing crispy duck and friendly staff."),
                ],
                {8},
            ),
            Route(
                "correct scratch note, then a final note about another place",
                [
                    *upto(plan, "h_thai_duck_notes", "open Notes"),
                    *note("Lemongrass Thai Kitchen", "Positive: amazing duck. Negative: slow service."),
                    *note("Bangkok Orchid", "Great curry but noisy."),
                ],
                {3, 7, 8},
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
                    *upto(plan, "h_bakery_birthday_phone", "open Notes"),
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
                    *upto(plan, "h_bakery_birthday_phone", "open Notes"),
                    *note("Prairie Bake Shop", "(217) 555-0190"),
                ],
                {6},
            ),
            Route(
                "never writes the note",
                [
                    *upto(plan, "h_bakery_birthday_phone", "open Notes"),
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
                    *upto(plan, "h_chinese_ohare_x_route", "open Notes"),
                    *note("Golden Dragon Palace", "Popular with travelers near the airport."),
                    "open Maps",
                    "tap Directions",
                ],
                {7},
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
                    FRONTIER,
                ],
            ),
            Route(
                "opens the cheap-looking Spirit, goes back, stops at Frontier",
                [
                    *flights,
                    "see web:bk-flights-chi-nyc:link:web:bk-flight-southwest",
                    SPIRIT,
                    "back",
                    FRONTIER,
                ],
            ),
            Route(  # a real model's route (relay run): booking.com typed in the address bar gives the
                # engine's results, whose Booking link leads to the list; no query named the cities
                "types booking.com and follows Booking's flight link",
                [
                    *flights[:2],
                    "type booking.com",
                    *flights[3:],
                    "see web:bk-flights-chi-nyc:link:web:bk-flight-southwest",
                    FRONTIER,
                ],
            ),
            Route(
                "stops at Spirit",
                [*flights, "see web:bk-flights-chi-nyc:link:web:bk-flight-southwest", SPIRIT],
                {4, 5},
            ),
            Route(
                "opens Frontier, goes back and stops on the dearer Spirit",
                [
                    *flights,
                    "see web:bk-flights-chi-nyc:link:web:bk-flight-southwest",
                    FRONTIER,
                    "back",
                    SPIRIT,
                ],
                {4, 5},
            ),
            Route(
                "stops at the first flight without reading the list",
                [*flights, "tap United - ORD to LGA, nonstop - $248 round trip"],
                {4, 5},
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
                    *upto(plan, "h_la_attractions_note", "open Notes"),
                    *note("LA", "Griffith Observatory; Getty Center; Universal Studios"),
                ],
            ),
            Route(
                "top 3 missing one",
                [
                    *upto(plan, "h_la_attractions_note", "open Notes"),
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
            Route("no note", upto(plan, "h_la_attractions_note", "open Notes"), {4, 5}),
        ],
        "h_palo_alto_itinerary_note": [
            Route(
                "another plan without seafood",
                [
                    *upto(plan, "h_palo_alto_itinerary_note", "open Notes"),
                    *note(
                        "Palo Alto",
                        "10 AM Anderson Collection, 12 PM Coupa Cafe, 2 PM Cantor Arts Center, 7 PM Tamarine",
                    ),
                ],
            ),
            Route(
                "says which restaurants it skipped",
                [
                    *upto(plan, "h_palo_alto_itinerary_note", "open Notes"),
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
                    *upto(plan, "h_palo_alto_itinerary_note", "open Notes"),
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
                    *upto(plan, "h_palo_alto_itinerary_note", "open Notes"),
                    *note("Palo Alto", "Cantor Arts Center, Baylands, lunch at Tamarine."),
                ],
                {7},
            ),
            Route(
                "no food",
                [
                    *upto(plan, "h_palo_alto_itinerary_note", "open Notes"),
                    *note("Palo Alto", "Cantor Arts Center, Anderson Collection."),
                ],
                {8, 9},
            ),
        ],
        "h_chicago_food_note": [
            Route(
                "dishes in other words",
                [
                    *upto(plan, "h_chicago_food_note", "open Notes"),
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
                    *upto(plan, "h_chicago_food_note", "open Notes"),
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
