"""Mobile-Agent v1's own operations (paper §2.2) mapped onto mae's atomic operations.

v1 writes ``Open app (Notes)``, ``Click text (Add)``, ``Click icon (blue plus, bottom right)``,
``Type (hello)``, ``Page up``, ``Page down``, ``Back``, ``Exit`` and ``Stop``. Text is located in the
perception list (the OCR elements), an icon by the best caption match in the named part of the screen;
``Exit`` is ``Home``; a page is a vertical ``Swipe``. mae's JSON atomic operations are accepted as well.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mae.actions.registry import ActionCall, AtomicAction, resolve_call
from mae.agents.base import Screen
from mae.agents.parsing import ReplyProblem
from mae.errors import ActionError
from mae.perception.elements import Element

OPERATIONS = """- Open app (App name): open the app with this name from any screen.
- Click text (Text): tap the text "Text" as it appears on the screen.
- Click icon (Icon, Position): tap the icon described by "Icon" (colour, shape, meaning) in "Position": one or
  two of top, bottom, left, right, center (e.g. "Click icon (plus sign, bottom right)").
- Type (Text): type "Text" into the input box that has the keyboard.
- Page up / Page down: scroll the page up or down by one screen.
- Back: return to the previous page.
- Exit: go straight to the home screen.
- Stop: the instruction is completely done; end the task.
- Or an atomic operation as JSON, e.g. {"name": "Tap", "arguments": {"x": 540, "y": 1200}}: Tap(x, y),
  Swipe(x1, y1, x2, y2), Enter(), Switch_App(), Wait()."""
"""The operation list the v1 prompt shows."""

ToModel = Callable[[int, int], tuple[int, int]]
"""Screen pixels -> the pixels the model answers in."""

MAX_TEXT_MATCHES = 4
"""v1 asks the agent to choose again when a text appears more often than this (too much alike)."""

_OP = re.compile(
    r"^(?P<op>open[ _]?app|click[ _]?text|tap[ _]?text|click[ _]?icon|tap[ _]?icon|type|page[ _]?up|"
    r"page[ _]?down|back|exit|stop)\b\s*(?:\((?P<arg>.*)\))?\s*\.?$",
    re.I | re.S,
)
_POSITIONS = {"top", "bottom", "left", "right", "center", "centre", "middle"}


@dataclass
class V1Action:
    """A v1 operation: the line as written and what it maps to (``None`` steps for ``Stop``)."""

    written: str
    call: ActionCall | None
    steps: list[AtomicAction]

    @property
    def is_stop(self) -> bool:
        return self.call is None


def _unquote(text: str) -> str:
    return text.strip().strip("\"'“”‘’`* ").strip()


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def find_text(screen: Screen, wanted: str, to_model: ToModel | None = None) -> Element:
    """The OCR element reading ``wanted`` (exact, else the one containing it). The paper's three cases:
    missing -> ``ReplyProblem`` (choose again); once -> that element; several -> ``ReplyProblem`` (too
    many alike: choose a more specific text; a few: the candidates' coordinates, in the model's space via
    ``to_model``, to pick one from with ``Tap(x, y)``)."""
    key = _norm(wanted)
    if not key:
        raise ReplyProblem("Click text needs the text to tap, e.g. Click text (Settings)", "action")
    texts = [e for e in screen.perception.elements if e.kind == "text"]
    matches = [e for e in texts if _norm(e.text) == key] or [e for e in texts if key in _norm(e.text)]
    if not matches:
        raise ReplyProblem(
            f'the text "{wanted}" is not on the screen: choose a text from the recognised list, or another '
            "operation",
            "action",
        )
    if len(matches) > MAX_TEXT_MATCHES:
        raise ReplyProblem(
            f'"{wanted}" appears {len(matches)} times on the screen: choose a more specific text, or tap '
            "its coordinates with Tap(x, y)",
            "action",
        )
    if len(matches) > 1:
        ordered = sorted(matches, key=lambda e: (e.box[1], e.box[0]))
        where = "; ".join(f"[{x}, {y}]" for x, y in ((to_model or _same)(*e.center) for e in ordered))
        raise ReplyProblem(
            f'"{wanted}" appears {len(matches)} times on the screen, at {where}: pick the one you mean and '
            "tap it with Tap(x, y)",
            "action",
        )
    return matches[0]


def _same(x: int, y: int) -> tuple[int, int]:
    return x, y


def _in_region(element: Element, positions: set[str], size: tuple[int, int]) -> bool:
    x, y = element.center
    width, height = size
    checks = {
        "top": y < height / 3,
        "bottom": y > 2 * height / 3,
        "left": x < width / 3,
        "right": x > 2 * width / 3,
        "center": width / 4 < x < 3 * width / 4 and height / 4 < y < 3 * height / 4,
    }
    return all(checks["center" if p in ("centre", "middle") else p] for p in positions)


def find_icon(screen: Screen, description: str) -> Element:
    """The icon that best matches ``description`` (words of its caption) inside the named position."""
    parts = [p.strip() for p in description.split(",")]
    positions = {w for p in parts[1:] for w in _norm(p).split() if w in _POSITIONS}
    label = _norm(parts[0] if len(parts) > 1 else description)
    icons = [e for e in screen.perception.elements if e.kind == "icon"]
    if not icons:
        raise ReplyProblem("no icons were recognised on this screen: use Click text or Tap(x, y)", "action")
    placed = [e for e in icons if _in_region(e, positions, screen.size)] if positions else icons
    words = set(label.split())

    def score(element: Element) -> tuple[int, float]:
        overlap = len(words & set(_norm(element.text).split()))
        return overlap, element.score

    best = max(placed or icons, key=score)
    if score(best)[0] == 0 and len(placed) != 1 and not any(e.text for e in icons):
        raise ReplyProblem(
            "the icons on this screen have no descriptions, so several could be meant: tap the icon's "
            "coordinates from the recognised list with Tap(x, y)",
            "action",
        )
    if score(best)[0] == 0 and len(placed) != 1:
        raise ReplyProblem(
            f'no recognised icon matches "{description}": describe it with words from the recognised '
            "icons, or tap its coordinates with Tap(x, y)",
            "action",
        )
    return best


def parse_v1_action(section: str, screen: Screen, to_model: ToModel | None = None) -> V1Action | None:
    """The v1 operation in ``section`` mapped to atomic operations in screen pixels; ``None`` when the
    section is not a v1 operation (the caller then reads it as mae's JSON or call syntax)."""
    line = _unquote(section.strip().splitlines()[0]) if section.strip() else ""
    match = _OP.match(line)
    if match is None:
        return None
    op = re.sub(r"[ _]", "", match.group("op").lower())
    arg = _unquote(match.group("arg") or "")
    width, height = screen.size
    call: ActionCall | None
    if op == "stop":
        return V1Action(line, None, [])
    if op == "openapp":
        call = ActionCall(name="Open_App", arguments={"app_name": arg})
    elif op in ("clicktext", "taptext"):
        x, y = find_text(screen, arg, to_model).center
        call = ActionCall(name="Tap", arguments={"x": x, "y": y})
    elif op in ("clickicon", "tapicon"):
        x, y = find_icon(screen, arg).center
        call = ActionCall(name="Tap", arguments={"x": x, "y": y})
    elif op == "type":
        call = ActionCall(name="Type", arguments={"text": arg})
    elif op in ("pageup", "pagedown"):
        top, bottom = int(height * 0.3), int(height * 0.7)
        y1, y2 = (bottom, top) if op == "pagedown" else (top, bottom)
        call = ActionCall(name="Swipe", arguments={"x1": width // 2, "y1": y1, "x2": width // 2, "y2": y2})
    elif op == "back":
        call = ActionCall(name="Back")
    else:  # exit
        call = ActionCall(name="Home")
    try:
        steps = resolve_call(call, {}, screen=screen.size)
    except ActionError as exc:  # e.g. an empty app name
        raise ReplyProblem(f"invalid operation {line}: {exc}", "action") from None
    return V1Action(line, call, steps)
