"""Trips: a hotel booking app (``trips.json``) with the habits of real travel apps.

- The destination is a place chosen from the suggestions under the search box; Enter commits the top
  suggestion, the most popular place of that name (Springfield, Missouri for "Springfield").
- The date picker (``tripsdates``) always opens on the current month; later months are one ">" tap
  each, or one choice in the list the month title opens.
- The filter sheet's choices apply only when "Show results" is tapped (closing it discards them).
- The sort order is behind the results' overflow menu (⋮ → "Sort by").
- A sponsored hotel heads the results whatever the filters and the sort.
- "Reserve" opens a booking form (``tripsform``) that checks each field's format when submitted.
"""

from __future__ import annotations

from mae.device.virtual import icons, theme
from mae.device.virtual.apps import tripsform, widgets
from mae.device.virtual.apps.base import Screen, TextField
from mae.device.virtual.apps.tripsdates import HEADER, HEADER_TEXT, DatePicker, fmt_day, nights, title_bar
from mae.device.virtual.canvas import Canvas, ScrollView
from mae.device.virtual.content import City, Hotel, fmt_count

ROW_H = 400.0
MAX_SUGGESTIONS = 6
FILTERS: dict[str, str] = {
    "free_cancellation": "Free cancellation",
    "breakfast": "Breakfast included",
    "pets": "Pet friendly",
    "parking": "Free parking",
    "pool": "Pool",
    "rating_8": "Guest rating 8+",
    "stars_4": "4 stars and up",
}
SORTS: dict[str, str] = {
    "recommended": "Recommended",
    "price": "Price (lowest first)",
    "rating": "Guest rating (highest first)",
    "distance": "Distance from downtown",
}
MENU = ("Sort by", "Clear filters", "New search")


def rating_word(rating: float) -> str:
    if rating >= 9:
        return "Wonderful"
    if rating >= 8:
        return "Excellent"
    if rating >= 7:
        return "Very good"
    return "Good"


def passes(hotel: Hotel, key: str) -> bool:
    """Whether ``hotel`` meets filter ``key`` (one of ``FILTERS``)."""
    if key == "rating_8":
        return hotel.rating >= 8
    if key == "stars_4":
        return hotel.stars >= 4
    return bool(getattr(hotel, key))


def sort_key(hotel: Hotel, order: str) -> tuple[float, ...]:
    if order == "price":
        return (hotel.price, hotel.rank)
    if order == "rating":
        return (-hotel.rating, hotel.rank)
    if order == "distance":
        return (hotel.distance_mi, hotel.rank)
    return (hotel.rank,)


