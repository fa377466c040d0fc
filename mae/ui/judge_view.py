"""The Evaluate tab's Judge view: an eval folder's task runs, each one's screenshots beside its rubric
checklist, and the marks a person saves; also the folder's summary line and results table.

The panel follows its eval: it is filled again whenever the picked folder changes, whenever the folder's
``results.jsonl`` changes (an eval finishing into it, a rerun on resume, an eval started elsewhere), on
Refresh and when the tab is opened. It is redrawn only when the run it shows is another run than the one
on screen (``JudgeShown``), so marks being ticked are not wiped by other tasks' results arriving, and a
save is refused when the run on screen is no longer the one the folder holds under that name.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from mae.errors import MaeError
from mae.eval.judge import (
    action_label,
    judged_record,
    list_eval_folders,
    marks_from_form,
    step_choices,
    step_label,
    trajectory_frames,
    verdict_label,
)
from mae.eval.marks import judged_records, save_marks
from mae.eval.metrics import group_metrics, satisfaction
from mae.eval.plots import grader_label
from mae.eval.records import RESULTS_FILE, TaskRecord, read_results
from mae.eval.report import RUN_HEADERS, judged, pct, run_cells, write_reports
from mae.ui.runner import Backend
from mae.ui.text import md_code, md_text

MAX_RUBRICS = 16
RESULT_COLUMNS = ["task run", "exit", *RUN_HEADERS, "graded by"]
"""The results table: per task run, the columns of the report's per-task table (``mae eval report``)."""
_WEIGHTS = [max(6, *(len(word) for word in name.split())) for name in RESULT_COLUMNS[2:]]
RESULT_WIDTHS: list[str | int] = ["18%", "6%", *[f"{76 * w / sum(_WEIGHTS):.2f}%" for w in _WEIGHTS]]
"""The task run and its exit, then the figures sharing the rest by their headers' longest word (so that
"steps/ref ops" does not break inside a word)."""
FOLLOW_S = 5.0
"""How often an open page looks whether the picked folder's results changed (a file's size and time)."""
CHANGED = (
    "The run shown here is no longer the one this eval folder holds under that name (a newer eval or a "
    "rerun replaced it): it is shown again now; mark it and save again."
)


def results_rows(folder: Path | None) -> list[list[Any]]:
    if folder is None or not (folder / RESULTS_FILE).exists():
        return []
    return [
        [record.key, record.exit_reason.value, *run_cells(record), record.grader]
        for record in judged_records(folder, read_results(folder))
    ]


def summary_markdown(folder: Path | None) -> str:
    if folder is None or not (folder / RESULTS_FILE).exists():
        return ""
    records = judged_records(folder, read_results(folder))
    m = group_metrics(records)
    return (
        f"**Overall** ({grader_label(records)}): SS **{pct(m.ss)}** · "
        f"AA {judged(m, 'aa')} · RA {judged(m, 'ra')} · "
        f"TE {pct(m.te)} · AA (code proxy) {pct(m.aa_proxy)} · RA (code proxy) {pct(m.ra_proxy)} · "
        f"{m.steps:.1f} steps per task · reports in {md_code(str(folder))}"
    )


def folder_choices(backend: Backend, selected: str | None = None) -> Any:
    """The eval folders, newest first, keeping ``selected`` picked while it exists."""
    folders = [str(p) for p in list_eval_folders(backend.log_dir)]
    value = selected if selected in folders else (folders[0] if folders else None)
    return gr.update(choices=folders, value=value)


def results_stamp(folder: str | None) -> str:
    """What changes whenever the folder's results file does (empty when there is none)."""
    try:
        info = os.stat(Path(folder or "") / RESULTS_FILE) if folder else None
    except OSError:
        info = None
    return "" if info is None else f"{info.st_size}:{info.st_mtime_ns}"


def run_stamp(record: TaskRecord) -> str:
    """Which run a record is: a newer eval or a rerun of the same task run has another one."""
    return f"{record.run_dir}|{record.finished_at}|{record.exit_reason.value}|{len(record.actions)}"


@dataclass(frozen=True)
class JudgeShown:
    """The run the panel shows (``stamp``) and the results file it was read from (``results``)."""

    folder: str
    key: str
    stamp: str
    results: str

    def same_run(self, folder: str, key: str, stamp: str) -> bool:
        return (self.folder, self.key, self.stamp) == (folder, key, stamp)


