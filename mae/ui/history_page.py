"""The History tab: past runs as a table, a step-by-step replay, and exports (HTML page, zip, GIF).

Layout and events only; the logic is in ``mae.ui.history`` and ``mae.ui.export``.
``build_history_tab`` is called inside ``gr.Tabs()`` and returns what the page-load handler fills in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from mae.ui import history
from mae.ui.export import export_html
from mae.ui.runner import Backend
from mae.ui.session import error_message


@dataclass
class HistoryPage:
    """The run picker and table a page load fills (``outputs``) and the function that lists the runs."""

    outputs: list[Any]
    choices: Callable[[], tuple[Any, Any, str]]


def build_history_tab(backend: Backend, *, visible: bool = True) -> HistoryPage:
    """Lay out and wire the History tab (hidden where visitors must not see each other's runs)."""
    with gr.Tab("History", id="history", visible=visible) as page:
        runs_table = gr.Dataframe(
            headers=history.RUN_COLUMNS,
            interactive=False,
            wrap=True,
            max_height=260,
            elem_id="mae-runs-table",
            column_widths=["14%", "40%", "16%", "8%", "10%", "12%"],
        )
        with gr.Row(equal_height=True):
            runs = gr.Dropdown(label="Past runs", choices=[], elem_id="mae-runs", scale=5)
            runs_refresh = gr.Button("⟳ Refresh the list", size="sm", elem_id="mae-runs-refresh", scale=1)
        run_summary = gr.Markdown(elem_id="mae-run-summary")
        newest = gr.State("")  # the newest run when the list was last shown
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
                replay_step = gr.Slider(1, 2, value=1, step=1, label="Frame", elem_id="mae-replay-step")
            with gr.Column(scale=5):
                replay_card = gr.HTML(elem_id="mae-replay-card")
                with gr.Row():
                    html_btn = gr.Button("Export as one HTML page", elem_id="mae-html", variant="primary")
                    zip_btn = gr.Button("Download as zip", elem_id="mae-zip")
                    gif_btn = gr.Button("Export animated GIF", elem_id="mae-gif")
                download = gr.File(label="Download", interactive=False, elem_id="mae-download")

    def run_choices(selected: str | None = None, seen: str = "") -> tuple[Any, Any, str]:
        """The runs, newest first. The picked run stays picked unless a run was added since the list
        was last shown (``seen`` was the newest then): a run that just finished is shown."""
        infos = history.list_runs(backend.log_dir)
        choices = [(info.label(), str(info.path)) for info in infos]
        values = [value for _, value in choices]
        top = values[0] if values else ""
        value = selected if selected in values and top == seen else (top or None)
        return gr.update(choices=choices, value=value), [info.row() for info in infos], top

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

    exporters: dict[str, Callable[[str], Any]] = {
        "zip": history.export_zip,
        "gif": history.export_gif,
        "html": export_html,
    }

    def exporter(kind: str) -> Callable[[str | None], Any]:
        def export(path: str | None) -> Any:
            if not path:
                gr.Warning("Pick a run first.")
                return None
            try:
                return str(exporters[kind](path))
            except (OSError, ValueError) as exc:
                gr.Warning(error_message(exc))
                return None

        return export

    runs_refresh.click(run_choices, [runs, newest], [runs, runs_table, newest])
    page.select(run_choices, [runs, newest], [runs, runs_table, newest])
    runs.change(on_pick_run, runs, [run_summary, replay_image, replay_step, replay_card])
    replay_step.change(on_frame, [runs, replay_step], [replay_image, replay_card], show_progress="hidden")
    html_btn.click(exporter("html"), runs, download)
    zip_btn.click(exporter("zip"), runs, download)
    gif_btn.click(exporter("gif"), runs, download)

    return HistoryPage(outputs=[runs, runs_table, newest], choices=run_choices)
