"""The grader corpus's routes for research and social media (Mobile-Eval-E scenarios 2 and 4):
Chrome, Scholar, Fandango and X.

For every task, correct routes other than its reference and plausible wrong ones, each with the rubric
items (0-based) it must fail; ``benchmarks/grader_corpus.py`` replays and counts them.
"""

from __future__ import annotations

from grader_routes import FANDANGO, ORCHARD_TIMES, SCHOLAR, Plans, Route, directions_of, note, upto


def routes(plan: Plans) -> dict[str, list[Route]]:
    """This part's routes; ``plan`` holds every task's plan (reused where a route only adds to one)."""
    movie = upto(plan, "h_movie_trending_note", "open Notes")
    horror = upto(plan, "h_horror_movie_reviews_note", "open Notes")
    return {
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
                    *upto(plan, "h_llm_agent_surveys_note", "open Notes"),
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
                    *upto(plan, "h_llm_agent_surveys_note", "open Notes"),
                    *note("Surveys", "The Rise of LLM Agents; Tool Use in Language Agents"),
                ],
                {6},
            ),
            Route(
                "adds a benchmark paper",
                [
                    *upto(plan, "h_llm_agent_surveys_note", "open Notes"),
                    *note(
                        "Surveys",
                        "The Rise of LLM Agents; Tool Use in Language Agents; "
                        "Memory Mechanisms of LLM Agents; AgentBench",
                    ),
                ],
                {6},
            ),
            Route(
                "never writes the note", [*upto(plan, "h_llm_agent_surveys_note", "open Notes")], {4, 5, 6}
            ),
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
            Route(  # a real model's route (relay run): the 2-hour braise ruled out from its title in the
                # results, the video opened from the first search's results
                "video found among the recipe results",
                [
                    *plan["h_recipe_video"][:2],
                    "type Chinese beef potato onion recipe",
                    "enter",
                    "tap Chinese Beef and Potato Stir-Fry in 40 Minutes",
                    "back",
                    "tap Chinese Beef and Potato Stir-Fry with Onions, 40 Minute Recipe - YouTube",
                ],
            ),
            Route(
                "the video from the results without opening a recipe",
                [
                    *plan["h_recipe_video"][:4],
                    "tap Chinese Beef and Potato Stir-Fry with Onions, 40 Minute Recipe - YouTube",
                ],
                {3},
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
                    *upto(plan, "h_headphones_reviews_note", "open Notes"),
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
                {2, 3, 4, 6},
            ),
            Route(
                "one review only",
                [*plan["h_headphones_reviews_note"][:6], *note("Bose QC45", "Mostly positive, comfortable.")],
                {4},
            ),
            Route("no note", upto(plan, "h_headphones_reviews_note", "open Notes"), {5, 6}),
        ],
        "h_wukong_highlights_note": [
            Route(
                "highlights in other words",
                [
                    *upto(plan, "h_wukong_highlights_note", "open Notes"),
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
            Route("no note", upto(plan, "h_wukong_highlights_note", "open Notes"), {5, 6}),
            Route(
                "note about another game",
                [
                    *upto(plan, "h_wukong_highlights_note", "open Notes"),
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
                    *upto(plan, "h_x_trending_note", "open Notes"),
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
                    *note(
                        "Trending",
                        "UCL final: Madrid v Dortmund at Wembley\n"
                        "Black Myth Wukong: 10 million copies in 3 days\n"
                        "Solar eclipse: partial, Saturday morning",
                    ),
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
                {4, 6},
            ),
            Route(
                "note about two topics",
                [
                    *upto(plan, "h_x_trending_note", "open Notes"),
                    *note("Trending", "Wukong sales and the eclipse."),
                ],
                {6},
            ),
            Route("no note", upto(plan, "h_x_trending_note", "open Notes"), {5, 6}),
        ],
        "h_watercolor_creators_note": [
            Route(
                "names instead of handles",
                [
                    *upto(plan, "h_watercolor_creators_note", "open Notes"),
                    *note("Watercolor", "Ink and Water, Paint with Mei, Studio Lumen"),
                ],
            ),
            Route(
                "mentions the creator with few likes as left out",
                [
                    *upto(plan, "h_watercolor_creators_note", "open Notes"),
                    *note(
                        "Watercolor creators",
                        "@inkandwater, @paintwithmei, @studiolumen. Not Doodle Dan: only 85 likes.",
                    ),
                ],
            ),
            Route(
                "includes the creator with few likes",
                [
                    *upto(plan, "h_watercolor_creators_note", "open Notes"),
                    *note("Watercolor creators", "@inkandwater, @paintwithmei, @studiolumen, @doodledan"),
                ],
                {6},
            ),
            Route(
                "only one creator",
                [
                    *upto(plan, "h_watercolor_creators_note", "open Notes"),
                    *note("Watercolor", "@inkandwater"),
                ],
                {6},
            ),
            Route(
                "reads two posts only",
                [*plan["h_watercolor_creators_note"][:5], *note("Watercolor", "@inkandwater, @paintwithmei")],
                {6},
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
                    *upto(plan, "h_horror_movie_reviews_note", "open Notes")[9:],
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
    }
