"""The paper's metrics on hand-made trajectories: SS with partial credit, AA, RA, TE for every exit
reason, Shortcut usage, seconds per operation, intervals over repeats, the SSS curve and its line."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_testkit import record

from mae.errors import ExitReason
from mae.eval.marks import JudgeMarks, apply_marks, curve_from_steps
from mae.eval.metrics import (
    confidence_interval,
    group_metrics,
    normalised_curve,
    regression_line,
    summarize,
)

PAPER_EXITS = {
    ExitReason.MAX_STEPS,
    ExitReason.CONSECUTIVE_ERRORS,
    ExitReason.REPEATED_ACTION,
    ExitReason.UNUSABLE_REPLY,
}


@pytest.mark.parametrize("reason", list(ExitReason))
def test_eval_termination_error_is_the_papers_exits_and_harness_exits_count_apart(reason: ExitReason) -> None:
    records = [record("a", exit_reason=reason), record("b")]
    metrics = group_metrics(records)
    assert metrics.te == (0.5 if reason in PAPER_EXITS else 0.0)
    harness = reason is not ExitReason.FINISHED and reason not in PAPER_EXITS  # refusal, stop, outage, crash
    assert metrics.harness_exits == (0.5 if harness else 0.0)
    assert records[0].termination_error is (reason in PAPER_EXITS)
    assert records[0].harness_exit is harness


def test_eval_satisfaction_gives_partial_credit_and_averages_tasks() -> None:
    two_of_three = record("a", rubric_steps=[1, 2, None])
    one_of_four = record("b", rubric_steps=[None, 3, None, None])
    ungraded = record("c", grader="none")
    metrics = group_metrics([two_of_three, one_of_four, ungraded])
    assert metrics.graded == 2 and metrics.tasks == 3
    assert metrics.ss == pytest.approx((2 / 3 + 1 / 4) / 2)


def test_eval_action_and_reflection_accuracy_pool_all_judged_items() -> None:
    a = record(
        "a",
        outcomes="AAB",
        action_correct=[True, True, False],
        reflection_correct=[True, False, True],
        correctness_source="person",
    )
    b = record(
        "b",
        outcomes="AC",
        action_correct=[True, None],
        reflection_correct=[None, None],
        correctness_source="person",
    )
    metrics = group_metrics([a, b])
    assert metrics.aa == pytest.approx(3 / 4)  # the unjudged action is left out
    assert metrics.ra == pytest.approx(2 / 3)
    assert metrics.aa_proxy is None and metrics.ra_proxy is None
    assert group_metrics([record("c", action_correct=[None] * 3, reflection_correct=[None] * 3)]).aa is None


def test_eval_code_judged_accuracy_is_a_proxy_in_its_own_columns() -> None:
    from mae.eval.report import build_report

    code = record(
        "a", outcomes="AAB", action_correct=[True, True, False], reflection_correct=[True, True, False]
    )
    metrics = group_metrics([code])
    assert metrics.aa is None and metrics.ra is None  # the paper's AA/RA: nobody judged them
    assert metrics.aa_proxy == pytest.approx(2 / 3) and metrics.ra_proxy == pytest.approx(2 / 3)
    overall = build_report([code], summarize([code])).tables[0]
    row = dict(zip(overall.headers, overall.rows[0], strict=True))
    assert row["Action Accuracy (%) ↑"] == "not judged" and row["Reflection Accuracy (%) ↑"] == "not judged"
    assert row["AA (code proxy) ↑"] == "66.7" and row["RA (code proxy) ↑"] == "66.7"


def test_eval_steps_shortcuts_speed_tokens_and_cost() -> None:
    a = record(
        "a",
        outcomes="AAAA",
        shortcuts="S..S",
        totals={
            "steps": 4,
            "seconds": 20.0,
            "model_seconds": 8.0,
            "perception_seconds": 4.0,
            "execution_seconds": 2.0,
            "input_tokens": 900,
            "output_tokens": 100,
            "images": 8,
        },
        cost_usd=0.02,
    )
    b = record(
        "b",
        outcomes="AA",
        totals={
            "steps": 2,
            "seconds": 10.0,
            "model_seconds": 4.0,
            "perception_seconds": 2.0,
            "execution_seconds": 1.0,
            "input_tokens": 1900,
            "output_tokens": 100,
            "images": 4,
        },
    )
    metrics = group_metrics([a, b])
    assert metrics.steps == 3.0
    assert metrics.shortcut_pct == pytest.approx(2 / 6)
    # per atomic operation that ran, as in the paper's Table 5: each Shortcut ran three
    assert metrics.s_per_op == pytest.approx(30 / 10)
    assert metrics.model_s_per_op == pytest.approx(12 / 10)
    assert metrics.perception_s_per_op == pytest.approx(6 / 10)
    assert metrics.execution_s_per_op == pytest.approx(3 / 10)
    assert metrics.tokens == 1500 and metrics.images == 6
    assert metrics.cost_usd == pytest.approx(0.02)  # mean over the runs with a known price


def test_eval_confidence_intervals_over_repeats() -> None:
    runs = [
        record("a", repeat=0, rubric_steps=[1, 1]),
        record("a", repeat=1, rubric_steps=[1, None]),
        record("a", repeat=2, rubric_steps=[None, None], exit_reason=ExitReason.MAX_STEPS),
    ]
    summary = summarize(runs)
    overall = summary.overall
    assert overall.repeats == 3 and overall.ss == pytest.approx(0.5)
    # values 1.0, 0.5, 0.0: sd 0.5, t(2) = 4.303, half-width 4.303 * 0.5 / sqrt(3)
    assert overall.ci["ss"] == pytest.approx(4.303 * 0.5 / 3**0.5)
    assert overall.ci["te"] == pytest.approx(confidence_interval([0.0, 0.0, 1.0]))
    assert confidence_interval([0.7]) is None
    assert "ss" not in summarize(runs[:1]).overall.ci


def test_eval_summary_groups_by_scenario_and_task() -> None:
    runs = [record("a", scenario="X"), record("b", scenario="Y", rubric_steps=[1]), record("c", scenario="X")]
    summary = summarize(runs)
    assert list(summary.scenarios) == ["X", "Y"] and list(summary.tasks) == ["a", "b", "c"]
    assert summary.scenarios["Y"].ss == 1.0 and summary.scenarios["X"].tasks == 2


def test_eval_sss_curve_normalised_and_regression_line() -> None:
    assert curve_from_steps([1, 3, None, 0], 4) == [0.25, 0.5, 0.5, 0.75, 0.75]
    assert normalised_curve([0.0, 0.5, 1.0], points=5) == [0.0, 0.0, 0.5, 0.5, 1.0]
    assert normalised_curve([0.4], points=3) == [0.4, 0.4, 0.4]
    slope, intercept = regression_line([0, 0.5, 1], [0, 50, 100]) or (0, 0)
    assert slope == pytest.approx(100) and intercept == pytest.approx(0)
    assert regression_line([1, 1], [0, 1]) is None


def test_eval_judge_marks_replace_code_grading() -> None:
    base = record("a", outcomes="AAB", rubric_steps=[1, None, None])
    marks = JudgeMarks(
        key=base.key, rubric_steps=[2, 3, 9], action_correct=[False, None, True], reflection_correct=[None]
    )
    judged = apply_marks(base, marks)
    assert judged.grader == "person" and judged.rubric_steps == [2, 3, 3]  # clipped to the last step
    assert judged.final_passed == [True, True, True] and judged.curve == [0, 0, 1 / 3, 1.0]
    assert judged.action_correct == [False, True, True]  # unmarked ones keep the code's verdict
    assert judged.reflection_correct == [True, True, True]
    assert group_metrics([judged]).ss == 1.0 and group_metrics([judged]).graders == ["person"]
    wrong_length = JudgeMarks(key=base.key, rubric_steps=[1])
    assert apply_marks(base, wrong_length).grader == "code"


def test_eval_cost_from_the_dated_price_table() -> None:
    from mae.eval.prices import estimate_cost, price_table
    from mae.llm.client import CallRecord

    def call(provider: str, model: str, tokens_in: int, tokens_out: int) -> CallRecord:
        return CallRecord(
            role="operator",
            provider=provider,
            model=model,
            started_at=0,
            latency_s=1,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
        )

    table = price_table()
    assert table.as_of and table.price("openai", "gpt-4o") == (2.5, 10.0)
    cost, note = estimate_cost([call("openai", "gpt-4o", 1_000_000, 100_000), call("vllm", "local", 5, 5)])
    assert cost == pytest.approx(2.5 + 1.0)
    assert table.as_of in note and "no price for vllm:local" in note
    assert estimate_cost([call("custom", "x", 10, 10)])[0] is None


def test_eval_results_file_survives_an_interrupted_write(tmp_path: Path) -> None:
    from mae.errors import ConfigError
    from mae.eval.records import RESULTS_FILE, append_result, read_results

    first, second = record("a"), record("b")
    append_result(tmp_path, first)
    path = tmp_path / RESULTS_FILE
    with path.open("a") as handle:
        handle.write(second.model_dump_json()[:40])  # cut short: that task reruns on --resume
    assert [r.key for r in read_results(tmp_path)] == [first.key]
    append_result(tmp_path, record("a", rubric_steps=[1, 1, 1]))  # a rerun of a replaces the old line
    (again,) = [r for r in read_results(tmp_path) if r.task_id == "a"]
    assert again.final_passed == [True, True, True]
    path.write_text("not json\n" + first.model_dump_json() + "\n")
    with pytest.raises(ConfigError, match="line 1 is not a task result"):
        read_results(tmp_path)


def test_eval_repeats_meet_differently_seeded_obstacles() -> None:
    from typing import Any, cast

    from pydantic import BaseModel

    from mae.eval.runner import prepare_phone
    from mae.eval.tasks import EvalTask

    class Obstacles(BaseModel):
        enabled: bool = True
        seed: int = 5

    class SuiteTask(BaseModel):
        realism: Obstacles = Obstacles()

        def prepare(self, phone: Any) -> None:
            phone.append(self.realism.seed)

    phone: list[int] = []
    task = EvalTask(task_id="t", scenario="S", instruction="do", source="virtual", grader=SuiteTask())
    assert prepare_phone(cast(Any, phone), task, repeat=0, seed=None) == 5  # the task's own seed
    assert prepare_phone(cast(Any, phone), task, repeat=2, seed=None) == 7
    assert prepare_phone(cast(Any, phone), task, repeat=1, seed=40) == 41
    assert phone == [5, 7, 41] and task.grader.realism.seed == 5  # the suite's task is not changed
    calm = EvalTask(
        task_id="t",
        scenario="S",
        instruction="do",
        source="virtual",
        grader=SuiteTask(realism=Obstacles(enabled=False)),
    )
    assert prepare_phone(cast(Any, phone), calm, repeat=3, seed=None) == 0 and phone[-1] == 5


def test_eval_an_action_that_never_ran_is_no_operation() -> None:
    invalid = record("a", outcomes="AC", totals={"steps": 2, "seconds": 6.0})
    invalid.actions[1].executed, invalid.actions[1].operations = False, 0
    assert group_metrics([invalid]).s_per_op == pytest.approx(6.0)
    old = invalid.model_copy(deep=True)  # a record written before the count was kept
    for action in old.actions:
        action.operations = None
    assert group_metrics([old]).s_per_op == pytest.approx(6.0)  # one per executed action


def test_eval_marks_that_leave_the_rubric_as_code_found_it_keep_the_code_grading() -> None:
    lost = record("a", outcomes="AAA", rubric_steps=[1, 2])  # item 2 held after step 2, then not:
    lost = lost.model_copy(update={"final_passed": [True, False], "curve": [0, 0.5, 1.0, 0.5]})
    ticked = JudgeMarks(key=lost.key, rubric_steps=[1, 2], action_correct=[True, True, False])
    judged = apply_marks(lost, ticked)
    assert judged.grader == "code" and judged.curve == [0, 0.5, 1.0, 0.5]
    assert group_metrics([judged]).ss == 0.5
    assert judged.action_correct == [True, True, False] and judged.correctness_source == "person"
    moved = apply_marks(lost, JudgeMarks(key=lost.key, rubric_steps=[1, None]))
    assert moved.grader == "person" and group_metrics([moved]).ss == 0.5  # a change is the person's


def test_eval_compare_keeps_to_the_tasks_both_evals_ran(tmp_path: Path) -> None:
    from mae.eval.records import append_result
    from mae.eval.report import compare

    for name, records in (
        ("a", [record("t1", rubric_steps=[1, 2]), record("t2", rubric_steps=[None, None])]),
        ("b", [record("t1", rubric_steps=[1, 2])]),
        ("c", [record("t3", rubric_steps=[1, 2])]),
    ):
        (tmp_path / name).mkdir()
        for item in records:
            append_result(tmp_path / name, item)
    text = compare(tmp_path / "a", tmp_path / "b")
    assert "Compared over the 1 task(s) both ran; left out: 1 only in A, 0 only in B." in text
    assert "| Satisfaction Score (%) | 100.0 | 100.0 | +0.0 |" in text  # not 50.0 against 100.0
    assert "share no task, so there is nothing to compare" in compare(tmp_path / "a", tmp_path / "c")


def test_eval_an_unfinished_repeat_is_left_out_of_the_figures() -> None:
    done = [record("a", repeat=0, rubric_steps=[1]), record("b", repeat=0, rubric_steps=[None])]
    partial = [record("a", repeat=1, rubric_steps=[1])]  # the eval stopped during repeat 1
    metrics = summarize([*done, *partial]).overall
    assert metrics.ss == pytest.approx(0.5) and metrics.left_out == 1  # not 2/3, weighing task a twice
    assert metrics.ci == {}  # one complete repeat: no interval (was ± hundreds of points)
    assert summarize(done).overall.left_out == 0


def test_eval_code_action_accuracy_counts_an_action_that_loses_a_rubric_item_as_wrong() -> None:
    from types import SimpleNamespace

    from mae.eval.runner import grade_record

    item = record("a", outcomes="AA", rubric_steps=[1, None])
    for action in item.actions:
        action.effect = True
    grades = {0: [False, False], 1: [True, False], 2: [False, True]}  # step 2 loses one item, gains one
    grader = SimpleNamespace(grades=grades, last_step=2)
    result = SimpleNamespace(actions=[SimpleNamespace(stopped=False, error=None)] * 2)
    graded = grade_record(item, grader, result)  # type: ignore[arg-type]
    assert graded.curve == [0.0, 0.5, 0.5]  # the total did not drop...
    assert graded.action_correct == [True, False]  # ...but an item was lost: not a correct action


def test_eval_an_empty_group_has_no_termination_error_to_show() -> None:
    from mae.eval.report import pct

    assert group_metrics([]).te is None and pct(group_metrics([]).te) == "–"  # not 0.0
