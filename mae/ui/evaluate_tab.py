"""The demo's Evaluate tab: run the virtual suite with progress, and the Judge view.

``build_evaluate_tab(backend)`` is called by ``mae.ui.demo.build_demo`` inside its ``gr.Tabs()``. The eval
runs in a background thread on the virtual phone (``mae.eval.runner``) into ``<log dir>/eval-<time>``. The
Judge view shows a run's screenshots beside its rubric checklist; a person marks after which step each
rubric item became true and which actions and Action Reflector verdicts were correct; the marks are saved
into the eval folder and the reports are recomputed with them.
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
from mae.eval.records import RESULTS_FILE, read_results
from mae.eval.report import write_reports
from mae.eval.runner import EvalOptions, EvalRunner, write_options
from mae.eval.tasks import select_tasks, virtual_tasks
from mae.eval.workers import ParallelEvalRunner, WorkerBoard
from mae.run.runtime import build_runtime
from mae.ui import space
from mae.ui.forms import backbone_choices, missing_keys
from mae.ui.judge_view import (
    RESULT_COLUMNS,
    RESULT_WIDTHS,
    build_judge_view,
    folder_choices,
    results_rows,
    summary_markdown,
)
from mae.ui.runner import Backend
from mae.ui.task_picker import build_task_picker
from mae.ui.text import md_code, md_text

MAX_UI_WORKERS = 8

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


def progress_markdown(job: EvalJob | None) -> str:
    if job is None:
        return "Pick tasks and press **Start evaluation**."
    finished = len(read_results(job.folder)) if (job.folder / RESULTS_FILE).exists() else 0
    if job.error:
        state = f"✖ **Stopped:** {md_text(job.error)}"
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
        workers = "\n".join(f"- {md_code(line)}" for line in job.board.lines()) + "\n\n"
    recent = "\n".join(f"- {line.strip()}" for line in job.lines[-6:])
    return f"{state} · {finished} of {job.total} task runs done\n\n{workers}{recent}"


def realism_supported() -> bool:
    """Whether this build's virtual suite can switch the phone's obstacles on and off."""
    from mae.eval import virtual_suite

    return "realism" in inspect.signature(virtual_suite.load_task_suite).parameters


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

        judge = build_judge_view(backend, page, summary, results)

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
                folder_choices(backend, str(job.folder)),
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
            [job_state, progress, summary, results, judge.folder],
            show_progress="hidden",
            concurrency_limit=None,
        ).then(judge.reload, judge.inputs, judge.outputs)  # same folder name or not: the new results

        def on_stop(job: EvalJob | None) -> str:
            if job is None or job.done:
                return "No eval is running."
            job.stop.set()
            return "**Stopping…** the current task ends before its next action (it reruns on resume)."

        stop.click(on_stop, job_state, progress, queue=False)
