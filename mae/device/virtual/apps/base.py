"""What every app of the virtual phone is made of: screens on a back stack, text fields, the host."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from mae.device.virtual import theme
from mae.device.virtual.canvas import Canvas
from mae.device.virtual.content import AppSpec, Content
from mae.device.virtual.realism import RealismRuntime
from mae.device.virtual.state import CartItem, Note, Route


@dataclass(eq=False)
class TextField:
    """An editable text box. ``selected`` means its whole text is selected (the next input replaces it)."""

    key: str
    placeholder: str
    value: str = ""
    multiline: bool = False
    select_on_focus: bool = False
    selected: bool = False
    on_submit: Callable[[str], None] | None = None
    on_change: Callable[[str], None] | None = None

    def insert(self, text: str) -> None:
        if not self.multiline:
            text = text.replace("\n", " ")
        self.value = text if self.selected else self.value + text
        self.selected = False
        if self.on_change is not None:
            self.on_change(self.value)

    def backspace(self) -> None:
        self.value = "" if self.selected else self.value[:-1]
        self.selected = False
        if self.on_change is not None:
            self.on_change(self.value)


@dataclass(eq=False)
class Screen:
    """One screen on an app's back stack."""

    name: str
    item: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    fields: dict[str, TextField] = field(default_factory=dict)
    scroll: float = 0.0


class Host(Protocol):
    """What an app may ask of the phone."""

    content: Content
    notes: list[Note]
    carts: dict[str, list[CartItem]]
    route: Route | None
    realism: RealismRuntime
    clock_s: float

    def event(self, app: str, kind: str, value: str) -> None: ...

    def focus(self, text_field: TextField, select: bool = False) -> None: ...

    def blur(self) -> None: ...

    def focused(self) -> TextField | None: ...

    def launch(self, label: str) -> None: ...

    def new_note_id(self) -> int: ...


class App:
    """Base of the apps: a back stack of screens, each drawn by a ``screen_<name>`` method."""

    kind: ClassVar[str] = ""
    background: ClassVar[str] = theme.WHITE

    def __init__(self, spec: AppSpec, host: Host) -> None:
        self.spec = spec
        self.host = host
        self.stack: list[Screen] = []
        self.reset()

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def status_color(self) -> str:
        return self.background

    def root(self) -> Screen:
        raise NotImplementedError

    def reset(self) -> None:
        self.stack = [self.root()]

    @property
    def screen(self) -> Screen:
        return self.stack[-1]

    def push(self, screen: Screen) -> None:
        self.host.blur()
        self.stack.append(screen)

    def back(self) -> bool:
        """Go back one screen; False when already at the root (the phone then goes home)."""
        if len(self.stack) > 1:
            self.host.blur()
            self.stack.pop()
            return True
        return False

    def event(self, kind: str, value: str) -> None:
        self.host.event(self.label, kind, value)

    def build(self, c: Canvas, top: float, bottom: float) -> None:
        """Lay out the current screen between design rows ``top`` and ``bottom``."""
        c.rect((0, top, c.dw, bottom), self.background)
        method: Callable[[Canvas, Screen, float, float], None] = getattr(self, f"screen_{self.screen.name}")
        method(c, self.screen, top, bottom)
