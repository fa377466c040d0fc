"""Browser: a search engine with result pages, web pages, and a scholar site with citation counts."""

from __future__ import annotations

from mae.device.virtual import icons, theme
from mae.device.virtual.apps import widgets
from mae.device.virtual.apps.base import App, Screen, TextField
from mae.device.virtual.apps.paging import PagedList, Paging, paging_for
from mae.device.virtual.canvas import Canvas, ScrollView
from mae.device.virtual.content import Paper, WebPage, fmt_count, match_score

BAR_H = 170.0
SCHOLAR_PAGING = ("pages", "load_more")
"""Scholar's lists come in numbered pages (or a "more" button); its label keys them apart from the web's."""
TILES = (("Scholar", "scholar", "globe"), ("News", "web:news", "bell"), ("Weather", "web:weather", "clock"))


class BrowserApp(App):
    kind = "browser"

    def root(self) -> Screen:
        return Screen("start", fields={"url": self._url_field("")})

    def _url_field(self, text: str) -> TextField:
        return TextField("url", "Search or type URL", value=text, select_on_focus=True, on_submit=self.search)

    def focus_search(self) -> None:
        """Focus the address bar (used by the home screen's search bar)."""
        self.host.focus(self.screen.fields["url"])

    @property
    def engine(self) -> str:
        return self.host.content.browser.engine

    def paper(self, paper_id: str) -> Paper:
        return next(p for p in self.host.content.browser.scholar if p.id == paper_id)

    def page(self, page_id: str) -> WebPage:
        return next(p for p in self.host.content.browser.web if p.id == page_id)

    # ---------------------------------------------------------------- navigation
    def _go(self, screen: Screen, address: str) -> None:
        screen.fields.setdefault("url", self._url_field(address))
        self.push(screen)

    def search(self, query: str) -> None:
        query = query.strip()
        if not query:
            return
        self.event("search", query)
        self._go(Screen("results", item=query), query)

    def web_results(self, query: str) -> list[WebPage]:
        scored = []
        for index, page in enumerate(self.host.content.browser.web):
            if not page.listed or (page.realism and not self.host.realism.on(page.realism)):
                continue
            score = match_score(query, " ".join([page.title, page.snippet, *page.keywords]))
            if score:
                scored.append((page.realism != "sponsored", -score, index, page))
        return [s[3] for s in sorted(scored, key=lambda s: s[:3])]

    def open_link(self, target: str) -> None:
        """Follow a link: ``scholar``, ``paper:<id>``, ``web:<id>``."""
        kind, _, ident = target.partition(":")
        if kind == "scholar":
            self.event("open_page", "scholar")
            self._go(Screen("scholar", fields={"q": self._scholar_field("")}), "scholar.google.com")
        elif kind == "paper":
            self.event("view_paper", ident)
            self._go(Screen("paper", item=ident), f"scholar.google.com/{ident}")
        elif kind == "citations":
            self.event("view_citations", ident)
            self._go(Screen("citations", item=ident), f"scholar.google.com/cites/{ident}")
        else:
            page = self.page(ident)
            if page.opens:
                self.open_link(page.opens)
                return
            self.event("open_page", ident)
            self._go(Screen("page", item=ident), page.url)

    def _scholar_field(self, query: str) -> TextField:
        return TextField(
            "q", "Search Scholar", value=query, select_on_focus=True, on_submit=self.scholar_search
        )

    def scholar_search(self, query: str) -> None:
        query = query.strip()
        if not query:
            return
        self.event("scholar_search", query)
        if self.screen.name == "scholar_results":
            self.stack.pop()
        screen = Screen("scholar_results", item=query, fields={"q": self._scholar_field(query)})
        self._go(screen, "scholar.google.com/scholar")

    def scholar_results(self, query: str) -> list[Paper]:
        scored = []
        for index, paper in enumerate(self.host.content.browser.scholar):
            score = match_score(query, " ".join([paper.title, *paper.keywords]))
            if score:
                scored.append((-score, index, paper))
        return [s[2] for s in sorted(scored, key=lambda s: s[:2])]

    def citing(self, paper_id: str) -> list[Paper]:
        return [p for p in self.host.content.browser.scholar if paper_id in p.cites]

    def paging(self, site: str) -> Paging:
        """How the lists of ``site`` (``web`` or ``scholar``) page on this phone."""
        if site == "scholar":
            return paging_for(self.host, f"{self.label} Scholar", SCHOLAR_PAGING)
        return paging_for(self.host, self.label)

    # ---------------------------------------------------------------- pieces
    def _address_bar(self, c: Canvas, screen: Screen, top: float) -> float:
        c.rect((0, top, c.dw, top + BAR_H), theme.SURFACE)
        widgets.text_field(
            c, self.host, screen.fields["url"], (48, top + 25, c.dw - 48, top + 145), glyph="globe"
        )
        widgets.divider(c, top + BAR_H - 2)
        return top + BAR_H

    def _logo(self, c: Canvas, cx: float, y: float, text: str, size: float) -> None:
        c.text(cx, y, text, size=size, color="#3C64C8", bold=True, anchor="mm")

    def _link(
        self,
        c: Canvas,
        view: ScrollView,
        y: float,
        label: str,
        target: str,
        line_height: float,
        seen: str = "",
    ) -> float:
        """A link wrapped over as many lines as it needs; like a web page's link, one tap area covers
        all its lines (shown whole or not at all). Returns the y below it."""
        lines = c.wrap(label, theme.LARGE, c.dw - 96)
        height = line_height * len(lines)
        with view.row(y, height):
            for index, line in enumerate(lines):
                middle = y + line_height * (index + 0.5)
                c.text(48, middle, line, size=theme.LARGE, color=theme.LINK, anchor="lm")
            c.tap((0, y, c.dw, y + height), lambda: self.open_link(target), label)
            if seen:
                c.mark_seen(seen)
        return y + height

    def _paper_row(self, c: Canvas, view: ScrollView, y: float, paper: Paper) -> float:
        y = self._link(c, view, y, paper.title, f"paper:{paper.id}", 66, f"scholar:paper:{paper.id}")
        byline = f"{paper.authors} - {paper.venue}, {paper.year}"
        for line in c.wrap(byline, theme.SMALL, c.dw - 96):
            with view.row(y, 56):
                c.text(48, y + 28, line, size=theme.SMALL, color=theme.GREEN_TEXT, anchor="lm")
            y += 56
        for line in c.wrap(paper.abstract, theme.SMALL, c.dw - 96, max_lines=2):
            with view.row(y, 56):
                c.text(48, y + 28, line, size=theme.SMALL, color=theme.TEXT_2, anchor="lm")
            y += 56
        with view.row(y, 90):
            label = f"Cited by {fmt_count(paper.citations)}"
            ink = c.text(48, y + 45, label, size=theme.BODY, color=theme.ACCENT, anchor="lm")
            c.tap((30, y, ink[2] + 30, y + 90), lambda p=paper.id: self.open_link(f"citations:{p}"), label)  # type: ignore[misc]
            c.text(ink[2] + 60, y + 45, "Related articles", size=theme.BODY, color=theme.ACCENT, anchor="lm")
            c.mark_seen(f"scholar:citations:{paper.id}")
        y += 100
        with view.row(y, 20):
            widgets.divider(c, y + 8)
        return y + 30

    # ---------------------------------------------------------------- screens
    def screen_start(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = self._address_bar(c, screen, top)
        self._logo(c, c.dw / 2, bar + 260, self.engine, 120)
        box = (60, bar + 400, c.dw - 60, bar + 530)
        c.rect(box, theme.WHITE, radius=65, outline=theme.DIVIDER, width=3)
        icons.icon(c, "search", 135, bar + 465, 56, theme.TEXT_2, "search")
        c.text(195, bar + 465, "Search the web", size=theme.BODY, color=theme.TEXT_2, anchor="lm")
        c.tap(box, self.focus_search, "search box")
        for index, (label, target, glyph_name) in enumerate(TILES):
            cx = c.dw / 2 + (index - 1) * 300
            cy = bar + 720
            c.ellipse((cx - 70, cy - 70, cx + 70, cy + 70), theme.SURFACE_DIM)
            icons.icon(c, glyph_name, cx, cy, 70, theme.ACCENT, label.lower())
            c.text(cx, cy + 120, label, size=theme.SMALL, anchor="mm")
            c.tap((cx - 130, cy - 90, cx + 130, cy + 160), lambda t=target: self.open_link(t), label)  # type: ignore[misc]

    def screen_results(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = self._address_bar(c, screen, top)
        pages = PagedList(self.host, screen, self.paging("web"), self.web_results(screen.item))
        with c.scroll_view(screen, bar, bottom) as view:
            with view.row(0, 130):
                self._logo(c, 160, 65, self.engine, theme.TITLE)
            y = 130.0
            if not pages.items:
                with view.row(y, 120):
                    c.text(48, y + 60, f"No results for {screen.item}", size=theme.BODY, anchor="lm")
            for page in pages.shown:
                link = page.opens or f"web:{page.id}"
                with view.row(y, 60):
                    url = f"Sponsored - {page.url}" if page.realism == "sponsored" else page.url
                    c.text(48, y + 30, url, size=theme.SMALL, color=theme.TEXT_2, anchor="lm")
                y += 60
                y = self._link(c, view, y, page.title, link, 66, f"web:result:{page.id}")
                for line in c.wrap(page.snippet, theme.BODY, c.dw - 96, max_lines=3):
                    with view.row(y, 58):
                        c.text(48, y + 29, line, size=theme.BODY, color=theme.TEXT_2, anchor="lm")
                    y += 58
                with view.row(y, 40):
                    widgets.divider(c, y + 20)
                y += 50
            y = pages.footer(c, view, y, f"web:list_end:{screen.item}")
            view.end(y)

    def screen_page(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        page = self.page(screen.item)
        bar = self._address_bar(c, screen, top)
        with c.scroll_view(screen, bar, bottom) as view:
            y = 40.0
            for line in c.wrap(page.title, theme.TITLE, c.dw - 96):
                with view.row(y, 80):
                    c.text(48, y + 40, line, size=theme.TITLE, bold=True, anchor="lm")
                y += 80
            y += 30
            for index, paragraph in enumerate(page.body):
                for line in c.wrap(paragraph, theme.BODY, c.dw - 96):
                    with view.row(y, 62):
                        c.text(48, y + 31, line, size=theme.BODY, anchor="lm")
                        c.mark_seen(f"web:{page.id}:{index}")
                    y += 62
                y += 30
            for link in page.links:
                seen = f"web:{page.id}:link:{link.target}"
                y = self._link(c, view, y, link.label, link.target, 80, seen) + 20
            view.end(y)

    def screen_scholar(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = self._address_bar(c, screen, top)
        self._logo(c, c.dw / 2, bar + 240, "Scholar", 110)
        widgets.text_field(c, self.host, screen.fields["q"], (60, bar + 380, c.dw - 60, bar + 510))
        c.text(
            c.dw / 2,
            bar + 620,
            "Stand on the shoulders of giants",
            size=theme.BODY,
            color=theme.TEXT_2,
            anchor="mm",
        )

    def screen_scholar_results(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = self._address_bar(c, screen, top)
        widgets.text_field(c, self.host, screen.fields["q"], (48, bar + 20, c.dw - 48, bar + 140))
        papers = PagedList(self.host, screen, self.paging("scholar"), self.scholar_results(screen.item))
        with c.scroll_view(screen, bar + 160, bottom) as view:
            y = 10.0
            if not papers.items:
                with view.row(y, 120):
                    c.text(48, y + 60, "Your search did not match any articles", size=theme.BODY, anchor="lm")
            for paper in papers.shown:
                y = self._paper_row(c, view, y, paper)
            y = papers.footer(c, view, y, f"scholar:list_end:{screen.item}")
            view.end(y)

    def screen_citations(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = self._address_bar(c, screen, top)
        cited = self.paper(screen.item)
        papers = PagedList(self.host, screen, self.paging("scholar"), self.citing(cited.id))
        total = fmt_count(cited.citations)
        with c.scroll_view(screen, bar, bottom) as view:
            with view.row(0, 100):
                c.text(48, 50, f"Cited by {total}", size=theme.LARGE, bold=True, anchor="lm")
                if papers.items:
                    # the count is every citing article: say at once that only the most relevant are listed
                    start, stop = papers.span
                    count = len(papers.items)
                    what = f"{start + 1}-{stop} of {count}" if (start, stop) != (0, count) else str(count)
                    showing = f"Showing {what} most relevant"
                    c.text(c.dw - 48, 50, showing, size=theme.SMALL, color=theme.TEXT_2, anchor="rm")
            y = 100.0
            for line in c.wrap(f"Articles citing: {cited.title}", theme.BODY, c.dw - 96):
                with view.row(y, 60):
                    c.text(48, y + 30, line, size=theme.BODY, color=theme.TEXT_2, anchor="lm")
                y += 60
            y += 30
            for paper in papers.shown:
                y = self._paper_row(c, view, y, paper)
            shown = f"{len(papers.items)} most relevant of {total}" if papers.items else "No"
            end = f"{shown} citing articles shown"
            if not papers.items:
                y = widgets.list_end(c, view, y, f"scholar:list_end:citations:{cited.id}", end)
            y = papers.footer(c, view, y, f"scholar:list_end:citations:{cited.id}", end)
            view.end(y)

    def screen_paper(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        paper = self.paper(screen.item)
        bar = self._address_bar(c, screen, top)
        with c.scroll_view(screen, bar, bottom) as view:
            y = 40.0
            for line in c.wrap(paper.title, theme.TITLE, c.dw - 96):
                with view.row(y, 80):
                    c.text(48, y + 40, line, size=theme.TITLE, bold=True, anchor="lm")
                y += 80
            for line in c.wrap(paper.authors, theme.BODY, c.dw - 96):
                with view.row(y, 60):
                    c.text(48, y + 30, line, size=theme.BODY, color=theme.GREEN_TEXT, anchor="lm")
                y += 60
            with view.row(y, 60):
                c.text(
                    48,
                    y + 30,
                    f"{paper.venue}, {paper.year}",
                    size=theme.BODY,
                    color=theme.TEXT_2,
                    anchor="lm",
                )
            y += 70
            with view.row(y, 90):
                label = f"Cited by {fmt_count(paper.citations)}"
                ink = c.text(48, y + 45, label, size=theme.BODY, color=theme.ACCENT, anchor="lm")
                c.tap((30, y, ink[2] + 30, y + 90), lambda: self.open_link(f"citations:{paper.id}"), label)
                c.mark_seen(f"scholar:citations:{paper.id}")
            y += 100
            with view.row(y, 90):
                c.text(48, y + 45, "Abstract", size=theme.LARGE, bold=True, anchor="lm")
            y += 90
            for line in c.wrap(paper.abstract, theme.BODY, c.dw - 96):
                with view.row(y, 62):
                    c.text(48, y + 31, line, size=theme.BODY, anchor="lm")
                    c.mark_seen(f"scholar:abstract:{paper.id}")
                y += 62
            view.end(y + 40)
