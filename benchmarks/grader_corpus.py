"""The grader corpus: hand-written routes through every hard and frontier task, with the score each one
deserves.

For each task of the hard virtual suite and of the frontier tier (``CORPUS_SUITES``) the corpus holds
correct routes that differ from the task's reference (another query, another order, another wording of
the note: 24-hour times, "not on sale", NYC) and plausible wrong ones (prices swapped between items, a
scratch note followed by a wrong final note, a cart with a laptop that breaks the constraints, stopping
on a dearer flight). Each route is a list of plan steps (``open``, ``tap``, ``see``, ``type``... as in a
task's ``plan``); steps written as ``act <operation>`` are raw operations (``act Tap(540, 1200)``), and
a step may be a function of the phone that returns one operation. A route is compiled on one phone, then
its operations are replayed through the documented API (``task.prepare``, ``task.replay``,
``task.grade``) on a fresh phone.

A correct route expects every rubric item to hold; a wrong route names the rubric items (0-based) that
must fail, and every other item must hold. The script counts, over all routes:

- false passes: wrong routes scored 1.0, and items that hold though they should fail;
- false fails: correct routes scored below 1.0, and items that fail though they should hold.

    python benchmarks/grader_corpus.py            # counts and every misjudged route
    python benchmarks/grader_corpus.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grader_routes_frontier_shop
import grader_routes_frontier_travel
import grader_routes_places
import grader_routes_real_notes
import grader_routes_research
import grader_routes_shopping
from grader_routes import Route, Step  # the hand-written routes (data), one file per scenario family

from mae.device.virtual import VirtualPhone
from mae.eval.reference import compile_plan
from mae.eval.virtual_suite import SuiteName, VirtualTask, load_task_suite

CORPUS_SUITES: tuple[SuiteName, ...] = ("hard", "frontier")
"""The suites whose tasks the corpus covers."""

__all__ = ["CORPUS_SUITES", "Outcome", "Route", "corpus", "grade_route", "run_corpus", "summary"]


@dataclass
class Outcome:
    task_id: str
    route: str
    correct: bool
    expected_fails: list[int]
    failed: list[int]
    score: float
    error: str = ""

    @property
    def false_pass_items(self) -> list[int]:
        return [i for i in self.expected_fails if i not in self.failed]

    @property
    def false_fail_items(self) -> list[int]:
        return [i for i in self.failed if i not in self.expected_fails]


def operations(task: VirtualTask, steps: Sequence[Step]) -> list[str]:
    """Compile ``steps`` on a phone prepared for ``task`` into the operations they take."""
    phone = VirtualPhone()
    task.prepare(phone)
    out: list[str] = []
    for step in steps:
        if callable(step):
            out.append(step(phone))
            task.replay(phone, out[-1:])
        elif step.startswith("act "):
            out.append(step[4:])
            task.replay(phone, out[-1:])
        else:
            out.extend(a.text for a in compile_plan([step], phone))
    return out


def grade_route(task: VirtualTask, route: Route) -> Outcome:
    """Replay ``route`` on a fresh phone through the task's API and compare its grade with the expectation."""
    try:
        actions = operations(task, route.steps)
    except Exception as exc:  # a route that no longer compiles is reported, not a crash
        return Outcome(task.id, route.name, route.correct, sorted(route.fails), [], 0.0, str(exc))
    phone = VirtualPhone()
    task.prepare(phone)
    task.replay(phone, actions)
    result = task.grade(phone)
    failed = [i for i, (_, ok) in enumerate(result.items) if not ok]
    return Outcome(task.id, route.name, route.correct, sorted(route.fails), failed, result.score)


def corpus(tasks: dict[str, VirtualTask]) -> dict[str, list[Route]]:
    """The routes of every task in ``tasks`` (a scenario file's, then those of ``grader_routes_real_notes``
    and the frontier tier's); the tasks' own plans are reused where a route only adds to them."""
    plan = {task_id: task.plan for task_id, task in tasks.items()}
    out: dict[str, list[Route]] = {}
    for part in (
        grader_routes_places,
        grader_routes_research,
        grader_routes_shopping,
        grader_routes_real_notes,
        grader_routes_frontier_shop,
        grader_routes_frontier_travel,
    ):
        for task_id, routes in part.routes(plan).items():
            if task_id in tasks:
                out.setdefault(task_id, []).extend(routes)
    return out


def run_corpus(only: set[str] | None = None) -> list[Outcome]:
    tasks = {task.id: task for suite in CORPUS_SUITES for task in load_task_suite(suite=suite)}
    outcomes: list[Outcome] = []
    for task_id, routes in corpus(tasks).items():
        if only and task_id not in only:
            continue
        outcomes.extend(grade_route(tasks[task_id], route) for route in routes)
    return outcomes


def summary(outcomes: list[Outcome]) -> dict[str, int]:
    return {
        "routes": len(outcomes),
        "tasks": len({o.task_id for o in outcomes}),
        "false_pass_routes": sum(1 for o in outcomes if not o.correct and o.score == 1.0),
        "false_fail_routes": sum(1 for o in outcomes if o.correct and o.score < 1.0),
        "false_pass_items": sum(len(o.false_pass_items) for o in outcomes),
        "false_fail_items": sum(len(o.false_fail_items) for o in outcomes),
        "errors": sum(1 for o in outcomes if o.error),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--task", action="append", default=[], help="only this task (repeatable)")
    args = parser.parse_args(argv)
    outcomes = run_corpus(set(args.task) or None)
    figures = summary(outcomes)
    if args.json:
        print(
            json.dumps(
                {
                    "summary": figures,
                    "misjudged": [
                        o.__dict__ for o in outcomes if o.error or o.false_pass_items or o.false_fail_items
                    ],
                },
                indent=1,
            )
        )
        return 0
    for o in outcomes:
        if o.error or o.false_pass_items or o.false_fail_items:
            kind = "correct" if o.correct else "wrong"
            print(
                f"{o.task_id} [{kind}] {o.route}: score {o.score:.2f}; should fail "
                f"{o.expected_fails}, failed {o.failed}{'; ' + o.error if o.error else ''}"
            )
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
