"""A marketplace app (kind ``market``): a shop whose app has the habits of big-box retail apps.

- Filters live in a sheet: the choices made there apply only when "Show results" is tapped; closing
  the sheet with its X or Back throws them away.
- The sort order hides in the results' overflow menu (the three dots): "Sort by: Price low to high".
- Out-of-stock products are left out of results unless the sheet's "Include out of stock" is set.
- "Add to cart" opens a sheet whose "Add 2-year protection $X" box is ticked: confirming without
  unticking it puts a protection plan in the cart next to the product.
- Sponsored rows stay pinned at the top of the results whatever the sort order.

Everything else (search, product pages, the cart) is the ``shop`` app's.
"""

from __future__ import annotations

from collections.abc import Callable

from mae.device.virtual import icons, theme
from mae.device.virtual.apps import widgets
from mae.device.virtual.apps.base import Screen
from mae.device.virtual.apps.paging import PagedList
from mae.device.virtual.apps.shop import ROW_H, ShopApp
from mae.device.virtual.canvas import Canvas, ScrollView
from mae.device.virtual.content import Product, fmt_price
from mae.device.virtual.state import CartItem

RELEVANCE = "Relevance"
SORTS = (RELEVANCE, "Price low to high", "Price high to low", "Customer rating")
"""The sort orders of the overflow menu, shown as "Sort by: <order>"."""
MENU_EXTRAS = ("Share results", "Send feedback")
INCLUDE_OOS = "Include out of stock"
SHOW_RESULTS = "Show results"
PLAN_SUFFIX = ":protection"
"""A protection plan's cart entry is its product's id with this suffix."""
SHEET_CHIP_H = 92.0


def sort_label(order: str) -> str:
    return f"Sort by: {order}"


def plan_id(product_id: str) -> str:
    """The cart id of ``product_id``'s protection plan."""
    return product_id + PLAN_SUFFIX


