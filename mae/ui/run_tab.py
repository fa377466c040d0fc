"""The Run tab: the form (``mae.ui.run_form``), the phone (``mae.ui.phone_column``) and the run's
progress, approvals and timeline, with the handlers that start, stream, stop and answer a run.

``build_run_tab`` is called inside ``gr.Tabs()``; the page-load handler (``mae.ui.demo``) uses the
returned ``RunTab`` to restore the form and re-attach to a run going on the phone.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from mae.device import VIRTUAL
from mae.errors import MaeError
from mae.ui import visitors
from mae.ui.devices import attached, default_device, device_choices
from mae.ui.forms import REMEMBERED, missing_keys, restorable
from mae.ui.live import LiveRun
from mae.ui.phone_column import PhoneColumn, build_phone_column, wire_phone_column
from mae.ui.phone_panel import PhonePanel
from mae.ui.phone_view import TabState
from mae.ui.public_runs import PublicRuns, busy_note
from mae.ui.run_form import RULE_NAMES, RunFormFields, build_run_form, fresh_label, read_form, wire_run_form
from mae.ui.runner import Backend
from mae.ui.session import RunController, error_markdown
from mae.ui.views import (
    RunView,
    approval_html,
    memory_html,
    phone_picture,
    progress_html,
    status_markdown,
    timeline_html,
)

BUSY_NOTE = "**A run is already going on this phone:** it is shown here; press Stop to end it."


@dataclass
class RunTab:
    """What the page load needs of the Run tab: its components, and the handlers that fill them."""

    state: gr.State
    form: RunFormFields
    phone: PhoneColumn
    outputs: list[Any]
    """What a streamed run updates (``state`` first)."""
    on_load: Callable[[Any], tuple[tuple[Any, ...], list[Any]]]
    """Remembered settings -> the updates of ``load_outputs``' two parts."""
    attach: Callable[[TabState | None], Iterator[tuple[Any, ...]]]
    """After a (re)load: stream the run found going, else leave the page as it is."""

    @property
    def load_outputs(self) -> tuple[list[Any], list[Any]]:
        """``on_load``'s outputs: the ones before the other tabs' and the restored form after them."""
        head = [self.state, self.form.device, self.phone.phone, self.phone.manual_status, self.form.fresh]
        return head, self.form.remembered


def build_run_tab(
    backend: Backend,
    state: gr.State,
    saved: gr.BrowserState,
    *,
    public: bool,
    admission: PublicRuns | None,
    lister: Callable[[], list[str]] | None,
) -> RunTab:
    """Lay out and wire the Run tab; on a public demo (``admission`` set) runs wait in line and each
    visitor sees only their own. ``state`` holds the browser tab's ``TabState``, ``saved`` the remembered
    settings."""
    settings = backend.settings
    registry = backend.runs
    start_lock = threading.Lock()  # the busy check and the start are one step: no second run slips in
    with gr.Tab("Run", id="run"), gr.Row(equal_height=False):
        with gr.Column(scale=4, min_width=300):
            form = build_run_form(settings, public=public)
        with gr.Column(scale=4, min_width=300):
            column = build_phone_column(public=public)
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

    device, phone = form.device, column.phone
    run_outputs = [state, status, progress, timeline, phone, approval_box, approval_md, working]
    run_outputs += [form.run_btn, form.stop_btn, watch_btn]
    form_inputs = form.inputs
    skip_rest = [gr.skip()] * (len(run_outputs) - 2)
    offer_watch = [*skip_rest[:-1], gr.update(visible=True)]
    blank = RunView()  # what the page shows before any run
    cleared = [progress_html(blank), timeline_html(blank), gr.skip(), gr.update(visible=False), "", ""]
    cleared += [gr.update(interactive=True), gr.update(interactive=False), gr.update(visible=False)]
    wire_run_form(form, settings, saved, public=public, lister=lister)
    if form.phone_doctor is not None:
        form.phone_doctor.wire(device, backend.pool)

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
                run_form, rule_names = read_form(settings, values)
                # on a public demo each visitor has their own phone, so their own run slot
                slot = f"{run_form.device}#{session}" if public else run_form.device
                running = registry.active(slot)
                if running is not None and (public or running is tab.run):
                    tab.run = running
                    refusal = BUSY_NOTE
                elif running is not None:  # another tab's run: say so, and offer to watch it
                    refusal, offer = busy_note(running.view.task), True
                else:
                    job = backend.make_job(run_form, rule_names)
                    if admission is not None:  # each visitor: own runs, memory, phone and keys
                        admission.prepare(job, session)
                    absent = missing_keys(job.settings, run_form.api_keys, os.environ)
                    if absent:
                        raise MaeError(
                            f"no API key: enter it under “Per-agent models, API keys and safety”, or set "
                            f"{' and '.join(absent)} on the server"
                        )
                    controller = RunController(backend.run_job, approval_timeout_s=backend.approval_timeout_s)
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
            refusal, offer = f"**Cannot start:** {error_markdown(exc)}", False
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
    form.run_btn.click(on_run, [state, column.overlay, *form_inputs], run_outputs, **run_kw)
    form.task.submit(on_run, [state, column.overlay, *form_inputs], run_outputs, **run_kw)

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

    form.stop_btn.click(on_stop, [state, device], status, queue=False)

    def answer(approved: bool) -> Callable[[TabState | None, str], Any]:
        def handler(tab: TabState | None, device_name: str) -> Any:
            run = tab_run(tab, device_name)
            if run is not None:
                run.controller.answer(approved)
            return gr.update(visible=False)

        return handler

    approve_btn.click(answer(True), [state, device], approval_box, queue=False)
    reject_btn.click(answer(False), [state, device], approval_box, queue=False)

    panel = PhonePanel(backend)
    wire_phone_column(column, panel, state, device, form.fresh, public=public)

    def on_load(remembered_values: Any) -> tuple[tuple[Any, ...], list[Any]]:
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
        tab, image, message = panel.current_screen(tab, chosen)
        if public:  # a page load keeps no picture on the server (mae.ui.visitors)
            tab.picture = None
            visitors.page_loaded()
        restored = [
            gr.update(value=values[name]) if restorable(name, values.get(name), RULE_NAMES) else gr.skip()
            for name in REMEMBERED
        ]
        picker = gr.update(choices=choices, value=chosen)
        return (tab, picker, image, message, gr.update(label=fresh_label(chosen))), restored

    def attach(tab: TabState | None) -> Iterator[tuple[Any, ...]]:
        if tab is not None and tab.run is not None:
            yield from watch(tab)
        else:
            yield (tab, *[gr.skip()] * (len(run_outputs) - 1))

    return RunTab(state=state, form=form, phone=column, outputs=run_outputs, on_load=on_load, attach=attach)
