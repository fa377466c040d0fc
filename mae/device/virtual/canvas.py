"""Layout of one screen: a display list, the ground truth of what it shows, and its tap targets.

Screens are laid out in design units (1080 wide) on a ``Canvas``, which scales to screen pixels and
records, for every drawing call, the operation (painted later, only when a screenshot is asked for),
the ground-truth ``Element`` (texts with their tight ink box, icons with a caption) and the tappable
regions. A scroll view translates its content; a row cut by the viewport's edge (the screen's bottom, a
header's edge) is drawn cut, as on a real phone, and its elements and targets keep their visible part
(what a real ``uiautomator dump`` gives as bounds). Only rows wholly on screen count as seen.

What is listed of a cut row is what its visible part draws: a text or icon is listed when at least
``MIN_VISIBLE_PX`` of it shows; a tap target whose visible part shows none of the row's listed texts
and icons stays tappable but nameless (the row's name is in a text below the edge, so nothing on screen
says it); a row with less than ``MIN_VISIBLE_PX`` on screen is neither drawn nor listed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Protocol

from PIL import Image

from mae.device.virtual import render, theme
from mae.device.virtual.render import Op
from mae.perception.elements import Box, Element

MIN_VISIBLE_PX = 6
"""Screen pixels of a cut row or of an element in it below which that part is a sliver: not listed
(and a row that thin is not drawn either)."""

Point = tuple[float, float]
DBox = tuple[float, float, float, float]
"""A box in design units: left, top, right, bottom."""


class Scrollable(Protocol):
    """Anything with a vertical scroll offset in design units (a screen of an app)."""

    scroll: float


@dataclass(frozen=True)
class Target:
    """A tappable region in screen pixels and what tapping it does."""

    box: Box
    action: Callable[[], object]
    label: str = ""
    role: str = ""
    """``edit`` for a text field (its accessibility node is editable); ``""`` for a button."""
    cut: bool = False
    """Cut by the edge of its scroll view: only ``box`` of it shows."""
    focused: bool = False
    """A text field with the cursor in it (its accessibility node says ``focused``)."""

    def contains(self, x: int, y: int) -> bool:
        left, top, right, bottom = self.box
        return left <= x < right and top <= y < bottom


@dataclass
class ScrollArea:
    """The scrollable viewport of a screen."""

    box: Box
    content: float
    viewport: float
    owner: Scrollable

    @property
    def max_scroll(self) -> float:
        return max(0.0, self.content - self.viewport)


@dataclass
class Layer:
    """A cached, pre-painted part of the screen (status bar, keyboard, home grid...)."""

    image: Image.Image
    elements: list[Element]
    targets: list[Target]


@dataclass
class Frame:
    """One laid-out screen."""

    width: int
    height: int
    background: str
    ops: list[Op]
    elements: list[Element]
    targets: list[Target]
    scroll: ScrollArea | None
    seen: list[str]

    def target_at(self, x: int, y: int) -> Target | None:
        """The topmost target under ``(x, y)``, if any."""
        for target in reversed(self.targets):
            if target.contains(x, y):
                return target
        return None

    def paint(self) -> Image.Image:
        return render.paint(self.width, self.height, self.background, self.ops)


@dataclass
class _Bucket:
    ops: list[Op] = field(default_factory=list)
    elements: list[Element] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)

    def extend(self, other: _Bucket) -> None:
        self.ops += other.ops
        self.elements += other.elements
        self.targets += other.targets
        self.seen += other.seen


def _cut(box: Box, view: Box) -> Box | None:
    """The part of ``box`` inside the rows of ``view`` (None when nothing of it is)."""
    top, bottom = max(box[1], view[1]), min(box[3], view[3])
    return (box[0], top, box[2], bottom) if bottom > top else None


def _visible(box: Box, view: Box) -> Box | None:
    """The part of ``box`` inside ``view`` when it is more than a sliver (None otherwise); a box thinner
    than a sliver to begin with is kept when it lies wholly inside."""
    cut = _cut(box, view)
    if cut is None or (cut[3] - cut[1] < MIN_VISIBLE_PX and cut != box):
        return None
    return cut


def _holds(box: Box, inner: Box) -> bool:
    x, y = (inner[0] + inner[2]) / 2, (inner[1] + inner[3]) / 2
    return box[0] <= x < box[2] and box[1] <= y < box[3]


class ScrollView:
    """Handle of an open scroll view: rows are laid out from y = 0 in content coordinates."""

    def __init__(self, canvas: Canvas, width: float, offset: float = 0.0, viewport: float = 0.0) -> None:
        self.canvas = canvas
        self.width = width
        self.bottom = 0.0
        self.offset = offset
        self.viewport = viewport

    def shows(self, y: float, height: float) -> bool:
        """Whether a row at ``y`` of ``height`` is wholly on screen (drawn) at the current scroll."""
        return self.offset <= y and y + height <= self.offset + self.viewport

    @contextmanager
    def row(self, y: float, height: float, left: float = 0.0, right: float | None = None) -> Iterator[None]:
        """A row: drawn whole on screen, cut where the viewport's edge cuts it, or not at all."""
        self.bottom = max(self.bottom, y + height)
        with self.canvas.group((left, y, self.width if right is None else right, y + height)):
            yield

    def end(self, y: float) -> None:
        """Declare the content height (defaults to the lowest row)."""
        self.bottom = max(self.bottom, y)


