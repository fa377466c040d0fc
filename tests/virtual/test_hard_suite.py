"""The hard virtual suite: references reach full score with realism on, wrong or short runs do not."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from mae.device.virtual import VirtualPhone
from mae.device.virtual.realism import Realism
from mae.errors import ConfigError
from mae.eval.reference import PlanError, compile_plan
from mae.eval.virtual_suite import HARD_TASKS_FILE, VirtualTask, load_task_suite

HARD = load_task_suite(suite="hard")
BY_ID = {task.id: task for task in HARD}
SCENARIOS = {
    "RESTAURANT_RECOMMENDATION",
    "INFORMATION_RESEARCHING",
    "ONLINE_SHOPPING",
    "WHATS_TRENDING",
    "TRAVEL_PLANNING",
}


def _run(task: VirtualTask, actions: list[str]) -> VirtualPhone:
    phone = VirtualPhone()
    task.prepare(phone)
    task.replay(phone, actions)
    return phone


def _run_plan(task: VirtualTask, plan: list[str]) -> VirtualPhone:
    phone = VirtualPhone()
    task.prepare(phone)
    compile_plan(plan, phone)
    return phone


def test_hard_suite_mirrors_mobile_eval_e() -> None:
    assert len(HARD) >= 25
    assert {task.scenario for task in HARD} == SCENARIOS
    for scenario in SCENARIOS:
        assert sum(task.scenario == scenario for task in HARD) >= 5
    assert sum(task.type == "multi_app" for task in HARD) > len(HARD) / 2
    assert all(task.realism.enabled for task in HARD)
    assert len({task.realism.seed for task in HARD}) == len(HARD)
    mean_ops = statistics.fmean(len(task.reference_actions) for task in HARD)
    assert mean_ops >= 12
    raw = json.loads(HARD_TASKS_FILE.read_text())
    assert raw["length"] == len(raw["tasks"])
    for entry in raw["tasks"]:
        assert {"task_id", "instruction", "type", "apps", "scenario", "rubrics"} <= set(entry)
        assert set(entry["apps"]) <= set(VirtualPhone().installed_apps())


@pytest.mark.parametrize("task", HARD, ids=lambda t: t.id)
def test_reference_reaches_full_score_with_realism(task: VirtualTask) -> None:
    compiled = task.compile_reference()
    assert [a.text for a in compiled] == task.reference_actions, (
        "run python -m mae.eval.virtual_suite --write"
    )
    phone = _run(task, task.reference_actions)
    result = task.grade(phone)
    assert result.score == 1.0, [r for r, ok in result.items if not ok]
    # realism made the run longer: something was dismissed or waited out on the way
    assert any(a.reason in ("dismiss", "wait") for a in compiled)
    assert phone.realism.dismissed


@pytest.mark.parametrize("task", HARD, ids=lambda t: t.id)
def test_truncated_and_undismissed_runs_get_partial_credit(task: VirtualTask) -> None:
    half = task.reference_actions[: len(task.reference_actions) // 2]
    score = task.grade(_run(task, half)).score
    assert 0.0 < score < 1.0
    compiled = task.compile_reference()
    no_dismiss = [a.text for a in compiled if a.reason != "dismiss"]
    assert task.grade(_run(task, no_dismiss)).score < 1.0


def test_score_grows_along_the_reference_run() -> None:
    task = BY_ID["h_walmart_sale_items_note"]
    phone = VirtualPhone()
    task.prepare(phone)
    curve = []
    for action in task.reference_actions:
        task.replay(phone, [action])
        curve.append(task.grade(phone).score)
    assert curve[0] < curve[len(curve) // 2] < curve[-1] == 1.0
    assert curve == sorted(curve)


def test_refurbished_look_alike_is_not_the_answer() -> None:
    task = BY_ID["h_joycon_three_stores"]
    plan = [
        *task.plan[: task.plan.index("open Walmart")],
        "open Amazon",
        "tap Nintendo Switch Joy-Con (L/R), Neon Red and Neon Blue (Renewed)",
    ]
    result = task.grade(_run_plan(task, plan))
    assert 0.5 < result.score < 1.0
    failed = [rubric for rubric, ok in result.items if not ok]
    assert any("cheapest" in rubric for rubric in failed)


def test_out_of_stock_laptop_cannot_be_bought() -> None:
    task = BY_ID["h_laptop_nvidia_cart"]
    plan = [
        *task.plan[:4],
        "tap MSI Thin GF63 Gaming Laptop, NVIDIA GeForce RTX 4050, 16GB RAM, 512GB SSD",
        "see amazon:price:msi-thin-gf63",
    ]
    phone = _run_plan(task, plan)
    labels = [label for label, _ in phone.tap_targets()]
    assert "Add to cart" not in labels
    assert any(e.text == "Currently unavailable" for e in phone.ground_truth())
    with pytest.raises(PlanError, match="Add to cart"):
        compile_plan(["tap Add to cart"], phone)
    result = task.grade(phone)
    assert result.score == pytest.approx(3 / 7)
    assert not any("cart" in rubric for rubric, ok in result.items if ok)
    assert not phone.state().carts.get("amazon")


def test_stopping_at_the_dearer_store_loses_the_last_item() -> None:
    task = BY_ID["h_air_fryer_best_deal"]
    plan = [*task.plan, "open Amazon"]
    result = task.grade(_run_plan(task, plan))
    assert result.items[-1][1] is False
    assert result.score == pytest.approx(6 / 7)


def test_sponsored_ad_is_not_the_flight_list() -> None:
    task = BY_ID["h_cheap_flight_nyc"]
    plan = [*task.plan[:4], "tap Cheap Flights, Hotels and Tours - Up to 70% Off"]
    result = task.grade(_run_plan(task, plan))
    assert result.score == pytest.approx(2 / 6)


@pytest.mark.parametrize("task_id", ["h_oled_tv_best_deal", "h_x_trending_note", "h_champaign_hotel_booking"])
def test_suite_wide_realism_override(task_id: str) -> None:
    for setting in (Realism(enabled=True, seed=4242), Realism()):
        suite = {t.id: t for t in load_task_suite(suite="hard", realism=setting)}
        task = suite[task_id]
        assert task.realism == setting
        phone = _run(task, task.reference_actions)
        assert task.grade(phone).score == 1.0
    plain = suite[task_id].compile_reference()
    assert not [a for a in plain if a.reason in ("dismiss", "wait")]
    assert len(plain) < len(BY_ID[task_id].reference_actions)


def test_unknown_suite_and_bad_plan_step_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match="choose one of"):
        load_task_suite(suite="nope")  # type: ignore[arg-type]
    with pytest.raises(PlanError, match="unknown plan step"):
        compile_plan(["fly to the moon"], VirtualPhone())
    with pytest.raises(PlanError, match="could not find"):
        compile_plan(["open Notes", "tap No such button"], VirtualPhone())


def test_bad_realism_in_a_user_task_file_is_a_clear_error(tmp_path: Path) -> None:
    task = json.loads(HARD_TASKS_FILE.read_text())["tasks"][0]
    task["realism"] = {"enabled": True, "loading_s": [5, 1]}
    (tmp_path / "tasks.json").write_text(json.dumps({"tasks": [task]}))
    with pytest.raises(ConfigError, match=r"realism.*loading_s"):
        load_task_suite(tmp_path, suite="hard")
    task["realism"] = {"enabled": True, "seed": 99}
    (tmp_path / "tasks.json").write_text(json.dumps({"tasks": [task]}))
    suite = {t.id: t for t in load_task_suite(tmp_path, suite="hard")}
    changed = suite[task["task_id"]]
    assert changed.realism.seed == 99
    assert changed.grade(_run(changed, changed.reference_actions)).score == 1.0
    assert len(suite) == len(HARD)


def test_reference_compiles_for_another_screen_size() -> None:
    task = BY_ID["h_chinese_ohare_x_route"]
    actions = [a.text for a in task.compile_reference(720, 1560)]
    assert actions != task.reference_actions  # other coordinates
    phone = VirtualPhone(720, 1560)
    task.prepare(phone)
    task.replay(phone, actions)
    assert task.grade(phone).score == 1.0
