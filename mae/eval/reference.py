"""Reference actions of virtual tasks, compiled from a readable plan on a live phone.

A task's ``plan`` names what a person does in words the phone understands (``open Maps``,
``tap Search here``, ``type thai restaurants urbana``, ``enter``, ``see maps:review:thai-spice:3``).
``compile_plan`` runs the plan on a phone and writes down the atomic operations it took, coordinates
included, plus whatever the phone's realism demanded on the way: closing pop-ups, waiting for a
spinner, scrolling to a result further down (loading more of a long list, or turning its pages),
closing the keyboard to reach what it covers. Each
operation carries why it was needed, so a policy can be derived from it (e.g. one that never
dismisses pop-ups).

    python -m mae.eval.virtual_suite --write     # refresh reference_actions in the suite files
    python -m mae.eval.virtual_suite --check     # exit 1 when a stored sequence is out of date
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from mae.actions.reading import parse_action_text
from mae.actions.registry import resolve_call, run_steps
from mae.device.virtual.apps.paging import LOADING_CAPTION, MORE_LABELS, NEXT, PREVIOUS
from mae.device.virtual.phone import VirtualPhone
from mae.device.virtual.realism import DISMISS_LABELS
from mae.errors import MaeError

Reason = Literal["plan", "dismiss", "wait", "scroll", "keyboard"]
MAX_SCROLLS = 30
MAX_PAGES = 20
MAX_CLEARS = 12
WAIT_S = 3
NAV_LABELS = ("back button", "home button", "recent apps button")


class PlanError(MaeError):
    """A plan step could not be carried out on the phone (a label not found, a list end reached)."""


@dataclass(frozen=True)
class RefAction:
    """One atomic operation of a reference sequence and why it is there."""

    text: str
    reason: Reason


class _Recorder:
    def __init__(self, phone: VirtualPhone) -> None:
        self.phone = phone
        self.actions: list[RefAction] = []

    def do(self, text: str, reason: Reason) -> None:
        run_steps(self.phone, resolve_call(parse_action_text(text), {}, self.phone.screen_size()))
        self.actions.append(RefAction(text, reason))

    # ---------------------------------------------------------------- realism
    def clear(self) -> None:
        """Wait out spinners and dismiss dialogs until the app in front is usable."""
        for _ in range(MAX_CLEARS):
            app = self.phone.current_app
            if app is None:
                return
            if self.phone.realism.busy(app.label):
                self.do(f"Wait({WAIT_S})", "wait")
            elif self.phone.realism.dialog(app.label) is not None:
                self.do(self._tap_text(self._dismiss_target()), "dismiss")
            else:
                return
        raise PlanError("the app kept showing dialogs or spinners")

    def _dismiss_target(self) -> tuple[int, int, int, int]:
        targets = dict(reversed(self.phone.tap_targets()))
        for label in DISMISS_LABELS:
            if label in targets:
                return targets[label]
        raise PlanError("a dialog has no button that dismisses it")

    # ---------------------------------------------------------------- finding things
    def _find(self, label: str) -> tuple[int, int, int, int] | None:
        """The box of the target named ``label``; one cut by the list's edge does not count (a person
        scrolls it into view before tapping), nor one covered by something drawn over it (a keyboard
        over the app: a person closes it first)."""
        everything = self.phone.tap_targets()
        for name, box in self.phone.tap_targets(whole=True):
            if name == label and name not in NAV_LABELS and _on_top(box, everything):
                return box
        return None

    @staticmethod
    def _tap_text(box: tuple[int, int, int, int]) -> str:
        left, top, right, bottom = box
        return f"Tap({(left + right) // 2}, {(top + bottom) // 2})"

    def scroll(self, reason: Reason, down: bool = True) -> bool:
        """One swipe in the list; False when there is no list or it did not move."""
        box = self.phone.scroll_box()
        if box is None:
            return False
        left, top, right, bottom = box
        x, high, low = (left + right) // 2, top + (bottom - top) * 3 // 4, top + (bottom - top) // 4
        y1, y2 = (high, low) if down else (low, high)
        self.do(f"Swipe({x}, {y1}, {x}, {y2})", reason)
        return "scrolled" in self.phone.log[-1].effect

    def reach(self, check: Callable[[], bool], what: str) -> None:
        """Close the keyboard, scroll (loading more of a long list) or turn its pages until ``check()``."""
        if check():
            return
        if self.phone.keyboard_active():
            self.do("Back()", "keyboard")
            if check():
                return
        if self._sweep(check, down=True) or self._sweep(check, down=False):
            return
        for label in (NEXT, PREVIOUS):
            for _ in range(MAX_PAGES):
                if not self._turn(label):
                    break
                if check() or self._sweep(check, down=True):
                    return
        raise PlanError(f"could not find {what!r} on {self.phone.screen_name}")

    def _sweep(self, check: Callable[[], bool], down: bool) -> bool:
        """Scroll one way until ``check()``; going down, wait out a list's loading row and ask for more."""
        for _ in range(MAX_SCROLLS):
            loading = any(e.kind == "icon" and e.text == LOADING_CAPTION for e in self.phone.ground_truth())
            if not self.scroll("scroll", down=down):
                more = next((box for label in MORE_LABELS if (box := self._find(label))), None)
                if not down or not (loading or more):
                    return False
                if more is not None and not loading:
                    self.do(self._tap_text(more), "scroll")
            self.clear()
            if check():
                return True
        return False

    def _turn(self, label: str) -> bool:
        """Tap a list's ``Next`` / ``Previous`` page control (scrolling down to it); False without one."""
        if self._find(label) is None:
            self._sweep(lambda: self._find(label) is not None, down=True)
        box = self._find(label)
        if box is None:
            return False
        self.do(self._tap_text(box), "scroll")
        self.clear()
        return True

    # ---------------------------------------------------------------- plan steps
    def step(self, step: str) -> None:
        verb, _, arg = step.strip().partition(" ")
        if verb == "open":
            self.do(f"Open_App({_quote(arg)})", "plan")
            return
        self.clear()
        if verb == "tap":
            self.reach(lambda: self._find(arg) is not None, arg)
            box = self._find(arg)
            assert box is not None
            self.do(self._tap_text(box), "plan")
        elif verb == "see":
            self.reach(lambda: arg in self.phone.seen_now(), arg)
        elif verb == "type":
            self.do(f"Type({_quote(arg)})", "plan")
        elif verb == "scroll":
            self.scroll("plan", down=arg != "up")
        elif verb in ("enter", "back", "home", "wait"):
            call = {"enter": "Enter()", "back": "Back()", "home": "Home()", "wait": f"Wait({WAIT_S})"}[verb]
            self.do(call, "plan")
        else:
            raise PlanError(
                f"unknown plan step {step!r}; use open, tap, see, type, scroll, enter, back, home"
            )


def _on_top(box: tuple[int, int, int, int], targets: list[tuple[str, tuple[int, int, int, int]]]) -> bool:
    """Whether a tap in the middle of ``box`` reaches it: the topmost target there (the last one drawn,
    as ``tap_targets`` lists them bottom-most first) is the one with that box."""
    x, y = (box[0] + box[2]) // 2, (box[1] + box[3]) // 2
    top = next((b for _, b in reversed(targets) if b[0] <= x < b[2] and b[1] <= y < b[3]), None)
    return top is None or top == box


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def compile_plan(plan: list[str], phone: VirtualPhone) -> list[RefAction]:
    """Carry out ``plan`` on ``phone`` (already prepared for the task) and return what it took."""
    recorder = _Recorder(phone)
    for index, step in enumerate(plan, 1):
        try:
            recorder.step(step)
        except PlanError as exc:
            raise PlanError(f"plan step {index} ({step!r}): {exc}") from None
    recorder.clear()
    return recorder.actions


if __name__ == "__main__":  # the command moved with the suite files it writes
    raise SystemExit("this command moved: run python -m mae.eval.virtual_suite --check (or --write)")
