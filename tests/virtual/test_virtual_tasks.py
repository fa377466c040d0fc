"""The auto-graded task suite: reference sequences reach full score, wrong ones get partial credit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mae.device.virtual import VirtualPhone
from mae.errors import ConfigError
from mae.eval.virtual_suite import TASKS_FILE, Check, GradeResult, VirtualTask, load_task_suite

SUITE = load_task_suite()
BY_ID = {task.id: task for task in SUITE}
SCENARIOS = {
    "RESTAURANT_RECOMMENDATION",
    "INFORMATION_RESEARCHING",
    "ONLINE_SHOPPING",
    "WHATS_TRENDING",
    "TRAVEL_PLANNING",
}


def test_suite_covers_the_five_scenarios_mostly_multi_app() -> None:
    assert len(SUITE) >= 12
    assert {task.scenario for task in SUITE} == SCENARIOS
    multi = [task for task in SUITE if task.type == "multi_app"]
    assert len(multi) > len(SUITE) / 2
    assert all(len(task.apps) > 1 for task in multi)
    assert len({task.id for task in SUITE}) == len(SUITE)


def test_tasks_json_is_in_mobile_eval_e_format() -> None:
    raw = json.loads(TASKS_FILE.read_text())
    assert raw["length"] == len(raw["tasks"])
    for task in raw["tasks"]:
        assert {"task_id", "instruction", "type", "apps", "scenario", "rubrics"} <= set(task)
        assert all(isinstance(r, str) for r in task["rubrics"])
        installed = set(VirtualPhone().installed_apps())
        assert set(task["apps"]) <= installed


@pytest.mark.parametrize("task", SUITE, ids=lambda t: t.id)
def test_reference_actions_reach_full_score(task: VirtualTask) -> None:
    phone = VirtualPhone()
    before = task.grade(phone)
    assert before.score == 0.0
    task.replay(phone)
    result = task.grade(phone)
    assert result.score == 1.0, [rubric for rubric, ok in result.items if not ok]
    assert len(result.items) == len(task.rubrics)
    assert len(phone.state().log) == len(task.reference_actions)


@pytest.mark.parametrize("task", SUITE, ids=lambda t: t.id)
def test_stopping_early_gets_partial_credit(task: VirtualTask) -> None:
    phone = VirtualPhone()
    task.replay(phone, task.reference_actions[:-1])
    result = task.grade(phone)
    assert 0.0 < result.score < 1.0


def _replace(actions: list[str], old: str, new: str) -> list[str]:
    assert old in actions
    return [new if a == old else a for a in actions]


def test_choosing_the_wrong_restaurant_loses_the_final_rubric() -> None:
    task = BY_ID["v_korean_late_night"]
    phone = VirtualPhone()
    # after scrolling, tap Han River Kitchen (best rated but closes at 8 PM) instead of Gangnam BBQ House
    wrong = [*task.reference_actions[:-1], "Tap(540, 1174)"]
    task.replay(phone, wrong)
    assert phone.state().item == "han-river"
    result = task.grade(phone)
    assert [ok for _, ok in result.items] == [True, True, True, True, False, False]
    assert result.score == pytest.approx(4 / 6)


def test_note_with_items_not_on_sale_fails_the_only_on_sale_rubric() -> None:
    task = BY_ID["v_walmart_sale_items_note"]
    note = 'Type("Walmart: ribeye $12.98, oranges $5.47, toilet paper $21.97")'
    actions = [*task.reference_actions[:-1], note]
    phone = VirtualPhone()
    task.replay(phone, actions)
    result = task.grade(phone)
    verdicts = dict(result.items)
    assert verdicts["Added a note with the prices of the items on sale"]
    assert not verdicts["The added note only contains items that are on sale"]
    assert result.score == pytest.approx(0.9)


def test_buying_at_the_more_expensive_store_is_partial() -> None:
    task = BY_ID["v_joycon_cheapest_cart"]
    phone = VirtualPhone()
    task.replay(phone, task.reference_actions[:4])
    phone.tap(
        *next(e.center for e in phone.ground_truth() if e.text.startswith("Nintendo Switch Joy-Con (L/R)"))
    )
    phone.tap(*next(e.center for e in phone.ground_truth() if e.text == "Add to cart"))
    result = task.grade(phone)
    assert 0 < result.score < 0.5


def test_grade_result_counts() -> None:
    result = GradeResult(score=0.5, items=[("a", True), ("b", False)])
    assert result.passed == 1


def test_checks_must_match_rubrics() -> None:
    with pytest.raises(ValueError, match="one check per rubric"):
        VirtualTask(
            task_id="x", instruction="i", type="single_app", apps=["Notes"], scenario="S",
            rubrics=["Opened Notes", "Something else"], checks=[Check(kind="opened_app", app="Notes")],
        )  # fmt: skip


def test_user_tasks_are_merged(tmp_path: Path) -> None:
    extra = {
        "task_id": "my_notes_task",
        "instruction": "Open Notes and write a note that says hello.",
        "type": "single_app",
        "apps": ["Notes"],
        "scenario": "CUSTOM",
        "rubrics": ["Opened Notes", "Wrote hello"],
        "checks": [{"kind": "opened_app", "app": "Notes"}, {"kind": "note", "groups": [["hello"]]}],
        "reference_actions": ['Open_App("Notes")', "Tap(930, 2058)", 'Type("hello")'],
    }
    (tmp_path / "tasks.json").write_text(json.dumps({"tasks": [extra]}))
    suite = load_task_suite(tmp_path)
    assert len(suite) == len(SUITE) + 1
    task = suite[-1]
    phone = VirtualPhone()
    task.replay(phone)
    assert task.grade(phone).score == 1.0
    (tmp_path / "tasks.json").write_text(json.dumps({"tasks": [{**extra, "type": "weird"}]}))
    with pytest.raises(ConfigError, match="invalid"):
        load_task_suite(tmp_path)
