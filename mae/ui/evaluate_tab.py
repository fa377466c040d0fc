"""The demo's Evaluate tab: run the virtual suite with progress, and the Judge view.

``build_evaluate_tab(backend)`` is called by ``app.build_demo`` inside its ``gr.Tabs()``. The eval runs
in a background thread on the virtual phone (``mae.eval.runner``) into ``<log dir>/eval-<time>``. The
Judge view shows a run's screenshots beside its rubric checklist; a person marks after which step each
rubric item became true and which actions and Action Reflector verdicts were correct; the marks are
saved into the eval folder and the reports are recomputed with them.
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import gradio as gr

from mae.config import Settings
from mae.device.virtual import VirtualPhone
from mae.errors import DeviceBusyError, MaeError
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
from mae.eval.records import RESULTS_FILE, read_results
from mae.eval.report import RUN_HEADERS, judged, pct, run_cells, write_reports
from mae.eval.runner import EvalOptions, EvalRunner, write_options
from mae.eval.tasks import select_tasks, virtual_tasks
from mae.eval.workers import ParallelEvalRunner, WorkerBoard
from mae.run.runtime import build_runtime
from mae.ui import space
from mae.ui.forms import backbone_choices, missing_keys
from mae.ui.runner import Backend
from mae.ui.task_picker import build_task_picker
from mae.ui.text import md_text

MAX_RUBRICS = 16
MAX_UI_WORKERS = 8
RESULT_COLUMNS = ["task run", "exit", *RUN_HEADERS, "graded by"]
"""The results table: per task run, the columns of the report's per-task table (``mae eval report``)."""
_WEIGHTS = [max(6, *(len(word) for word in name.split())) for name in RESULT_COLUMNS[2:]]
RESULT_WIDTHS: list[str | int] = ["18%", "6%", *[f"{76 * w / sum(_WEIGHTS):.2f}%" for w in _WEIGHTS]]
"""The task run and its exit, then the figures sharing the rest by their headers' longest word (so that
"steps/ref ops" does not break inside a word)."""


log = logging.getLogger(__name__)


@dataclass
class EvalJob:
    """One eval started from the page, running in a background thread."""

    folder: Path
    total: int
    stop: threading.Event = field(default_factory=threading.Event)
    lines: list[str] = field(default_factory=list)
    done: bool = False
    error: str | None = None
    step: int = 0
    started: float = field(default_factory=time.monotonic)
    board: WorkerBoard | None = None
    """Every worker's progress when the eval runs on several virtual phones."""

    def say(self, message: str) -> None:
        self.lines.append(message)