@dataclass
class JudgeView:
    """The folder picker, and ``reload`` (with its ``inputs`` and ``outputs``): what the Evaluate tab
    calls once it has pointed the picker at the folder an eval has just written."""

    folder: gr.Dropdown
    reload: Callable[..., tuple[Any, ...]]
    inputs: list[Any]
    outputs: list[Any]


def build_judge_view(
    backend: Backend, page: gr.Tab, summary: gr.Markdown, results: gr.Dataframe
) -> JudgeView:
    """Lay out and wire the Judge view on the Evaluate tab ``page``, under its ``summary`` and
    ``results``, which it refreshes with the picked folder."""
    shown = gr.State(None)
    gr.Markdown("### Judge view")
    with gr.Row():
        folder = gr.Dropdown(label="Eval folder", choices=[], elem_id="mae-judge-folder", scale=3)
        task_run = gr.Dropdown(label="Task run", choices=[], elem_id="mae-judge-task", scale=2)
        refresh = gr.Button("⟳ Refresh", size="sm", elem_id="mae-judge-refresh", scale=1)
    with gr.Row(equal_height=False):
        with gr.Column(scale=5):
            gallery = gr.Gallery(
                label="Trajectory (the action is drawn on the screen before it)",
                columns=6,
                height=820,
                preview=True,
                object_fit="contain",
                elem_id="mae-judge-gallery",
            )
        with gr.Column(scale=5):
            task_text = gr.Markdown(elem_id="mae-judge-instruction")
            rubrics = [
                gr.Dropdown(
                    label=f"rubric {i + 1}", choices=[], visible=False, elem_id=f"mae-judge-rubric-{i}"
                )
                for i in range(MAX_RUBRICS)
            ]
            actions = gr.CheckboxGroup(label="Correct actions", choices=[], elem_id="mae-judge-actions")
            verdicts = gr.CheckboxGroup(
                label="Correct Action Reflector verdicts", choices=[], elem_id="mae-judge-verdicts"
            )
            save = gr.Button("Save marks", variant="primary", elem_id="mae-judge-save")
            judge_status = gr.Markdown(elem_id="mae-judge-status")
    follow = gr.Timer(FOLLOW_S)

    panel_outputs = [shown, gallery, task_text, *rubrics, actions, verdicts, judge_status]
    folder_outputs = [task_run, summary, results, *panel_outputs]

    def show(path: str | None, key: str | None, on_screen: JudgeShown | None) -> tuple[Any, ...]:
        """The panel for ``key`` of ``path``; nothing changes when that very run is on screen already."""
        if not path or not key or (record := judged_record(path, key)) is None:
            hidden = [gr.update(visible=False)] * MAX_RUBRICS
            empty = gr.update(choices=[], value=[])
            return (None, None, "Pick an eval folder and a task run.", *hidden, empty, empty, "")
        now = JudgeShown(path, key, run_stamp(record), results_stamp(path))
        if on_screen is not None and on_screen.same_run(path, key, now.stamp):
            return (now, *[gr.skip()] * (len(panel_outputs) - 1))
        return (now, *_panel(record))

    def on_folder(
        path: str | None, key: str | None, on_screen: JudgeShown | None, quiet: bool = False
    ) -> tuple[Any, ...]:
        """The folder's task runs, summary and table, and the panel (kept where its run is unchanged);
        a damaged results file is reported unless ``quiet`` (the timer's look, every few seconds)."""
        if not path:
            return (gr.update(choices=[], value=None), "", [], *show(None, None, on_screen))
        try:
            keys = [r.key for r in read_results(path)]
        except MaeError as exc:
            if not quiet:
                gr.Warning(str(exc))
            return (gr.update(choices=[], value=None), "", [], *show(None, None, on_screen))
        key = key if key in keys else (keys[0] if keys else None)
        picker = gr.update(choices=keys, value=key)
        return (picker, summary_markdown(Path(path)), results_rows(Path(path)), *show(path, key, on_screen))

    def on_tick(path: str | None, key: str | None, on_screen: JudgeShown | None) -> tuple[Any, ...]:
        if not path or (on_screen is not None and on_screen.results == results_stamp(path)):
            return tuple(gr.skip() for _ in folder_outputs)
        return on_folder(path, key, on_screen, quiet=True)

    def on_save(path: str | None, key: str | None, on_screen: JudgeShown | None, *values: Any) -> Any:
        def status(line: str, *tables: Any) -> tuple[Any, ...]:
            return (*[gr.skip()] * (len(panel_outputs) - 1), line, *(tables or (gr.skip(), gr.skip())))

        if not path or not key:
            return status("Pick an eval folder and a task run first.")
        try:
            record = next((r for r in read_results(path) if r.key == key), None)
        except MaeError as exc:
            return status(f"✖ {md_text(str(exc))}")
        if record is None:
            return status("That task run is not in the folder any more: refresh the list.")
        if on_screen is None or not on_screen.same_run(path, key, run_stamp(record)):
            # the form holds another run's marks: show this one instead of saving them onto it
            return (*show(path, key, None)[:-1], CHANGED, gr.skip(), gr.skip())
        labels = list(values[:MAX_RUBRICS])
        marks = marks_from_form(
            record, labels, list(values[MAX_RUBRICS] or []), list(values[MAX_RUBRICS + 1] or [])
        )
        try:
            save_marks(path, marks)
            write_reports(path)
        except (MaeError, OSError) as exc:
            return status(f"✖ Could not save the marks: {md_text(str(exc))}")
        marked = judged_record(path, key)
        score = pct(satisfaction(marked)) if marked else "–"
        return status(
            f"✔ Saved your marks for {key}: SS {score}%. The reports in the eval folder are updated.",
            summary_markdown(Path(path)),
            results_rows(Path(path)),
        )

    inputs = [folder, task_run, shown]
    folder.change(on_folder, inputs, folder_outputs)
    task_run.change(show, inputs, panel_outputs)
    follow.tick(on_tick, inputs, folder_outputs, show_progress="hidden", trigger_mode="once")
    for trigger in (refresh.click, page.select):  # the list anew, then the picked folder read again
        trigger(lambda selected: folder_choices(backend, selected), folder, folder).then(
            on_folder, inputs, folder_outputs
        )
    save.click(on_save, [*inputs, *rubrics, actions, verdicts], [*panel_outputs, summary, results])
    return JudgeView(folder=folder, reload=on_folder, inputs=inputs, outputs=folder_outputs)


