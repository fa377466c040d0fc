"""``VirtualPhone``: a deterministic Android-like phone rendered with Pillow, implementing ``Device``.

Each operation changes the phone's state and lays out the new screen (display list, ground truth, tap
targets); pixels are painted only when ``screenshot()`` is called. Nothing sleeps: ``wait`` advances
a virtual clock.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from PIL import Image

from mae.device.virtual import clock, keyboard, system, theme
from mae.device.virtual.a11y import build_tree
from mae.device.virtual.apps import make_app
from mae.device.virtual.apps.base import App, TextField
from mae.device.virtual.canvas import Canvas, Frame, Layer
from mae.device.virtual.content import AppSpec, Content, load_content
from mae.device.virtual.overlays import draw_busy, draw_dialog, scrim_alpha
from mae.device.virtual.realism import Realism, RealismRuntime
from mae.device.virtual.state import CartItem, Event, LogEntry, Note, PhoneState, Route
from mae.errors import ActionError, ConfigError
from mae.perception.a11y import A11yTree
from mae.perception.elements import Element

LAUNCHER = "com.mae.launcher"
PILLOW_BLOCKS = 4
"""Freed image blocks Pillow may keep for reuse: screenshots are 10 MB each, and reusing memory instead
of mapping fresh pages makes painting a screen about three times faster."""
STEP_SECONDS = 1.0


class VirtualPhone(keyboard.KeyHandler):
    """The built-in virtual phone (see ``docs/virtual-phone.md``)."""

    def __init__(
        self,
        width: int = 1080,
        height: int = 2340,
        data_dir: str | Path | None = None,
        realism_settings: Realism | None = None,
    ) -> None:
        if width < 360 or height < 640:
            raise ConfigError(f"virtual screen {width}x{height} is too small; use at least 360x640")
        self._size = (width, height)
        if Image.core.get_blocks_max() < PILLOW_BLOCKS:
            Image.core.set_blocks_max(PILLOW_BLOCKS)
        self.content: Content = load_content(Path(data_dir).resolve() if data_dir else None)
        self._specs = {spec.label: spec for spec in self.content.apps.apps}
        self._layers: dict[str, Layer] = {}
        self.realism_settings = realism_settings or Realism()
        self.reset()

    def set_realism(self, settings: Realism) -> None:
        """Use realism ``settings`` from now on, starting again from a clean phone."""
        self.realism_settings = settings
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Back to a clean phone: home screen, no recent apps, seeded notes, empty carts and logs."""
        self.notes: list[Note] = [
            Note(id=i + 1, title=n.title, body=n.body, seeded=True)
            for i, n in enumerate(self.content.notes.notes)
        ]
        self.carts: dict[str, list[CartItem]] = {}
        self.route: Route | None = None
        self.log: list[LogEntry] = []
        self.events: list[Event] = []
        self.seen: dict[str, None] = {}
        self.clock_s = 0.0
        self.realism = RealismRuntime(self.realism_settings, lambda: self.clock_s)
        self.apps: dict[str, App] = {label: make_app(spec, self) for label, spec in self._specs.items()}
        self.foreground: str = ""
        self.recents: list[str] = []
        self.switcher_open = False
        self.switcher_index = 0
        self.keyboard_mode = "lower"
        self._focus: TextField | None = None
        self._focus_screen: object | None = None
        self._last_frames: dict[str, Frame] = {}
        self._thumbs: dict[tuple[str, int], Image.Image] = {}
        self._image: Image.Image | None = None
        self._frame = self._build()

    def state(self) -> PhoneState:
        """A snapshot of everything inspectable (see ``PhoneState``)."""
        app = self.current_app
        return PhoneState(
            app=app.label if app else "",
            screen=self.screen_name,
            item=app.screen.item if app else "",
            keyboard=self.keyboard_active(),
            notes=[n.model_copy() for n in self.notes],
            carts={k: [i.model_copy() for i in v] for k, v in self.carts.items()},
            route=self.route.model_copy() if self.route else None,
            recents=list(self.recents),
            clock_s=self.clock_s,
            log=list(self.log),
            events=list(self.events),
            seen=list(self.seen),
        )

    @property
    def current_app(self) -> App | None:
        """The app in front, or None on the home screen and in the app switcher."""
        if self.switcher_open or not self.foreground:
            return None
        return self.apps[self.foreground]

    @property
    def screen_name(self) -> str:
        """``home``, ``switcher`` or ``<App label>/<screen>``."""
        if self.switcher_open:
            return "switcher"
        app = self.current_app
        return f"{app.label}/{app.screen.name}" if app else "home"

    def spec(self, label: str) -> AppSpec:
        return self._specs[label]

    def clock_text(self) -> str:
        """The status bar's time (``"7:41 PM"``; see ``clock``)."""
        return clock.clock_text(self.clock_s)

    # ------------------------------------------------------------------ host interface for apps
    def event(self, app: str, kind: str, value: str) -> None:
        self.events.append(Event(step=len(self.log), app=app, kind=kind, value=value))
        self.realism.on_event(app, kind)

    def focus(self, text_field: TextField, select: bool = False) -> None:
        self._focus = text_field
        self._focus_screen = self.current_app.screen if self.current_app else None
        text_field.selected = select and bool(text_field.value)
        self.keyboard_mode = "lower"

    def blur(self) -> None:
        if self._focus is not None:
            self._focus.selected = False
        self._focus = None
        self._focus_screen = None

    def focused(self) -> TextField | None:
        return self._focus

    def new_note_id(self) -> int:
        return max((n.id for n in self.notes), default=0) + 1

    def launch(self, label: str) -> None:
        """Bring app ``label`` to the front (resuming where it was)."""
        self._remember_foreground()
        self.blur()
        self.switcher_open = False
        self.foreground = label
        if label in self.recents:
            self.recents.remove(label)
        self.recents.insert(0, label)
        self.event("system", "open_app", label)
        self.realism.on_launch(label, self._specs[label].kind)

    def search_from_home(self) -> None:
        browser = next((s.label for s in self._specs.values() if s.kind == "browser"), None)
        if browser is None:
            return
        self.launch(browser)
        app = self.apps[browser]
        app.reset()
        start = getattr(app, "focus_search", None)
        if callable(start):
            start()

    # ------------------------------------------------------------------ navigation (nav bar targets too)
    def _remember_foreground(self) -> None:
        app = self.current_app
        if app is not None:
            self._last_frames[app.label] = self._frame

    def nav_back(self) -> None:
        app = self.current_app
        if (app is not None and self.realism.back(app.label)) or self.keyboard_active():
            self.blur()
        elif self.switcher_open:
            self.switcher_open = False
        elif self.current_app is not None and not self.current_app.back():
            self._go_home()

    def nav_home(self) -> None:
        self._go_home()

    def nav_recents(self) -> None:
        self._remember_foreground()
        self.blur()
        self.switcher_open = True
        self.switcher_index = 0

    def _go_home(self) -> None:
        self._remember_foreground()
        self.blur()
        self.switcher_open = False
        self.foreground = ""

    def clear_recents(self) -> None:
        for label in self.recents:
            self.apps[label].reset()
        self.recents = []
        self._go_home()

    # ------------------------------------------------------------------ keyboard keys
    def key(self, char: str) -> None:
        if self._focus is not None:
            self._focus.insert(char)
        if self.keyboard_mode == "upper":
            self.keyboard_mode = "lower"

    def key_backspace(self) -> None:
        if self._focus is not None:
            self._focus.backspace()

    def key_mode(self, mode: str) -> None:
        self.keyboard_mode = mode

    def key_enter(self) -> None:
        self._enter()

    def _enter(self) -> str:
        field = self._focus
        if field is None:
            return "no text field has focus"
        if field.multiline:
            field.insert("\n")
            return "new line"
        if field.on_submit is not None:
            value = field.value
            self.blur()
            field.on_submit(value)
            return f"submitted {value!r}"
        self.blur()
        return "closed the keyboard"

    # ------------------------------------------------------------------ layout and pixels
    def _build(self) -> Frame:
        width, height = self._size
        app = self.current_app
        self._dialog_box: tuple[int, int, int, int] | None = None
        c = Canvas(width, height, theme.WHITE, layers=self._layers)
        status_bg = theme.WALLPAPER_TOP
        if self.switcher_open:
            system.switcher(c, self, self._thumbnail)
            status_bg = theme.SWITCHER_BG
        elif app is None:
            system.home(c, self)
        else:
            busy = self.realism.busy(app.label)
            dialog = self.realism.dialog(app.label)
            if busy or dialog:
                self.blur()
            bottom = c.dh - theme.NAV_H
            covers = self.realism.on("keyboard_covers")
            keys_top = bottom - theme.KEYBOARD_H if self.keyboard_active() else bottom
            if keys_top < bottom and not covers:
                self._keyboard(c, keys_top)
            if busy:
                draw_busy(c, busy, theme.STATUS_H, bottom)
            elif dialog is None:
                app.build(c, theme.STATUS_H, bottom if covers else keys_top)
            elif scrim_alpha(dialog) < 1.0:  # the app's pixels, dimmed: nothing of it is tappable
                behind = Canvas(width, height, theme.WHITE, layers=self._layers)
                app.build(behind, theme.STATUS_H, bottom)
                c.backdrop(behind.frame().ops, (0, theme.STATUS_H, c.dw, bottom), scrim_alpha(dialog))
            if keys_top < bottom and covers:
                self._keyboard(c, keys_top)
            if dialog is not None:
                left, top, right, low = draw_dialog(c, dialog, theme.STATUS_H, bottom)
                self._dialog_box = (c.px(left), c.px(top), c.px(right), c.px(low))
                if scrim_alpha(dialog) < 1.0:
                    self._seen_above(c, app, top)
            status_bg = app.status_color
        system.status_bar(c, self.clock_text(), status_bg)
        system.nav_bar(c, self)
        return c.frame()

    def _seen_above(self, c: Canvas, app: App, dialog_top: float) -> None:
        """Rows wholly visible above a dialog, through its translucent scrim, are on screen: a person
        reads them there (a real model read three posts above a sign-in sheet), so they count as seen."""
        above = Canvas(c.width, c.height, theme.WHITE, layers=self._layers)
        app.build(above, theme.STATUS_H, max(theme.STATUS_H, dialog_top))
        for key in above.frame().seen:
            c.mark_seen(key)

    def _keyboard(self, c: Canvas, top: float) -> None:
        mode = self.keyboard_mode
        c.layer(
            f"keyboard:{mode}",
            (0, top, c.dw, top + theme.KEYBOARD_H),
            lambda s: keyboard.build(s, self, mode),
            theme.KEYBOARD_BG,
        )

    def _thumbnail(self, label: str, width: int, height: int) -> Image.Image:
        frame = self._last_frames.get(label)
        key = (label, id(frame))
        if key not in self._thumbs:
            source = frame.paint() if frame is not None else Image.new("RGB", self._size, theme.WHITE)
            self._thumbs = {k: v for k, v in self._thumbs.items() if k[0] != label}
            self._thumbs[key] = system.blurred(source, width, height)
        return self._thumbs[key]

    def _after(self, action: str, before: tuple[str, str], effect: str) -> None:
        self.clock_s += STEP_SECONDS
        self.log.append(
            LogEntry(
                index=len(self.log),
                action=action,
                app=before[0],
                screen=before[1],
                effect=effect,
                clock_s=self.clock_s,
            )
        )
        app = self.current_app
        if self._focus is not None and (app is None or self._focus_screen is not app.screen):
            self.blur()
        self._frame = self._build()
        self._image = None
        for key in self._frame.seen:
            self.seen.setdefault(key, None)

    def _before(self) -> tuple[str, str]:
        app = self.current_app
        return (app.label if app else "", self.screen_name)

    # ------------------------------------------------------------------ Device protocol
    @property
    def name(self) -> str:
        return "virtual"

    def screen_size(self) -> tuple[int, int]:
        return self._size

    def screenshot(self) -> Image.Image:
        """The current screen as a fresh RGB image."""
        image = self._image
        if image is None:
            frame = self._frame
            image = frame.paint()
            if self._frame is frame:  # an action during the paint made this frame stale: don't cache it
                self._image = image
        return image.copy()

    def ground_truth(self) -> list[Element]:
        """Every text and icon drawn on the current screen, with its box."""
        return [e.model_copy() for e in self._frame.elements]

    def ui_tree(self) -> A11yTree:
        """The accessibility tree of the current screen (see ``mae.device.virtual.a11y``)."""
        app = self.current_app
        label, package = (app.label, app.spec.package) if app else ("", LAUNCHER)
        return build_tree(self._frame, label, package, self.keyboard_active(), self._dialog_box)

    def resolve_app(self, name: str) -> str:
        """The label of the installed app called ``name`` (label, alias or package, any case)."""
        wanted = name.strip().lower()
        for label, spec in self._specs.items():
            names = [label, spec.package, *spec.aliases]
            if wanted in (n.lower() for n in names):
                return label
        choices = {n.lower(): label for label, s in self._specs.items() for n in [label, *s.aliases]}
        close = difflib.get_close_matches(wanted, list(choices), n=3, cutoff=0.5)
        hint = ", ".join(dict.fromkeys(choices[c] for c in close)) or ", ".join(self._specs)
        raise ActionError(f"no app named {name!r} on the virtual phone; did you mean: {hint}?")

    def open_app(self, name: str) -> None:
        before = self._before()
        label = self.resolve_app(name)
        self.launch(label)
        self._after(f"Open_App({json.dumps(name)})", before, f"opened {label}")

    def tap(self, x: int, y: int) -> None:
        self._check_point(x, y)
        before = self._before()
        target = self._frame.target_at(x, y)
        app = self.current_app
        if target is not None:
            target.action()
            effect = f"tapped {target.label!r}"
        elif app is not None and self._outside_dialog(x, y) and self.realism.tap_outside(app.label):
            effect = "tapped outside the dialog, which closed it"
        else:
            effect = "nothing there"
        self._after(f"Tap({x}, {y})", before, effect)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 400) -> None:
        self._check_point(x1, y1)
        self._check_point(x2, y2)
        before = self._before()
        effect = self._swipe(x1, y1, x2, y2)
        self._after(f"Swipe({x1}, {y1}, {x2}, {y2})", before, effect)

    def _swipe(self, x1: int, y1: int, x2: int, y2: int) -> str:
        k = self._size[0] / theme.DESIGN_WIDTH
        dx, dy = (x2 - x1) / k, (y2 - y1) / k
        if self.switcher_open and self.recents:
            if abs(dx) >= abs(dy) and abs(dx) >= 150:
                step = 1 if dx > 0 else -1
                self.switcher_index = min(max(self.switcher_index + step, 0), len(self.recents) - 1)
                return f"showing {self.recents[self.switcher_index]}"
            if dy <= -300:
                label = self.recents.pop(self.switcher_index)
                self.apps[label].reset()
                self.switcher_index = min(self.switcher_index, max(0, len(self.recents) - 1))
                return f"closed {label}"
            return "nothing scrolled"
        scroll = self._frame.scroll
        if scroll is None or abs(dy) < abs(dx) or abs(dy) < 10:
            return "nothing scrolled"
        left, top, right, bottom = scroll.box
        if not (left <= x1 < right and top <= y1 < bottom):
            return "nothing scrolled"
        old = scroll.owner.scroll
        scroll.owner.scroll = min(max(old - dy, 0.0), scroll.max_scroll)
        moved = scroll.owner.scroll - old
        return f"scrolled {'down' if moved > 0 else 'up'}" if moved else "already at the end of the list"

    def type_text(self, text: str) -> None:
        before = self._before()
        if self._focus is None:
            effect = "no text field has focus"
        else:
            self._focus.insert(text)
            effect = f"typed {text!r}"
        self._after(f"Type({json.dumps(text)})", before, effect)

    def enter(self) -> None:
        before = self._before()
        effect = self._enter()
        self._after("Enter()", before, effect)

    def switch_app(self) -> None:
        before = self._before()
        self.nav_recents()
        self._after("Switch_App()", before, "opened the app switcher")

    def back(self) -> None:
        before = self._before()
        self.nav_back()
        self._after("Back()", before, f"now on {self.screen_name}")

    def home(self) -> None:
        before = self._before()
        self._go_home()
        self._after("Home()", before, "home screen")

    def wait(self, seconds: float = 1.0) -> None:
        """Advance the virtual clock by ``seconds`` (nothing on this phone is slow)."""
        before = self._before()
        self.clock_s += max(0.0, seconds) - STEP_SECONDS
        self._after(f"Wait({seconds:g})", before, f"waited {seconds:g} s of virtual time")

    def keyboard_active(self) -> bool:
        return self._focus is not None and self.current_app is not None

    def foreground_app(self) -> str:
        app = self.current_app
        return app.spec.package if app else LAUNCHER

    def installed_apps(self) -> dict[str, str]:
        return {label: spec.package for label, spec in self._specs.items()}

    def tap_targets(self, whole: bool = False) -> list[tuple[str, tuple[int, int, int, int]]]:
        """Label and pixel box of every tappable region on screen, bottom-most first (for tooling);
        ``whole``: only those not cut by the edge of a list."""
        return [(t.label, t.box) for t in self._frame.targets if not (whole and t.cut)]

    def scroll_box(self) -> tuple[int, int, int, int] | None:
        """Pixel box of the screen's scrolling list, if it has one."""
        return self._frame.scroll.box if self._frame.scroll is not None else None

    def seen_now(self) -> list[str]:
        """Grading keys of the list rows on screen right now."""
        return list(self._frame.seen)

    def settle(self, timeout_s: float = 3.0) -> float:
        """Rendering is synchronous: the screen is always settled."""
        return 0.0

    def close(self) -> None:
        """Nothing to release."""

    def _outside_dialog(self, x: int, y: int) -> bool:
        """Whether ``(x, y)`` is on the scrim: between the status and navigation bars, off the dialog."""
        box = self._dialog_box
        if box is None:
            return False
        k = self._size[0] / theme.DESIGN_WIDTH
        inside = box[0] <= x < box[2] and box[1] <= y < box[3]
        return not inside and theme.STATUS_H * k <= y < self._size[1] - theme.NAV_H * k

    def _check_point(self, x: int, y: int) -> None:
        width, height = self._size
        if not (0 <= x < width and 0 <= y < height):
            raise ActionError(f"({x}, {y}) is off the {width}x{height} screen")
