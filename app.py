"""Mobile-Agent-E web demo (Gradio): type a task, watch the phone being operated step by step.

Thin on purpose: this file lays out the components and turns run events into component updates; the
logic lives in ``mae/ui/`` (session, views, phone panel, history, memory tab, devices, forms).
``python app.py`` starts it with the virtual phone unless a phone is attached; ``python app.py --help``
lists options.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import gradio as gr

from mae.actions.safety import DEFAULT_RULES
from mae.config import load_settings
from mae.device import VIRTUAL
from mae.errors import MaeError
from mae.llm.keys import configure_server_keys
from mae.llm.providers import AGENT_ROLES, PRESETS
from mae.public_mode import is_public, set_server
from mae.ui import space
from mae.ui.admission import Admission, max_runs
from mae.ui.agent_picker import agent_picker, wire_agent_picker
from mae.ui.devices import (
    MANUAL_OPS,
    attached,
    default_device,
    device_choices,
)
from mae.ui.doctor_panel import DoctorPanel
from mae.ui.evaluate_tab import build_evaluate_tab
from mae.ui.forms import (
    CUSTOM,
    CUSTOM_KEY_ENV,
    KEY_ENVS,
    REMEMBERED,
    SAME,
    RunForm,
    backbone_choices,
    call_defaults,
    missing_keys,
    model_note,
    restorable,
    role_backbone_choices,
    session_keys,
)
from mae.ui.history_page import build_history_tab
from mae.ui.launch import (
    MAX_UPLOAD,
    approval_timeout,
    parse_args,
    remove_private_temp_dir,
    server_options,
    settings_overrides,
    use_private_temp_dir,
)
from mae.ui.live import LiveRun
from mae.ui.memory_page import build_memory_tab
from mae.ui.phone_panel import MANUAL_HINT, PhonePanel
from mae.ui.phone_view import TabState
from mae.ui.public_runs import PublicRuns, busy_note
from mae.ui.runner import Backend
from mae.ui.session import RunController, error_message
from mae.ui.style import CSS
from mae.ui.views import (
    RunView,
    approval_html,
    memory_html,
    phone_picture,
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
KEY_NOTE = (
    "API keys stay in this browser session's memory only; they are never written to disk, logs or the "
    "browser's storage. Empty fields fall back to the server's keys, which go only to their own provider "
    "(never to a Base URL typed here) and are not used at all when this demo is public."
)
FRESH_LABELS = {
    True: "Start from the home screen with apps closed",
    False: "Go Home first",
}
LIVE_FPS = 1.0
"""How often the phone view looks for a new picture while no action is being shown."""
BUSY_NOTE = "**A run is already going on this phone:** it is shown here; press Stop to end it."
SETTINGS_KEY = "mae-demo-settings"
"""Browser storage key of the remembered (non-secret) settings."""


def _fresh_label(device_name: str | None) -> str:
    return FRESH_LABELS[(device_name or VIRTUAL) == VIRTUAL]


def build_demo(backend: Backend, *, lister: Callable[[], list[str]] | None = None) -> gr.Blocks:
    """The Blocks app around ``backend`` (``lister`` lists attached ADB serials; tests pass their own).

    A public demo (``mae.public_mode``) builds no Memory, History or Evaluate tab and no handler that
    acts on shared state; its phone picker opens only the virtual phone and runs wait in line.
    """
    settings = backend.settings
    registry = backend.runs
    public = is_public()
    if public:  # nothing a visitor sends may open an ADB phone or list attached ones
        backend.pool.restrict(frozenset({VIRTUAL}))
        lister = list
    admission = PublicRuns(backend, Admission(max_runs())) if public else None
    start_lock = threading.Lock()  # the busy check and the start are one step: no second run slips in
    with gr.Blocks(title="Mobile-Agent-E") as demo:
        state = gr.State(None)
        saved = gr.BrowserState({}, storage_key=SETTINGS_KEY)
        live_timer = gr.Timer(LIVE_FPS)
        gr.Markdown(
            "**Mobile-Agent-E** — a self-evolving phone assistant: type a task, pick a phone and a model, "
            "press **Run**. No phone? The built-in virtual phone works offline.",
            elem_id="mae-header",
        )
        if public:
            gr.Markdown(space.banner(settings), elem_id="mae-space-banner")
        with gr.Tabs():
            with gr.Tab("Run", id="run"), gr.Row(equal_height=False):
                with gr.Column(scale=4, min_width=300):
                    task = gr.Textbox(
                        label="Task", lines=2, elem_id="mae-task", placeholder="What should the phone do?"
                    )
                    with gr.Row():
                        run_btn = gr.Button("▶ Run", variant="primary", elem_id="mae-run")
                        stop_btn = gr.Button("■ Stop", variant="stop", interactive=False, elem_id="mae-stop")
                    with gr.Row(equal_height=True):
                        device = gr.Dropdown(
                            device_choices([]),
                            value=default_device([], settings.device),
                            label="Phone",
                            elem_id="mae-device",
                            allow_custom_value=not public,
                            scale=4,
                        )
                        refresh_devices = gr.Button(
                            "⟳",
                            size="sm",
                            elem_id="mae-refresh-devices",
                            scale=0,
                            min_width=40,
                            visible=not public,
                        )
                    fresh = gr.Checkbox(
                        value=True,
                        label=_fresh_label(settings.device),
                        elem_id="mae-fresh-start",
                    )
                    backbone = gr.Dropdown(
                        backbone_choices(), value=settings.backbone, label="Backbone", elem_id="mae-backbone"
                    )
                    agent = agent_picker(settings.loop.agent)
                    with gr.Row():
                        base_url = gr.Textbox(
                            value=settings.base_url or "", label="Base URL", elem_id="mae-base-url"
                        )
                        model = gr.Textbox(
                            value=settings.model or "",
                            label="Model",
                            elem_id="mae-model",
                            info=model_note(settings.backbone) or None,
                        )
                    doctor = None if public else DoctorPanel.build()  # spends calls: private only
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
                    with gr.Accordion("Examples (virtual phone)", open=False):
                        gr.Examples(EXAMPLES, inputs=task, label=None)
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
                                role_backbones.append(  # wide enough for "(same as main)" and its arrow
                                    gr.Dropdown(choices, value=SAME, label=f"{role} backbone", min_width=200)
                                )
                                role_models.append(
                                    gr.Textbox(label=f"{role} model", placeholder="(default)", min_width=200)
                                )
                        default_timeout, default_retries = call_defaults(settings)
                        with gr.Row(equal_height=True):
                            call_timeout = gr.Number(
                                value=default_timeout,
                                label="Model call timeout (s)",
                                elem_id="mae-timeout",
                            )
                            call_retries = gr.Number(
                                value=default_retries,
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
                        height="calc(100vh - 250px)",
                        elem_id="mae-phone",
                        buttons=["fullscreen"],
                    )
                    manual_status = gr.Markdown(  # right under the phone: a tap's answer stays in view
                        space.MANUAL_OFF if public else MANUAL_HINT, elem_id="mae-manual-status"
                    )
                    with gr.Row(elem_id="mae-phone-controls"):
                        manual_buttons = {
                            op: gr.Button(op.replace("_", " "), size="sm", elem_id=f"mae-manual-{op.lower()}")
                            for op in MANUAL_OPS
                        }
                        reset_btn = gr.Button("↺ Reset phone", size="sm", elem_id="mae-reset-phone")
                    overlay = gr.Checkbox(
                        value=False, label="Show the Perceptor's boxes", elem_id="mae-overlay"
                    )
                with gr.Column(scale=5, min_width=340):
                    status = gr.Markdown(status_markdown(RunView()), elem_id="mae-status")
                    progress = gr.HTML(progress_html(RunView()), elem_id="mae-progress")
                    with gr.Group(visible=False, elem_id="mae-approval") as approval_box:
                        approval_md = gr.HTML(elem_id="mae-approval-text")
                        with gr.Row():
                            approve_btn = gr.Button("✔ Approve", variant="primary", elem_id="mae-approve")
                            reject_btn = gr.Button("✖ Reject", variant="stop", elem_id="mae-reject")
                    with gr.Accordion("Working memory (plan, progress, notes)", open=False):
                        working = gr.HTML(elem_id="mae-working")
                    timeline = gr.HTML(timeline_html(RunView()), elem_id="mae-timeline", max_height=900)
                    watch_btn = gr.Button("Watch it here", visible=False, elem_id="mae-watch")

            # shared memory, every run's history and evals: not built at all on a public demo (a hidden
            # tab's handlers would still answer over the API)
            memory_page = None if public else build_memory_tab(backend)
            history_page = None if public else build_history_tab(backend)
            if not public:
                build_evaluate_tab(backend, run_model=(backbone, base_url, model))

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
            watch_btn,
        ]
        form_inputs = [task, device, backbone, base_url, model, max_steps, evolve, fresh, rules, agent]
        form_inputs += [*role_backbones, *role_models, *key_boxes, call_timeout, call_retries]
        form_inputs += [parallel_notetaker]
        skip_rest = [gr.skip()] * (len(run_outputs) - 2)
        offer_watch = [*skip_rest[:-1], gr.update(visible=True)]
        blank = RunView()  # what the page shows before any run
        cleared = [progress_html(blank), timeline_html(blank), gr.skip(), gr.update(visible=False), "", ""]
        cleared += [gr.update(interactive=True), gr.update(interactive=False), gr.update(visible=False)]
        wire_agent_picker(agent, evolve)

        def render(tab: TabState, view: RunView, image: Any, busy: bool) -> tuple[Any, ...]:
            """The run's outputs; Run stays disabled while ``busy`` (steps, or the memory update after
            them: a click while this stream is still open would be dropped)."""
            return (
                tab,
                status_markdown(view, time.time()),
                progress_html(view),
                timeline_html(view),
                image,
                gr.update(visible=view.pending_approval is not None),
                approval_html(view),
                memory_html(view),
                gr.update(interactive=not busy),
                gr.update(interactive=view.running),
                gr.update(visible=False),
            )

        def read_form(values: tuple[Any, ...]) -> tuple[RunForm, list[str]]:
            *head, parallel = values  # the parallel-Notetaker checkbox is the last input
            task_text, device_name, backbone_name, url, model_name, steps, evolution, fresh_start = head[:8]
            rule_names, agent_name = head[8], head[9]
            count, rest = len(AGENT_ROLES), list(head[10:])
            *rest, timeout_value, retries_value = rest
            keys = dict(zip([*KEY_ENVS, CUSTOM_KEY_ENV], rest[2 * count :], strict=True))
            form = RunForm(
                task=task_text or "",
                device=device_name or VIRTUAL,
                backbone=backbone_name or settings.backbone,
                base_url=url or "",
                model=model_name or "",
                max_steps=int(steps),
                evolution=bool(evolution),
                fresh_start=bool(fresh_start),
                parallel_notetaker=bool(parallel),
                role_backbones=dict(zip(AGENT_ROLES, rest[:count], strict=True)),
                role_models=dict(zip(AGENT_ROLES, rest[count : 2 * count], strict=True)),
                api_keys=session_keys(keys),
                agent=agent_name or "e",
                timeout_s=float(timeout_value) if timeout_value else None,
                max_retries=int(retries_value) if retries_value is not None else None,
            )
            return form, list(rule_names or [])

        if doctor is not None:
            doctor.wire(settings, form_inputs, lambda values: read_form(values)[0])

        def watch(tab: TabState) -> Iterator[tuple[Any, ...]]:
            """Stream the tab's run (started here, or found running on load) until it has ended."""
            run = tab.run
            if run is None:
                return
            seen, shown_version = -1, -1
            while True:
                version = run.wait(seen, 1.0)
                with run.changed:
                    view = run.view
                    if version == seen:  # only the elapsed time changed
                        out: tuple[Any, ...] = (tab, status_markdown(view, time.time()), *skip_rest)
                    else:
                        seen = version
                        image: Any = gr.skip()
                        if view.screen_version != shown_version:
                            shown_version = view.screen_version
                            shown = phone_picture(view)
                            if shown is not None:
                                tab.set_picture(*shown, from_run=True)
                                image = tab.shown()
                        out = render(tab, view, image, busy=run.active)
                    done = view.finished is not None and not run.controller.active
                yield out
                if done:
                    yield render(tab, run.view, gr.skip(), busy=False)
                    if admission is not None:
                        admission.let_go(tab)
                    return

        def on_run(
            tab: TabState | None, show_boxes: bool, request: gr.Request, *values: Any
        ) -> Iterator[tuple[Any, ...]]:
            tab = tab or TabState()
            tab.show_boxes = bool(show_boxes)
            session = request.session_hash or ""
            ticket = None
            refusal, offer = None, False
            try:
                if admission is not None:  # a public demo: one place in line per page, then wait
                    ticket = admission.join(session)
                    for line in admission.wait_turn(ticket):
                        yield (tab, line, *skip_rest)
                with start_lock:
                    form, rule_names = read_form(values)
                    # on a public demo each visitor has their own phone, so their own run slot
                    slot = f"{form.device}#{session}" if public else form.device
                    running = registry.active(slot)
                    if running is not None and (public or running is tab.run):
                        tab.run = running
                        refusal = BUSY_NOTE
                    elif running is not None:  # another tab's run: say so, and offer to watch it
                        refusal, offer = busy_note(running.view.task), True
                    else:
                        job = backend.make_job(form, rule_names)
                        if admission is not None:  # each visitor: own runs, memory, phone and keys
                            admission.prepare(job, session)
                        absent = missing_keys(job.settings, form.api_keys, os.environ)
                        if absent:
                            raise MaeError(
                                f"no API key: enter it under “Per-agent models, API keys and safety”, or set "
                                f"{' and '.join(absent)} on the server"
                            )
                        controller = RunController(
                            backend.run_job, approval_timeout_s=backend.approval_timeout_s
                        )
                        view = RunView(
                            started_at=time.time(), max_steps=job.settings.loop.max_steps, task=job.task
                        )
                        run = LiveRun(slot, controller, view)
                        job.on_perception = controller.post
                        registry.add(run)
                        if admission is not None and ticket is not None:
                            admission.hand_over(run, ticket)
                        run.start(job)
                        ticket = None  # the run gives it back when it ends
                        tab.run = run
            except Exception as exc:
                refusal, offer = f"**Cannot start:** {error_message(exc)}", False
            finally:
                if admission is not None and ticket is not None:
                    admission.leave(ticket)
            if refusal is not None:
                if offer:
                    yield (tab, refusal, *offer_watch)
                    return
                if tab.run is None or not tab.run.active:  # nothing of an earlier run may read as this one's
                    yield (tab, refusal, *cleared)
                    return
                yield (tab, refusal, *skip_rest)
            yield from watch(tab)

        run_kw: dict[str, Any] = {"show_progress": "hidden", "concurrency_limit": None}
        run_btn.click(on_run, [state, overlay, *form_inputs], run_outputs, **run_kw)
        task.submit(on_run, [state, overlay, *form_inputs], run_outputs, **run_kw)

        if not public:  # on a public demo a visitor watches their own run only

            def on_watch(tab: TabState | None, device_name: str | None) -> Iterator[tuple[Any, ...]]:
                """Follow the run another tab started on this phone."""
                tab = tab or TabState()
                tab.run = registry.active(device_name or VIRTUAL)
                if tab.run is None:
                    ended = "That run has ended: press **Run** to start yours."
                    yield (tab, ended, *skip_rest[:-1], gr.update(visible=False))
                    return
                yield from watch(tab)

            watch_btn.click(on_watch, [state, device], run_outputs, **run_kw)

        def tab_run(tab: TabState | None, device_name: str | None) -> LiveRun | None:
            """The running run this tab shows, else the one on its phone."""
            if tab is not None and tab.run is not None and tab.run.active:
                return tab.run
            return None if public else registry.active(device_name or VIRTUAL)

        def on_stop(tab: TabState | None, device_name: str) -> str:
            run = tab_run(tab, device_name)
            if run is None or not run.controller.stop():
                return "No run is going."
            return "**Stopping…** the run ends before its next action."

        stop_btn.click(on_stop, [state, device], status, queue=False)

        def answer(approved: bool) -> Callable[[TabState | None, str], Any]:
            def handler(tab: TabState | None, device_name: str) -> Any:
                run = tab_run(tab, device_name)
                if run is not None:
                    run.controller.answer(approved)
                return gr.update(visible=False)

            return handler

        approve_btn.click(answer(True), [state, device], approval_box, queue=False)
        reject_btn.click(answer(False), [state, device], approval_box, queue=False)

        # ---------------------------------------------------------------- phone view and manual control
        panel = PhonePanel(backend)
        current_screen = panel.current_screen
        live_timer.tick(
            panel.on_tick,
            [state, device],
            phone,
            show_progress="hidden",
            trigger_mode="once",
            concurrency_limit=2,
            concurrency_id="live",
        )
        overlay.change(panel.on_overlay, [state, overlay, device], phone, show_progress="hidden")

        manual_kw: dict[str, Any] = {
            "concurrency_limit": 1,
            "concurrency_id": "manual",
            "show_progress": "hidden",
        }
        phone.select(panel.on_tap, [state, device], [phone, manual_status], **manual_kw)
        for op, button in manual_buttons.items():
            button.click(
                lambda tab, name, op=op: panel.manual(tab, name, op, {}),
                [state, device],
                [phone, manual_status],
                **manual_kw,
            )

        reset_btn.click(panel.on_reset, [state, device], [phone, manual_status], **manual_kw)

        def on_device(tab: TabState | None, name: str) -> tuple[Any, ...]:
            tab, image, message = current_screen(tab, name)
            return tab, image, message, gr.update(label=_fresh_label(name))

        device.change(on_device, [state, device], [state, phone, manual_status, fresh], **manual_kw)

        def on_refresh_devices(current: str) -> Any:
            serials = attached(lister)
            choices = device_choices(serials)
            values = [value for _, value in choices]
            return gr.update(choices=choices, value=current if current in values else default_device(serials))

        if not public:
            refresh_devices.click(on_refresh_devices, device, device)

        def on_backbone(name: str) -> tuple[Any, Any]:
            preset = PRESETS.get(name)
            if name == CUSTOM or preset is None:
                return gr.update(placeholder="http://127.0.0.1:8000/v1"), gr.update(
                    placeholder="model name", info=""
                )
            return gr.update(placeholder=preset.base_url), gr.update(
                placeholder=preset.model, info=model_note(name)
            )

        backbone.change(on_backbone, backbone, [base_url, model])

        # ---------------------------------------------------------------- remembered settings
        remembered = [
            task,
            backbone,
            base_url,
            model,
            max_steps,
            evolve,
            fresh,
            rules,
            *role_backbones,
            *role_models,
        ]

        def remember(device_name: str, *values: Any) -> dict[str, Any]:
            return {"device": device_name, **dict(zip(REMEMBERED, values, strict=True))}

        watched: list[Any] = [device, *remembered]
        gr.on(
            [c.change for c in watched],
            remember,
            watched,
            saved,
            show_progress="hidden",
            queue=False,
        )

        # ---------------------------------------------------------------- page load
        def on_load(remembered_values: Any) -> tuple[Any, ...]:
            values = remembered_values if isinstance(remembered_values, dict) else {}
            serials = attached(lister)
            choices = device_choices(serials)
            running = None if public else registry.active()  # never another visitor's run
            chosen = default_device(serials, settings.device)
            if running is not None:  # a run is going: show it (this tab re-attaches)
                chosen = running.device
            elif values.get("device") in [v for _, v in choices]:
                chosen = values["device"]
            tab = TabState(run=running)  # a reload re-attaches to the run going on the phone
            tab, image, message = current_screen(tab, chosen)
            restored = [
                gr.update(value=values[name]) if restorable(name, values.get(name), names) else gr.skip()
                for name in REMEMBERED
            ]
            picker = gr.update(choices=choices, value=chosen)
            fresh_label = gr.update(label=_fresh_label(chosen))
            pages: list[Any] = []
            if history_page is not None and memory_page is not None:
                pages = [*history_page.choices(), *memory_page.values()]
            return (tab, picker, image, message, fresh_label, *pages, *restored)

        def attach(tab: TabState | None) -> Iterator[tuple[Any, ...]]:
            """After a (re)load: stream the run found going, else leave the page as it is."""
            if tab is not None and tab.run is not None:
                yield from watch(tab)
            else:
                yield (tab, *[gr.skip()] * (len(run_outputs) - 1))

        load_outputs = [
            state,
            device,
            phone,
            manual_status,
            fresh,
            *(history_page.outputs if history_page is not None else []),
            *(memory_page.outputs if memory_page is not None else []),
            *remembered,
        ]
        demo.load(on_load, saved, load_outputs, show_progress="hidden").then(
            attach, state, run_outputs, **run_kw
        )
    return demo