def start_eval(
    backend: Backend,
    task_ids: list[str],
    *,
    setting: str,
    agent: str,
    repeat: int,
    max_steps: int,
    backbone: str,
    base_url: str,
    model: str,
    realism: str = "task",
    workers: int = 1,
) -> EvalJob:
    """Check the choices and start the eval thread (``workers`` virtual phones at once); ``MaeError`` says
    what to fix."""
    if not task_ids:
        raise MaeError("pick at least one task to evaluate")
    if not 1 <= workers <= MAX_UI_WORKERS:
        raise MaeError(f"pick between 1 and {MAX_UI_WORKERS} workers")
    if workers > 1 and space.space_id():
        raise MaeError("parallel evals run only on a private demo: use one worker here")
    if setting == "evolution" and agent != "e":
        raise MaeError(
            "only Mobile-Agent-E has a long-term memory: pick the individual setting for v1 and v2"
        )
    data = backend.settings.model_dump()
    data.update(backbone=backbone or data["backbone"], base_url=base_url or None, model=model or None)
    data["loop"] = {**data["loop"], "max_steps": int(max_steps), "agent": agent}
    settings = Settings.model_validate(data)
    absent = missing_keys(settings, {}, os.environ)
    if absent:
        raise MaeError(f"no API key: set {' and '.join(absent)} on the server")
    if backend.pool.busy("virtual"):
        raise DeviceBusyError("the virtual phone is busy with a run: wait for it to finish or stop it")
    device = backend.pool.get("virtual")
    folder = backend.log_dir / f"eval-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    while folder.exists():
        folder = folder.with_name(folder.name + "-b")
    settings = settings.model_copy(update={"log_dir": folder / "runs"})
    runtime = build_runtime(settings, device=device, perceptor=backend.perceptor(settings))
    extra = [  # worker 1 uses the demo's phone; the others get virtual phones of their own
        build_runtime(settings, device=VirtualPhone(), perceptor=backend.perceptor(settings))
        for _ in range(workers - 1)
    ]
    options = EvalOptions(
        suite="virtual:all",
        agent=agent,
        setting=setting,
        tasks=",".join(task_ids),
        repeat=max(1, int(repeat)),
        backbone=runtime.backbone,
        max_steps=int(max_steps),
        realism=realism,
        skip_planning_while_loading=settings.loop.skip_planning_while_loading,
    )
    tasks = select_tasks(virtual_tasks("all", realism=options.realism), options.tasks)
    write_options(folder, options)
    job = EvalJob(folder=folder, total=len(tasks) * options.repeat)

    def on_event(event: Any) -> None:
        if event.type in ("action", "run_started"):
            job.step = event.step

    runner: EvalRunner
    if extra:
        job.board = WorkerBoard()
        runner = ParallelEvalRunner(
            folder, options, tasks, [runtime, *extra], progress=job.say, stop_event=job.stop, board=job.board
        )
    else:
        runner = EvalRunner(
            folder, options, tasks, runtime, progress=job.say, stop_event=job.stop, listener=on_event
        )

    def work() -> None:
        try:
            runner.run()
            if (folder / RESULTS_FILE).exists():
                write_reports(folder)
        except MaeError as exc:
            job.error = str(exc)
        except Exception:  # shown on the page as a sentence, never as a traceback; the log has the rest
            log.exception("the eval in %s stopped unexpectedly", folder)
            job.error = (
                "the eval stopped on an unexpected problem; the terminal (or the Space's logs) running the "
                "demo has the details (please report it with them). The finished tasks are kept in the eval "
                "folder."
            )
        finally:
            for own in extra:
                own.close()
            job.done = True

    threading.Thread(target=work, name="mae-eval", daemon=True).start()
    return job


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
        f"{m.steps:.1f} steps per task · reports in `{folder}`"
    )


def progress_markdown(job: EvalJob | None) -> str:
    if job is None:
        return "Pick tasks and press **Start evaluation**."
    finished = len(read_results(job.folder)) if (job.folder / RESULTS_FILE).exists() else 0
    if job.error:
        state = f"✖ **Stopped:** {job.error}"
    elif job.done:
        state = (
            "✔ **Finished**" if finished == job.total else "■ **Stopped** (resume it from the command line)"
        )
    elif job.board is not None:
        state = (
            f"⏳ **Running** on {len(job.board.snapshot())} workers · {time.monotonic() - job.started:.0f} s"
        )
    else:
        state = (
            f"⏳ **Running** · step {job.step} of the current task · {time.monotonic() - job.started:.0f} s"
        )
    workers = ""
    if job.board is not None:
        workers = "\n".join(f"- `{line}`" for line in job.board.lines()) + "\n\n"
    recent = "\n".join(f"- {line.strip()}" for line in job.lines[-6:])
    return f"{state} · {finished} of {job.total} task runs done\n\n{workers}{recent}"


def realism_supported() -> bool:
    """Whether this build's virtual suite can switch the phone's obstacles on and off."""
    from mae.eval import virtual_suite

    return "realism" in inspect.signature(virtual_suite.load_task_suite).parameters


def _folder_choices(backend: Backend, selected: str | None = None) -> Any:
    folders = [str(p) for p in list_eval_folders(backend.log_dir)]
    value = selected if selected in folders else (folders[0] if folders else None)
    return gr.update(choices=folders, value=value)


RunModelFields = tuple[gr.Dropdown, gr.Textbox, gr.Textbox]
"""The Run tab's Backbone, Base URL and Model fields, which the Evaluate tab's own ones follow."""


