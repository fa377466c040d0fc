"""The demo's page, composed from one module per tab: Run (``mae.ui.run_tab``, with ``run_form`` and
``phone_column``), Memory (``memory_page``), History (``history_page``) and Evaluate with its Judge view
(``evaluate_tab``). Each tab module lays out and wires its own components; this one adds the header,
the page-load handler that fills every tab, and ``launch``. ``app.py`` parses the command line and
calls these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from mae.device import VIRTUAL
from mae.public_mode import is_public
from mae.ui import guard, space, visitors
from mae.ui.admission import Admission, max_runs
from mae.ui.evaluate_tab import build_evaluate_tab
from mae.ui.history_page import build_history_tab
from mae.ui.launch import MAX_UPLOAD
from mae.ui.memory_page import build_memory_tab
from mae.ui.public_runs import PublicRuns
from mae.ui.run_tab import build_run_tab
from mae.ui.runner import Backend
from mae.ui.style import CSS

SETTINGS_KEY = "mae-demo-settings"
"""Browser storage key of the remembered (non-secret) settings."""


def build_demo(backend: Backend, *, lister: Callable[[], list[str]] | None = None) -> gr.Blocks:
    """The Blocks app around ``backend`` (``lister`` lists attached ADB serials; tests pass their own).

    A public demo (``mae.public_mode``) builds no Memory, History or Evaluate tab and no handler that
    acts on shared state; its phone picker opens only the virtual phone and runs wait in line.
    """
    public = is_public()
    if public:  # nothing a visitor sends may open an ADB phone or list attached ones
        backend.pool.restrict(frozenset({VIRTUAL}))
        lister = list
    admission = PublicRuns(backend, Admission(max_runs())) if public else None
    with gr.Blocks(title="Mobile-Agent-E", **visitors.blocks_options(public)) as demo:
        state = gr.State(None, **visitors.state_options(public))
        saved = gr.BrowserState({}, storage_key=SETTINGS_KEY)
        gr.Markdown(
            "**Mobile-Agent-E** — a self-evolving phone assistant: type a task, pick a phone and a model, "
            "press **Run**. No phone? The built-in virtual phone works offline.",
            elem_id="mae-header",
        )
        if public:
            gr.Markdown(space.banner(backend.settings), elem_id="mae-space-banner")
        with gr.Tabs():
            run = build_run_tab(backend, state, saved, public=public, admission=admission, lister=lister)
            # shared memory, every run's history and evals: not built at all on a public demo (a hidden
            # tab's handlers would still answer over the API)
            memory_page = None if public else build_memory_tab(backend)
            history_page = None if public else build_history_tab(backend)
            if not public:
                form = run.form
                build_evaluate_tab(backend, run_model=(form.backbone, form.base_url, form.model))

        def on_load(remembered_values: Any) -> tuple[Any, ...]:
            head, restored = run.on_load(remembered_values)
            pages: list[Any] = []
            if history_page is not None and memory_page is not None:
                pages = [*history_page.choices(), *memory_page.values()]
            return (*head, *pages, *restored)

        before, after = run.load_outputs
        load_outputs = [
            *before,
            *(history_page.outputs if history_page is not None else []),
            *(memory_page.outputs if memory_page is not None else []),
            *after,
        ]
        run_kw: dict[str, Any] = {"show_progress": "hidden", "concurrency_limit": None}
        demo.load(on_load, saved, load_outputs, show_progress="hidden").then(
            run.attach, state, run.outputs, **run_kw
        )
        if public:
            demo.unload(visitors.drop_session(demo))
    return demo


def launch(demo: gr.Blocks, **kwargs: Any) -> Any:
    """Queue and launch ``demo`` with the demo's CSS and theme (Gradio 6 takes them in ``launch``).

    Gradio's run history is off: it would keep every call's inputs, API key fields included, in the
    browser's storage. Uploads are limited to ``MAX_UPLOAD``.
    """
    demo.queue(default_concurrency_limit=8)
    kwargs.setdefault("max_file_size", MAX_UPLOAD)
    kwargs.setdefault(
        "app_kwargs", guard.app_kwargs(login=kwargs.get("auth") is not None, public=is_public())
    )
    kwargs.update(visitors.launch_options(is_public()))
    return demo.launch(
        css=CSS,
        theme=gr.themes.Soft(),
        run_history=False,
        footer_links=["api", "gradio", "settings"],
        **kwargs,
    )
