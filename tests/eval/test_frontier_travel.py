"""The frontier tier's travel scenarios (3: hotel bookings on Trips; 4: event trips from Chrome through
Trips to Notes): their files load, their plans compile to the stored references, the references score
1.0 on a fresh phone with the tasks' realism, and their grader corpus judges every route right."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mae.device.virtual import VirtualPhone
from mae.eval.virtual_suite import FRONTIER_DIR, VirtualTask, load_task_suite

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from grader_corpus import grade_route, summary  # the corpus, also counted by the benchmark
from grader_routes_frontier_travel import routes

FILES = {"3_hotel_bookings.json": "HOTEL_BOOKING", "4_event_trips.json": "EVENT_TRIP_PLANNING"}
TASKS = [t for t in load_task_suite(suite="frontier") if t.scenario in FILES.values()]
QUIRKS = (
    "suggestion",
    "next month",
    "choose a month",
    "show results",
    "sort by",
    "overflow",
    "⋮",
    "(217) 555",
    "mm/dd",
)
"""Words that would give an app's habit away: the instructions must leave them to be discovered."""


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_scenario_file_holds_five_tasks_of_one_scenario(name: str) -> None:
    raw = json.loads((FRONTIER_DIR / name).read_text(encoding="utf-8"))
    assert raw["length"] == len(raw["tasks"]) == 5
    assert {t["scenario"] for t in raw["tasks"]} == {FILES[name]} == {raw["scenario"]}
    counts = [len(t["reference_actions"]) for t in raw["tasks"]]
    assert all(18 <= n <= 40 for n in counts) and max(counts) >= 30
    for entry in raw["tasks"]:
        assert entry["task_id"].startswith("f_") and entry["realism"]["enabled"]
        assert set(entry["apps"]) <= set(VirtualPhone().installed_apps())
        assert not any(word in entry["instruction"].lower() for word in QUIRKS), entry["task_id"]


def test_the_travel_tasks_share_one_memory_per_scenario_in_order() -> None:
    assert [t.scenario for t in TASKS] == ["HOTEL_BOOKING"] * 5 + ["EVENT_TRIP_PLANNING"] * 5
    assert len({t.realism.seed for t in TASKS}) == len(TASKS)
    assert all(t.apps == ["Chrome", "Trips", "Notes"] for t in TASKS[5:])


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_reference_is_current_and_scores_full_marks(task: VirtualTask) -> None:
    assert [a.text for a in task.compile_reference()] == task.reference_actions
    phone = VirtualPhone()
    task.prepare(phone)
    task.replay(phone)
    assert task.grade(phone).score == 1.0
    idle = VirtualPhone()
    task.prepare(idle)
    assert task.grade(idle).score == 0.0


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_grader_corpus_judges_every_route_right(task: VirtualTask) -> None:
    mine = routes({task.id: task.plan})[task.id]
    assert sum(r.correct for r in mine) >= 2 and sum(not r.correct for r in mine) >= 3
    outcomes = [grade_route(task, route) for route in mine]
    wrong = [
        (o.route, o.error or f"failed {o.failed}")
        for o in outcomes
        if o.error or o.failed != o.expected_fails
    ]
    assert not wrong
    figures = summary(outcomes)
    assert figures["false_pass_routes"] == figures["false_fail_routes"] == 0
