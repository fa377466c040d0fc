"""The report's per-task memory table: Tips given, Shortcuts used (counted), what was written."""

from __future__ import annotations

from eval_testkit import record

from mae.eval.memory_report import memory_rows
from mae.eval.metrics import summarize
from mae.eval.records import MemoryUse
from mae.eval.report import build_report, render_markdown
from mae.eval.runner import outcome_text


def test_rows_count_shortcut_calls_and_say_what_each_task_wrote() -> None:
    tip = "In the store app, filters apply only after tapping Show results; " + "x" * 100
    first = record(
        "t1",
        outcomes="AAA",
        shortcuts="S.S",
        setting="evolution",
        order=0,
        memory=MemoryUse(
            tips_given=["Tap a field before typing"],
            tips_in_store=1,
            shortcuts_given=["Tap_Type_and_Enter"],
            shortcuts_in_store=1,
            tips_written=[tip],
            shortcuts_added=["Filter_And_Show"],
            version_written=2,
        ),
    )
    second = record(
        "t2",
        outcomes="AA",
        setting="evolution",
        order=1,
        memory=MemoryUse(
            tips_given=[tip],
            tips_in_store=2,
            retrieval="1 of 2 Tips selected, all 2 Shortcuts",
            shortcuts_given=["Tap_Type_and_Enter", "Filter_And_Show"],
            shortcuts_in_store=2,
            shortcuts_withheld=["Old_One"],
        ),
    )
    assert outcome_text(first) == (
        "finished, 3 steps, SS 67%; used Tap_Type_and_Enter (2×); wrote 1 Tip(s), Shortcut Filter_And_Show"
    )
    assert outcome_text(second) == "finished, 2 steps, SS 67%"
    rows = memory_rows([second, first])  # shown in the scenario's order
    assert [r[0] for r in rows] == ["t1", "t2"]
    assert rows[0][5] == "Tap_Type_and_Enter (2×)" and rows[1][5] == "none"
    assert rows[0][8].startswith("1 Tip(s) new or reworded: «In the store app, filters apply only after")
    assert "…»" in rows[0][8] and "new Shortcut(s): Filter_And_Show; memory version 2" in rows[0][8]
    assert rows[1][6].startswith("1 of 2 (retrieved): «In the store app")
    assert rows[1][7] == "2 of 2: Tap_Type_and_Enter, Filter_And_Show; withheld: Old_One"
    assert rows[1][8] == "memory unchanged"


def test_individual_runs_say_the_memory_is_not_written_and_old_records_show_no_table() -> None:
    run = record("t1", memory=MemoryUse(tips_given=["a", "b"], tips_in_store=2))
    (row,) = memory_rows([run])
    assert row[6] == "2 of 2: «a» · «b»" and row[8].startswith("– (individual")
    old = record("t1")
    text = render_markdown(build_report([old], summarize([old])))
    assert "Long-term memory per task" not in text
    text = render_markdown(build_report([run], summarize([run])))
    assert "## Long-term memory per task (Tips and Shortcuts)" in text


def test_a_baselines_report_does_not_claim_the_loading_option() -> None:
    """v2 relay runs: the report said "skip planning while loading on" although v2 plans after every
    operation, loading or not, and a real model asked what the option skipped."""
    from mae.eval.report import loading_option

    v2 = record("t1", agent="v2", skip_planning_while_loading=True)
    assert loading_option([v2]).startswith("not used")
    e = record("t1", skip_planning_while_loading=True)
    assert loading_option([e]) == "on"