def launch(demo: gr.Blocks, **kwargs: Any) -> Any:
    """Queue and launch ``demo`` with the demo's CSS and theme (Gradio 6 takes them in ``launch``).

    Gradio's run history is off: it would keep every call's inputs, API key fields included, in the
    browser's storage. Uploads are limited to ``MAX_UPLOAD``.
    """
    demo.queue(default_concurrency_limit=8)
    kwargs.setdefault("max_file_size", MAX_UPLOAD)
    # FastAPI's own route list (/openapi.json) would answer before any login: not served at all
    kwargs.setdefault("app_kwargs", {"openapi_url": None, "docs_url": None, "redoc_url": None})
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
        server = server_options(args)
        set_server(share=server.share, host=server.host)  # public or private: decided once, here
        settings = space.apply_defaults(load_settings(args.profile, overrides=settings_overrides(args)))
        backend = Backend(settings, approval_timeout_s=approval_timeout())
        options = server.launch_kwargs()
        refused = configure_server_keys(share=server.share, host=server.host)
        if refused:
            print(f"{refused[:1].upper()}{refused[1:]}: visitors enter their own API keys.")
    except MaeError as exc:  # a bad profile, backbone or variable: say what to fix, no traceback
        raise SystemExit(f"error: {exc}") from None
    if not port_free(options["server_name"], options["server_port"]):  # before the UI takes seconds
        raise SystemExit(port_in_use(options["server_name"], options["server_port"]))
    temp_dir = use_private_temp_dir()  # uploads of this server only, removed when it stops
    demo = build_demo(backend)
    try:  # Gradio's own lines name its launch() options, not this command's flags: ours instead
        launch(demo, prevent_thread_lock=True, quiet=not server.share, **options)
    except OSError as exc:  # Gradio says "Cannot find empty port in range: 7860-7860. ..."
        if "port" not in str(exc).lower():
            raise
        raise SystemExit(port_in_use(options["server_name"], options["server_port"])) from None
    print(running_line(server.host, server.port, server.share), flush=True)
    try:
        demo.block_thread()  # until Ctrl-C
    finally:
        demo.close()
        remove_private_temp_dir(temp_dir)


def running_line(host: str, port: int, share: bool) -> str:
    """What ``python app.py`` prints once the demo answers."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    tail = "" if share else "; add --share for a temporary public link"
    return f"mae demo: http://{shown}:{port} (Ctrl-C stops it{tail})"


def port_free(host: str, port: int) -> bool:
    """Whether the demo's server could bind ``host:port`` now (checked the way the server binds)."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        return True  # an unknown host is the server's to report
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError:
            return False
    return True


def port_in_use(host: str, port: int) -> str:
    """The one line shown when the port is taken."""
    return (
        f"error: port {port} on {host} is already in use (another demo running?): start with "
        f"`python app.py --port {port + 1}` or another free port."
    )


if __name__ == "__main__":
    main()
