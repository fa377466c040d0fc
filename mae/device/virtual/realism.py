"""Realism for the virtual phone: the ways real phones get in an agent's way, switchable and seeded.

``Realism`` is the typed setting (a task carries one; a suite-wide override may replace it). With
``enabled`` on, each feature below can still be switched off on its own; every random choice comes
from ``seed`` and the app's label, so two phones with the same setting behave identically.

- ``popups``: the first time an app opens it may show a first-run card (close it with its X or
  "Got it") and/or a permission dialog ("While using the app" / "Don't allow"). Back dismisses both.
- ``sign_in_nag``: after the first search in an app, a "Sign in" sheet ("Not now" dismisses it).
- ``loading``: search results show a spinner for a few virtual seconds; nothing is tappable meanwhile.
- ``slow_open``: some apps show a blank splash screen for a few seconds when opened from cold.
- ``sponsored``, ``near_duplicates``, ``out_of_stock``: content flagged so in the data files is shown
  (sponsored results above real ones, look-alike products, items that cannot be added to the cart).
- ``keyboard_covers``: the keyboard is drawn over the app instead of the app shrinking above it, so
  fields and buttons low on the screen are hidden until the keyboard is closed (Back).

A dialog blocks every tap outside it (the tap lands on the scrim and does nothing: the app behind is
not laid out) until it is dismissed; the navigation bar stays usable, and Back dismisses the top dialog.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, model_validator

from mae.device.virtual import icons, theme
from mae.device.virtual.canvas import Canvas

SCRIM = "#5F6368"
DIALOG_BG = "#F3F6FC"
NOTIFY_APPS_P = 0.6
FIRST_RUN_P = 0.7
SLOW_OPEN_P = 0.5
LOCATION_APPS = ("maps",)
NAG_WORDING = [
    ("Sign in to {app}", "Save your searches and get recommendations made for you."),
    ("Sign in for a better experience", "Keep your history and settings in sync across your devices."),
    ("Get more from {app}", "Sign in to track orders, save favourites and see personal picks."),
    ("Welcome back", "Sign in to {app} to pick up where you left off."),
]
"""Sign-in sheet wording, drawn per app and seed (every variant keeps "Not now")."""
DISMISS_LABELS = ("close", "Got it", "Not now", "Don't allow", "Reject all", "OK", "No thanks")
"""Labels of the buttons that dismiss a dialog without side effects (authoring tools look for them)."""


class Realism(BaseModel):
    """Which obstacles the phone puts up (see the module docstring); off unless ``enabled``."""

    enabled: bool = False
    seed: int = 0
    popups: bool = True
    sign_in_nag: bool = True
    loading: bool = True
    slow_open: bool = True
    sponsored: bool = True
    near_duplicates: bool = True
    out_of_stock: bool = True
    keyboard_covers: bool = True
    loading_s: tuple[int, int] = Field(default=(1, 3), description="range of loading delays (seconds)")

    @model_validator(mode="after")
    def _delays(self) -> Realism:
        low, high = self.loading_s
        if not 0 <= low <= high <= 30:
            raise ValueError(f"loading_s must be seconds with 0 <= low <= high <= 30, not {low}, {high}")
        return self

    def on(self, feature: str) -> bool:
        """Whether ``feature`` (a field name above) is active."""
        return self.enabled and bool(getattr(self, feature))

    def rng(self, *parts: str) -> random.Random:
        """A random generator determined by the seed and ``parts`` (e.g. the app label)."""
        return random.Random(":".join([str(self.seed), *parts]))


@dataclass
class Button:
    label: str
    action: Callable[[], object]
    primary: bool = False


@dataclass
class Dialog:
    """A modal dialog drawn over the app (``card``: centred; ``sheet``: at the bottom)."""

    kind: str
    app: str
    title: str
    body: str
    buttons: list[Button] = field(default_factory=list)
    on_close: Callable[[], object] | None = None
    """What the X in the corner does (no X when None)."""
    style: str = "card"


class RealismRuntime:
    """The per-phone state of the realism features: dialogs shown, loading timers, apps opened."""

    def __init__(self, settings: Realism, clock: Callable[[], float]) -> None:
        self.settings = settings
        self._clock = clock
        self.dialogs: list[Dialog] = []
        self.opened: set[str] = set()
        self.searches: dict[str, int] = {}
        self.busy_until: dict[str, float] = {}
        self.busy_kind: dict[str, str] = {}
        self.dismissed: list[str] = []

    def on(self, feature: str) -> bool:
        return self.settings.on(feature)

    # ---------------------------------------------------------------- triggers
    def on_launch(self, label: str, kind: str) -> None:
        """An app came to the front: first-run dialogs and a cold start the first time."""
        if label in self.opened:
            return
        self.opened.add(label)
        if self.on("slow_open") and self.settings.rng("slow", label).random() < SLOW_OPEN_P:
            self._busy(label, "splash", self.settings.rng("slow_s", label).randint(2, 4))
        if not self.on("popups"):
            return
        rng = self.settings.rng("popups", label)
        if rng.random() < FIRST_RUN_P:
            self.dialogs.append(self._first_run(label, rng))
        if kind in LOCATION_APPS:
            self.dialogs.append(self._permission(label, "access this device's location"))
        elif kind not in ("notes", "list") and rng.random() < NOTIFY_APPS_P:
            self.dialogs.append(self._notifications(label))

    def on_event(self, app: str, kind: str) -> None:
        """An app did something: searches load for a while and may trigger the sign-in nag."""
        if kind not in ("search", "scholar_search"):
            return
        if self.on("loading"):
            low, high = self.settings.loading_s
            count = self.searches.get(app, 0)
            delay = self.settings.rng("loading", app, str(count)).randint(low, high)
            self._busy(app, "spinner", delay)
        if self.on("sign_in_nag") and app not in self.searches:
            self.dialogs.append(self._nag(app))
        self.searches[app] = self.searches.get(app, 0) + 1

    def _busy(self, app: str, kind: str, seconds: int) -> None:
        self.busy_until[app] = self._clock() + seconds + 1  # the action that starts it takes a second
        self.busy_kind[app] = kind

    # ---------------------------------------------------------------- queries
    def busy(self, app: str) -> str:
        """``splash`` or ``spinner`` while ``app`` is still loading, else ''."""
        if self._clock() < self.busy_until.get(app, 0.0):
            return self.busy_kind.get(app, "spinner")
        return ""

    def dialog(self, app: str) -> Dialog | None:
        """The dialog shown over ``app`` (only once the app has finished loading)."""
        if self.busy(app):
            return None
        return next((d for d in self.dialogs if d.app == app), None)

    def back(self, app: str) -> bool:
        """Back pressed: dismiss the top dialog of ``app``; False when there was none."""
        shown = self.dialog(app)
        if shown is None:
            return False
        self._dismiss(shown, "back")
        return True

    def _dismiss(self, dialog: Dialog, how: str) -> None:
        if dialog in self.dialogs:
            self.dialogs.remove(dialog)
        self.dismissed.append(f"{dialog.app}:{dialog.kind}:{how}")

    # ---------------------------------------------------------------- dialogs
    def _first_run(self, app: str, rng: random.Random) -> Dialog:
        variants = [
            ("whats_new", f"What's new in {app}", "A fresh look, faster search and a new home screen."),
            ("promo", f"Welcome to {app}", "Turn on personalised suggestions to get the most out of it."),
        ]
        kind, title, body = variants[rng.randrange(len(variants))]
        dialog = Dialog(kind=kind, app=app, title=title, body=body)
        dialog.on_close = lambda: self._dismiss(dialog, "close")
        if rng.random() < 0.5:
            dialog.buttons.append(Button("Got it", lambda: self._dismiss(dialog, "button"), primary=True))
        return dialog

    def _permission(self, app: str, what: str) -> Dialog:
        dialog = Dialog(kind="permission", app=app, title=f"Allow {app} to {what}?", body="")
        dialog.buttons = [
            Button("While using the app", lambda: self._dismiss(dialog, "allow")),
            Button("Only this time", lambda: self._dismiss(dialog, "allow_once")),
            Button("Don't allow", lambda: self._dismiss(dialog, "deny")),
        ]
        return dialog

    def _notifications(self, app: str) -> Dialog:
        """Android's notification permission: Allow / Don't allow (no "while using the app")."""
        dialog = Dialog(kind="permission", app=app, title=f"Allow {app} to send you notifications?", body="")
        dialog.buttons = [
            Button("Allow", lambda: self._dismiss(dialog, "allow")),
            Button("Don't allow", lambda: self._dismiss(dialog, "deny")),
        ]
        return dialog

    def _nag(self, app: str) -> Dialog:
        title, body = NAG_WORDING[self.settings.rng("nag", app).randrange(len(NAG_WORDING))]
        dialog = Dialog(
            kind="sign_in",
            app=app,
            title=title.format(app=app),
            body=body.format(app=app),
            style="sheet",
        )

        def sign_in() -> None:
            self._dismiss(dialog, "sign_in")
            failed = Dialog(
                kind="sign_in_failed",
                app=app,
                title="Couldn't sign in",
                body="Check your connection and try again later.",
            )
            failed.buttons = [Button("OK", lambda: self._dismiss(failed, "button"), primary=True)]
            self.dialogs.insert(0, failed)

        dialog.buttons = [
            Button("Sign in", sign_in, primary=True),
            Button("Not now", lambda: self._dismiss(dialog, "button")),
        ]
        return dialog


# -------------------------------------------------------------------------------------- drawing


def draw_busy(c: Canvas, kind: str, top: float, bottom: float) -> None:
    """A blank splash screen or a loading spinner (nothing tappable)."""
    c.rect((0, top, c.dw, bottom), theme.WHITE)
    if kind == "spinner":
        cx, cy = c.dw / 2, (top + bottom) / 2
        c.arc((cx - 70, cy - 70, cx + 70, cy + 70), 200, 470, theme.ACCENT, 14)
        c.icon_element((cx - 70, cy - 70, cx + 70, cy + 70), "loading spinner")


def draw_dialog(c: Canvas, dialog: Dialog, top: float, bottom: float) -> None:
    """A scrim over the app (which is not drawn: nothing beneath can be tapped) and ``dialog``."""
    c.rect((0, top, c.dw, bottom), SCRIM)
    width = c.dw - 2 * 90
    lines = c.wrap(dialog.body, theme.BODY, width - 120) if dialog.body else []
    title_lines = c.wrap(dialog.title, theme.LARGE, width - 200)
    stacked = dialog.kind == "permission"
    buttons_h = len(dialog.buttons) * 130 if stacked else (130 if dialog.buttons else 0)
    height = 80 + len(title_lines) * 66 + len(lines) * 58 + 50 + buttons_h + 40
    if dialog.style == "sheet":
        box = (0.0, bottom - height, c.dw, bottom)
    else:
        mid = (top + bottom) / 2
        box = (90.0, mid - height / 2, c.dw - 90, mid + height / 2)
    left, y0, right, _ = box
    c.rect(box, DIALOG_BG, radius=48)
    y = y0 + 80
    for line in title_lines:
        c.text(left + 60, y, line, size=theme.LARGE, bold=True, anchor="lm")
        y += 66
    for line in lines:
        c.text(left + 60, y, line, size=theme.BODY, color=theme.TEXT_2, anchor="lm")
        y += 58
    y += 30
    if dialog.on_close is not None:
        cx, cy = right - 75, y0 + 75
        icons.icon(c, "close", cx, cy, 48, theme.TEXT_2, "close")
        c.tap((cx - 60, cy - 60, cx + 60, cy + 60), dialog.on_close, "close")
    if stacked:
        for button in dialog.buttons:
            box_b = (left + 60, y, right - 60, y + 110)
            c.rect(box_b, theme.ACCENT_BG, radius=55)
            c.text((left + right) / 2, y + 55, button.label, size=theme.BODY, color="#062E6F", anchor="mm")
            c.tap(box_b, button.action, button.label)
            y += 130
    else:
        x = right - 60
        for button in reversed(dialog.buttons):
            w = c.measure(button.label, theme.BODY) + 90
            box_b = (x - w, y, x, y + 110)
            if button.primary:
                c.rect(box_b, theme.ACCENT, radius=55)
                colour = theme.WHITE
            else:
                colour = theme.ACCENT
            c.text(x - w / 2, y + 55, button.label, size=theme.BODY, color=colour, anchor="mm")
            c.tap(box_b, button.action, button.label)
            x -= w + 30
