"""The Memory tab: Tips and Shortcuts editors, usage table, import/export, versions and rollback.

Layout and events only; the logic is in ``mae.ui.memory_tab``. ``build_memory_tab`` is called inside
``gr.Tabs()`` and returns what the page-load handler fills in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from mae.errors import MaeError
from mae.ui import memory_tab
from mae.ui.runner import Backend
from mae.ui.session import error_markdown, error_message


@dataclass
class MemoryPage:
    """The tab's components that a page load fills (``outputs``) and the function that reads them."""

    outputs: list[Any]
    values: Callable[[], tuple[Any, ...]]


def build_memory_tab(backend: Backend, *, visible: bool = True) -> MemoryPage:
    """Lay out and wire the Memory tab (hidden where visitors must not share one memory)."""
    with gr.Tab("Memory", id="memory", visible=visible) as page:
        mem_header = gr.Markdown(elem_id="mae-memory-header")
        with gr.Row(equal_height=False):
            with gr.Column():
                tips = gr.Textbox(label="Tips (numbered list)", lines=12, elem_id="mae-tips")
                save_tips = gr.Button("Save Tips", elem_id="mae-save-tips")
            with gr.Column():
                shortcuts_json = gr.Code(
                    language="json", label="Shortcuts (JSON)", elem_id="mae-shortcuts", max_lines=16
                )
                save_shortcuts = gr.Button("Validate and save Shortcuts", elem_id="mae-save-shortcuts")
        shortcut_table = gr.Dataframe(
            headers=memory_tab.SHORTCUT_COLUMNS,
            interactive=False,
            wrap=True,
            label="Shortcuts and their usage",
            elem_id="mae-shortcut-table",
            column_widths=["18%", "14%", "8%", "7%", "9%", "8%", "7%", "29%"],
        )
        mem_status = gr.Markdown(elem_id="mae-memory-status")
        with gr.Accordion("Import / export", open=False), gr.Row():
            import_tips = gr.File(label="Tips file (.txt)", file_types=[".txt"], type="filepath")
            import_shortcuts = gr.File(label="Shortcuts file (.json)", file_types=[".json"], type="filepath")
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

    mem_outputs = [mem_header, tips, shortcut_table, shortcuts_json, history_table, version]
    store = backend.memory_store

    def memory_values() -> tuple[Any, ...]:
        try:
            view = memory_tab.load_view(store(), backend.usage_policy())
        except MaeError as exc:
            return (f"✖ {error_markdown(exc)}", *[gr.skip()] * 5)
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
        """Run ``action``; reload the editors only when it changed something (a refusal keeps the
        text being edited)."""

        def handler(*args: Any) -> tuple[Any, ...]:
            message = action(*args)
            if message.startswith("✖"):
                return (message, *[gr.skip()] * len(mem_outputs))
            return (message, *memory_values())

        return handler

    def on_save_shortcuts(text: str) -> tuple[Any, ...]:
        message, saved_ok = memory_tab.save_shortcuts(store(), text)
        if not saved_ok:  # nothing changed: keep the editor's text for fixing
            return (message, *[gr.skip()] * len(mem_outputs))
        return (message, *memory_values())

    edited = [mem_status, *mem_outputs]
    mem_refresh.click(memory_values, None, mem_outputs)
    page.select(memory_values, None, mem_outputs)
    save_tips.click(then_reload(lambda text: memory_tab.save_tips(store(), text)), tips, edited)
    save_shortcuts.click(on_save_shortcuts, shortcuts_json, edited)
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
            gr.Warning(f"Cannot export the memory: {error_message(exc)}")
            return None

    export_btn.click(on_export_memory, None, export_file)

    return MemoryPage(outputs=mem_outputs, values=memory_values)
