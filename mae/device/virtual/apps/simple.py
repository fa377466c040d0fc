"""Apps that only show a list (Settings, Phone, Messages, Calendar...), defined entirely in apps.json."""

from __future__ import annotations

from mae.device.virtual import icons, theme
from mae.device.virtual.apps import widgets
from mae.device.virtual.apps.base import App, Screen
from mae.device.virtual.canvas import Canvas

ROW_H = 170.0


class ListApp(App):
    kind = "list"

    def root(self) -> Screen:
        return Screen("list")

    def screen_list(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = widgets.app_bar(c, top, self.spec.title or self.label, size=theme.HEADLINE)
        with c.scroll_view(screen, bar, bottom) as view:
            y = 0.0
            for row in self.spec.rows:
                with view.row(y, ROW_H):
                    mid = y + ROW_H / 2
                    x = 60.0
                    if row.icon:
                        icons.icon(c, row.icon, 110, mid, 64, theme.ACCENT, row.icon)
                        x = 190
                    if row.subtitle:
                        c.text(x, mid - 30, row.title, size=theme.LARGE, anchor="lm")
                        c.text(x, mid + 34, row.subtitle, size=theme.SMALL, color=theme.TEXT_2, anchor="lm")
                    else:
                        c.text(x, mid, row.title, size=theme.LARGE, anchor="lm")
                    widgets.divider(c, y + ROW_H - 2, left=x)
                y += ROW_H
            view.end(y)
