"""Mobile-Agent-E web demo (Gradio): type a task, watch the phone being operated step by step.

Thin on purpose: this file lays out the components and turns run events into component updates; the
logic lives in ``mae/ui/`` (session, views, history, memory tab, devices, forms). ``python app.py``
starts it with the virtual phone unless a phone is attached; ``python app.py --help`` lists options.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import gradio as gr
from PIL import Image

from mae.config import load_settings
from mae.errors import MaeError
from mae.llm.keys import configure_server_keys
from mae.llm.providers import AGENT_ROLES, PRESETS
from mae.perception.elements import Perception
from mae.safety import DEFAULT_RULES
from mae.ui import history, memory_tab, space
from mae.ui.agent_picker import agent_picker, wire_agent_picker
from mae.ui.devices import (
    MANUAL_OPS,
    attached,
    default_device,
    device_choices,
    display_image,
    display_size,
    manual_action,
    to_screen,
)
from mae.ui.evaluate_tab import build_evaluate_tab
from mae.ui.forms import (
    CUSTOM,
    CUSTOM_KEY_ENV,
    KEY_ENVS,
    SAME,
    RunForm,
    backbone_choices,
    missing_keys,
    role_backbone_choices,
    session_keys,
)
from mae.ui.launch import approval_timeout, parse_args, server_options, settings_overrides
from mae.ui.runner import Backend
from mae.ui.session import RunController, error_message
from mae.ui.style import CSS
from mae.ui.views import (
    RunView,
    approval_markdown,
    memory_markdown,
    phone_image,
    progress_html,
    status_markdown,
    timeline_html,
)

EXAMPLES = [
    "Find the best-rated Korean restaurant in Champaign, IL on Maps that is open until at least 11 PM.",
    "Compare the price of the Ninja 8 qt two-basket air fryer on Amazon and Walmart. Write the lower "
    "price and the store that has it in a new note in Notes.",
    "Look up how many times the paper 'Attention Is All You Need' has been cited on Google Scholar, and "
    "write the number in a new note in Notes.",
]
MANUAL_HINT = "Click the screen to tap there, or use the buttons (when no run is active)."
KEY_NOTE = (
    "API keys stay in this browser session's memory only; they are never written to disk or logs. "
    "Empty fields fall back to the server's keys, which go only to their own provider (never to a Base "
    "URL typed here) and are not used at all when this demo is public."
)


@dataclass
class UiSession:
    """One browser tab: its run controller, what its run looks like, the latest Perceptor boxes."""

    controller: RunController
    view: RunView = field(default_factory=RunView)
    elements: list[tuple[str, tuple[int, int, int, int]]] = field(default_factory=list)
    show_boxes: bool = False
    start_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def on_perception(self, perception: Perception) -> None:
        self.elements = [(e.kind, e.box) for e in perception.elements]


def _end_session(session: UiSession | None) -> None:
    """A closed tab must not keep operating a phone: stop its run (a pending approval is rejected)."""
    if isinstance(session, UiSession):
        session.controller.stop()


_TAB_SESSIONS: dict[str, UiSession] = {}
_TAB_SESSIONS_LOCK = threading.Lock()


def _tab_session(request: gr.Request | None, make: Callable[[], UiSession]) -> UiSession:
    """The one ``UiSession`` of a browser tab (two events racing on a tab's first run share it)."""
    key = getattr(request, "session_hash", None)
    with _TAB_SESSIONS_LOCK:
        session = _TAB_SESSIONS.get(key) if key else None
        if session is None:
            session = make()
            if key:
                _TAB_SESSIONS[key] = session
        return session


def _tab_closed(request: gr.Request) -> None:
    """Runs as soon as a tab is closed or reloaded (``gr.State``'s own clean-up waits an hour)."""
    with _TAB_SESSIONS_LOCK:
        session = _TAB_SESSIONS.pop(getattr(request, "session_hash", None) or "", None)
    _end_session(session)


def _shown(image: Image.Image | None) -> Image.Image | None:
    return None if image is None else display_image(image)


def build_demo(backend: Backend, *, lister: Callable[[], list[str]] | None = None) -> gr.Blocks:
    """The Blocks app around ``backend`` (``lister`` lists attached ADB serials; tests pass their own)."""
    settings = backend.settings
    with gr.Blocks(title="Mobile-Agent-E") as demo:
        state = gr.State(None, delete_callback=_end_session)
        gr.Markdown(
            "## Mobile-Agent-E — a self-evolving phone assistant\nType a task, pick a phone and a model, "
            "press **Run**, and watch the Manager, Operator, Action Reflector and Notetaker at work. "
            "No phone? The built-in virtual phone works offline."
        )
        if space.space_id():
            gr.Markdown(space.banner(settings), elem_id="mae-space-banner")
        with gr.Tabs():
            with gr.Tab("Run", id="run"), gr.Row(equal_height=False):
                with gr.Column(scale=4, min_width=300):
                    task = gr.Textbox(
                        label="Task", lines=3, elem_id="mae-task", placeholder="What should the phone do?"
                    )
                    with gr.Row():
                        run_btn = gr.Button("▶ Run", variant="primary", elem_id="mae-run")
                        stop_btn = gr.Button("■ Stop", variant="stop", interactive=False, elem_id="mae-stop")
                    gr.Examples(EXAMPLES, inputs=task, label="Examples (virtual phone)")
                    device = gr.Dropdown(
                        device_choices([]),
                        value=default_device([], settings.device),
                        label="Phone",
                        elem_id="mae-device",
                        allow_custom_value=True,
                        info="Attached ADB phones and the built-in virtual phone",
                    )
                    refresh_devices = gr.Button(
                        "⟳ Refresh phone list", size="sm", elem_id="mae-refresh-devices"
                    )
                    backbone = gr.Dropdown(
                        backbone_choices(), value=settings.backbone, label="Backbone", elem_id="mae-backbone"
                    )
                    agent = agent_picker(settings.loop.agent)
                    with gr.Row():
                        base_url = gr.Textbox(
                            value=settings.base_url or "", label="Base URL", elem_id="mae-base-url"
                        )
                        model = gr.Textbox(value=settings.model or "", label="Model", elem_id="mae-model")
                    with gr.Row():
                        max_steps = gr.Slider(
                            1,
                            100,
                            value=settings.loop.max_steps,
                            step=1,
                            label="Max steps",
                            elem_id="mae-max-steps",
                        )
                        evolve = gr.Checkbox(
                            value=settings.evolution.evolve, label="Self-evolution", elem_id="mae-evolve"
                        )
                    with gr.Accordion(
                        "Per-agent models, API keys and safety", open=False, elem_id="mae-advanced"
                    ):
                        gr.Markdown(KEY_NOTE)
                        key_boxes = [
                            gr.Textbox(label=label, type="password", elem_id=f"mae-key-{slug}")
                            for label, slug in [(n, n.lower()) for n in KEY_ENVS]
                            + [("Custom endpoint key", "custom")]
                        ]
                        role_backbones, role_models = [], []
                        for role in AGENT_ROLES:
                            with gr.Row(equal_height=True):
                                choices = role_backbone_choices()
                                role_backbones.append(
                                    gr.Dropdown(choices, value=SAME, label=f"{role} backbone")
                                )
                                role_models.append(gr.Textbox(label=f"{role} model", placeholder="(default)"))
                        with gr.Row(equal_height=True):
                            call_timeout = gr.Number(
                                value=None, label="Model call timeout (s, empty = 120)", elem_id="mae-timeout"
                            )
                            call_retries = gr.Number(
                                value=None,
                                label="Retries per call",
                                minimum=0,
                                precision=0,
                                elem_id="mae-retries",
                            )
                        parallel_notetaker = gr.Checkbox(
                            value=settings.loop.parallel_notetaker,
                            label="Notetaker beside the Reflector (faster; not the paper's order)",
                            info="One model round trip less per step; the Notetaker then sees the "
                            "progress of the step before.",
                            elem_id="mae-parallel-notetaker",
                        )
                        names = [r.name for r in DEFAULT_RULES]
                        rules = gr.CheckboxGroup(
                            names, value=names, label="Ask for approval before", elem_id="mae-safety"
                        )
                with gr.Column(scale=4, min_width=300):
                    phone = gr.Image(
                        label="Phone",
                        show_label=False,
                        type="pil",
                        interactive=False,
                        height=660,
                        elem_id="mae-phone",
                        buttons=["fullscreen"],
                    )
                    overlay = gr.Checkbox(
                        value=False, label="Show the Perceptor's boxes", elem_id="mae-overlay"
                    )
                    with gr.Row():
                        manual_buttons = {
                            op: gr.Button(op.replace("_", " "), size="sm", elem_id=f"mae-manual-{op.lower()}")
                            for op in MANUAL_OPS
                        }
                        refresh_screen = gr.Button("⟳ Screen", size="sm", elem_id="mae-refresh-screen")
                    manual_status = gr.Markdown(
                        space.MANUAL_OFF if space.space_id() else MANUAL_HINT, elem_id="mae-manual-status"
                    )
                with gr.Column(scale=5, min_width=340):
                    status = gr.Markdown(status_markdown(RunView()), elem_id="mae-status")
                    progress = gr.HTML(progress_html(RunView()), elem_id="mae-progress")
                    with gr.Group(visible=False, elem_id="mae-approval") as approval_box:
                        approval_md = gr.Markdown(elem_id="mae-approval-text")
                        with gr.Row():
                            approve_btn = gr.Button("✔ Approve", variant="primary", elem_id="mae-approve")
                            reject_btn = gr.Button("✖ Reject", variant="stop", elem_id="mae-reject")
                    with gr.Accordion("Working memory (plan, progress, notes)", open=False):
                        working = gr.Markdown(elem_id="mae-working")
                    timeline = gr.HTML(timeline_html(RunView()), elem_id="mae-timeline", max_height=900)

            with gr.Tab("Memory", id="memory", visible=not space.space_id()) as memory_page:
                mem_header = gr.Markdown(elem_id="mae-memory-header")
                with gr.Row(equal_height=False):
                    with gr.Column():
                        tips = gr.Textbox(label="Tips (numbered list)", lines=14, elem_id="mae-tips")
                        save_tips = gr.Button("Save Tips", elem_id="mae-save-tips")
                    with gr.Column():
                        shortcut_table = gr.Dataframe(
                            headers=memory_tab.SHORTCUT_COLUMNS,
                            interactive=False,
                            wrap=True,
                            label="Shortcuts and their usage",
                            elem_id="mae-shortcut-table",
                            column_widths=["22%", "16%", "9%", "7%", "9%", "9%", "8%", "20%"],
                        )
                        shortcuts_json = gr.Code(
                            language="json", label="Shortcuts (JSON)", elem_id="mae-shortcuts", max_lines=24
                        )
                        save_shortcuts = gr.Button(
                            "Validate and save Shortcuts", elem_id="mae-save-shortcuts"
                        )
                mem_status = gr.Markdown(elem_id="mae-memory-status")
                with gr.Accordion("Import / export", open=False), gr.Row():
                    import_tips = gr.File(label="Tips file (.txt)", file_types=[".txt"], type="filepath")
                    import_shortcuts = gr.File(
                        label="Shortcuts file (.json)", file_types=[".json"], type="filepath"
                    )
                    with gr.Column():
                        import_btn = gr.Button("Import", elem_id="mae-import")
                        export_btn = gr.Button("Export current memory", elem_id="mae-export")
                        export_file = gr.File(label="Export", interactive=False, elem_id="mae-export-file")
                with gr.Accordion("History", open=True):
                    history_table = gr.Dataframe(
                        headers=memory_tab.HISTORY_COLUMNS,
                        interactive=False,
                        wrap=True,
                        elem_id="mae-memory-history",
                        column_widths=["8%", "14%", "16%", "32%", "30%"],
                    )
                    with gr.Row():
                        version = gr.Dropdown(label="Version", choices=[], elem_id="mae-memory-version")
                        rollback_btn = gr.Button("Roll back to this version", elem_id="mae-rollback")
                        mem_refresh = gr.Button("⟳ Reload", elem_id="mae-memory-reload")

            with gr.Tab("History", id="history", visible=not space.space_id()) as history_page:
                runs = gr.Dropdown(label="Past runs", choices=[], elem_id="mae-runs")
                runs_refresh = gr.Button("⟳ Refresh the list", size="sm", elem_id="mae-runs-refresh")
                run_summary = gr.Markdown(elem_id="mae-run-summary")
                with gr.Row(equal_height=False):
                    with gr.Column(scale=4):
                        replay_image = gr.Image(
                            type="pil",
                            interactive=False,
                            height=620,
                            label="Replay",
                            elem_id="mae-replay-image",
                            buttons=["fullscreen", "download"],
                        )
                        replay_step = gr.Slider(
                            1, 2, value=1, step=1, label="Frame", elem_id="mae-replay-step"
                        )
                    with gr.Column(scale=5):
                        replay_card = gr.HTML(elem_id="mae-replay-card")
                        with gr.Row():
                            zip_btn = gr.Button("Download as zip", elem_id="mae-zip")
                            gif_btn = gr.Button("Export animated GIF", elem_id="mae-gif")
                        download = gr.File(label="Download", interactive=False, elem_id="mae-download")

            build_evaluate_tab(backend)

        # ---------------------------------------------------------------- run
        run_outputs = [
            state,
            status,
            progress,
            timeline,
            phone,
            approval_box,
            approval_md,
            working,
            run_btn,
            stop_btn,
        ]
        form_inputs = [task, device, backbone, base_url, model, max_steps, evolve, rules, agent]
        form_inputs += [*role_backbones, *role_models, *key_boxes, call_timeout, call_retries]
        form_inputs += [parallel_notetaker]
        skip_rest = [gr.skip()] * (len(run_outputs) - 2)
        wire_agent_picker(agent, evolve)

        def render(session: UiSession, image: Any) -> tuple[Any, ...]:
            view = session.view
            busy = view.running or session.controller.active
            return (
                session,
                status_markdown(view, time.time()),
                progress_html(view),
                timeline_html(view),
                image,
                gr.update(visible=view.pending_approval is not None),
                approval_markdown(view),
                memory_markdown(view),
                gr.update(interactive=not busy),
                gr.update(interactive=busy),
            )

        def read_form(values: tuple[Any, ...]) -> tuple[RunForm, list[str]]:
            *head, parallel = values  # the parallel-Notetaker checkbox is the last input
            task_text, device_name, backbone_name, url, model_name, steps, evolution, rule_names = head[:8]
            count, rest = len(AGENT_ROLES), list(head[9:])
            *rest, timeout_value, retries_value = rest
            keys = dict(zip([*KEY_ENVS, CUSTOM_KEY_ENV], rest[2 * count :], strict=True))
            form = RunForm(
                task=task_text or "",
                device=device_name or "virtual",
                backbone=backbone_name or settings.backbone,
                base_url=url or "",
                model=model_name or "",
                max_steps=int(steps),
                evolution=bool(evolution),
                parallel_notetaker=bool(parallel),
                role_backbones=dict(zip(AGENT_ROLES, rest[:count], strict=True)),
                role_models=dict(zip(AGENT_ROLES, rest[count : 2 * count], strict=True)),
                api_keys=session_keys(keys),
                agent=head[8] or "e",
                timeout_s=float(timeout_value) if timeout_value else None,
                max_retries=int(retries_value) if retries_value is not None else None,
            )
            return form, list(rule_names or [])

        def on_run(
            session: UiSession | None, show_boxes: bool, request: gr.Request, *values: Any
        ) -> Iterator[tuple[Any, ...]]:
            session = session or _tab_session(
                request,
                lambda: UiSession(
                    RunController(backend.run_job, approval_timeout_s=backend.approval_timeout_s)
                ),
            )
            refusal = None
            with session.start_lock:  # the check and the start are one step: no second run slips in
                if session.controller.active:
                    refusal = "**A run is already going in this tab:** stop it first."
                else:
                    try:
                        form, rule_names = read_form(values)
                        job = backend.make_job(form, rule_names)
                        if space.space_id():  # each visitor: own runs, memory and virtual phone; own keys
                            job.settings = space.session_settings(job.settings, request.session_hash)
                            job.device = space.session_phone(request.session_hash or "")
                        if refused := space.key_refusal(job.settings, form.api_keys):
                            raise MaeError(refused)
                        absent = missing_keys(job.settings, form.api_keys, os.environ)
                        if absent:
                            raise MaeError(
                                f"no API key for {', '.join(absent)}: enter it under “Per-agent models, API "
                                "keys and safety”, or set the environment variable on the server"
                            )
                        job.on_perception = session.on_perception
                        session.elements = []
                        session.view = RunView(
                            started_at=time.time(), max_steps=job.settings.loop.max_steps, task=job.task
                        )
                        session.controller.start(job)
                    except Exception as exc:
                        refusal = f"**Cannot start:** {error_message(exc)}"
            if refusal is not None:
                yield (session, refusal, *skip_rest)
                return
            yield render(session, gr.skip())
            shown_version = session.view.screen_version
            session.show_boxes = bool(show_boxes)
            while True:
                view = session.view
                events = session.controller.drain(0.5)
                for event in events:
                    view.apply(event)
                if not events and session.controller.active:  # only the elapsed time changed
                    yield (session, status_markdown(view, time.time()), *skip_rest)
                    continue
                view.elements = session.elements
                image: Any = gr.skip()
                if view.screen_version != shown_version:
                    shown_version = view.screen_version
                    image = _shown(phone_image(view, session.show_boxes))
                yield render(session, image)
                if view.finished is not None and not session.controller.active:
                    return

        run_kw: dict[str, Any] = {"show_progress": "hidden", "concurrency_limit": None}
        run_btn.click(on_run, [state, overlay, *form_inputs], run_outputs, **run_kw)
        task.submit(on_run, [state, overlay, *form_inputs], run_outputs, **run_kw)

        def on_stop(session: UiSession | None) -> str:
            if session is None or not session.controller.stop():
                return "No run is going."
            return "**Stopping…** the run ends before its next action."

        stop_btn.click(on_stop, state, status, queue=False)

        def answer(approved: bool) -> Callable[[UiSession | None], Any]:
            def handler(session: UiSession | None) -> Any:
                if session is not None:
                    session.controller.answer(approved)
                return gr.update(visible=False)

            return handler

        approve_btn.click(answer(True), state, approval_box, queue=False)
        reject_btn.click(answer(False), state, approval_box, queue=False)

        # ---------------------------------------------------------------- phone view and manual control
        def current_screen(device_name: str) -> tuple[Any, str]:
            try:
                hint = space.MANUAL_OFF if space.space_id() else MANUAL_HINT
                return _shown(backend.pool.get(device_name).screenshot()), hint
            except Exception as exc:
                return None, f"⚠ {error_message(exc)}"

        def on_overlay(session: UiSession | None, show: bool) -> Any:
            if session is not None:
                session.show_boxes = bool(show)
            if session is None or (session.view.screen is None and session.view.annotated is None):
                return gr.skip()
            session.view.elements = session.elements
            return _shown(phone_image(session.view, show))

        overlay.change(on_overlay, [state, overlay], phone, show_progress="hidden")

        def manual(
            session: UiSession | None, name: str, op: str, arguments: dict[str, Any]
        ) -> tuple[Any, str]:
            if session is not None and session.controller.active:
                return gr.skip(), "A run is active: manual control works once it has ended (or press Stop)."
            if space.space_id():  # the shown phone is shared: visitors operate their own phone by runs
                return gr.skip(), space.MANUAL_OFF
            try:
                screen = manual_action(backend.pool.get(name), op, arguments)
            except Exception as exc:
                return gr.skip(), f"⚠ {error_message(exc)}"
            if session is not None:  # the boxes belong to the screen before: drop them
                session.view.screen, session.view.annotated, session.elements = screen, None, []
            done = f"{op}({', '.join(str(v) for v in arguments.values())})"
            return _shown(screen), f"Did `{done}`."

        def on_tap(session: UiSession | None, name: str, evt: gr.SelectData) -> tuple[Any, str]:
            try:
                screen_size = backend.pool.get(name).screen_size()
                x, y = to_screen(evt.index, display_size(screen_size), screen_size)
            except Exception as exc:
                return gr.skip(), f"⚠ {error_message(exc)}"
            return manual(session, name, "Tap", {"x": x, "y": y})

        manual_kw: dict[str, Any] = {
            "concurrency_limit": 1,
            "concurrency_id": "manual",
            "show_progress": "hidden",
        }
        phone.select(on_tap, [state, device], [phone, manual_status], **manual_kw)
        for op, button in manual_buttons.items():
            button.click(
                lambda session, name, op=op: manual(session, name, op, {}),
                [state, device],
                [phone, manual_status],
                **manual_kw,
            )
        refresh_screen.click(current_screen, device, [phone, manual_status], **manual_kw)
        device.change(current_screen, device, [phone, manual_status], **manual_kw)

        def on_refresh_devices(current: str) -> Any:
            serials = attached(lister)
            choices = device_choices(serials)
            values = [value for _, value in choices]
            return gr.update(choices=choices, value=current if current in values else default_device(serials))

        refresh_devices.click(on_refresh_devices, device, device)

        def on_backbone(name: str) -> tuple[Any, Any]:
            preset = PRESETS.get(name)
            if name == CUSTOM or preset is None:
                return gr.update(placeholder="http://127.0.0.1:8000/v1"), gr.update(placeholder="model name")
            return gr.update(placeholder=preset.base_url), gr.update(placeholder=preset.model)

        backbone.change(on_backbone, backbone, [base_url, model])

        # ---------------------------------------------------------------- memory tab
        mem_outputs = [mem_header, tips, shortcut_table, shortcuts_json, history_table, version]
        store = backend.memory_store

        def memory_values() -> tuple[Any, ...]:
            try:
                view = memory_tab.load_view(store(), backend.usage_policy())
            except MaeError as exc:
                return (f"✖ {exc}", *[gr.skip()] * 5)
            choices = [str(v) for v in reversed(view.versions)]
            return (
                view.header(),
                view.tips,
                view.shortcut_rows,
                view.shortcuts_json,
                view.history_rows,
                gr.update(choices=choices, value=choices[0] if choices else None),
            )

        def then_reload(action: Callable[..., str]) -> Callable[..., tuple[Any, ...]]:
            def handler(*args: Any) -> tuple[Any, ...]:
                return (action(*args), *memory_values())

            return handler

        edited = [mem_status, *mem_outputs]
        mem_refresh.click(memory_values, None, mem_outputs)
        memory_page.select(memory_values, None, mem_outputs)
        save_tips.click(then_reload(lambda text: memory_tab.save_tips(store(), text)), tips, edited)
        save_shortcuts.click(
            then_reload(lambda text: memory_tab.save_shortcuts(store(), text)), shortcuts_json, edited
        )
        import_btn.click(
            then_reload(lambda t, s: memory_tab.import_memory(store(), t, s)),
            [import_tips, import_shortcuts],
            edited,
        )
        rollback_btn.click(then_reload(lambda v: memory_tab.rollback(store(), v)), version, edited)

        def on_export_memory() -> str | None:
            try:
                return str(memory_tab.export_memory(store()))
            except (MaeError, OSError) as exc:
                gr.Warning(f"Cannot export the memory: {exc}")
                return None

        export_btn.click(on_export_memory, None, export_file)

        # ---------------------------------------------------------------- history tab
        def run_choices(selected: str | None = None) -> Any:
            choices = [(info.label(), str(info.path)) for info in history.list_runs(backend.log_dir)]
            values = [value for _, value in choices]
            return gr.update(
                choices=choices, value=selected if selected in values else (values[0] if values else None)
            )

        def on_pick_run(path: str | None) -> tuple[Any, ...]:
            replay = history.load_replay(path) if path else None
            if replay is None:
                return "No run selected.", None, gr.update(maximum=2, value=1), ""
            image, card = history.frame_at(replay, 1)
            count = max(2, len(replay.frames))
            return history.summary_markdown(replay), image, gr.update(maximum=count, value=1), card

        def on_frame(path: str | None, position: float) -> tuple[Any, str]:
            replay = history.load_replay(path) if path else None
            return (None, "") if replay is None else history.frame_at(replay, int(position))

        def exporter(kind: str) -> Callable[[str | None], Any]:
            def export(path: str | None) -> Any:
                if not path:
                    gr.Warning("Pick a run first.")
                    return None
                try:
                    return str(history.export_zip(path) if kind == "zip" else history.export_gif(path))
                except (OSError, ValueError) as exc:
                    gr.Warning(str(exc))
                    return None

            return export

        runs_refresh.click(run_choices, runs, runs)
        history_page.select(run_choices, runs, runs)
        runs.change(on_pick_run, runs, [run_summary, replay_image, replay_step, replay_card])
        replay_step.change(on_frame, [runs, replay_step], [replay_image, replay_card], show_progress="hidden")
        zip_btn.click(exporter("zip"), runs, download)
        gif_btn.click(exporter("gif"), runs, download)

        # ---------------------------------------------------------------- page load
        def on_load() -> tuple[Any, ...]:
            serials = attached(lister)
            chosen = default_device(serials, settings.device)
            image, message = current_screen(chosen)
            picker = gr.update(choices=device_choices(serials), value=chosen)
            return (picker, image, message, run_choices(), *memory_values())

        demo.load(on_load, None, [device, phone, manual_status, runs, *mem_outputs])
        demo.unload(_tab_closed)
    return demo


def launch(demo: gr.Blocks, **kwargs: Any) -> Any:
    """Queue and launch ``demo`` with the demo's CSS and theme (Gradio 6 takes them in ``launch``).

    Gradio's run history is off: it would keep every call's inputs, API key fields included, in the
    browser's storage.
    """
    demo.queue(default_concurrency_limit=8)
    return demo.launch(
        css=CSS,
        theme=gr.themes.Soft(),
        run_history=False,
        footer_links=["api", "gradio", "settings"],
        **kwargs,
    )


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, build the demo and serve it."""
    args = parse_args(argv)
    try:
        settings = space.apply_defaults(load_settings(args.profile, overrides=settings_overrides(args)))
        backend = Backend(settings, approval_timeout_s=approval_timeout())
        server = server_options(args)
        options = server.launch_kwargs()
        refused = configure_server_keys(share=server.share, host=server.host)
        if refused:
            print(f"{refused[:1].upper()}{refused[1:]}: visitors enter their own API keys.")
    except MaeError as exc:  # a bad profile, backbone or variable: say what to fix, no traceback
        raise SystemExit(f"error: {exc}") from None
    launch(build_demo(backend), **options)


if __name__ == "__main__":
    main()
