"""What the grader corpus's routes are made of: ``Route``, the steps several tasks share, and helpers.
The routes are in ``grader_routes_places.py``, ``grader_routes_research.py`` and
``grader_routes_shopping.py``, one file per family of Mobile-Eval-E scenarios (and
``grader_routes_frontier_shop.py`` for the frontier tier's Cartwell scenarios);
``benchmarks/grader_corpus.py`` replays and counts them (see its docstring for the step syntax)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mae.device.virtual import VirtualPhone

Step = str | Callable[[VirtualPhone], str]


@dataclass
class Route:
    """One way through a task; ``fails`` lists the rubric items (0-based) a correct grader fails."""

    name: str
    steps: Sequence[Step]
    fails: set[int] = field(default_factory=set)

    @property
    def correct(self) -> bool:
        return not self.fails


def note(title: str, body: str) -> list[Step]:
    """Plan steps that write a new note in Notes; each line of ``body`` ends with Enter, as a person
    types a note with headings, bullets or table rows."""
    typed: list[Step] = []
    for index, line in enumerate(body.split("\n")):
        typed.extend(["enter"] * bool(index) + [f"type {line}"] * bool(line))
    return ["open Notes", "tap new note", "tap Title", f"type {title}", "enter", *typed, "back", "tap done"]


def directions_of(place: str) -> Callable[[VirtualPhone], str]:
    """The tap on the Directions button of ``place``'s row in a Maps result list."""

    def tap(phone: VirtualPhone) -> str:
        targets = phone.tap_targets()
        names = [name for name, _ in targets]
        start = names.index(place)
        for name, (left, top, right, bottom) in targets[start + 1 :]:
            if name == "Directions":
                return f"Tap({(left + right) // 2}, {(top + bottom) // 2})"
        raise LookupError(f"no Directions button after {place!r}")

    return tap


MAPS_KOREAN = ["open Maps", "tap Search here", "type korean restaurants in champaign", "enter"]
MAPS_BAKERY = ["open Maps", "tap Search here", "type bakery", "enter"]
MAPS_THAI = ["open Maps", "tap Search here", "type thai restaurants in urbana", "enter"]
SCHOLAR = [
    "open Chrome",
    "tap search box",
    "type google scholar",
    "enter",
    "tap Google Scholar",
    "tap Search Scholar",
]
FANDANGO = [
    "open Chrome",
    "tap search box",
    "type fandango movies in theaters",
    "enter",
    "tap Movies in Theaters Now - Fandango",
]
ORCHARD_TIMES = "12:40 PM, 3:50 PM, 7:10 PM, 10:05 PM"


Plans = dict[str, list[str]]
"""Every task's plan by task id (``VirtualTask.plan``)."""


def upto(plan: Plans, task_id: str, step: str) -> list[Step]:
    """The steps of ``task_id``'s plan before ``step``."""
    steps = plan[task_id]
    return list(steps[: steps.index(step)])