class TripsApp(DatePicker):
    kind = "trips"

    @property
    def status_color(self) -> str:
        return HEADER

    def root(self) -> Screen:
        return Screen("home", data={"city": "", "check_in": None, "check_out": None, "error": ""})

    # ---------------------------------------------------------------- content
    def city(self, city_id: str) -> City:
        return next(c for c in self.host.content.trips.cities if c.id == city_id)

    def hotel(self, hotel_id: str) -> Hotel:
        return next(h for h in self.host.content.trips.hotels if h.id == hotel_id)

    def suggestions(self, query: str) -> list[City]:
        """Places whose words start with every word typed, most popular first."""
        wanted = query.lower().replace(",", " ").split()
        if not wanted:
            return []
        found = []
        for city in self.host.content.trips.cities:
            words = f"{city.name} {city.region} {city.abbr}".lower().replace(",", " ").split()
            if all(any(w.startswith(part) for w in words) for part in wanted):
                found.append(city)
        return sorted(found, key=lambda c: -c.popularity)[:MAX_SUGGESTIONS]

    def results(self, city_id: str, filters: list[str], order: str) -> list[Hotel]:
        """The hotels of a search: sponsored ones first (whatever the filters), then the rest."""
        shown = [
            h
            for h in self.host.content.trips.hotels
            if h.city == city_id and (not h.realism or self.host.realism.on(h.realism))
        ]
        ads = sorted((h for h in shown if h.realism == "sponsored"), key=lambda h: h.rank)
        rest = [h for h in shown if h.realism != "sponsored" and all(passes(h, f) for f in filters)]
        return ads + sorted(rest, key=lambda h: sort_key(h, order))

    # ---------------------------------------------------------------- behaviour
    def open_destination(self) -> None:
        city = str(self.trip["city"])
        field = TextField("where", "Where to?", value=self.city(city).name if city else "")
        field.select_on_focus = True
        field.on_submit = self._commit_top
        self.push(Screen("destination", fields={"where": field}))
        self.host.focus(field, select=True)

    def _commit_top(self, query: str) -> None:
        found = self.suggestions(query)
        if found:
            self.choose_city(found[0].id)
        else:
            self.host.focus(self.screen.fields["where"])

    def choose_city(self, city_id: str) -> None:
        self.event("destination", city_id)
        self.trip["city"] = city_id
        self.trip["error"] = ""
        self.stack = self.stack[:1]
        self.host.blur()

    def search(self) -> None:
        picked = self.dates()
        if not self.trip["city"]:
            self.trip["error"] = "Choose a destination to search."
            return
        if picked is None:
            self.trip["error"] = "Choose your check-in and check-out dates."
            return
        city = str(self.trip["city"])
        self.event("search", f"{city}|{picked[0].isoformat()}|{picked[1].isoformat()}")
        self.push(Screen("results", item=city, data={"filters": [], "sort": "recommended", "menu": False}))

    def toggle_menu(self, shown: bool) -> None:
        self.screen.data["menu"] = shown

    def menu_choice(self, choice: str) -> None:
        self.screen.data["menu"] = False
        if choice == "Sort by":
            self.push(Screen("sort", item=self.screen.item))
        elif choice == "Clear filters":
            self.screen.data["filters"] = []
            self.screen.scroll = 0.0
        else:
            self.stack = self.stack[:1]

    def choose_sort(self, order: str) -> None:
        self.back()
        self.screen.data["sort"] = order
        self.screen.scroll = 0.0
        self.event("sort", order)

    def open_filters(self) -> None:
        applied = list(self.screen.data["filters"])
        self.push(Screen("filters", item=self.screen.item, data={"pending": applied}))

    def toggle_filter(self, key: str) -> None:
        pending: list[str] = self.screen.data["pending"]
        if key in pending:
            pending.remove(key)
        else:
            pending.append(key)

    def show_results(self) -> None:
        chosen = [key for key in FILTERS if key in self.screen.data["pending"]]
        self.back()
        self.screen.data["filters"] = chosen
        self.screen.scroll = 0.0
        for key in chosen:
            self.event("filter", key)

    def open_hotel(self, hotel_id: str) -> None:
        self.event("view_hotel", hotel_id)
        self.push(Screen("hotel", item=hotel_id))

    def reserve(self, hotel_id: str) -> None:
        self.push(tripsform.form_screen(hotel_id))

    # ---------------------------------------------------------------- pieces
    def _bar(self, c: Canvas, top: float, title: str, back: bool = True) -> float:
        return title_bar(c, top, title, self.back if back else None)

    def _box(self, c: Canvas, y: float, glyph: str, text: str, action: widgets.Action, label: str) -> None:
        box = (48, y, c.dw - 48, y + 150)
        c.rect(box, theme.WHITE, radius=20, outline="#FFB700", width=6)
        icons.icon(c, glyph, 120, y + 75, 56, theme.TEXT_2, glyph)
        c.text(190, y + 75, text, size=theme.BODY, anchor="lm")
        c.tap(box, action, label)

    def _tag(self, c: Canvas, x: float, y: float, hotel: Hotel) -> None:
        if hotel.free_cancellation:
            c.text(
                x, y, "Free cancellation", size=theme.SMALL, color=theme.GREEN_TEXT, bold=True, anchor="lm"
            )
        else:
            c.text(x, y, "Non-refundable", size=theme.SMALL, color=theme.RED_TEXT, anchor="lm")

    def _row(self, c: Canvas, view: ScrollView, y: float, hotel: Hotel, stay: int) -> float:
        with view.row(y, ROW_H):
            c.tap((0, y, c.dw, y + ROW_H), lambda h=hotel.id: self.open_hotel(h), hotel.name)  # type: ignore[misc]
            c.rect((48, y + 40, 288, y + 280), widgets.color_for(hotel.id), radius=24)
            icons.glyph(c, "pin", 168, y + 160, 110, theme.WHITE)
            c.icon_element((48, y + 40, 288, y + 280), "hotel photo")
            ty = y + 60
            for line in c.wrap(hotel.name, theme.LARGE, c.dw - 368, max_lines=2):
                c.text(320, ty, line, size=theme.LARGE, bold=True, anchor="lm")
                ty += 60
            c.text(
                320, ty + 5, f"{hotel.stars}-star · {hotel.distance_mi:.1f} mi from downtown",
                size=theme.SMALL, color=theme.TEXT_2, anchor="lm",
            )  # fmt: skip
            score = (
                f"{hotel.rating:.1f} {rating_word(hotel.rating)} · {fmt_count(hotel.reviews_count)} reviews"
            )
            c.text(320, ty + 60, score, size=theme.SMALL, anchor="lm")
            self._tag(c, 320, ty + 115, hotel)
            c.text(c.dw - 48, y + 330, f"${hotel.price} per night", size=theme.LARGE, bold=True, anchor="rm")
            c.text(
                320,
                y + 330,
                f"${hotel.price * stay} total",
                size=theme.SMALL,
                color=theme.TEXT_2,
                anchor="lm",
            )
            if hotel.realism == "sponsored":
                c.rect((48, y + 300, 150, y + 360), "#FFF4CC", radius=10)
                c.text(99, y + 330, "Ad", size=theme.SMALL, bold=True, anchor="mm")
            widgets.divider(c, y + ROW_H - 2)
            c.mark_seen(f"trips:hotel:{hotel.id}")
        return y + ROW_H

    # ---------------------------------------------------------------- screens
    def screen_home(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = self._bar(c, top, "Trips", back=False)
        c.rect((0, bar, c.dw, bar + 200), HEADER)
        c.text(
            48,
            bar + 90,
            "Find your next stay",
            size=theme.HEADLINE,
            bold=True,
            color=HEADER_TEXT,
            anchor="lm",
        )
        y = bar + 230
        city = str(screen.data["city"])
        where = self.city(city).label if city else "Where to?"
        self._box(c, y, "search", where, self.open_destination, "Where to?")
        picked = self.dates()
        when = f"{fmt_day(picked[0])} - {fmt_day(picked[1])}" if picked else "Check-in date - Check-out date"
        self._box(c, y + 180, "clock", when, self.open_calendar, "Dates")
        c.rect((48, y + 360, c.dw - 48, y + 510), theme.WHITE, radius=20, outline="#FFB700", width=6)
        icons.icon(c, "person", 120, y + 435, 56, theme.TEXT_2, "guests")
        c.text(190, y + 435, "2 adults · 0 children · 1 room", size=theme.BODY, anchor="lm")
        widgets.button(c, (48, y + 560, c.dw - 48, y + 700), "Search", self.search)
        if screen.data["error"]:
            c.text(48, y + 760, str(screen.data["error"]), size=theme.BODY, color=theme.RED_TEXT, anchor="lm")

    def screen_destination(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = self._bar(c, top, "Where to?")
        field = screen.fields["where"]
        widgets.text_field(c, self.host, field, (48, bar + 30, c.dw - 48, bar + 150))
        with c.scroll_view(screen, bar + 180, bottom) as view:
            y = 0.0
            for city in self.suggestions(field.value):
                with view.row(y, 170):
                    c.tap((0, y, c.dw, y + 170), lambda i=city.id: self.choose_city(i), city.label)  # type: ignore[misc]
                    icons.icon(c, "pin", 100, y + 85, 56, theme.TEXT_2, "place")
                    c.text(180, y + 60, city.name, size=theme.LARGE, bold=True, anchor="lm")
                    c.text(180, y + 120, city.region, size=theme.BODY, color=theme.TEXT_2, anchor="lm")
                    widgets.divider(c, y + 168, left=180)
                y += 170
            view.end(y)

    def screen_results(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        city = self.city(screen.item)
        picked = self.dates()
        assert picked is not None
        stay = nights(*picked)
        bar = self._bar(c, top, f"{city.name}, {city.abbr}")
        mid = top + theme.APPBAR_H / 2
        icons.icon(c, "more", c.dw - 70, mid, 60, HEADER_TEXT, "more options")
        c.tap((c.dw - 140, mid - 70, c.dw, mid + 70), lambda: self.toggle_menu(True), "more options")
        c.rect((0, bar, c.dw, bar + 130), theme.SURFACE)
        when = f"{picked[0]:%b} {picked[0].day} - {picked[1]:%b} {picked[1].day} · 2 adults"
        c.text(48, bar + 65, when, size=theme.BODY, anchor="lm")
        count = len(screen.data["filters"])
        label = f"Filters ({count})" if count else "Filters"
        widgets.chip(
            c, c.dw - 48 - c.measure(label, theme.SMALL) - 64, bar + 20, label, self.open_filters, 90
        )
        c.tap(
            (c.dw - 48 - c.measure(label, theme.SMALL) - 64, bar + 20, c.dw - 48, bar + 110),
            self.open_filters,
            "Filters",
        )
        hotels = self.results(screen.item, list(screen.data["filters"]), str(screen.data["sort"]))
        with c.scroll_view(screen, bar + 130, bottom) as view:
            with view.row(0, 100):
                noun = "property" if len(hotels) == 1 else "properties"
                c.text(
                    48, 50, f"{len(hotels)} {noun} found", size=theme.BODY, color=theme.TEXT_2, anchor="lm"
                )
            y = 100.0
            for hotel in hotels:
                y = self._row(c, view, y, hotel, stay)
            y = widgets.list_end(c, view, y, f"trips:list_end:{screen.item}")
            view.end(y)
        if screen.data["menu"]:
            c.tap((0, top, c.dw, bottom), lambda: self.toggle_menu(False), "close menu")
            box = (c.dw - 560, top + 40, c.dw - 30, top + 40 + 140 * len(MENU))
            c.rect(box, theme.WHITE, radius=16, outline=theme.DIVIDER, width=3)
            for index, choice in enumerate(MENU):
                ry = top + 40 + 140 * index
                c.text(c.dw - 510, ry + 70, choice, size=theme.BODY, anchor="lm")
                c.tap((c.dw - 560, ry, c.dw - 30, ry + 140), lambda ch=choice: self.menu_choice(ch), choice)  # type: ignore[misc]

    def screen_sort(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = self._bar(c, top, "Sort by")
        current = str(self.stack[-2].data["sort"])
        y = bar + 30
        for key, label in SORTS.items():
            cy = y + 75
            c.ellipse((60, cy - 30, 120, cy + 30), theme.WHITE, outline=theme.ACCENT, width=5)
            if key == current:
                c.ellipse((75, cy - 15, 105, cy + 15), theme.ACCENT)
            c.text(160, cy, label, size=theme.BODY, anchor="lm")
            c.tap((0, y, c.dw, y + 150), lambda k=key: self.choose_sort(k), label)  # type: ignore[misc]
            widgets.divider(c, y + 148)
            y += 150

    def screen_filters(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = widgets.app_bar(c, top, "Filters", actions=[("close", "close filters", self.back)])
        pending: list[str] = screen.data["pending"]
        footer = bottom - 200
        with c.scroll_view(screen, bar, footer) as view:
            y = 0.0
            with view.row(y, 110):
                c.text(48, 60, "Popular filters", size=theme.LARGE, bold=True, anchor="lm")
            y += 110
            for key, label in FILTERS.items():
                with view.row(y, 150):
                    cy = y + 75
                    on = key in pending
                    c.rect(
                        (60, cy - 32, 124, cy + 32),
                        theme.ACCENT if on else theme.WHITE,
                        radius=8,
                        outline=theme.ACCENT,
                        width=5,
                    )
                    if on:
                        icons.glyph(c, "check", 92, cy, 50, theme.WHITE)
                    c.text(170, cy, label, size=theme.BODY, anchor="lm")
                    c.tap((0, y, c.dw, y + 150), lambda k=key: self.toggle_filter(k), label)  # type: ignore[misc]
                    widgets.divider(c, y + 148, left=170)
                y += 150
            view.end(y)
        c.rect((0, footer, c.dw, bottom), theme.WHITE)
        widgets.divider(c, footer)
        widgets.button(c, (48, footer + 35, c.dw - 48, footer + 165), "Show results", self.show_results)

    def screen_hotel(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        hotel = self.hotel(screen.item)
        picked = self.dates()
        assert picked is not None
        stay = nights(*picked)
        bar = self._bar(c, top, "Property")
        with c.scroll_view(screen, bar, bottom) as view:
            with view.row(0, 460):
                c.rect((48, 30, c.dw - 48, 430), widgets.color_for(hotel.id), radius=24)
                icons.glyph(c, "pin", c.dw / 2, 230, 200, theme.WHITE)
                c.icon_element((48, 30, c.dw - 48, 430), "hotel photo")
            y = 470.0
            for line in c.wrap(hotel.name, theme.TITLE, c.dw - 96):
                with view.row(y, 80):
                    c.text(48, y + 40, line, size=theme.TITLE, bold=True, anchor="lm")
                y += 80
            rating = (
                f"{hotel.rating:.1f} {rating_word(hotel.rating)} · {fmt_count(hotel.reviews_count)} reviews"
            )
            lines = [
                f"{hotel.stars}-star hotel",
                hotel.address,
                f"{hotel.distance_mi:.1f} mi from downtown",
                rating,
            ]
            for text in lines:
                with view.row(y, 64):
                    c.text(48, y + 32, text, size=theme.BODY, color=theme.TEXT_2, anchor="lm")
                y += 64
            with view.row(y, 180):
                c.rect((48, y + 10, c.dw - 48, y + 170), theme.SURFACE, radius=20)
                c.text(80, y + 60, f"${hotel.price} per night", size=theme.TITLE, bold=True, anchor="lm")
                dates = (
                    f"{stay} nights, {fmt_day(picked[0])} - {fmt_day(picked[1])}: ${hotel.price * stay} total"
                )
                c.text(80, y + 130, dates, size=theme.SMALL, color=theme.TEXT_2, anchor="lm")
                c.mark_seen(f"trips:price:{hotel.id}")
            y += 190
            policy = (
                "Free cancellation until 2 days before check-in"
                if hotel.free_cancellation
                else "Non-refundable: you pay the full price if you cancel"
            )
            with view.row(y, 80):
                colour = theme.GREEN_TEXT if hotel.free_cancellation else theme.RED_TEXT
                c.text(48, y + 40, policy, size=theme.BODY, color=colour, anchor="lm")
                c.mark_seen(f"trips:policy:{hotel.id}")
            y += 90
            with view.row(y, 160):
                widgets.button(c, (48, y + 10, c.dw - 48, y + 150), "Reserve", lambda: self.reserve(hotel.id))
            y += 170
            with view.row(y, 100):
                c.text(48, y + 60, "Amenities", size=theme.LARGE, bold=True, anchor="lm")
            y += 100
            amenities = [FILTERS[k] for k in ("breakfast", "pets", "parking", "pool") if getattr(hotel, k)]
            for text in amenities:
                with view.row(y, 64):
                    icons.glyph(c, "check", 90, y + 32, 40, theme.GREEN_TEXT)
                    c.text(140, y + 32, text, size=theme.BODY, anchor="lm")
                y += 64
            if not amenities:
                with view.row(y, 64):
                    c.text(48, y + 32, "No breakfast, pets, parking or pool", size=theme.BODY, anchor="lm")
                y += 64
            view.end(y + 40)

    def screen_book(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        picked = self.dates()
        assert picked is not None
        bar = self._bar(c, top, "Your details")
        tripsform.draw_form(c, self.host, screen, self.hotel(screen.item), picked, bar, bottom, self._submit)

    def _submit(self) -> None:
        screen = self.screen
        picked = self.dates()
        assert picked is not None
        if not tripsform.validate(screen):
            self.event("booking_rejected", ",".join(sorted(screen.data["errors"])))
            return
        hotel = self.hotel(screen.item)
        self.event("book", f"{hotel.id}|{picked[0].isoformat()}|{picked[1].isoformat()}")
        self.event("guest", tripsform.guest_value(screen))
        self.stack.pop()
        self.push(Screen("confirmed", item=hotel.id))

    def screen_confirmed(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        picked = self.dates()
        assert picked is not None
        bar = self._bar(c, top, "Booking confirmed", back=False)
        tripsform.draw_confirmation(
            c, self.hotel(screen.item), picked, bar, lambda: self.menu_choice("New search")
        )
