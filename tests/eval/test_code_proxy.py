"""AA/RA by code: leaving a page to explore is not a wrong action; losing an item for good, or drifting
after the last progress of a run that fell short, is. Efficiency in the report and in compare."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_testkit import record

from mae.eval.code_proxy import ProxyAction, action_correctness, reflection_correctness
from mae.eval.metrics import group_metrics, summarize
from mae.eval.records import append_result
from mae.eval.report import EFFICIENCY_HEADERS, build_report, compare

F, T = False, True


def _actions(n: int, outcomes: str = "", effect: bool = True) -> list[ProxyAction]:
    return [ProxyAction(executed=True, effect=effect, outcome=(outcomes or "A" * n)[i]) for i in range(n)]


def test_leaving_the_first_store_to_check_the_second_is_not_wrong() -> None:
    # items: [Amazon price seen, Walmart price seen, stopped at the best deal's page]
    held = [
        [F, F, F],
        [T, F, T],  # Amazon's page: its price, and (for now) a product page
        [T, F, F],  # leaves it to check Walmart: the page item stops holding
        [T, T, F],
        [T, T, T],  # stops at Walmart's page, the best deal
    ]
    assert action_correctness(held, _actions(4)) == [T, T, T, T]


def test_back_from_an_out_of_stock_product_is_not_wrong() -> None:
    held = [
        [F, F],
        [T, F],
        [T, F],
        [T, T],
    ]  # open the out-of-stock TV (nothing gained), Back, open the right one
    assert action_correctness(held, _actions(3)) == [T, T, T]


def test_losing_an_item_the_end_state_lacks_is_wrong() -> None:
    held = [[F, F], [T, F], [T, T], [T, F]]  # found the best deal, then stopped on the dearer store's page
    assert action_correctness(held, _actions(3)) == [T, T, F]


def test_drifting_after_the_last_progress_of_a_run_that_fell_short_is_wrong() -> None:
    held = [[F, F], [T, F], [T, F], [T, F]]
    assert action_correctness(held, _actions(3)) == [T, F, F]
    done = [[F], [T], [T], [T]]  # everything held: extra actions lose nothing
    assert action_correctness(done, _actions(3)) == [T, T, T]


def test_an_action_that_changed_nothing_or_never_ran_is_wrong() -> None:
    held = [[F], [F], [T]]
    assert action_correctness(held, _actions(2, effect=False)) == [F, F]
    never = [ProxyAction(executed=False, effect=None, outcome="C"), *_actions(1)]
    assert action_correctness(held, never) == [F, T]


def test_reflection_proxy_matches_verdicts_to_actions() -> None:
    actions = _actions(3, "ABA")
    actions[2].self_judged = True  # a refusal the phone judged itself
    assert reflection_correctness([T, F, F], actions) == [T, T, None]
    assert reflection_correctness([T, F, F], actions, has_reflector=False) == [None, None, None]


def _run(task: str, steps: int, calls: int, tokens: int, seconds: float, cost: float, **extra: object):  # type: ignore[no-untyped-def]
    return record(
        task,
        outcomes="A" * steps,
        totals={"steps": steps, "seconds": seconds, "model_calls": calls, "input_tokens": tokens},
        cost_usd=cost,
        reference_operations=10,
        **extra,
    )


def test_every_report_table_shows_efficiency() -> None:
    records = [_run("a", 12, 48, 90_000, 120.0, 0.30), _run("b", 8, 32, 60_000, 80.0, 0.20, scenario="S2")]
    metrics = group_metrics(records)
    assert metrics.steps == 10 and metrics.steps_per_ref == pytest.approx(1.0)
    assert metrics.model_calls == 40 and metrics.input_tokens == 75_000
    assert metrics.s_per_task == 100.0 and metrics.cost_usd == pytest.approx(0.25)
    report = build_report(records, summarize(records))
    overall, backbone, scenario, task = report.tables
    for table in (overall, scenario, task):
        assert all(h in table.headers for h in EFFICIENCY_HEADERS), table.title
    row = dict(zip(overall.headers, overall.rows[0], strict=True))
    assert (row["steps"], row["steps/ref ops"], row["model calls"]) == ("10.0", "1.00", "40.0")
    assert (row["input tokens"], row["$/task"], row["s/task"]) == ("75000", "$0.2500", "100.0")
    assert "steps" in backbone.headers[1] and "$0.2500" in backbone.rows[0][1]


def test_compare_shows_efficiency_deltas_with_intervals(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    for i, (sa, sb) in enumerate([(14, 12), (13, 11), (15, 12)]):
        append_result(a, _run(f"t{i}", sa, sa * 4, sa * 7000, sa * 10.0, sa * 0.02, agent="v2"))
        append_result(b, _run(f"t{i}", sb, sb * 4, sb * 7000, sb * 10.0, sb * 0.02))
    text = compare(a, b)
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines() if line.startswith("| ")}
    steps = rows["steps per task"]
    assert "| 14.0 | 11.7 | -2.3 | ± " in steps
    half = float(steps.rsplit("± ", 1)[1].rstrip(" |"))
    assert 0.5 < half < 3.0  # differences 2, 2, 3: t(2) * sd / sqrt(3)
    for label in ("model calls per task", "input tokens per task", "dollars per task", "seconds per task"):
        assert "± " in rows[label], label
    assert rows["AA (code proxy) (%)"].endswith("| – |")  # a pooled ratio: no interval


def test_report_states_how_often_the_proxy_agrees_with_a_persons_marks(tmp_path: Path) -> None:
    from mae.eval.marks import JudgeMarks, save_marks
    from mae.eval.report import write_reports

    code = record(
        "a", outcomes="AAB", action_correct=[True, False, False], reflection_correct=[True, False, True]
    )
    append_result(tmp_path, code)
    append_result(tmp_path, record("b"))  # nobody marked it: not counted
    person = JudgeMarks(
        key=code.key, action_correct=[True, True, False], reflection_correct=[True, True, True]
    )
    save_marks(tmp_path, person)
    write_reports(tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "over the 1 run(s) a person marked: 2 of 3 actions; 2 of 3 verdicts." in text