class Canvas:
    """Records drawing calls in design units; see the module docstring."""

    def __init__(
        self,
        width: int,
        height: int,
        background: str = theme.WHITE,
        layers: dict[str, Layer] | None = None,
        k: float | None = None,
    ) -> None:
        self.width = width
        self.height = height
        self.background = background
        self.k = k if k is not None else width / theme.DESIGN_WIDTH
        self.dw = width / self.k
        self.dh = height / self.k
        self.layers = layers if layers is not None else {}
        self._main = _Bucket()
        self._pending: list[tuple[DBox, _Bucket]] = []
        self._dy = 0.0
        self._clip: tuple[float, float] | None = None
        self._scroll: ScrollArea | None = None

    # ---------------------------------------------------------------- geometry
    def px(self, value: float) -> int:
        return round(value * self.k)

    def _pt(self, x: float, y: float) -> tuple[int, int]:
        return self.px(x), self.px(y + self._dy)

    def _box(self, box: DBox) -> Box:
        left, top, right, bottom = box
        return self.px(left), self.px(top + self._dy), self.px(right), self.px(bottom + self._dy)

    def _bucket(self, top: float, bottom: float) -> _Bucket | None:
        """Where an item spanning design rows ``top..bottom`` (untranslated) goes; None drops it."""
        if self._pending:
            return self._pending[-1][1]
        if self._clip is not None and not self._inside(top, bottom):
            return None
        return self._main

    def _inside(self, top: float, bottom: float) -> bool:
        assert self._clip is not None
        return top + self._dy >= self._clip[0] - 0.5 and bottom + self._dy <= self._clip[1] + 0.5

    def _op(self, op: Op, top: float, bottom: float) -> None:
        bucket = self._bucket(top, bottom)
        if bucket is not None:
            bucket.ops.append(op)

    # ---------------------------------------------------------------- shapes
    def rect(
        self,
        box: DBox,
        fill: str | None = None,
        radius: float = 0,
        outline: str | None = None,
        width: float = 0,
    ) -> None:
        line = max(1, self.px(width)) if outline else 0
        self._op(("rect", self._box(box), fill, outline, line, self.px(radius)), box[1], box[3])

    def ellipse(
        self, box: DBox, fill: str | None = None, outline: str | None = None, width: float = 0
    ) -> None:
        line = max(1, self.px(width)) if outline else 0
        self._op(("ellipse", self._box(box), fill, outline, line), box[1], box[3])

    def polygon(self, points: list[Point], fill: str | None, outline: str | None = None) -> None:
        ys = [p[1] for p in points]
        self._op(("polygon", [self._pt(x, y) for x, y in points], fill, outline), min(ys), max(ys))

    def line(self, points: list[Point], fill: str, width: float = 4) -> None:
        ys = [p[1] for p in points]
        self._op(
            ("line", [self._pt(x, y) for x, y in points], fill, max(1, self.px(width))), min(ys), max(ys)
        )

    def arc(self, box: DBox, start: float, end: float, fill: str, width: float = 4) -> None:
        self._op(("arc", self._box(box), start, end, fill, max(1, self.px(width))), box[1], box[3])

    def pieslice(self, box: DBox, start: float, end: float, fill: str) -> None:
        self._op(("pieslice", self._box(box), start, end, fill), box[1], box[3])

    def image(self, image: Image.Image, x: float, y: float) -> None:
        """Paste an image already sized in screen pixels with its top-left at design ``(x, y)``."""
        height = image.height / self.k
        self._op(("paste", image, self._pt(x, y)), y, y + height)

    def backdrop(self, ops: list[Op], box: DBox, alpha: float) -> None:
        """Paint ``ops`` (another canvas's display list) dimmed by a black scrim of opacity ``alpha``
        over ``box``: pixels only, so nothing of it is in the ground truth or tappable."""
        backdrop: Op = ("rect", self._box(box), self.background, None, 0, 0)
        self._main.ops.extend(render.dimmed([backdrop, *ops], alpha))

    # ---------------------------------------------------------------- text
    def _font_px(self, size: float) -> int:
        return max(8, self.px(size))

    def measure(self, text: str, size: float = theme.BODY) -> float:
        """Advance width of ``text`` in design units."""
        return render.text_length(text, self._font_px(size)) / self.k

    def ink(self, x: float, y: float, text: str, size: float = theme.BODY, anchor: str = "la") -> DBox:
        """The ink box ``text`` would have, in design units, without drawing it."""
        left, top, right, bottom = render.text_bbox(text, self._font_px(size), anchor, 0)
        return (x + left / self.k, y + top / self.k, x + right / self.k, y + bottom / self.k)

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: float = theme.BODY,
        color: str = theme.TEXT,
        anchor: str = "la",
        bold: bool = False,
    ) -> DBox:
        """Draw one line of text; return its ink box in design units (in the caller's coordinates)."""
        px = self._font_px(size)
        stroke = max(1, round(self.k)) if bold else 0
        ax, ay = self._pt(x, y)
        left, top, right, bottom = render.text_bbox(text, px, anchor, stroke)
        dbox = (x + left / self.k, y + top / self.k, x + right / self.k, y + bottom / self.k)
        bucket = self._bucket(dbox[1], dbox[3])
        if bucket is None or not text.strip():
            return dbox
        bucket.ops.append(("text", (ax, ay), text, px, color, anchor, stroke))
        box = (ax + left, ay + top, ax + right, ay + bottom)
        bucket.elements.append(Element(kind="text", text=text, box=box, source="virtual"))
        return dbox

    def wrap(self, text: str, size: float, max_width: float, max_lines: int = 0) -> list[str]:
        """Greedy word wrap of ``text`` into lines no wider than ``max_width`` design units."""
        lines: list[str] = []
        for paragraph in text.split("\n"):
            current = ""
            for word in paragraph.split():
                candidate = f"{current} {word}" if current else word
                if current and self.measure(candidate, size) > max_width:
                    lines.append(current)
                    current = word
                else:
                    current = candidate
            lines.append(current)
        if max_lines and len(lines) > max_lines:
            lines = lines[:max_lines]
            last = lines[-1]
            while last and self.measure(last + "...", size) > max_width:
                last = last.rsplit(" ", 1)[0] if " " in last else last[:-1]
            lines[-1] = last + "..."
        return lines

    # ---------------------------------------------------------------- ground truth and interaction
    def icon_element(self, box: DBox, caption: str) -> None:
        """Record an icon (drawn by the caller) in the ground truth."""
        bucket = self._bucket(box[1], box[3])
        if bucket is not None:
            bucket.elements.append(Element(kind="icon", text=caption, box=self._box(box), source="virtual"))

    def tap(
        self, box: DBox, action: Callable[[], object], label: str = "", role: str = "", focused: bool = False
    ) -> None:
        """Make ``box`` tappable (``role="edit"`` for a text field; ``focused`` when it has the cursor)."""
        bucket = self._bucket(box[1], box[3])
        if bucket is not None:
            bucket.targets.append(Target(self._box(box), action, label, role, focused=focused))

    def mark_seen(self, key: str) -> None:
        """Note that the current row was on screen (used by task grading)."""
        bucket = self._pending[-1][1] if self._pending else self._main
        bucket.seen.append(key)

    @contextmanager
    def group(self, box: DBox) -> Iterator[None]:
        """Everything drawn inside is kept whole when ``box`` lies wholly inside the current viewport,
        cut to the viewport when it lies partly inside, dropped when it lies outside."""
        bucket = _Bucket()
        self._pending.append((box, bucket))
        try:
            yield
        finally:
            self._pending.pop()
        parent = self._pending[-1][1] if self._pending else self._main
        if self._clip is None or self._inside(box[1], box[3]):
            parent.extend(bucket)
            return
        top = max(box[1] + self._dy, self._clip[0])
        bottom = min(box[3] + self._dy, self._clip[1])
        view = (0, self.px(top), self.width, self.px(bottom))
        if view[3] - view[1] < MIN_VISIBLE_PX:
            return
        parent.ops.append(("clip", view, bucket.ops))
        listed = [
            e.model_copy(update={"box": cut})
            for e in bucket.elements
            if (cut := _visible(e.box, view)) is not None
        ]
        parent.elements += listed
        for t in bucket.targets:
            cut = _cut(t.box, view)
            if cut is None:
                continue
            named = cut == t.box or any(_holds(cut, e.box) for e in listed)
            parent.targets.append(
                replace(t, box=cut, label=t.label if named else "", cut=t.cut or cut != t.box)
            )

    @contextmanager
    def scroll_view(self, owner: Scrollable, top: float, bottom: float) -> Iterator[ScrollView]:
        """Lay out scrolling content between design rows ``top`` and ``bottom``."""
        saved = self._dy, self._clip
        self._dy = saved[0] + top - owner.scroll
        self._clip = (saved[0] + top, saved[0] + bottom)
        view = ScrollView(self, self.dw, owner.scroll, bottom - top)
        try:
            yield view
        finally:
            self._dy, self._clip = saved
        box = (0, self.px(top + self._dy), self.width, self.px(bottom + self._dy))
        self._scroll = ScrollArea(box=box, content=view.bottom, viewport=bottom - top, owner=owner)

    def layer(self, key: str, box: DBox, build: Callable[[Canvas], None], background: str) -> None:
        """Draw a static part once, paint it, and paste the cached pixels on later frames."""
        cached = self.layers.get(key)
        if cached is None:
            left, top, right, bottom = box
            width = self.px(right) - self.px(left)
            height = self.px(bottom) - self.px(top)
            sub = Canvas(width, height, background, layers=self.layers, k=self.k)
            build(sub)
            frame = sub.frame()
            cached = Layer(frame.paint(), frame.elements, frame.targets)
            self.layers[key] = cached
        ox, oy = self._pt(box[0], box[1])
        bucket = self._bucket(box[1], box[3])
        if bucket is None:
            return
        bucket.ops.append(("paste", cached.image, (ox, oy)))
        for element in cached.elements:
            left, top, right, bottom = element.box
            moved = (left + ox, top + oy, right + ox, bottom + oy)
            bucket.elements.append(element.model_copy(update={"box": moved}))
        for target in cached.targets:
            left, top, right, bottom = target.box
            bucket.targets.append(replace(target, box=(left + ox, top + oy, right + ox, bottom + oy)))

    def frame(self) -> Frame:
        """The finished layout."""
        main = self._main
        return Frame(
            self.width,
            self.height,
            self.background,
            main.ops,
            main.elements,
            main.targets,
            self._scroll,
            main.seen,
        )