def build_evaluate_tab(
    backend: Backend, *, visible: bool = True, run_model: RunModelFields | None = None
) -> None:
    """The Evaluate tab (call inside ``gr.Tabs()``); hidden where visitors must not share the server's
    phone, folders and keys (a Hugging Face Space)."""
    settings = backend.settings
    try:
        catalog = {name: virtual_tasks(name) for name in ("hard", "basic")}
    except MaeError:
        catalog = {}
    agents = ["e", "v2", "v1"]
    with gr.Tab("Evaluate", id="evaluate", visible=visible) as page:
        job_state = gr.State(None)
        gr.Markdown(
            "Evaluate the agent on the virtual suite: each task is graded by code after every step "
            "(Satisfaction Score, SSS curve). Then check any run in the **Judge view** below: your marks "
            "replace the code's grading in the metrics and reports."
        )
        with gr.Row(equal_height=False):
            with gr.Column(scale=4, min_width=300):
                with gr.Row():  # at the top, as Run is on the Run tab: in view whatever the list's length
                    start = gr.Button("▶ Start evaluation", variant="primary", elem_id="mae-eval-start")
                    stop = gr.Button("■ Stop", variant="stop", elem_id="mae-eval-stop")
                first_two = [t.task_id for t in catalog.get("hard", [])[:2]]
                tasks = build_task_picker(catalog, ticked=first_two).tasks
                with gr.Row():
                    setting = gr.Radio(
                        ["individual", "evolution"],
                        value="individual",
                        label="Setting",
                        elem_id="mae-eval-setting",
                    )
                    agent = gr.Radio(agents, value="e", label="Agent", elem_id="mae-eval-agent")
                    realism = gr.Radio(
                        [("each task's own", "task"), ("all on", "on"), ("off", "off")],
                        value="task",
                        label="Obstacles (pop-ups, nags, spinners)",
                        visible=realism_supported(),
                        elem_id="mae-eval-realism",
                    )
                with gr.Row():
                    repeat = gr.Number(
                        1, minimum=1, maximum=10, precision=0, label="Repeats", elem_id="mae-eval-repeat"
                    )
                    workers = gr.Number(
                        1,
                        minimum=1,
                        maximum=MAX_UI_WORKERS,
                        precision=0,
                        label="Workers (virtual phones at once)",
                        visible=not space.space_id(),
                        elem_id="mae-eval-workers",
                    )
                    max_steps = gr.Slider(
                        1,
                        60,
                        value=settings.loop.max_steps,
                        step=1,
                        label="Max steps",
                        elem_id="mae-eval-max-steps",
                    )
                backbone = gr.Dropdown(
                    backbone_choices(), value=settings.backbone, label="Backbone", elem_id="mae-eval-backbone"
                )
                with gr.Row():
                    base_url = gr.Textbox(
                        settings.base_url or "", label="Base URL", elem_id="mae-eval-base-url"
                    )
                    model = gr.Textbox(settings.model or "", label="Model", elem_id="mae-eval-model")
                if run_model is not None:  # a model set on the Run tab need not be typed again here
                    gr.Markdown("Follows the Run tab's backbone; change it here for this evaluation only.")
                    pairs: list[tuple[gr.Dropdown | gr.Textbox, gr.Dropdown | gr.Textbox]]
                    pairs = list(zip(run_model, (backbone, base_url, model), strict=True))
                    for source, target in pairs:
                        source.change(lambda value: value, source, target, queue=False)
            with gr.Column(scale=6, min_width=340):
                progress = gr.Markdown(progress_markdown(None), elem_id="mae-eval-progress")
                summary = gr.Markdown(elem_id="mae-eval-summary")
        results = gr.Dataframe(  # the page's width: one column per figure of the report's per-task table
            headers=RESULT_COLUMNS,
            interactive=False,
            wrap=True,
            column_widths=RESULT_WIDTHS,
            elem_id="mae-eval-results",
        )

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

        # ------------------------------------------------------------ running an eval
        def on_start(
            job: EvalJob | None,
            ids: list[str],
            how: str,
            who: str,
            obstacles: str,
            times: float,
            parallel: float,
            limit: float,
            bb: str,
            url: str,
            name: str,
        ) -> Any:
            if job is not None and not job.done:
                yield (
                    job,
                    "**An eval is already running in this tab:** stop it first.",
                    gr.skip(),
                    gr.skip(),
                    gr.skip(),
                )
                return
            try:
                job = start_eval(
                    backend,
                    list(ids or []),
                    setting=how,
                    agent=who,
                    repeat=int(times or 1),
                    max_steps=int(limit),
                    backbone=bb,
                    base_url=url,
                    model=name,
                    realism=obstacles or "task",
                    workers=int(parallel or 1),
                )
            except Exception as exc:
                yield job, f"**Cannot start:** {md_text(str(exc))}", gr.skip(), gr.skip(), gr.skip()
                return
            while not job.done:
                yield (
                    job,
                    progress_markdown(job),
                    summary_markdown(job.folder),
                    results_rows(job.folder),
                    gr.skip(),
                )
                time.sleep(0.5)
            yield (
                job,
                progress_markdown(job),
                summary_markdown(job.folder),
                results_rows(job.folder),
                _folder_choices(backend, str(job.folder)),
            )

        start.click(
            on_start,
            [
                job_state,
                tasks,
                setting,
                agent,
                realism,
                repeat,
                workers,
                max_steps,
                backbone,
                base_url,
                model,
            ],
            [job_state, progress, summary, results, folder],
            show_progress="hidden",
            concurrency_limit=None,
        )

        def on_stop(job: EvalJob | None) -> str:
            if job is None or job.done:
                return "No eval is running."
            job.stop.set()
            return "**Stopping…** the current task ends before its next action (it reruns on resume)."

        stop.click(on_stop, job_state, progress, queue=False)

        # ------------------------------------------------------------ judge view
        def on_folder(path: str | None) -> tuple[Any, str, Any]:
            if not path:
                return gr.update(choices=[], value=None), "", []
            try:
                keys = [r.key for r in read_results(path)]
            except MaeError as exc:
                gr.Warning(str(exc))
                return gr.update(choices=[], value=None), "", []
            first = gr.update(choices=keys, value=keys[0] if keys else None)
            return first, summary_markdown(Path(path)), results_rows(Path(path))

        def on_task(path: str | None, key: str | None) -> tuple[Any, ...]:
            hidden = [gr.update(visible=False)] * MAX_RUBRICS
            record = judged_record(path, key) if path and key else None
            if record is None:
                return (
                    None,
                    "Pick an eval folder and a task run.",
                    *hidden,
                    gr.update(choices=[], value=[]),
                    gr.update(choices=[], value=[]),
                    "",
                )
            choices = step_choices(len(record.actions))
            boxes = []
            for i in range(MAX_RUBRICS):
                if i < len(record.rubrics):
                    step = record.rubric_steps[i] if i < len(record.rubric_steps) else None
                    boxes.append(
                        gr.update(
                            visible=True,
                            label=f"{i + 1}. {record.rubrics[i]}",
                            choices=choices,
                            value=step_label(step),
                        )
                    )
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
            return (
                gr.update(value=frames, selected_index=0 if frames else None),
                header,
                *boxes,
                gr.update(
                    choices=action_choices,
                    value=[c for c, ok in zip(action_choices, record.action_correct, strict=False) if ok],
                ),
                gr.update(
                    choices=verdict_choices,
                    value=[
                        verdict_label(i, record)
                        for i, a in enumerate(record.actions)
                        if a.executed and i < len(record.reflection_correct) and record.reflection_correct[i]
                    ],
                ),
                "",
            )

        def on_save(path: str | None, key: str | None, *values: Any) -> tuple[str, Any, Any]:
            if not path or not key:
                return "Pick an eval folder and a task run first.", gr.skip(), gr.skip()
            try:
                record = next((r for r in read_results(path) if r.key == key), None)
            except MaeError as exc:
                return f"✖ {md_text(str(exc))}", gr.skip(), gr.skip()
            if record is None:
                return "That task run is not in the folder any more: refresh the list.", gr.skip(), gr.skip()
            labels = list(values[:MAX_RUBRICS])
            marks = marks_from_form(
                record, labels, list(values[MAX_RUBRICS] or []), list(values[MAX_RUBRICS + 1] or [])
            )
            try:
                save_marks(path, marks)
                write_reports(path)
            except (MaeError, OSError) as exc:
                return f"✖ Could not save the marks: {md_text(str(exc))}", gr.skip(), gr.skip()
            judged = judged_record(path, key)
            score = pct(satisfaction(judged)) if judged else "–"
            return (
                f"✔ Saved your marks for {key}: SS {score}%. The reports in the eval folder are updated.",
                summary_markdown(Path(path)),
                results_rows(Path(path)),
            )

        judge_outputs = [gallery, task_text, *rubrics, actions, verdicts, judge_status]
        folder.change(on_folder, folder, [task_run, summary, results])
        task_run.change(on_task, [folder, task_run], judge_outputs)
        refresh.click(lambda selected: _folder_choices(backend, selected), folder, folder)
        page.select(lambda selected: _folder_choices(backend, selected), folder, folder)
        save.click(on_save, [folder, task_run, *rubrics, actions, verdicts], [judge_status, summary, results])