class MarketApp(ShopApp):
    kind = "market"

    # ---------------------------------------------------------------- state of a results screen
    @staticmethod
    def _view(screen: Screen) -> dict[str, object]:
        """The applied view of a results screen: filters (group -> option), out-of-stock, sort, menu."""
        data = screen.data
        data.setdefault("filters", {})
        data.setdefault("oos", False)
        data.setdefault("sort", RELEVANCE)
        data.setdefault("menu", False)
        return data

    def in_stock(self, product: Product) -> bool:
        return product.in_stock and super().in_stock(product)

    def matches(self, query: str) -> list[Product]:
        """Every product the query finds, sponsored first (the shop's relevance order)."""
        return ShopApp.results(self, query)

    def shown(self, screen: Screen) -> list[Product]:
        """The results as the screen's applied filters, stock setting and sort order leave them."""
        view = self._view(screen)
        chosen: dict[str, str] = view["filters"]  # type: ignore[assignment]
        found = [
            p
            for p in self.matches(screen.item)
            if (view["oos"] or self.in_stock(p)) and all(p.attrs.get(g) == o for g, o in chosen.items())
        ]
        pinned = [p for p in found if p.realism == "sponsored"]
        rest = [p for p in found if p.realism != "sponsored"]
        order = view["sort"]
        if order == "Price low to high":
            rest.sort(key=lambda p: p.price)
        elif order == "Price high to low":
            rest.sort(key=lambda p: -p.price)
        elif order == "Customer rating":
            rest.sort(key=lambda p: -p.rating)
        return pinned + rest

    def groups(self, query: str) -> list[tuple[str, list[str]]]:
        """The filter sheet's groups for ``query``: each of the store's filters with its options."""
        found = self.matches(query)
        out = []
        for group in self.store.filters:
            options = sorted({p.attrs[group] for p in found if group in p.attrs})
            if options:
                out.append((group, options))
        return out

    # ---------------------------------------------------------------- behaviour
    def back(self) -> bool:
        if self.screen.name == "results" and self._view(self.screen)["menu"]:
            self.screen.data["menu"] = False
            return True
        return super().back()

    @staticmethod
    def _restart(screen: Screen) -> None:
        """Show a re-ordered or re-filtered list from its top and first page."""
        screen.scroll = 0.0
        for key in ("page", "loaded", "loading_at"):
            screen.data.pop(key, None)

    def toggle_menu(self) -> None:
        view = self._view(self.screen)
        view["menu"] = not view["menu"]

    def choose_sort(self, order: str) -> None:
        view = self._view(self.screen)
        view["menu"] = False
        view["sort"] = order
        self._restart(self.screen)
        self.event("sort", order)

    def open_filters(self) -> None:
        view = self._view(self.screen)
        pending = {"filters": dict(view["filters"]), "oos": view["oos"]}  # type: ignore[call-overload]
        self.event("open_filters", self.screen.item)
        self.push(Screen("filters", item=self.screen.item, data=pending))

    def pick(self, group: str, option: str) -> None:
        chosen = self.screen.data["filters"]
        if chosen.get(group) == option:
            del chosen[group]
        else:
            chosen[group] = option

    def toggle_oos(self) -> None:
        self.screen.data["oos"] = not self.screen.data["oos"]

    def clear_filters(self) -> None:
        self.screen.data["filters"] = {}
        self.screen.data["oos"] = False

    def show_results(self) -> None:
        """Apply the sheet's choices to the results beneath it and close the sheet."""
        sheet = self.stack.pop()
        self.host.blur()
        view = self._view(self.screen)
        view["filters"] = dict(sheet.data["filters"])
        view["oos"] = sheet.data["oos"]
        self._restart(self.screen)
        for group, option in sorted(view["filters"].items()):  # type: ignore[attr-defined]
            self.event("filter", f"{group}: {option}")
        if view["oos"]:
            self.event("filter", INCLUDE_OOS)

    def add_to_cart(self, product_id: str) -> None:
        """Ask about protection first when the product has a plan; add straight away otherwise."""
        product = self.product(product_id)
        if not self.in_stock(product):
            return
        if product.protection is None:
            super().add_to_cart(product_id)
            return
        self.push(Screen("protect", item=product_id, data={"plan": True}))

    def toggle_plan(self) -> None:
        self.screen.data["plan"] = not self.screen.data["plan"]

    def confirm_add(self) -> None:
        sheet = self.stack.pop()
        self.host.blur()
        product = self.product(sheet.item)
        super().add_to_cart(product.id)
        if sheet.data["plan"] and product.protection is not None:
            if not any(i.product_id == plan_id(product.id) for i in self.cart):
                title = f"2-year protection plan for {product.title}"
                plan = CartItem(product_id=plan_id(product.id), title=title, price=product.protection)
                self.cart.append(plan)
            self.event("add_protection", product.id)

    def remove_from_cart(self, product_id: str) -> None:
        super().remove_from_cart(product_id)
        covered = any(i.product_id == plan_id(product_id) for i in self.cart)
        if covered and not product_id.endswith(PLAN_SUFFIX):
            super().remove_from_cart(plan_id(product_id))

    # ---------------------------------------------------------------- screens
    def _row(self, c: Canvas, view: ScrollView, y: float, product: Product) -> float:
        bottom = super()._row(c, view, y, product)
        if not self.in_stock(product):
            with view.row(y + ROW_H - 80, 70, left=320):
                red = theme.RED_TEXT
                c.text(320, y + ROW_H - 45, "Out of stock", size=theme.SMALL, color=red, anchor="lm")
        return bottom

    def screen_results(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        header = self._header(c, screen, top, back=True)
        icons.icon(c, "more", c.dw - 250, top + 80, 60, theme.TEXT, "more options")
        c.tap((c.dw - 310, top + 10, c.dw - 190, top + 150), self.toggle_menu, "more options")
        view_state = self._view(screen)
        products = PagedList(self.host, screen, self.paging, self.shown(screen))
        with c.scroll_view(screen, header, bottom) as view:
            with view.row(0, 130):
                noun = "result" if len(products.items) == 1 else "results"
                c.text(48, 65, products.range_text(noun), size=theme.BODY, color=theme.TEXT_2, anchor="lm")
                count = len(view_state["filters"]) + bool(view_state["oos"])  # type: ignore[arg-type]
                label = f"Filters ({count})" if count else "Filters"
                width = c.measure(label, theme.SMALL) + 64
                widgets.chip(c, c.dw - 48 - width, 19, label, self.open_filters)
            y = 130.0
            for product in products.shown:
                y = self._row(c, view, y, product)
            y = products.footer(c, view, y, f"{self.store.id}:list_end:{screen.item}")
            view.end(y)
        if view_state["menu"]:
            self._menu(c, top)

    def _menu(self, c: Canvas, top: float) -> None:
        """The overflow menu over the results (a tap beside it closes it)."""
        c.tap((0, top, c.dw, c.dh), self.toggle_menu, "close menu")
        items = [*(sort_label(order) for order in SORTS), *MENU_EXTRAS]
        left, y = c.dw - 700, top + 150
        c.rect((left, y, c.dw - 30, y + 40 + 120 * len(items)), theme.WHITE, radius=24, outline=theme.DIVIDER)
        current = self._view(self.screen)["sort"]
        y += 20
        for item in items:
            order = item.removeprefix("Sort by: ")
            if order == current:
                icons.icon(c, "check", c.dw - 90, y + 60, 44, theme.ACCENT, "selected")
            c.text(left + 40, y + 60, item, size=theme.BODY, anchor="lm")
            c.tap((left, y, c.dw - 30, y + 120), self._menu_action(order), item)
            y += 120

    def _menu_action(self, order: str) -> Callable[[], None]:
        if order not in SORTS:
            return self.toggle_menu
        return lambda: self.choose_sort(order)

    def screen_filters(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = widgets.app_bar(c, top, "Filters", actions=[("close", "close filters", self.back)])
        footer = bottom - 180
        chosen: dict[str, str] = screen.data["filters"]
        with c.scroll_view(screen, bar, footer) as view:
            y = 10.0
            for group, options in self.groups(screen.item):
                with view.row(y, 100):
                    c.text(48, y + 55, group, size=theme.LARGE, bold=True, anchor="lm")
                y += 100
                x, row_y = 48.0, y
                rows: list[list[str]] = [[]]
                for option in options:  # wrap the chips into lines
                    width = c.measure(option, theme.SMALL) + 64 + (70 if chosen.get(group) == option else 0)
                    if x + width > c.dw - 48 and rows[-1]:
                        rows.append([])
                        x = 48.0
                    rows[-1].append(option)
                    x += width + 24
                for line in rows:
                    with view.row(row_y, SHEET_CHIP_H + 24):
                        x = 48.0
                        for option in line:
                            x = self._option(c, x, row_y, group, option, chosen.get(group) == option) + 24
                    row_y += SHEET_CHIP_H + 24
                y = row_y + 20
            with view.row(y, 150):
                widgets.divider(c, y + 5)
                c.text(48, y + 80, INCLUDE_OOS, size=theme.BODY, anchor="lm")
                self._switch(c, c.dw - 150, y + 80, bool(screen.data["oos"]))
                c.tap((0, y + 10, c.dw, y + 150), self.toggle_oos, INCLUDE_OOS)
            view.end(y + 170)
        c.rect((0, footer, c.dw, bottom), theme.WHITE)
        widgets.divider(c, footer)
        widgets.button(c, (48, footer + 30, 420, footer + 150), "Clear all", self.clear_filters, filled=False)
        widgets.button(c, (460, footer + 30, c.dw - 48, footer + 150), SHOW_RESULTS, self.show_results)

    def _option(self, c: Canvas, x: float, y: float, group: str, option: str, on: bool) -> float:
        width = c.measure(option, theme.SMALL) + 64 + (70 if on else 0)
        box = (x, y, x + width, y + SHEET_CHIP_H)
        if on:
            c.rect(box, theme.ACCENT_BG, radius=SHEET_CHIP_H / 2)
            icons.icon(c, "check", x + 50, y + SHEET_CHIP_H / 2, 40, theme.ACCENT, "selected")
        else:
            c.rect(box, theme.WHITE, radius=SHEET_CHIP_H / 2, outline=theme.DIVIDER, width=3)
        c.text(x + 32 + (70 if on else 0), y + SHEET_CHIP_H / 2, option, size=theme.SMALL, anchor="lm")
        c.tap(box, lambda: self.pick(group, option), option)
        return x + width

    @staticmethod
    def _switch(c: Canvas, cx: float, cy: float, on: bool) -> None:
        track = theme.ACCENT if on else theme.DIVIDER
        c.rect((cx - 60, cy - 32, cx + 60, cy + 32), track, radius=32)
        knob = cx + 28 if on else cx - 28
        c.ellipse((knob - 26, cy - 26, knob + 26, cy + 26), theme.WHITE)
        c.icon_element((cx - 60, cy - 32, cx + 60, cy + 32), "switch on" if on else "switch off")

    def screen_protect(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        product = self.product(screen.item)
        bar = widgets.app_bar(c, top, "Review item", actions=[("close", "close", self.back)])
        price = product.protection or 0.0
        with c.scroll_view(screen, bar, bottom) as view:
            y = 20.0
            for line in c.wrap(product.title, theme.BODY, c.dw - 96, max_lines=3):
                with view.row(y, 62):
                    c.text(48, y + 31, line, size=theme.BODY, bold=True, anchor="lm")
                y += 62
            with view.row(y, 100):
                c.text(48, y + 50, fmt_price(product.price), size=theme.LARGE, bold=True, anchor="lm")
            y += 120
            with view.row(y, 100):
                c.text(48, y + 50, "Protect your purchase", size=theme.LARGE, bold=True, anchor="lm")
            y += 100
            label = f"Add 2-year protection {fmt_price(price)}"
            with view.row(y, 130):
                box = (48, y + 33, 112, y + 97)
                if screen.data["plan"]:
                    c.rect(box, theme.ACCENT, radius=10)
                    icons.glyph(c, "check", 80, y + 65, 50, theme.WHITE)
                else:
                    c.rect(box, theme.WHITE, radius=10, outline=theme.TEXT_2, width=4)
                c.icon_element(box, "checkbox checked" if screen.data["plan"] else "checkbox")
                c.text(150, y + 65, label, size=theme.BODY, anchor="lm")
                c.tap((30, y, c.dw - 30, y + 130), self.toggle_plan, label)
            y += 130
            for line in c.wrap(
                "Covers drops, spills and breakdowns. Cancel any time within 30 days.",
                theme.SMALL,
                c.dw - 200,
            ):
                with view.row(y, 54):
                    c.text(150, y + 27, line, size=theme.SMALL, color=theme.TEXT_2, anchor="lm")
                y += 54
            y += 40
            with view.row(y, 140):
                widgets.button(
                    c, (48, y + 10, c.dw - 48, y + 130), "Add to cart", self.confirm_add, glyph="cart"
                )
            view.end(y + 160)
