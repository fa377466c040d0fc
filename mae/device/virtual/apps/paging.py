"""Long lists the way real apps show them: a page at a time, and a marker where the list ends.

With realism on, each app draws (from the seed and its label) how its lists page:

- ``infinite``: scrolling to the bottom shows a "loading more results" spinner row; the next page is
  there one action later (a swipe, a wait, anything);
- ``load_more``: a button under the rows ("Load more", "Show more results" or "See more") appends the
  next page;
- ``pages``: "Previous" / "Page 2 of 3" / "Next" under the rows; the next page replaces the rows.

and how many rows a page holds. With realism off a list shows all its rows. Either way a list that is
shown to its last row ends with an end-of-list row (``widgets.list_end``), whose seen key tells
graders the list was seen whole; the rows themselves record their own seen keys wherever they are
shown, so what the agent saw counts on whichever page it saw it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from mae.device.virtual import icons, theme
from mae.device.virtual.apps import widgets
from mae.device.virtual.apps.base import Host, Screen
from mae.device.virtual.canvas import Canvas, ScrollView

T = TypeVar("T")

STYLES = ("infinite", "load_more", "pages")
PAGE_SIZES = (4, 5, 6)
MORE_LABELS = ("Load more", "Show more results", "See more")
END_TEXTS = ("End of results", "No more results", "You've reached the end of the list")
NEXT = "Next"
PREVIOUS = "Previous"
PAGING_LABELS = (*MORE_LABELS, NEXT)
"""Labels of the controls that move forward through a list (authoring tools look for them)."""
LOADING_CAPTION = "loading more results"
LOAD_AFTER_S = 1.0
"""How long an infinite list's spinner row is on screen before the next page is there."""
SPINNER_H = 170.0
FOOTER_H = 150.0


@dataclass(frozen=True)
class Paging:
    """How one app's lists page: ``style`` (``all`` without realism), rows per page, the wording."""

    style: str
    size: int
    more_label: str = MORE_LABELS[0]
    end_text: str = END_TEXTS[0]


def paging_for(
    host: Host, app: str, styles: Sequence[str] = STYLES, sizes: Sequence[int] = PAGE_SIZES
) -> Paging:
    """The paging of ``app``'s lists on this phone (the same for every list of the app)."""
    settings = host.realism.settings
    if not settings.on("paging"):
        return Paging("all", 0)
    rng = settings.rng("paging", app)
    style = styles[rng.randrange(len(styles))]
    size = sizes[rng.randrange(len(sizes))]
    more = MORE_LABELS[rng.randrange(len(MORE_LABELS))]
    return Paging(style, size, more, END_TEXTS[rng.randrange(len(END_TEXTS))])


class PagedList(Generic[T]):
    """The rows of one list screen that are on offer now, and the footer under them.

    Its state lives in ``screen.data`` (so Back to the list keeps the pages loaded); a new search makes
    a new screen and starts again at the first page.
    """

    def __init__(self, host: Host, screen: Screen, paging: Paging, items: Sequence[T]) -> None:
        self.host = host
        self.screen = screen
        self.paging = paging
        self.items = list(items)
        data = screen.data
        started = data.get("loading_at")
        if isinstance(started, float) and host.clock_s >= started + LOAD_AFTER_S:
            data["loaded"] = int(data.get("loaded", 1)) + 1
            del data["loading_at"]

    @property
    def pages(self) -> int:
        if self.paging.style == "all" or not self.items:
            return 1
        return -(-len(self.items) // self.paging.size)

    @property
    def page(self) -> int:
        """The page shown (0-based) in the ``pages`` style; 0 otherwise."""
        if self.paging.style != "pages":
            return 0
        return min(int(self.screen.data.get("page", 0)), self.pages - 1)

    @property
    def span(self) -> tuple[int, int]:
        """Index of the first row shown and one past the last."""
        style, size = self.paging.style, self.paging.size
        if style == "all":
            return 0, len(self.items)
        if style == "pages":
            start = self.page * size
            return start, min(start + size, len(self.items))
        return 0, min(int(self.screen.data.get("loaded", 1)) * size, len(self.items))

    @property
    def shown(self) -> list[T]:
        start, stop = self.span
        return self.items[start:stop]

    @property
    def complete(self) -> bool:
        """Whether the last row of the list is among the rows shown."""
        return self.span[1] >= len(self.items)

    def range_text(self, noun: str = "results") -> str:
        """``"6-10 of 12 results"`` on a page of the ``pages`` style, else ``"12 results"``."""
        count = len(self.items)
        start, stop = self.span
        if self.paging.style == "pages" and self.pages > 1:
            return f"{start + 1}-{stop} of {count} {noun}"
        return f"{count} {noun}"

    # ---------------------------------------------------------------- footer
    def footer(self, c: Canvas, view: ScrollView, y: float, seen: str, end_text: str = "") -> float:
        """What goes under the rows: a spinner, a "more" button, a pager, and the end-of-list row on the
        last page. Returns the y below it."""
        if not self.items:
            return y
        if self.paging.style == "pages" and self.pages > 1:
            y = self._pager(c, view, y)
        if self.complete:
            return widgets.list_end(c, view, y, seen, end_text or self.paging.end_text)
        if self.paging.style == "infinite":
            return self._spinner(c, view, y)
        if self.paging.style == "load_more":
            return self._more_button(c, view, y)
        return y

    def _spinner(self, c: Canvas, view: ScrollView, y: float) -> float:
        with view.row(y, SPINNER_H):
            cx, cy = c.dw / 2, y + SPINNER_H / 2
            c.arc((cx - 45, cy - 45, cx + 45, cy + 45), 200, 470, theme.ACCENT, 10)
            c.icon_element((cx - 45, cy - 45, cx + 45, cy + 45), LOADING_CAPTION)
        if view.shows(y, SPINNER_H) and "loading_at" not in self.screen.data:
            self.screen.data["loading_at"] = float(self.host.clock_s)
        return y + SPINNER_H

    def _more_button(self, c: Canvas, view: ScrollView, y: float) -> float:
        def more() -> None:
            self.screen.data["loaded"] = int(self.screen.data.get("loaded", 1)) + 1

        with view.row(y, FOOTER_H):
            widgets.button(c, (48, y + 20, c.dw - 48, y + FOOTER_H - 20), self.paging.more_label, more)
        return y + FOOTER_H

    def _pager(self, c: Canvas, view: ScrollView, y: float) -> float:
        page = self.page

        def go(to: int) -> Callable[[], None]:
            def turn() -> None:
                self.screen.data["page"] = to
                self.screen.scroll = 0.0

            return turn

        with view.row(y, FOOTER_H):
            mid = y + FOOTER_H / 2
            c.text(c.dw / 2, mid, f"Page {page + 1} of {self.pages}", size=theme.BODY, anchor="mm")
            if page > 0:
                icons.icon(c, "back", 90, mid, 48, theme.ACCENT, PREVIOUS.lower())
                c.text(130, mid, PREVIOUS, size=theme.BODY, color=theme.ACCENT, anchor="lm")
                c.tap((24, y + 10, 400, y + FOOTER_H - 10), go(page - 1), PREVIOUS)
            if page < self.pages - 1:
                c.text(c.dw - 130, mid, NEXT, size=theme.BODY, color=theme.ACCENT, anchor="rm")
                icons.icon(c, "chevron", c.dw - 90, mid, 48, theme.ACCENT, NEXT.lower())
                c.tap((c.dw - 400, y + 10, c.dw - 24, y + FOOTER_H - 10), go(page + 1), NEXT)
        return y + FOOTER_H
