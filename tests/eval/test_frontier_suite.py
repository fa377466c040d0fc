"""`--suite virtual:frontier`: four scenarios of five tasks, in the scenario files' order."""

from __future__ import annotations

from collections import Counter

import pytest

from mae.errors import ConfigError
from mae.eval.tasks import virtual_tasks


def test_the_frontier_tier_has_four_scenarios_of_five_tasks_each_in_file_order() -> None:
    tasks = virtual_tasks("frontier")
    scenarios = Counter(t.scenario for t in tasks)
    assert len(scenarios) >= 4 and set(scenarios.values()) == {5}
    assert [t.scenario for t in tasks] == sorted((t.scenario for t in tasks), key=[*scenarios].index)
    assert all(18 <= t.reference_operations <= 40 for t in tasks)
    assert {t.task_id for t in tasks}.isdisjoint(t.task_id for t in virtual_tasks("hard"))


def test_an_unknown_virtual_suite_names_the_frontier_tier_among_the_choices() -> None:
    with pytest.raises(ConfigError, match="virtual:frontier"):
        virtual_tasks("frontiers")
