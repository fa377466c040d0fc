"""Maps: search places, a results list, place pages (phone, hours, reviews) and directions."""

from __future__ import annotations

from mae.device.virtual import clock, icons, theme
from mae.device.virtual.apps import mapdraw, widgets
from mae.device.virtual.apps.base import App, Screen, TextField
from mae.device.virtual.apps.paging import PagedList, Paging, paging_for
from mae.device.virtual.canvas import Canvas, ScrollView
from mae.device.virtual.content import Place, fmt_count, match_score, tokens
from mae.device.virtual.state import Route

CHIPS = ("Restaurants", "Coffee", "Hotels", "Bakeries")
MAPS_PAGING = ("infinite", "load_more")
"""A maps app's result list grows as it is scrolled or asked for more; it has no numbered pages."""
RESULT_H = 410.0
STAR_GAP = 70.0
"""Space around rating stars, wide enough that OCR does not read the stars as part of the numbers."""


def minutes_text(minutes: int) -> str:
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} hr {rest} min" if rest else f"{hours} hr"


def mode_minutes(place: Place, mode: str) -> int:
    if mode == "walk":
        return max(3, round(place.distance_mi * 20))
    if mode == "transit":
        return place.drive_min * 2 + 5
    return place.drive_min


class MapsApp(App):
    kind = "maps"

    def root(self) -> Screen:
        return Screen("home", fields={"q": self._search_field("")})

    def _search_field(self, query: str) -> TextField:
        return TextField("q", "Search here", value=query, select_on_focus=True, on_submit=self.search)

    def place(self, place_id: str) -> Place:
        return next(p for p in self.host.content.maps.places if p.id == place_id)

    # ---------------------------------------------------------------- behaviour
    def search(self, query: str) -> None:
        """Show the places matching ``query`` (replacing a current results list)."""
        query = query.strip()
        if not query:
            return
        self.event("search", query)
        if self.screen.name == "results":
            self.stack.pop()
        self.push(Screen("results", item=query, fields={"q": self._search_field(query)}))

    def results(self, query: str) -> list[Place]:
        places = self.host.content.maps.places
        cities = {t for p in places for t in tokens(p.city)}
        wanted_cities = cities & set(tokens(query))
        scored = []
        for index, place in enumerate(places):
            if place.realism and not self.host.realism.on(place.realism):
                continue
            if wanted_cities and not wanted_cities & set(tokens(place.city)):
                continue
            document = " ".join([place.name, place.category, place.city, *place.tags])
            score = match_score(query, document)
            if score:
                sponsored = place.realism == "sponsored"
                scored.append((not sponsored, -score, place.distance_mi, index, place))
        return [item[4] for item in sorted(scored, key=lambda s: s[:4])]

    @property
    def paging(self) -> Paging:
        """How result lists page on this phone (see ``MAPS_PAGING``)."""
        return paging_for(self.host, self.label, MAPS_PAGING)

    def open_place(self, place_id: str) -> None:
        self.event("view_place", place_id)
        self.push(Screen("place", item=place_id))

    def directions(self, place_id: str, mode: str = "drive") -> None:
        place = self.place(place_id)
        if self.screen.name == "directions":
            self.stack.pop()
        self.push(Screen("directions", item=place_id, data={"mode": mode}))
        self.host.route = Route(
            place_id=place.id,
            destination=place.name,
            mode=mode,
            minutes=mode_minutes(place, mode),
            miles=place.distance_mi,
        )
        self.event("directions", place_id)

    def toggle_save(self, place_id: str) -> None:
        saved = self.screen.data.setdefault("saved", False)
        self.screen.data["saved"] = not saved
        self.event("save_place", place_id)

    # ---------------------------------------------------------------- home
    def _search_bar(self, c: Canvas, screen: Screen, top: float, back: bool) -> float:
        c.rect((0, top, c.dw, top + 170), theme.WHITE)
        left = 48.0
        if back:
            icons.icon(c, "back", 84, top + 85, 60, theme.TEXT, "back")
            c.tap((24, top + 15, 144, top + 155), self.back, "back arrow")
            left = 160
        widgets.text_field(c, self.host, screen.fields["q"], (left, top + 25, c.dw - 48, top + 145))
        return top + 170

    def screen_home(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        y = self._search_bar(c, screen, top, back=False)
        x = 48.0
        for label in CHIPS:
            x = widgets.chip(c, x, y + 10, label, lambda q=label: self.search(q)) + 20  # type: ignore[misc]
        map_top = y + 130
        c.layer(
            f"maps:home:{bottom - map_top:.0f}",
            (0, map_top, c.dw, bottom),
            lambda s: self._home_map(s),
            mapdraw.LAND,
        )

    def _home_map(self, s: Canvas) -> None:
        mapdraw.base_map(s, (0, 0, s.dw, s.dh))
        mapdraw.location_dot(s, mapdraw.ORIGIN[0] * s.dw, mapdraw.ORIGIN[1] * s.dh)

    # ---------------------------------------------------------------- results
    def _rating_row(self, c: Canvas, x: float, y: float, place: Place) -> None:
        ink = c.text(x, y, f"{place.rating:.1f}", size=theme.BODY, anchor="lm")
        right = icons.stars(c, ink[2] + STAR_GAP, y, place.rating)
        c.text(
            right + STAR_GAP,
            y,
            f"({fmt_count(place.reviews_count)})",
            size=theme.BODY,
            color=theme.TEXT_2,
            anchor="lm",
        )

    def _status(self, c: Canvas, x: float, y: float, place: Place) -> None:
        """Whether ``place`` is open at the phone's time (green) or closed (red), from its hours."""
        status = clock.opening_status(place.hours, place.status, clock.now(self.host.clock_s))
        color = theme.RED_TEXT if status.startswith("Closed") else theme.GREEN_TEXT
        c.text(x, y, status, size=theme.BODY, color=color, anchor="lm")

    def screen_results(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = self._search_bar(c, screen, top, back=True)
        places = PagedList(self.host, screen, self.paging, self.results(screen.item))
        widgets.divider(c, bar - 2)
        with c.scroll_view(screen, bar, bottom) as view:
            y = 0.0
            if not places.items:
                with view.row(y, 200):
                    c.text(60, y + 100, f'No results for "{screen.item}"', size=theme.BODY, anchor="lm")
            for place in places.shown:
                with view.row(y, RESULT_H):
                    c.tap((0, y, c.dw, y + RESULT_H), lambda p=place.id: self.open_place(p), place.name)  # type: ignore[misc]
                    c.text(48, y + 40, place.name, size=theme.LARGE, bold=True)
                    if place.realism == "sponsored":
                        c.text(
                            c.dw - 48, y + 40, "Sponsored", size=theme.SMALL, color=theme.TEXT_2, anchor="ra"
                        )
                    self._rating_row(c, 48, y + 135, place)
                    detail = ", ".join(
                        x for x in (place.category, place.price, f"{place.distance_mi:g} mi") if x
                    )
                    c.text(48, y + 200, detail, size=theme.BODY, color=theme.TEXT_2, anchor="lm")
                    self._status(c, 48, y + 262, place)
                    widgets.button(
                        c,
                        (48, y + 300, 388, y + 385),
                        "Directions",
                        lambda p=place.id: self.directions(p),  # type: ignore[misc]
                        glyph="directions",
                    )
                    widgets.divider(c, y + RESULT_H - 2)
                    c.mark_seen(f"maps:result:{place.id}")
                y += RESULT_H
            y = places.footer(c, view, y, f"maps:list_end:{screen.item}")
            view.end(y)

    # ---------------------------------------------------------------- place page
    def screen_place(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        place = self.place(screen.item)
        bar = widgets.app_bar(c, top, place.name, back=self.back, size=theme.LARGE)
        with c.scroll_view(screen, bar, bottom) as view:
            with view.row(0, 360):
                mapdraw.base_map(c, (0, 0, c.dw, 360), labels=False)
                mapdraw.pin(c, c.dw / 2, 200, place.name)
            y = 380.0
            for line in c.wrap(place.name, theme.TITLE, c.dw - 96):
                with view.row(y, 80):
                    c.text(48, y + 10, line, size=theme.TITLE, bold=True)
                y += 80
            with view.row(y, 80):
                self._rating_row(c, 48, y + 40, place)
                c.mark_seen(f"maps:rating:{place.id}")
            y += 80
            with view.row(y, 70):
                detail = ", ".join(x for x in (place.category, place.price, f"{place.distance_mi:g} mi") if x)
                c.text(48, y + 35, detail, size=theme.BODY, color=theme.TEXT_2, anchor="lm")
            y += 70
            with view.row(y, 70):
                self._status(c, 48, y + 35, place)
                c.mark_seen(f"maps:hours:{place.id}")
            y += 90
            y = self._actions(c, view, y, place)
            for glyph_name, text, seen in (
                ("pin", place.address, "address"),
                ("clock", f"Hours: {place.hours}", "hours"),
                ("phone", place.phone, "phone"),
            ):
                with view.row(y, 120):
                    icons.icon(c, glyph_name, 100, y + 60, 56, theme.ACCENT, glyph_name)
                    c.text(180, y + 60, text, size=theme.BODY, anchor="lm")
                    c.mark_seen(f"maps:{seen}:{place.id}")
                y += 120
            if place.highlights:
                y = self._section(c, view, y, "Highlights")
                for item in place.highlights:
                    for index, line in enumerate(c.wrap(item, theme.BODY, c.dw - 180)):
                        with view.row(y, 66):
                            if index == 0:
                                c.ellipse((80, y + 25, 96, y + 41), theme.TEXT_2)
                            c.text(120, y + 33, line, size=theme.BODY, anchor="lm")
                            c.mark_seen(f"maps:highlights:{place.id}")
                        y += 66
                    y += 10
            y = self._section(c, view, y, f"Reviews ({fmt_count(place.reviews_count)})")
            for index, review in enumerate(place.reviews):
                with view.row(y, 110):
                    widgets.avatar(c, 90, y + 55, 84, widgets.color_for(review.author), "profile picture")
                    c.text(160, y + 30, review.author, size=theme.BODY, bold=True, anchor="lm")
                    icons.stars(c, 160, y + 85, review.rating, size=30)
                    c.mark_seen(f"maps:review:{place.id}:{index}")
                y += 120
                for line in c.wrap(review.text, theme.BODY, c.dw - 110):
                    with view.row(y, 62):
                        c.text(48, y + 31, line, size=theme.BODY, anchor="lm")
                        c.mark_seen(f"maps:review:{place.id}:{index}")
                    y += 62
                y += 40
            view.end(y + 40)

    def _section(self, c: Canvas, view: ScrollView, y: float, title: str) -> float:
        with view.row(y, 110):
            widgets.divider(c, y + 10)
            c.text(48, y + 70, title, size=theme.LARGE, bold=True, anchor="lm")
        return y + 130

    def _actions(self, c: Canvas, view: ScrollView, y: float, place: Place) -> float:
        saved = bool(self.screen.data.get("saved"))
        buttons = [
            ("directions", "Directions", lambda: self.directions(place.id)),
            ("phone", "Call", None),
            ("bookmark", "Saved" if saved else "Save", lambda: self.toggle_save(place.id)),
            ("share", "Share", None),
        ]
        with view.row(y, 200):
            for index, (glyph_name, label, action) in enumerate(buttons):
                cx = 135 + index * 270
                filled = index == 0
                c.ellipse((cx - 60, y, cx + 60, y + 120), theme.ACCENT if filled else theme.ACCENT_BG)
                icons.icon(
                    c, glyph_name, cx, y + 60, 60, theme.WHITE if filled else theme.ACCENT, label.lower()
                )
                c.text(cx, y + 165, label, size=theme.SMALL, color=theme.ACCENT, anchor="mm")
                if action is not None:
                    c.tap((cx - 120, y - 10, cx + 120, y + 200), action, label)
        return y + 220

    # ---------------------------------------------------------------- directions
    def screen_directions(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        place = self.place(screen.item)
        mode = str(screen.data.get("mode", "drive"))
        panel = top + 430
        icons.icon(c, "back", 84, top + 80, 60, theme.TEXT, "back")
        c.tap((24, top + 10, 144, top + 150), self.back, "back arrow")
        for index, (glyph_name, text) in enumerate((("person", "Your location"), ("pin", place.name))):
            y0 = top + 30 + index * 130
            c.rect((160, y0, c.dw - 48, y0 + 105), theme.FIELD_BG, radius=20)
            icons.icon(c, glyph_name, 215, y0 + 52, 48, theme.ACCENT if index == 0 else "#EA4335", glyph_name)
            c.text(
                270, y0 + 52, widgets.fit_tail(c, text, theme.BODY, c.dw - 360), size=theme.BODY, anchor="lm"
            )
        x = 48.0
        for glyph_name, key in (("car", "drive"), ("walk", "walk"), ("bus", "transit")):
            label = minutes_text(mode_minutes(place, key))
            width = c.measure(label, theme.SMALL) + 140
            box = (x, top + 300, x + width, top + 400)
            selected = key == mode
            c.rect(
                box, theme.ACCENT_BG if selected else theme.WHITE, radius=50, outline=theme.DIVIDER, width=3
            )
            icons.icon(c, glyph_name, x + 55, top + 350, 48, theme.ACCENT if selected else theme.TEXT_2, key)
            c.text(x + 95, top + 350, label, size=theme.SMALL, anchor="lm")
            c.tap(box, lambda m=key: self.directions(place.id, m), key)  # type: ignore[misc]
            x += width + 24
        sheet = bottom - 380
        map_box = (0.0, panel, c.dw, sheet)
        mapdraw.base_map(c, map_box, labels=False)
        mapdraw.route(c, map_box, (place.x, place.y))
        c.rect((0, sheet, c.dw, bottom), theme.WHITE)
        minutes = mode_minutes(place, mode)
        c.text(
            48,
            sheet + 80,
            f"{minutes_text(minutes)} ({place.distance_mi:g} mi)",
            size=theme.TITLE,
            bold=True,
            anchor="lm",
        )
        c.text(
            48,
            sheet + 160,
            f"Fastest route to {place.name}",
            size=theme.BODY,
            color=theme.TEXT_2,
            anchor="lm",
        )
        widgets.button(
            c,
            (48, sheet + 230, 348, sheet + 340),
            "Start",
            lambda: self.event("start_navigation", place.id),
            glyph="directions",
        )
        c.mark_seen(f"maps:route:{place.id}")
