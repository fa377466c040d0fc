"""``eval compare`` lists every option ``eval.json`` records and says whether A and B differ in it.

The real case: one eval ran with ``--max-steps 40``, the other with ``--max-steps 1`` (TE 0 vs 100), and
the comparison's settings table said "same" on every row because max steps was not in it.
"""

from __future__ import annotations

from pathlib import Path

from eval_testkit import record

from mae.eval.records import append_result
from mae.eval.report import compare
from mae.eval.runner import EvalOptions, write_options


def _folder(path: Path, **options: object) -> Path:
    path.mkdir()
    append_result(path, record("t1", rubric_steps=[1, 2]))
    if options:
        write_options(path, EvalOptions.model_validate({"suite": "virtual:hard", **options}))
    return path


def _settings(text: str) -> dict[str, tuple[str, str, str]]:
    table = text.split("| settings | A | B | |", 1)[1].split("\n\n", 1)[0]
    rows = [line.strip("|").split("|") for line in table.splitlines()[2:]]
    return {cells[0].strip(): (cells[1].strip(), cells[2].strip(), cells[3].strip()) for cells in rows}


def test_compare_marks_max_steps_and_every_recorded_option(tmp_path: Path) -> None:
    a = _folder(tmp_path / "a", max_steps=40, tasks="t1", repeat=1)
    b = _folder(tmp_path / "b", max_steps=1, tasks="t1", repeat=3, seed=7, realism="off")
    rows = _settings(compare(a, b))
    assert rows["max steps"] == ("40", "1", "differs")
    assert rows["repeat"] == ("1", "3", "differs")
    assert rows["seed"] == ("each task's own", "7", "differs")
    assert rows["realism"] == ("task", "off", "differs")
    assert rows["suite"] == ("virtual:hard", "virtual:hard", "same")
    assert rows["tasks"] == ("t1", "t1", "same")
    recorded = set(EvalOptions.model_fields) - {"started_at"}
    shown = {name.replace(" ", "_") for name in rows}
    assert recorded <= shown, recorded - shown
    assert "started at" not in rows  # when it ran is not a setting


def test_compare_says_an_option_was_not_recorded_rather_than_same(tmp_path: Path) -> None:
    a = _folder(tmp_path / "a", max_steps=40)
    b = _folder(tmp_path / "b")  # an eval folder from before eval.json was written
    rows = _settings(compare(a, b))
    assert rows["max steps"] == ("40", "not recorded", "differs")