def _panel(record: TaskRecord) -> tuple[Any, ...]:
    """The gallery, header, rubric boxes, action and verdict ticks and status line for ``record``."""
    choices = step_choices(len(record.actions))
    boxes = []
    for i in range(MAX_RUBRICS):
        if i < len(record.rubrics):
            step = record.rubric_steps[i] if i < len(record.rubric_steps) else None
            label = f"{i + 1}. {record.rubrics[i]}"
            boxes.append(gr.update(visible=True, label=label, choices=choices, value=step_label(step)))
        else:
            boxes.append(gr.update(visible=False))
    action_choices = [action_label(i, record) for i in range(len(record.actions))]
    verdict_choices = [
        verdict_label(i, record)
        for i, a in enumerate(record.actions)
        if a.executed and record.agent != "v1"  # v1 has no Action Reflector to judge
    ]
    header = (
        f"**{record.key}** · {record.exit_reason.value} · {len(record.actions)} steps · "
        f"{grader_label([record])}\n\n> {record.instruction}\n\nFor each rubric item, say after "
        "which step it first held; tick the actions and verdicts that were right."
    )
    frame = next((a.frame for a in record.actions if a.written and a.frame), "")
    if frame:  # the model wrote its points in another frame than the phone's
        header += (
            " Actions are in screen pixels, as drawn on the screenshots; the model wrote its "
            f"points {frame} (each screenshot's caption gives both)."
        )
    frames = trajectory_frames(record)
    ticked_actions = [c for c, ok in zip(action_choices, record.action_correct, strict=False) if ok]
    ticked_verdicts = [
        verdict_label(i, record)
        for i, a in enumerate(record.actions)
        if a.executed and i < len(record.reflection_correct) and record.reflection_correct[i]
    ]
    return (
        gr.update(value=frames, selected_index=0 if frames else None),
        header,
        *boxes,
        gr.update(choices=action_choices, value=ticked_actions),
        gr.update(choices=verdict_choices, value=ticked_verdicts),
        "",
    )
