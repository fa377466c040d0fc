"""Realism for the virtual phone: the ways real phones get in an agent's way, switchable and seeded.

``Realism`` is the typed setting (a task carries one; a suite-wide override may replace it). With
``enabled`` on, each feature below can still be switched off on its own; every random choice comes
from ``seed`` and the app's label, so two phones with the same setting behave identically.

- ``popups``: the first time an app opens it may show a first-run dialog (close it with its X or its
  dismiss button: "Got it", "Skip", "No thanks", "Maybe later") and/or a permission dialog ("While
  using the app" / "Don't allow" for location, "Allow" / "Don't allow" for notifications), in an order
  drawn per app and seed. Back dismisses each of them.
- ``sign_in_nag``: a "Sign in" prompt once per app that has a search box, either when the app first
  opens or after its first search (drawn per app and seed); "Not now", "Skip", "No thanks" or "Maybe
  later" (drawn likewise) or Back dismisses it.
- ``loading``: search results show a spinner for a few virtual seconds; nothing is tappable meanwhile.
- ``slow_open``: some apps show a blank splash screen for a few seconds when opened from cold.
- ``sponsored``, ``near_duplicates``, ``out_of_stock``: content flagged so in the data files is shown
  (sponsored results above real ones, look-alike products, items that cannot be added to the cart).
- ``keyboard_covers``: the keyboard is drawn over the app instead of the app shrinking above it, so
  fields and buttons low on the screen are hidden until the keyboard is closed (Back).

Each app draws its dialogs' look from the seed too: a centred card, a bottom sheet or a full-screen
interstitial (permission dialogs always look like Android's). Cards and sheets show the app dimmed
behind a translucent scrim; only the dialog is tappable and only the dialog is in the accessibility
tree (as in a ``uiautomator dump`` of a focused dialog window). A tap on the scrim dismisses a card
or a sheet (Android's "cancel on touch outside") and does nothing over a permission dialog; the
navigation bar stays usable, and Back dismisses the top dialog.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, model_validator

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
"""Sign-in prompt wording, drawn per app and seed."""
DISMISS_WORDS = ("Not now", "Skip", "No thanks", "Maybe later")
"""Labels of a sign-in prompt's or a first-run dialog's dismiss button, drawn per app and seed."""
FIRST_RUN_WORDS = ("Got it", *DISMISS_WORDS)
STYLES = ("card", "sheet", "fullscreen")
"""Looks of an app's own dialogs: a centred card, a bottom sheet, a full-screen interstitial."""
NAG_STYLE_WEIGHTS = (1, 3, 1)
FIRST_RUN_STYLE_WEIGHTS = (3, 1, 1)
NAG_KINDS = ("maps", "browser", "social", "shop", "trips")
"""Kinds of app with a search box: the ones that ask the user to sign in."""
NAG_AT_LAUNCH_P = 0.5
DISMISS_LABELS = ("close", *FIRST_RUN_WORDS, "Don't allow", "Reject all", "OK")
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
    paging: bool = True
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
    """A modal dialog drawn over the app (``style``: one of ``STYLES``)."""

    kind: str
    app: str
    title: str
    body: str
    buttons: list[Button] = field(default_factory=list)
    on_close: Callable[[], object] | None = None
    """What the X in the corner does (no X when None)."""
    style: str = "card"
    outside_cancels: bool = True
    """Whether a tap on the scrim around it dismisses it (not for permission dialogs)."""


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
        self.nagged: set[str] = set()

    def on(self, feature: str) -> bool:
        return self.settings.on(feature)

    # ---------------------------------------------------------------- triggers
    def on_launch(self, label: str, kind: str) -> None:
        """An app came to the front: first-run dialogs and a cold start the first time.

        The dialogs an app shows at its first launch (first-run, permission, sign-in prompt) come in
        an order drawn per app and seed; none of them changes what the app shows once dismissed.
        """
        if label in self.opened:
            return
        self.opened.add(label)
        if self.on("slow_open") and self.settings.rng("slow", label).random() < SLOW_OPEN_P:
            self._busy(label, "splash", self.settings.rng("slow_s", label).randint(2, 4))
        shown: list[Dialog] = []
        if self.on("popups"):
            rng = self.settings.rng("popups", label)
            if rng.random() < FIRST_RUN_P:
                shown.append(self._first_run(label, rng))
            if kind in LOCATION_APPS:
                shown.append(self._permission(label, "access this device's location"))
            elif kind not in ("notes", "list") and rng.random() < NOTIFY_APPS_P:
                shown.append(self._notifications(label))
        if self.on("sign_in_nag") and kind in NAG_KINDS and self.nag_at_launch(label):
            shown.append(self._nag(label))
            self.nagged.add(label)
        self.settings.rng("order", label).shuffle(shown)
        self.dialogs.extend(shown)

    def nag_at_launch(self, app: str) -> bool:
        """Whether ``app`` asks to sign in when it first opens (else after its first search)."""
        return self.settings.rng("nag_when", app).random() < NAG_AT_LAUNCH_P

    def on_event(self, app: str, kind: str) -> None:
        """An app did something: searches load for a while and may trigger the sign-in nag."""
        if kind not in ("search", "scholar_search"):
            return
        if self.on("loading"):
            low, high = self.settings.loading_s
            count = self.searches.get(app, 0)
            delay = self.settings.rng("loading", app, str(count)).randint(low, high)
            self._busy(app, "spinner", delay)
        if self.on("sign_in_nag") and app not in self.searches and app not in self.nagged:
            self.dialogs.append(self._nag(app))
            self.nagged.add(app)
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

    def tap_outside(self, app: str) -> bool:
        """A tap on the scrim around the top dialog of ``app``: dismiss it where Android would."""
        shown = self.dialog(app)
        if shown is None or not shown.outside_cancels or shown.style == "fullscreen":
            return False
        self._dismiss(shown, "outside")
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
        look = self.settings.rng("first_run_look", app)
        style = look.choices(STYLES, weights=FIRST_RUN_STYLE_WEIGHTS)[0]
        dialog = Dialog(kind=kind, app=app, title=title, body=body, style=style)
        with_x, with_button = rng.random() < 0.5, rng.random() < 0.5
        if with_x or not with_button:
            dialog.on_close = lambda: self._dismiss(dialog, "close")
        if with_button:
            word = look.choice(FIRST_RUN_WORDS)
            dialog.buttons.append(Button(word, lambda: self._dismiss(dialog, "button"), primary=True))
        return dialog

    def _permission(self, app: str, what: str) -> Dialog:
        dialog = Dialog(
            kind="permission", app=app, title=f"Allow {app} to {what}?", body="", outside_cancels=False
        )
        dialog.buttons = [
            Button("While using the app", lambda: self._dismiss(dialog, "allow")),
            Button("Only this time", lambda: self._dismiss(dialog, "allow_once")),
            Button("Don't allow", lambda: self._dismiss(dialog, "deny")),
        ]
        return dialog

    def _notifications(self, app: str) -> Dialog:
        """Android's notification permission: Allow / Don't allow (no "while using the app")."""
        dialog = Dialog(
            kind="permission",
            app=app,
            title=f"Allow {app} to send you notifications?",
            body="",
            outside_cancels=False,
        )
        dialog.buttons = [
            Button("Allow", lambda: self._dismiss(dialog, "allow")),
            Button("Don't allow", lambda: self._dismiss(dialog, "deny")),
        ]
        return dialog

    def _nag(self, app: str) -> Dialog:
        title, body = NAG_WORDING[self.settings.rng("nag", app).randrange(len(NAG_WORDING))]
        look = self.settings.rng("nag_look", app)
        dialog = Dialog(
            kind="sign_in",
            app=app,
            title=title.format(app=app),
            body=body.format(app=app),
            style=look.choices(STYLES, weights=NAG_STYLE_WEIGHTS)[0],
        )
        word = look.choice(DISMISS_WORDS)

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
            Button(word, lambda: self._dismiss(dialog, "button")),
        ]
        return dialog
