"""The Evaluate tab's task picker: a suite, a scenario and a search box narrow the 42 virtual tasks to a
short list to tick (a long column of check boxes would push Start far below the fold)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import gradio as gr

from mae.eval.tasks import EvalTask

SUITES = [("Hard (25, shaped like Mobile-Eval-E)", "hard"), ("Basic (17 short tasks)", "basic")]
ALL_SCENARIOS = "all"


def scenario_label(scenario: str) -> str:
    """``ONLINE_SHOPPING`` -> ``online shopping``."""
    return scenario.replace("_", " ").lower()


def task_label(task: EvalTask, limit: int = 72) -> str:
    """A check box's text: the task's id and the start of its instruction."""
    text = " ".join(task.instruction.split())
    return f"{task.task_id}: {text if len(text) <= limit else text[: limit - 1] + '…'}"


def shown_tasks(catalog: dict[str, list[EvalTask]], suite: str, scenario: str, query: str) -> list[EvalTask]:
    """The tasks of ``suite`` in ``scenario`` (or every scenario) whose id or instruction holds every word
    of ``query`` (any case)."""
    words = query.lower().split()
    return [
        task
        for task in catalog.get(suite, [])
        if scenario in (ALL_SCENARIOS, task.scenario)
        and all(word in f"{task.task_id} {task.instruction}".lower() for word in words)
    ]


@dataclass
class TaskPicker:
    """The picker's components; ``tasks`` holds the ticked task ids."""

    suite: gr.Radio
    scenario: gr.Dropdown
    search: gr.Textbox
    tasks: gr.CheckboxGroup


def build_task_picker(catalog: dict[str, list[EvalTask]], ticked: Sequence[str] = ()) -> TaskPicker:
    """The picker (call inside a column), wired so that changing the suite, scenario or search shows the
    matching tasks and keeps the ticks of those still shown."""
    scenarios = sorted({task.scenario for tasks in catalog.values() for task in tasks})
    first = SUITES[0][1]
    suite = gr.Radio(SUITES, value=first, label="Suite", elem_id="mae-eval-suite")
    with gr.Row():
        scenario = gr.Dropdown(
            [("every scenario", ALL_SCENARIOS), *((scenario_label(s), s) for s in scenarios)],
            value=ALL_SCENARIOS,
            label="Scenario",
            elem_id="mae-eval-scenario",
        )
        search = gr.Textbox(label="Search", placeholder="words of the task", elem_id="mae-eval-search")
    shown = shown_tasks(catalog, first, ALL_SCENARIOS, "")
    tasks = gr.CheckboxGroup(
        [(task_label(task), task.task_id) for task in shown],
        value=[task_id for task_id in ticked if task_id in {task.task_id for task in shown}],
        label="Tasks",
        elem_id="mae-eval-tasks",
    )
    with gr.Row():
        every = gr.Button("Tick all shown", size="sm", elem_id="mae-eval-tick-all")
        none = gr.Button("Untick all", size="sm", elem_id="mae-eval-untick-all")

    def refilter(suite_name: str, scenario_name: str, query: str, chosen: list[str] | None) -> object:
        found = shown_tasks(catalog, suite_name, scenario_name, query or "")
        ids = {task.task_id for task in found}
        return gr.update(
            choices=[(task_label(task), task.task_id) for task in found],
            value=[task_id for task_id in chosen or [] if task_id in ids],
        )

    def tick_all(suite_name: str, scenario_name: str, query: str) -> list[str]:
        return [task.task_id for task in shown_tasks(catalog, suite_name, scenario_name, query or "")]

    filters: list[gr.Radio | gr.Dropdown | gr.Textbox] = [suite, scenario, search]
    for control in filters:
        control.change(refilter, [*filters, tasks], tasks, queue=False)
    every.click(tick_all, filters, tasks, queue=False)
    none.click(lambda: [], None, tasks, queue=False)
    return TaskPicker(suite=suite, scenario=scenario, search=search, tasks=tasks)
