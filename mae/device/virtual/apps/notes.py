"""Notes: a list of notes and an editor (title optional) that saves as you type."""

from __future__ import annotations

from mae.device.virtual import icons, theme
from mae.device.virtual.apps import widgets
from mae.device.virtual.apps.base import App, Screen, TextField
from mae.device.virtual.canvas import Canvas
from mae.device.virtual.state import Note

FAB = 168.0
BODY_X = 106.0
"""Left edge of the note text, aligned with the title field's text."""


class NotesApp(App):
    kind = "notes"
    background = "#FFFBF0"

    def root(self) -> Screen:
        return Screen("list")

    def _note(self, note_id: str) -> Note | None:
        return next((n for n in self.host.notes if str(n.id) == note_id), None)

    # ---------------------------------------------------------------- list
    def screen_list(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = widgets.app_bar(c, top, "Notes", bg=self.background, size=theme.HEADLINE)
        notes = sorted(self.host.notes, key=lambda n: -n.id)
        list_bottom = bottom - FAB - 80  # the list stops above the new-note button, never under it
        with c.scroll_view(screen, bar, list_bottom) as view:
            y = 20.0
            if not notes:
                with view.row(y, 200):
                    c.text(
                        c.dw / 2, y + 100, "No notes yet", size=theme.LARGE, color=theme.TEXT_2, anchor="mm"
                    )
            for note in notes:
                lines = c.wrap(note.body, theme.BODY, c.dw - 200, max_lines=3) if note.body else []
                height = 70 + (70 if note.title else 0) + 56 * len(lines)
                with view.row(y, height):
                    box = (48, y, c.dw - 48, y + height - 20)
                    c.rect(box, theme.WHITE, radius=28, outline=theme.DIVIDER, width=3)
                    ty = y + 40
                    if note.title:
                        c.text(90, ty, note.title, size=theme.LARGE, bold=True)
                        ty += 70
                    for line in lines:
                        c.text(90, ty, line, size=theme.BODY, color=theme.TEXT_2)
                        ty += 56
                    c.tap(box, lambda n=note: self.open_note(str(n.id)), note.title or "note")  # type: ignore[misc]
                y += height
            view.end(y)
        cx, cy = c.dw - 150, bottom - 150
        c.rect((cx - FAB / 2, cy - FAB / 2, cx + FAB / 2, cy + FAB / 2), "#FFE08A", radius=48)
        icons.icon(c, "plus", cx, cy, 72, theme.TEXT, "new note")
        c.tap((cx - FAB / 2, cy - FAB / 2, cx + FAB / 2, cy + FAB / 2), self.new_note, "new note")

    def new_note(self) -> None:
        self.open_note("")
        self.host.focus(self.screen.fields["body"])

    def open_note(self, note_id: str) -> None:
        note = self._note(note_id)
        screen = Screen("edit", item=note_id)
        screen.fields["title"] = TextField("title", "Title", value=note.title if note else "")
        screen.fields["body"] = TextField("body", "Note", value=note.body if note else "", multiline=True)
        for field in screen.fields.values():
            field.on_change = lambda _value: self._save(screen)
        screen.fields["title"].on_submit = lambda _value: self.host.focus(screen.fields["body"])
        self.push(screen)
        if note is not None:
            self.event("open_note", note_id)

    def _save(self, screen: Screen) -> None:
        title, body = screen.fields["title"].value, screen.fields["body"].value
        note = self._note(screen.item)
        if note is None:
            if not (title.strip() or body.strip()):
                return
            note = Note(id=self.host.new_note_id())
            self.host.notes.append(note)
            screen.item = str(note.id)
            self.event("create_note", screen.item)
        note.title, note.body = title, body

    # ---------------------------------------------------------------- editor
    def screen_edit(self, c: Canvas, screen: Screen, top: float, bottom: float) -> None:
        bar = widgets.app_bar(
            c, top, "", back=self._done, actions=[("check", "done", self._done)], bg=self.background
        )
        title, body = screen.fields["title"], screen.fields["body"]
        focused = self.host.focused()
        title_box = (48, bar, c.dw - 48, bar + 130)
        widgets.text_field(c, self.host, title, title_box, glyph=None, size=theme.TITLE, bg=self.background)
        body_top = bar + 150
        size = theme.BODY
        lines = c.wrap(body.value, size, c.dw - BODY_X - 80) if body.value else []
        line_h = 60.0
        content = 40 + line_h * max(1, len(lines)) + 40
        viewport = bottom - body_top
        if focused is body:
            screen.scroll = max(0.0, content - viewport)
        with c.scroll_view(screen, body_top, bottom) as view:
            y = 40.0
            if not lines:
                with view.row(y - 20, line_h + 20):
                    c.text(BODY_X, y, "Note", size=size, color=theme.TEXT_2)
                    end = (BODY_X, y)
            for line in lines:
                with view.row(y - 20, line_h + 20):
                    ink = c.text(BODY_X, y, line, size=size)
                end = (ink[2] if line.strip() else BODY_X, y)
                y += line_h
            if focused is body:
                cursor_y = end[1] if lines else 40.0
                with view.row(cursor_y - 20, line_h + 20):
                    x = end[0] if lines and lines[-1].strip() else BODY_X
                    c.rect((x + 4, cursor_y - 4, x + 8, cursor_y + 50), theme.ACCENT)
            view.end(content)
        c.tap(
            (0, body_top, c.dw, bottom),
            lambda: self.host.focus(body),
            "Note",
            role="edit",
            focused=focused is body,
        )

    def _done(self) -> None:
        self.back()
