"""A shopping app (one per store in shopping.json): search, results with prices and sale badges,
product pages with "Add to cart", and a cart."""

from __future__ import annotations

from mae.device.virtual import icons, theme
from mae.device.virtual.apps import widgets
from mae.device.virtual.apps.base import App, Screen, TextField
from mae.device.virtual.apps.paging import PagedList, Paging, paging_for
from mae.device.virtual.canvas import Canvas, ScrollView
from mae.device.virtual.content import Product, Store, fmt_count, fmt_price, match_score
from mae.device.virtual.state import CartItem

ROW_H = 420.0
STAR_GAP = 70.0
FEED_SIZE = 4


class ShopApp(App):
    kind = "shop"

    @property
    def store(self) -> Store:
        return self.host.content.store(self.spec.store)

    @property
    def status_color(self) -> str:
        return self.store.header

    def root(self) -> Screen:
        return Screen("home", fields={"q": self._field("")})

    def _field(self, query: str) -> TextField:
        return TextField(
            "q", self.store.search_hint, value=query, select_on_focus=True, on_submit=self.search
        )

    def product(self, product_id: str) -> Product:
        return next(p for p in self.store.products if p.id == product_id)

    @property
    def cart(self) -> list[CartItem]:
        return self.host.carts.setdefault(self.store.id, [])

    # ---------------------------------------------------------------- behaviour
    def search(self, query: str) -> None:
        query = query.strip()
        if not query:
            return
        self.event("search", query)
        if self.screen.name == "results":
            self.stack.pop()
        self.push(Screen("results", item=query, fields={"q": self._field(query)}))

    def results(self, query: str) -> list[Product]:
        scored = []
        for index, product in enumerate(self.store.products):
            if product.realism and not self.host.realism.on(product.realism):
                continue
            score = match_score(query, " ".join([product.title, *product.keywords]))
            if score:
                sponsored = product.realism == "sponsored"
                scored.append((not sponsored, -score, index, product))
        return [s[3] for s in sorted(scored, key=lambda s: s[:3])]

    @property
    def paging(self) -> Paging:
        """How result lists page on this phone (any of the styles)."""
        return paging_for(self.host, self.label)

    def feed(self) -> list[Product]:
        """The home feed: ``FEED_SIZE`` of the store's featured products, drawn per seed with realism on.

        The featured products are everyday items, not the ones tasks ask about: finding those takes a
        search, as in a real shop whose home feed shows what it promotes today."""
        featured = [self.product(pid) for pid in self.store.featured]
        settings = self.host.realism.settings
        if settings.enabled:
            featured = settings.rng("feed", self.store.id).sample(featured, len(featured))
        return featured[:FEED_SIZE]

    def open_product(self, product_id: str) -> None:
        self.event("view_product", product_id)
        self.push(Screen("product", item=product_id))

    def in_stock(self, product: Product) -> bool:
        """Whether ``product`` can be bought now."""
        return product.realism != "out_of_stock"

    def add_to_cart(self, product_id: str) -> None:
        product = self.product(product_id)
        if not self.in_stock(product):
            return
        for item in self.cart:
            if item.product_id == product_id:
                item.quantity += 1
                break
        else:
            self.cart.append(CartItem(product_id=product.id, title=product.title, price=product.price))
        self.event("add_to_cart", product_id)

    def remove_from_cart(self, product_id: str) -> None:
        self.host.carts[self.store.id] = [i for i in self.cart if i.product_id != product_id]
        self.event("remove_from_cart", product_id)

    def open_cart(self) -> None:
        self.event("view_cart", self.store.id)
        self.push(Screen("cart"))

    # ---------------------------------------------------------------- pieces
    def _header(self, c: Canvas, screen: Screen, top: float, back: bool) -> float:
        bottom = top + 300
        c.rect((0, top, c.dw, bottom), self.store.header)
        c.text(48 if not back else 168, top + 80, self.store.name, size=theme.TITLE, bold=True, anchor="lm")
        if back:
            icons.icon(c, "back", 84, top + 80, 60, theme.TEXT, "back")
            c.tap((24, top + 10, 144, top + 150), self.back, "back arrow")
        count = sum(i.quantity for i in self.cart)
        icons.icon(c, "cart", c.dw - 110, top + 80, 72, theme.TEXT, "cart")
        if count:
            c.text(c.dw - 50, top + 80, str(count), size=theme.BODY, bold=True, anchor="lm")
        c.tap((c.dw - 200, top + 10, c.dw, top + 150), self.open_cart, "cart")
        widgets.text_field(
            c, self.host, screen.fields["q"], (48, top + 165, c.dw - 48, top + 280), bg=theme.WHITE
        )
        return bottom

    def _rating(self, c: Canvas, x: float, y: float, product: Product, size: float = 32) -> None:
        ink = c.text(x, y, f"{product.rating:.1f}", size=theme.SMALL, anchor="lm")
        right = icons.stars(c, ink[2] + STAR_GAP, y, product.rating, size=size)
        c.text(
            right + STAR_GAP,
            y,
            f"({fmt_count(product.ratings_count)})",
            size=theme.SMALL,
            color=theme.TEXT_2,
            anchor="lm",
        )

    def _price(self, c: Canvas, x: float, y: float, product: Product, size: float = theme.LARGE) -> float:
        ink = c.text(x, y, fmt_price(product.price), size=size, bold=True, anchor="lm")
        if product.was_price is not None:
            c.text(
                ink[2] + 40,
                y,
                f"Was {fmt_price(product.was_price)}",
                size=theme.SMALL,
                color=theme.TEXT_2,
                anchor="lm",
            )
        return ink[2]

    def _badge(self, c: Canvas, x: float, y: float, label: str) -> None:
        width = c.measure(label, theme.SMALL) + 48
        c.rect((x, y, x + width, y + 62), theme.RED_BG, radius=12)
        c.text(x + 24, y + 31, label, size=theme.SMALL, color=theme.RED_TEXT, bold=True, anchor="lm")

    def _picture(self, c: Canvas, box: tuple[float, float, float, float], product: Product) -> None:
        left, top, right, bottom = box
        c.rect(box, theme.SURFACE_DIM, radius=24)
        size = min(right - left, bottom - top) * 0.55
        glyph = product.image.symbol if product.image.symbol in icons.GLYPHS else "cart"
        icons.glyph(c, glyph, (left + right) / 2, (top + bottom) / 2, size, product.image.color)
        c.icon_element(box, "product photo")

    def _row(self, c: Canvas, view: ScrollView, y: float, product: Product) -> float:
        with view.row(y, ROW_H):
            c.tap((0, y, c.dw, y + ROW_H), lambda p=product.id: self.open_product(p), product.title)  # type: ignore[misc]
            self._picture(c, (48, y + 40, 288, y + 280), product)
            ty = y + 60
            for line in c.wrap(product.title, theme.BODY, c.dw - 368, max_lines=2):
                c.text(320, ty, line, size=theme.BODY, anchor="lm")
                ty += 56
            self._rating(c, 320, y + 180, product)
            self._price(c, 320, y + 255, product)
            if product.realism == "sponsored":
                c.text(c.dw - 48, y + 255, "Sponsored", size=theme.SMALL, color=theme.TEXT_2, anchor="rm")
            if product.badge:
                self._badge(c, 320, y + 310, product.badge)
            widgets.divider(c, y + ROW_H - 2)
            c.mark_seen(f"{self.store.id}:price:{product.id}")
        return y + ROW_H

    # ---------------------------------------------------------------- screens
    def screen_home(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        header = self._header(c, screen, top, back=False)
        featured = self.feed()
        with c.scroll_view(screen, header, bottom) as view:
            with view.row(0, 130):
                c.text(48, 75, "Deals for you", size=theme.LARGE, bold=True, anchor="lm")
            y = 130.0
            for product in featured:
                y = self._row(c, view, y, product)
            view.end(y)

    def screen_results(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        header = self._header(c, screen, top, back=True)
        products = PagedList(self.host, screen, self.paging, self.results(screen.item))
        with c.scroll_view(screen, header, bottom) as view:
            with view.row(0, 110):
                noun = "result" if len(products.items) == 1 else "results"
                counted = products.range_text(noun)
                c.text(48, 60, counted, size=theme.BODY, color=theme.TEXT_2, anchor="lm")
            y = 110.0
            for product in products.shown:
                y = self._row(c, view, y, product)
            y = products.footer(c, view, y, f"{self.store.id}:list_end:{screen.item}")
            view.end(y)

    def screen_product(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        product = self.product(screen.item)
        bar = widgets.app_bar(
            c,
            top,
            self.store.name,
            back=self.back,
            actions=[("cart", "cart", self.open_cart)],
            bg=self.store.header,
        )
        with c.scroll_view(screen, bar, bottom) as view:
            with view.row(0, 560):
                self._picture(c, (48, 30, c.dw - 48, 530), product)
            y = 570.0
            for line in c.wrap(product.title, theme.LARGE, c.dw - 96):
                with view.row(y, 70):
                    c.text(48, y + 35, line, size=theme.LARGE, bold=True, anchor="lm")
                y += 70
            with view.row(y, 90):
                self._rating(c, 48, y + 45, product, size=36)
            y += 90
            with view.row(y, 110):
                self._price(c, 48, y + 55, product, size=theme.HEADLINE)
                c.mark_seen(f"{self.store.id}:price:{product.id}")
            y += 110
            if product.badge:
                with view.row(y, 90):
                    self._badge(c, 48, y + 10, product.badge)
                y += 90
            available = self.in_stock(product)
            with view.row(y, 80):
                stock, colour = (
                    ("In stock", theme.GREEN_TEXT) if available else ("Out of stock", theme.RED_TEXT)
                )
                c.text(48, y + 40, stock, size=theme.BODY, color=colour, anchor="lm")
            y += 90
            with view.row(y, 140):
                if available:
                    widgets.button(
                        c,
                        (48, y + 10, c.dw - 48, y + 130),
                        "Add to cart",
                        lambda: self.add_to_cart(product.id),
                        glyph="cart",
                    )
                else:
                    c.rect((48, y + 10, c.dw - 48, y + 130), theme.SURFACE_DIM, radius=60)
                    c.text(
                        c.dw / 2,
                        y + 70,
                        "Currently unavailable",
                        size=theme.BODY,
                        color=theme.TEXT_2,
                        anchor="mm",
                    )
            y += 150
            in_cart = sum(i.quantity for i in self.cart if i.product_id == product.id)
            if in_cart:
                with view.row(y, 80):
                    c.text(
                        48,
                        y + 40,
                        f"Added to cart ({in_cart})",
                        size=theme.BODY,
                        color=theme.GREEN_TEXT,
                        anchor="lm",
                    )
                y += 80
            y = self._section(c, view, y, "About this item")
            for bullet in product.about:
                for line in c.wrap(bullet, theme.BODY, c.dw - 150):
                    with view.row(y, 62):
                        c.text(96, y + 31, line, size=theme.BODY, anchor="lm")
                    y += 62
                y += 16
            y = self._section(c, view, y, "Customer reviews")
            for index, review in enumerate(product.reviews):
                with view.row(y, 100):
                    widgets.avatar(c, 90, y + 50, 80, widgets.color_for(review.author), "profile picture")
                    c.text(160, y + 50, review.author, size=theme.BODY, anchor="lm")
                    c.mark_seen(f"{self.store.id}:review:{product.id}:{index}")
                y += 100
                with view.row(y, 70):
                    icons.stars(c, 48, y + 35, review.rating, size=34)
                    if review.title:
                        c.text(250, y + 35, review.title, size=theme.BODY, bold=True, anchor="lm")
                y += 70
                for line in c.wrap(review.text, theme.BODY, c.dw - 96):
                    with view.row(y, 62):
                        c.text(48, y + 31, line, size=theme.BODY, anchor="lm")
                        c.mark_seen(f"{self.store.id}:review:{product.id}:{index}")
                    y += 62
                y += 40
            view.end(y + 40)

    def _section(self, c: Canvas, view: ScrollView, y: float, title: str) -> float:
        with view.row(y, 120):
            widgets.divider(c, y + 10)
            c.text(48, y + 75, title, size=theme.LARGE, bold=True, anchor="lm")
        return y + 130

    def screen_cart(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = widgets.app_bar(c, top, "Cart", back=self.back, bg=self.store.header)
        items = self.cart
        with c.scroll_view(screen, bar, bottom) as view:
            count = sum(i.quantity for i in items)
            total = sum(i.price * i.quantity for i in items)
            with view.row(0, 130):
                noun = "item" if count == 1 else "items"
                c.text(
                    48,
                    65,
                    f"Subtotal ({count} {noun}): {fmt_price(total)}",
                    size=theme.LARGE,
                    bold=True,
                    anchor="lm",
                )
            y = 130.0
            if not items:
                with view.row(y, 120):
                    c.text(48, y + 60, "Your cart is empty", size=theme.BODY, color=theme.TEXT_2, anchor="lm")
                y += 120
            for item in items:
                lines = c.wrap(item.title, theme.BODY, c.dw - 96, max_lines=2)
                height = 60 * len(lines) + 170
                with view.row(y, height):
                    ty = y + 40
                    for line in lines:
                        c.text(48, ty, line, size=theme.BODY, anchor="lm")
                        ty += 60
                    c.text(48, ty + 20, fmt_price(item.price), size=theme.LARGE, bold=True, anchor="lm")
                    c.text(360, ty + 20, f"Qty: {item.quantity}", size=theme.BODY, anchor="lm")
                    ink = c.text(
                        c.dw - 48, ty + 20, "Delete", size=theme.BODY, color=theme.ACCENT, anchor="rm"
                    )
                    c.tap(
                        (ink[0] - 30, ty - 30, c.dw, ty + 70),
                        lambda p=item.product_id: self.remove_from_cart(p),  # type: ignore[misc]
                        "Delete",
                    )
                    widgets.divider(c, y + height - 2)
                y += height
            view.end(y)
