"""The auto-graded task suite of the virtual phone, in the Mobile-Eval-E format.

Each task has rubric items (as in the paper) and, for each, a check run by code against the phone's
final state, its event log and what was on screen. The score is the paper's Satisfaction Score:
fulfilled rubric items / all rubric items. Tasks live in ``mae/eval/data/virtual_tasks.json``; a user
data directory may add or replace tasks (matched by ``task_id``) with its own ``tasks.json``.

    python -m mae.eval.virtual_suite --write     # refresh the stored reference actions from the plans
    python -m mae.eval.virtual_suite --check     # exit 1 when a stored sequence is out of date
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from mae.actions.reading import parse_action_text
from mae.actions.registry import resolve_call, run_steps
from mae.device.virtual.content import merge, read_json, tokens
from mae.device.virtual.phone import VirtualPhone
from mae.device.virtual.realism import Realism
from mae.device.virtual.state import PhoneState
from mae.errors import ConfigError
from mae.eval.note_text import contains, normalise, owners, spoken_against, verdicts
from mae.eval.reference import RefAction, compile_plan

TASKS_FILE = Path(__file__).parent / "data" / "virtual_tasks.json"
HARD_TASKS_FILE = Path(__file__).parent / "data" / "virtual_tasks_hard.json"
FRONTIER_DIR = Path(__file__).parent / "data" / "frontier"
SuiteName = Literal["basic", "hard", "frontier"]
SUITE_FILES: dict[str, Path] = {"basic": TASKS_FILE, "hard": HARD_TASKS_FILE, "frontier": FRONTIER_DIR}
"""``basic``: 17 short tasks without realism; ``hard``: the Mobile-Eval-E mirror with realism on;
``frontier``: a folder with one file per scenario, whose tasks share app behaviours to be learnt
(the self-evolution tier)."""
USER_TASKS_FILE = "tasks.json"
SEARCH_EVENTS = ("search", "scholar_search")
SEARCH_SYNONYMS: dict[str, tuple[str, ...]] = {
    "new york": ("nyc", "new york city", "ny"),
    "los angeles": ("la", "l.a."),
    "ohare": ("o'hare", "ord"),
    "toilet paper": ("bath tissue",),
}
"""Other ways a person writes a search term: each counts as the term."""
NOTE_EVENTS = ("create_note", "open_note")
SEEN_ALSO: dict[str, tuple[str, ...]] = {"maps:result:": ("maps:rating:", "maps:hours:")}
"""What a row of a list shows besides itself: a Maps result row shows the place's rating and its
opening status, so seeing the row counts as seeing them, wherever the agent saw it."""


def _has_term(query_tokens: list[str], term: str) -> bool:
    for form in (term, *SEARCH_SYNONYMS.get(term.lower(), ())):
        wanted = tokens(form)
        if wanted and all(word in query_tokens for word in wanted):
            return True
    return False


def _seen_keys(state: PhoneState) -> set[str]:
    seen = set(state.seen)
    for key in state.seen:
        for prefix, also in SEEN_ALSO.items():
            if key.startswith(prefix):
                seen.update(other + key[len(prefix) :] for other in also)
    return seen


def final_note(state: PhoneState) -> str | None:
    """The text of the note the agent wrote or opened last (seeded notes aside), or None.

    Graders judge this note, the artefact the task leaves behind, not every scratch note written on
    the way.
    """
    written = {str(note.id): note for note in state.notes if not note.seeded}
    if not written:
        return None
    touched = [e.value for e in state.events if e.kind in NOTE_EVENTS and e.value in written]
    last = written[touched[-1]] if touched else list(written.values())[-1]
    return last.text


SIDE_EFFECTS = ("add_to_cart", "start_navigation", "save_place")
"""What an agent can do on the virtual phone that changes something a user keeps: a product in a cart,
a navigation started, a place saved to a list."""


class Fact(BaseModel):
    """A fact a note must state: one of ``values`` written under or next to one of ``item``."""

    item: list[str]
    values: list[str]

    def stated_in(self, raw: str, items: list[str]) -> bool:
        """Whether a value of this fact belongs to one of its items, among every item in ``items``
        (see :func:`mae.eval.note_text.owners`)."""
        return any(owners(raw, items, value) & set(self.item) for value in self.values)


class Check(BaseModel):
    """How one rubric item is verified. ``kind`` selects the rule; the other fields parameterise it.

    - ``opened_app``: ``app`` was brought to the front at some point.
    - ``opened_after``: ``app`` was brought to the front after ``after`` first was.
    - ``searched``: a search in ``app`` whose query holds every one of ``terms`` and one of ``any_terms``.
    - ``event``: at least ``min`` distinct ``event`` events in ``app`` (restricted to ``values``).
    - ``seen``: at least ``min`` distinct things were on screen among ``values`` (or keys under ``prefix``).
    - ``final_screen``: the task ended on ``app``'s ``screen`` (any screen of ``app`` when ``screen`` is
      empty; showing ``item`` if given).
    - ``route``: the task ended on the directions screen with the route to place ``item``.
    - ``note``: the final note (the one written or opened last) matches at least ``min_groups`` of
      ``groups`` (a group matches when the note contains one of its phrases; default: all groups),
      states every one of ``facts`` (a value written next to its item or under it, even where the
      item's own name holds a comma), names none of ``exclude`` except where it speaks against it
      ("oranges are not on sale", "X was rejected because ...", a "Ruled out:" heading), and, when
      ``sentiment`` is given, states an overall sentiment among those (a "mostly negative" summary of
      positive reviews fails). Phrases match equivalent forms: 24-hour times, prices with or without
      ``$``, ``.00`` or thousands commas.
    - ``no_side_effects``: nothing the task did not ask for was left done: every cart is empty at the
      end, no navigation was started and no place saved (``values`` narrows the events watched).
    - ``cart``: the ``store`` cart holds at least ``min`` of the products ``values`` (and nothing else
      when ``only``).
    - ``any`` / ``all``: one / every check of ``checks`` passes (route-independent rubric items:
      a place selected from its page or from the list's Directions button).

    ``negate`` turns any check into its opposite ("did not stop at the Spirit flight"). A search term
    also matches its usual other forms (NYC for New York), and a ``seen`` key also counts when a list
    row that shows it was on screen (a Maps result row shows the rating and the hours).
    """

    kind: Literal[
        "opened_app",
        "opened_after",
        "searched",
        "event",
        "seen",
        "final_screen",
        "route",
        "note",
        "cart",
        "no_side_effects",
        "any",
        "all",
    ]
    app: str = ""
    after: str = ""
    terms: list[str] = Field(default_factory=list)
    any_terms: list[str] = Field(default_factory=list)
    event: str = ""
    values: list[str] = Field(default_factory=list)
    prefix: str = ""
    min: int = 1
    screen: str = ""
    item: str = ""
    groups: list[list[str]] = Field(default_factory=list)
    min_groups: int | None = None
    exclude: list[str] = Field(default_factory=list)
    store: str = ""
    facts: list[Fact] = Field(default_factory=list)
    sentiment: list[Literal["positive", "negative", "mixed"]] = Field(default_factory=list)
    only: bool = False
    checks: list[Check] = Field(default_factory=list)
    negate: bool = False

    def passed(self, state: PhoneState) -> bool:
        """Whether the final ``state`` satisfies this check."""
        return bool(getattr(self, f"_check_{self.kind}")(state)) != self.negate

    def _check_any(self, state: PhoneState) -> bool:
        return any(check.passed(state) for check in self.checks)

    def _check_all(self, state: PhoneState) -> bool:
        return bool(self.checks) and all(check.passed(state) for check in self.checks)

    def _opens(self, state: PhoneState, app: str) -> list[int]:
        return [e.step for e in state.events if e.kind == "open_app" and e.value == app]

    def _check_opened_app(self, state: PhoneState) -> bool:
        return bool(self._opens(state, self.app))

    def _check_opened_after(self, state: PhoneState) -> bool:
        earlier = self._opens(state, self.after)
        return bool(earlier) and any(step > min(earlier) for step in self._opens(state, self.app))

    def _check_searched(self, state: PhoneState) -> bool:
        kinds = (self.event,) if self.event else SEARCH_EVENTS
        for event in state.events:
            if event.app != self.app or event.kind not in kinds:
                continue
            words = tokens(event.value)
            if all(_has_term(words, t) for t in self.terms) and (
                not self.any_terms or any(_has_term(words, t) for t in self.any_terms)
            ):
                return True
        return False

    def _check_event(self, state: PhoneState) -> bool:
        found = {
            e.value
            for e in state.events
            if e.app == self.app and e.kind == self.event and (not self.values or e.value in self.values)
        }
        return len(found) >= self.min

    def _check_seen(self, state: PhoneState) -> bool:
        seen = _seen_keys(state)
        if self.values:
            found = set(self.values) & seen
        else:
            found = {key for key in seen if key.startswith(self.prefix)}
        return len(found) >= self.min

    def _check_final_screen(self, state: PhoneState) -> bool:
        if not self.screen:
            return state.app == self.app
        return state.screen == f"{self.app}/{self.screen}" and (not self.item or state.item == self.item)

    def _check_route(self, state: PhoneState) -> bool:
        return (
            state.screen.endswith("/directions")
            and state.route is not None
            and state.route.place_id == self.item
            and state.item == self.item
        )

    def _check_note(self, state: PhoneState) -> bool:
        raw = final_note(state)
        if raw is None:
            return False
        text = normalise(raw)
        needed = len(self.groups) if self.min_groups is None else self.min_groups
        if sum(1 for group in self.groups if any(contains(text, p) for p in group)) < needed:
            return False
        items = [item for fact in self.facts for item in fact.item]
        if not all(fact.stated_in(raw, items) for fact in self.facts):
            return False
        if self.sentiment:
            stated = verdicts(raw)
            if not stated or not stated <= set(self.sentiment):
                return False
        return all(all(spoken_against(raw, x)) for x in self.exclude)

    def _check_no_side_effects(self, state: PhoneState) -> bool:
        watched = set(self.values or SIDE_EFFECTS)
        if "add_to_cart" in watched and any(state.carts.values()):
            return False
        saves: dict[str, int] = {}
        for event in state.events:
            if event.kind == "save_place" and "save_place" in watched:
                saves[event.value] = saves.get(event.value, 0) + 1  # the button toggles
            elif event.kind == "start_navigation" and event.kind in watched:
                return False
        return all(count % 2 == 0 for count in saves.values())

    def _check_cart(self, state: PhoneState) -> bool:
        held = {item.product_id for item in state.carts.get(self.store, [])}
        if self.only and held - set(self.values):
            return False
        return len(held & set(self.values)) >= self.min


class GradeResult(BaseModel):
    """Satisfaction Score of one run: fulfilled rubric items / all items, and each item's verdict."""

    score: float
    items: list[tuple[str, bool]]

    @property
    def passed(self) -> int:
        return sum(1 for _, ok in self.items if ok)


class VirtualTask(BaseModel):
    """One task of the suite (Mobile-Eval-E fields plus ``checks`` and ``reference_actions``)."""

    task_id: str
    instruction: str
    type: Literal["single_app", "multi_app"]
    apps: list[str]
    scenario: str
    rubrics: list[str]
    checks: list[Check]
    reference_actions: list[str] = Field(default_factory=list)
    human_reference_operations: list[str] = Field(default_factory=list)
    plan: list[str] = Field(
        default_factory=list, description="readable steps the reference actions are compiled from"
    )
    realism: Realism = Field(default_factory=Realism)

    @model_validator(mode="after")
    def _aligned(self) -> VirtualTask:
        if len(self.rubrics) != len(self.checks):
            raise ValueError(
                f"{len(self.rubrics)} rubrics but {len(self.checks)} checks; give one check per rubric"
            )
        return self

    @property
    def id(self) -> str:
        return self.task_id

    def prepare(self, phone: VirtualPhone) -> None:
        """Reset ``phone`` to a clean state with this task's realism; call before a run."""
        phone.set_realism(self.realism)

    def compile_reference(self, width: int = 1080, height: int = 2340) -> list[RefAction]:
        """The reference operations compiled from ``plan`` on a fresh phone, each with its reason."""
        phone = VirtualPhone(width=width, height=height, realism_settings=self.realism)
        return compile_plan(self.plan, phone)

    def grade(self, phone: VirtualPhone) -> GradeResult:
        """Score the phone's current state against the rubric (cheap: call it after every step)."""
        state = phone.state()
        items = [
            (rubric, check.passed(state)) for rubric, check in zip(self.rubrics, self.checks, strict=True)
        ]
        score = sum(1 for _, ok in items if ok) / len(items) if items else 0.0
        return GradeResult(score=score, items=items)

    def replay(self, phone: VirtualPhone, actions: list[str] | None = None) -> None:
        """Run ``actions`` (default: the reference actions) on ``phone``, e.g. ``Tap(540, 1200)``."""
        for text in self.reference_actions if actions is None else actions:
            run_steps(phone, resolve_call(parse_action_text(text), {}, phone.screen_size()))


class TaskFile(BaseModel):
    length: int = 0
    scenario: str
    scenario_id: int
    tasks: list[VirtualTask]


def suite_paths(path: Path) -> list[Path]:
    """The task files of a suite: the file itself, or every ``*.json`` of its folder in name order."""
    return sorted(path.glob("*.json")) if path.is_dir() else [path]


def _read_suite(path: Path) -> dict[str, object]:
    files = suite_paths(path)
    if not files:
        raise ConfigError(f"the virtual suite folder {path} holds no task files")
    raws = [read_json(f) for f in files]
    if len(raws) == 1:
        return dict(raws[0])
    tasks = [t for raw in raws for t in raw.get("tasks", [])]
    return {"length": len(tasks), "scenario": path.name.upper(), "scenario_id": 0, "tasks": tasks}


def load_task_suite(
    data_dir: str | Path | None = None, suite: SuiteName = "basic", realism: Realism | None = None
) -> list[VirtualTask]:
    """The built-in tasks of ``suite`` (merged with ``data_dir/tasks.json`` when given).

    ``realism`` replaces every task's own realism setting (e.g. ``Realism(enabled=True, seed=7)`` for
    the whole suite, ``Realism()`` to switch it off); tasks with a plan then get their reference
    actions compiled again for it. Tasks without a plan (the ``basic`` suite) keep their stored
    reference actions, written for a phone without realism. Tasks with a plan that a user file adds
    or changes are compiled too.
    """
    if suite not in SUITE_FILES:
        raise ConfigError(f"no virtual suite {suite!r}; choose one of: {', '.join(SUITE_FILES)}")
    raw = _read_suite(SUITE_FILES[suite])
    user_ids: set[str] = set()
    if data_dir is not None and (Path(data_dir) / USER_TASKS_FILE).is_file():
        user = read_json(Path(data_dir) / USER_TASKS_FILE)
        entries = user.get("tasks", []) if isinstance(user, dict) else []
        user_ids = {t.get("task_id", "") for t in entries if isinstance(t, dict)}
        raw = merge(raw, user)
    try:
        tasks = TaskFile.model_validate(raw).tasks
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"virtual task suite is invalid at {where}: {first['msg']}") from None
    out = []
    for task in tasks:
        if realism is not None:
            task = task.model_copy(update={"realism": realism})
        if task.plan and (realism is not None or task.task_id in user_ids):
            task.reference_actions = [a.text for a in task.compile_reference()]
        out.append(task)
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(description="Compile the reference actions of the virtual suites.")
    parser.add_argument("--write", action="store_true", help="store them in the suite files")
    parser.add_argument("--check", action="store_true", help="exit 1 if a stored sequence is out of date")
    args = parser.parse_args(argv)
    stale: list[str] = []
    for path in (f for folder in SUITE_FILES.values() for f in suite_paths(folder)):
        raw = json.loads(path.read_text(encoding="utf-8"))
        before = len(stale)
        for entry in raw["tasks"]:
            task = VirtualTask.model_validate(entry)
            if not task.plan:
                continue
            actions = [a.text for a in task.compile_reference()]
            if actions != entry.get("reference_actions"):
                stale.append(task.task_id)
                entry["reference_actions"] = actions
            print(f"{task.task_id}: {len(actions)} operations")
        if args.write and len(stale) > before:
            path.write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if stale:
        print(("updated: " if args.write else "out of date: ") + ", ".join(stale))
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
