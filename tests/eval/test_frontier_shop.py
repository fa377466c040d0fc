"""The frontier tier's Cartwell scenarios: they load, their references reach full score on a fresh phone
with each task's realism, their instructions leave the app's habits to be discovered, and a run that
falls for a habit loses the rubric item about it. The grader corpus judges their routes right."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mae.device.virtual import VirtualPhone
from mae.eval.reference import compile_plan
from mae.eval.virtual_suite import FRONTIER_DIR, TaskFile, VirtualTask, load_task_suite

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from grader_corpus import corpus, grade_route  # the corpus, also counted by the benchmark

SCENARIOS = {
    "1_cartwell_desk_setup.json": "CARTWELL_DESK_SETUP",
    "2_cartwell_price_check.json": "CARTWELL_PRICE_CHECK",
}
FRONTIER = {task.id: task for task in load_task_suite(suite="frontier")}
OURS = {
    task.task_id: task
    for name in SCENARIOS
    for task in TaskFile.model_validate_json((FRONTIER_DIR / name).read_text(encoding="utf-8")).tasks
}
QUIRK_WORDS = (
    "filter",
    "sort",
    "show results",
    "protection",
    "warranty",
    "plan",
    "menu",
    "toggle",
    "include",
)


def _replayed(task: VirtualTask, actions: list[str] | None = None) -> VirtualPhone:
    phone = VirtualPhone()
    task.prepare(phone)
    task.replay(phone, actions)
    return phone


def test_scenario_files_hold_five_tasks_of_one_scenario_each() -> None:
    for name, scenario in SCENARIOS.items():
        raw = TaskFile.model_validate_json((FRONTIER_DIR / name).read_text(encoding="utf-8"))
        assert raw.scenario == scenario and raw.length == len(raw.tasks) == 5
        assert {task.scenario for task in raw.tasks} == {scenario}
        assert all("Cartwell" in task.apps and task.realism.enabled for task in raw.tasks)
        lengths = [len(task.reference_actions) for task in raw.tasks]
        assert all(18 <= n <= 40 for n in lengths) and max(lengths) >= 30, lengths
    assert set(OURS) <= set(FRONTIER)
    assert sum(len(task.apps) >= 3 for task in OURS.values()) >= 5  # the price checks span three apps


@pytest.mark.parametrize("task_id", sorted(OURS))
def test_instructions_leave_the_app_habits_to_be_discovered(task_id: str) -> None:
    instruction = OURS[task_id].instruction.lower()
    assert not [word for word in QUIRK_WORDS if word in instruction]


@pytest.mark.parametrize("task_id", sorted(OURS))
def test_reference_reaches_full_score_on_a_fresh_phone(task_id: str) -> None:
    task = FRONTIER[task_id]
    assert [a.text for a in task.compile_reference()] == task.reference_actions
    result = task.grade(_replayed(task))
    assert result.score == 1.0, [rubric for rubric, ok in result.items if not ok]


UNTICK = "tap Add 2-year protection"
BUYERS = sorted(t for t, task in OURS.items() if any(step.startswith(UNTICK) for step in task.plan))


@pytest.mark.parametrize("task_id", BUYERS)
def test_leaving_the_pre_ticked_plan_loses_a_rubric_item(task_id: str) -> None:
    task = FRONTIER[task_id]
    careless = [step for step in task.plan if not step.startswith(UNTICK)]
    phone = VirtualPhone()
    task.prepare(phone)
    compile_plan(careless, phone)
    result = task.grade(phone)
    assert result.score < 1.0
    held = [item.product_id for item in phone.state().carts["cartwell"]]
    assert any(product.endswith(":protection") for product in held)


def test_a_run_that_stops_before_the_cart_gets_partial_credit() -> None:
    task = FRONTIER["f_cw_ssd_2tb"]
    score = task.grade(_replayed(task, task.reference_actions[: len(task.reference_actions) // 2])).score
    assert 0 < score < 1


def test_grader_corpus_judges_every_cartwell_route_right() -> None:
    routes = corpus({**{task.id: task for task in load_task_suite(suite="hard")}, **FRONTIER})
    assert set(OURS) <= set(routes)
    for task_id in OURS:
        assert (
            sum(r.correct for r in routes[task_id]) >= 2 and sum(not r.correct for r in routes[task_id]) >= 3
        )
        for route in routes[task_id]:
            outcome = grade_route(FRONTIER[task_id], route)
            assert not outcome.error and outcome.failed == outcome.expected_fails, (task_id, route.name)
