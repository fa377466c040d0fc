"""Social (an X-like app): a feed, trending topics, search, and post pages."""

from __future__ import annotations

from mae.device.virtual import icons, theme
from mae.device.virtual.apps import widgets
from mae.device.virtual.apps.base import App, Screen, TextField
from mae.device.virtual.apps.paging import PagedList, Paging, paging_for
from mae.device.virtual.canvas import Canvas, ScrollView
from mae.device.virtual.content import Post, fmt_short, match_score

TAB_H = 150.0
FEED_END = "You're all caught up"
TABS = (
    ("home", "home", "search"),
    ("explore", "search", "search"),
    ("notifications", "bell", "bell"),
    ("messages", "mail", "mail"),
)


class SocialApp(App):
    kind = "social"

    def root(self) -> Screen:
        return Screen("home")

    def _field(self, query: str) -> TextField:
        return TextField("q", "Search", value=query, select_on_focus=True, on_submit=self.search)

    def post(self, post_id: str) -> Post:
        return next(p for p in self.host.content.social.posts if p.id == post_id)

    # ---------------------------------------------------------------- behaviour
    def tab(self, name: str) -> None:
        self.host.blur()
        self.stack = [self.root()]
        if name == "explore":
            self.stack.append(Screen("explore", fields={"q": self._field("")}))
        elif name != "home":
            self.stack.append(Screen(name))

    def search(self, query: str) -> None:
        query = query.strip()
        if not query:
            return
        self.event("search", query)
        if self.screen.name == "search":
            self.stack.pop()
        self.push(Screen("search", item=query, fields={"q": self._field(query)}))

    def open_topic(self, topic_id: str) -> None:
        topic = next(t for t in self.host.content.social.trending if t.id == topic_id)
        self.event("view_topic", topic_id)
        self.search(topic.query)

    def open_post(self, post_id: str) -> None:
        self.event("view_post", post_id)
        self.push(Screen("post", item=post_id))

    @property
    def paging(self) -> Paging:
        """A social feed loads more as it is scrolled (posts are tall: a few at a time)."""
        return paging_for(self.host, self.label, ("infinite",), (3, 4))

    def matching(self, query: str) -> list[Post]:
        scored = []
        for post in self.host.content.social.posts:
            score = match_score(query, " ".join([post.text, post.author, *post.keywords]))
            if score:
                scored.append((-score, -post.likes, post.id, post))
        return [s[3] for s in sorted(scored, key=lambda s: s[:3])]

    # ---------------------------------------------------------------- pieces
    def _tabs(self, c: Canvas, bottom: float) -> float:
        top = bottom - TAB_H
        c.rect((0, top, c.dw, bottom), theme.WHITE)
        widgets.divider(c, top)
        current = self.stack[1].name if len(self.stack) > 1 else "home"
        for index, (name, glyph_name, _) in enumerate(TABS):
            cx = c.dw * (index + 0.5) / len(TABS)
            col = theme.TEXT if name == current else theme.TEXT_2
            icons.icon(
                c, glyph_name if glyph_name != "home" else "nav_home", cx, top + TAB_H / 2, 64, col, name
            )
            c.tap((cx - 120, top, cx + 120, bottom), lambda n=name: self.tab(n), name)  # type: ignore[misc]
        return top

    def _post_row(self, c: Canvas, view: ScrollView, y: float, post: Post, full: bool = False) -> float:
        lines = c.wrap(post.text, theme.BODY, c.dw - 228, max_lines=0 if full else 5)
        height = 150 + 58 * len(lines) + 110
        with view.row(y, height):
            c.tap((0, y, c.dw, y + height), lambda p=post.id: self.open_post(p), post.author)  # type: ignore[misc]
            widgets.avatar(c, 100, y + 80, 100, widgets.color_for(post.handle), "profile picture")
            c.text(180, y + 50, post.author, size=theme.BODY, bold=True, anchor="lm")
            c.text(
                180,
                y + 108,
                f"@{post.handle} - {post.time}",
                size=theme.SMALL,
                color=theme.TEXT_2,
                anchor="lm",
            )
            ty = y + 175
            for line in lines:
                c.text(180, ty, line, size=theme.BODY, anchor="lm")
                ty += 58
            for index, (glyph_name, value) in enumerate(
                (("reply", post.replies), ("repost", post.reposts), ("heart", post.likes))
            ):
                x = 180 + index * 270
                icons.icon(c, glyph_name, x + 25, ty + 30, 48, theme.TEXT_2, glyph_name)
                c.text(x + 100, ty + 30, fmt_short(value), size=theme.SMALL, color=theme.TEXT_2, anchor="lm")
            widgets.divider(c, y + height - 2)
            c.mark_seen(f"x:post:{post.id}")
        return y + height

    # ---------------------------------------------------------------- screens
    def screen_home(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        c.rect((0, top, c.dw, top + 260), theme.WHITE)
        widgets.avatar(c, 100, top + 75, 84, "#1E88E5", "your profile")
        icons.app_icon(c, self.spec.icon, c.dw / 2, top + 75, 96, "X logo")
        for index, label in enumerate(("For you", "Following")):
            cx = c.dw * (index * 2 + 1) / 4
            c.text(
                cx,
                top + 200,
                label,
                size=theme.BODY,
                bold=index == 0,
                anchor="mm",
                color=theme.TEXT if index == 0 else theme.TEXT_2,
            )
            if index == 0:
                c.rect((cx - 90, top + 248, cx + 90, top + 258), theme.ACCENT, radius=4)
        widgets.divider(c, top + 258)
        tabs = self._tabs(c, bottom)
        feed = [p for p in self.host.content.social.posts if p.feed]
        posts = PagedList(self.host, screen, self.paging, feed)
        with c.scroll_view(screen, top + 260, tabs) as view:
            y = 0.0
            for post in posts.shown:
                y = self._post_row(c, view, y, post)
            y = posts.footer(c, view, y, "x:list_end:feed", FEED_END)
            view.end(y)

    def screen_explore(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        widgets.text_field(c, self.host, screen.fields["q"], (48, top + 25, c.dw - 48, top + 145))
        tabs = self._tabs(c, bottom)
        with c.scroll_view(screen, top + 170, tabs) as view:
            with view.row(0, 110):
                c.text(48, 60, "Trending", size=theme.TITLE, bold=True, anchor="lm")
            y = 110.0
            for rank, topic in enumerate(self.host.content.social.trending, 1):
                with view.row(y, 230):
                    c.tap((0, y, c.dw, y + 230), lambda t=topic.id: self.open_topic(t), topic.topic)  # type: ignore[misc]
                    c.text(
                        48,
                        y + 45,
                        f"{rank} - {topic.context}",
                        size=theme.SMALL,
                        color=theme.TEXT_2,
                        anchor="lm",
                    )
                    c.text(48, y + 110, topic.topic, size=theme.LARGE, bold=True, anchor="lm")
                    c.text(48, y + 175, topic.posts_count, size=theme.SMALL, color=theme.TEXT_2, anchor="lm")
                    c.mark_seen(f"x:topic:{topic.id}")
                y += 230
            view.end(y)

    def screen_search(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        icons.icon(c, "back", 84, top + 85, 60, theme.TEXT, "back")
        c.tap((24, top + 15, 144, top + 155), self.back, "back arrow")
        widgets.text_field(c, self.host, screen.fields["q"], (160, top + 25, c.dw - 48, top + 145))
        for index, label in enumerate(("Top", "Latest", "People", "Media")):
            cx = c.dw * (index + 0.5) / 4
            c.text(
                cx,
                top + 215,
                label,
                size=theme.BODY,
                bold=index == 0,
                anchor="mm",
                color=theme.TEXT if index == 0 else theme.TEXT_2,
            )
        c.rect((c.dw / 8 - 60, top + 262, c.dw / 8 + 60, top + 270), theme.ACCENT, radius=4)
        widgets.divider(c, top + 270)
        tabs = self._tabs(c, bottom)
        posts = PagedList(self.host, screen, self.paging, self.matching(screen.item))
        with c.scroll_view(screen, top + 272, tabs) as view:
            y = 0.0
            if not posts.items:
                with view.row(y, 150):
                    c.text(48, y + 75, f'No results for "{screen.item}"', size=theme.BODY, anchor="lm")
            for post in posts.shown:
                y = self._post_row(c, view, y, post)
            y = posts.footer(c, view, y, f"x:list_end:{screen.item}")
            view.end(y)

    def screen_post(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        post = self.post(screen.item)
        bar = widgets.app_bar(c, top, "Post", back=self.back)
        with c.scroll_view(screen, bar, bottom) as view:
            y = self._post_row(c, view, 0.0, post, full=True)
            with view.row(y, 100):
                c.text(
                    48,
                    y + 50,
                    f"{post.time} ago - May 14, 2024",
                    size=theme.SMALL,
                    color=theme.TEXT_2,
                    anchor="lm",
                )
            y += 100
            with view.row(y, 100):
                ink = c.text(48, y + 50, f"{post.reposts:,} Reposts", size=theme.BODY, anchor="lm")
                c.text(ink[2] + 60, y + 50, f"{post.likes:,} Likes", size=theme.BODY, anchor="lm")
                c.mark_seen(f"x:post_detail:{post.id}")
            y += 100
            view.end(y)

    def screen_notifications(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = widgets.app_bar(c, top, "Notifications")
        c.text(48, bar + 80, "Nothing to see here yet", size=theme.BODY, color=theme.TEXT_2, anchor="lm")
        self._tabs(c, bottom)

    def screen_messages(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = widgets.app_bar(c, top, "Messages")
        c.text(48, bar + 80, "Welcome to your inbox", size=theme.BODY, color=theme.TEXT_2, anchor="lm")
        self._tabs(c, bottom)
