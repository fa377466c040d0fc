"""The Run tab's phone column: the live picture, manual controls (tap, Back, Home, switch app, reset)
and the Perceptor's boxes.

``build_phone_column`` lays it out; ``wire_phone_column`` connects it to ``PhonePanel``'s handlers
(``mae.ui.phone_panel``), to the form's phone picker and to the live picture's timer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from mae.ui import space
from mae.ui.devices import MANUAL_OPS
from mae.ui.phone_panel import MANUAL_HINT, PhonePanel
from mae.ui.phone_view import TabState
from mae.ui.run_form import fresh_label

LIVE_FPS = 1.0
"""How often the phone view looks for a new picture while no action is being shown."""


@dataclass
class PhoneColumn:
    """The column's components."""

    phone: gr.Image
    manual_status: gr.Markdown
    manual_buttons: dict[str, gr.Button]
    reset_btn: gr.Button
    overlay: gr.Checkbox
    live_timer: gr.Timer


def build_phone_column(*, public: bool) -> PhoneColumn:
    """Lay out the phone picture and its controls in the current column (the live picture's timer too:
    a component made outside the tab would sit among the tabs and shift their titles)."""
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
    overlay = gr.Checkbox(  # OCR outside the line of runs: private only
        value=False, label="Show the Perceptor's boxes", elem_id="mae-overlay", visible=not public
    )
    live_timer = gr.Timer(LIVE_FPS)
    return PhoneColumn(phone, manual_status, manual_buttons, reset_btn, overlay, live_timer)


def wire_phone_column(
    column: PhoneColumn,
    panel: PhonePanel,
    state: gr.State,
    device: gr.Dropdown,
    fresh: gr.Checkbox,
    *,
    public: bool,
) -> None:
    """Live picture, boxes, taps and buttons act on the phone ``device`` names, for the tab ``state``;
    picking another phone shows it and relabels ``fresh``."""
    phone, manual_status = column.phone, column.manual_status
    column.live_timer.tick(
        panel.on_tick,
        [state, device],
        phone,
        show_progress="hidden",
        trigger_mode="once",
        concurrency_limit=2,
        concurrency_id="live",
    )
    if not public:  # the boxes run OCR outside the line of runs: not registered for visitors
        column.overlay.change(
            panel.on_overlay, [state, column.overlay, device], phone, show_progress="hidden"
        )

    manual_kw: dict[str, Any] = {
        "concurrency_limit": 1,
        "concurrency_id": "manual",
        "show_progress": "hidden",
    }
    phone.select(panel.on_tap, [state, device], [phone, manual_status], **manual_kw)
    for op, button in column.manual_buttons.items():
        button.click(
            lambda tab, name, op=op: panel.manual(tab, name, op, {}),
            [state, device],
            [phone, manual_status],
            **manual_kw,
        )
    column.reset_btn.click(panel.on_reset, [state, device], [phone, manual_status], **manual_kw)

    def on_device(tab: TabState | None, name: str) -> tuple[Any, ...]:
        tab, image, message = panel.current_screen(tab, name)
        return tab, image, message, gr.update(label=fresh_label(name))

    device.change(on_device, [state, device], [state, phone, manual_status, fresh], **manual_kw)
