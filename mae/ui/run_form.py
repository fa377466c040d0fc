"""The Run tab's form (its left column): task, phone, model, steps, and the accordion of per-agent
models, API keys, call limits and safety rules.

``build_run_form`` lays the components out where the caller's column is; ``read_form`` turns their
values into a ``RunForm``; ``wire_run_form`` wires what only the form itself touches (agent picker,
model check, phone list, backbone placeholders, remembered settings).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from mae.actions.safety import DEFAULT_RULES
from mae.config import Settings
from mae.device import VIRTUAL
from mae.llm.providers import AGENT_ROLES, PRESETS
from mae.ui.agent_picker import agent_picker, wire_agent_picker
from mae.ui.devices import attached, default_device, device_choices
from mae.ui.doctor_panel import DoctorPanel
from mae.ui.forms import (
    CUSTOM,
    CUSTOM_KEY_ENV,
    KEY_ENVS,
    REMEMBERED,
    SAME,
    RunForm,
    backbone_choices,
    call_defaults,
    model_note,
    role_backbone_choices,
    session_keys,
)
from mae.ui.phone_doctor import PhoneDoctorPanel

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
RULE_NAMES = [r.name for r in DEFAULT_RULES]
"""The safety rules the form offers (all ticked by default)."""


def fresh_label(device_name: str | None) -> str:
    """The fresh-start checkbox's label for ``device_name`` (the virtual phone restarts, others go Home)."""
    return FRESH_LABELS[(device_name or VIRTUAL) == VIRTUAL]


@dataclass
class RunFormFields:
    """The form's components (``doctor`` is None on a public demo: checking a model spends calls)."""

    task: gr.Textbox
    run_btn: gr.Button
    stop_btn: gr.Button
    device: gr.Dropdown
    refresh_devices: gr.Button
    fresh: gr.Checkbox
    backbone: gr.Dropdown
    agent: gr.Radio
    base_url: gr.Textbox
    model: gr.Textbox
    doctor: DoctorPanel | None
    phone_doctor: PhoneDoctorPanel | None
    max_steps: gr.Slider
    evolve: gr.Checkbox
    key_boxes: list[gr.Textbox]
    role_backbones: list[gr.Dropdown]
    role_models: list[gr.Textbox]
    call_timeout: gr.Number
    call_retries: gr.Number
    parallel_notetaker: gr.Checkbox
    fast_mode: gr.Checkbox
    rules: gr.CheckboxGroup

    @property
    def inputs(self) -> list[Any]:
        """The components a run reads, in ``read_form``'s order."""
        head = [self.task, self.device, self.backbone, self.base_url, self.model, self.max_steps]
        head += [self.evolve, self.fresh, self.rules, self.agent]
        tail = [self.call_timeout, self.call_retries, self.parallel_notetaker, self.fast_mode]
        return [*head, *self.role_backbones, *self.role_models, *self.key_boxes, *tail]

    @property
    def remembered(self) -> list[Any]:
        """The components the browser remembers, in ``forms.REMEMBERED``'s order (never a key)."""
        head = [self.task, self.backbone, self.base_url, self.model, self.max_steps, self.evolve]
        return [*head, self.fresh, self.rules, *self.role_backbones, *self.role_models]


def build_run_form(settings: Settings, *, public: bool) -> RunFormFields:
    """Lay out the form in the current column (a public demo offers no phone list refresh or check)."""
    task = gr.Textbox(label="Task", lines=2, elem_id="mae-task", placeholder="What should the phone do?")
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
            "⟳", size="sm", elem_id="mae-refresh-devices", scale=0, min_width=40, visible=not public
        )
    phone_doctor = None if public else PhoneDoctorPanel.build(device.value)  # taps the phone: private only
    fresh = gr.Checkbox(value=True, label=fresh_label(settings.device), elem_id="mae-fresh-start")
    backbone = gr.Dropdown(
        backbone_choices(), value=settings.backbone, label="Backbone", elem_id="mae-backbone"
    )
    agent = agent_picker(settings.loop.agent)
    with gr.Row():
        base_url = gr.Textbox(value=settings.base_url or "", label="Base URL", elem_id="mae-base-url")
        model = gr.Textbox(
            value=settings.model or "",
            label="Model",
            elem_id="mae-model",
            info=model_note(settings.backbone) or None,
        )
    doctor = None if public else DoctorPanel.build()  # spends calls: private only
    with gr.Row():
        max_steps = gr.Slider(
            1, 100, value=settings.loop.max_steps, step=1, label="Max steps", elem_id="mae-max-steps"
        )
        evolve = gr.Checkbox(value=settings.evolution.evolve, label="Self-evolution", elem_id="mae-evolve")
    with gr.Accordion("Examples (virtual phone)", open=False):
        gr.Examples(EXAMPLES, inputs=task, label=None)
    with gr.Accordion("Per-agent models, API keys and safety", open=False, elem_id="mae-advanced"):
        gr.Markdown(KEY_NOTE)
        key_boxes = [
            gr.Textbox(label=label, type="password", elem_id=f"mae-key-{slug}")
            for label, slug in [(n, n.lower()) for n in KEY_ENVS] + [("Custom endpoint key", "custom")]
        ]
        role_backbones, role_models = [], []
        for role in AGENT_ROLES:
            with gr.Row(equal_height=True):
                choices = role_backbone_choices()
                role_backbones.append(  # wide enough for "(same as main)" and its arrow
                    gr.Dropdown(choices, value=SAME, label=f"{role} backbone", min_width=200)
                )
                role_models.append(gr.Textbox(label=f"{role} model", placeholder="(default)", min_width=200))
        default_timeout, default_retries = call_defaults(settings)
        with gr.Row(equal_height=True):
            call_timeout = gr.Number(
                value=default_timeout, label="Model call timeout (s)", elem_id="mae-timeout"
            )
            call_retries = gr.Number(
                value=default_retries, label="Retries per call", minimum=0, precision=0, elem_id="mae-retries"
            )
        parallel_notetaker = gr.Checkbox(
            value=settings.loop.parallel_notetaker,
            label="Notetaker beside the Reflector (faster; not the paper's order)",
            info="One model round trip less per step; the Notetaker then sees the "
            "progress of the step before.",
            elem_id="mae-parallel-notetaker",
        )
        fast_mode = gr.Checkbox(
            value=settings.loop.fast,
            label="Fast mode (fewer model rounds per step; not the paper's order)",
            info="Manager only when it has something to decide, notes in the Reflector's "
            "reply, next Operator started early (docs/agents.md).",
            elem_id="mae-fast-mode",
        )
        rules = gr.CheckboxGroup(
            RULE_NAMES, value=RULE_NAMES, label="Ask for approval before", elem_id="mae-safety"
        )
    return RunFormFields(
        task=task,
        run_btn=run_btn,
        stop_btn=stop_btn,
        device=device,
        refresh_devices=refresh_devices,
        fresh=fresh,
        backbone=backbone,
        agent=agent,
        base_url=base_url,
        model=model,
        doctor=doctor,
        phone_doctor=phone_doctor,
        max_steps=max_steps,
        evolve=evolve,
        key_boxes=key_boxes,
        role_backbones=role_backbones,
        role_models=role_models,
        call_timeout=call_timeout,
        call_retries=call_retries,
        parallel_notetaker=parallel_notetaker,
        fast_mode=fast_mode,
        rules=rules,
    )


def read_form(settings: Settings, values: tuple[Any, ...]) -> tuple[RunForm, list[str]]:
    """The run the form's ``values`` (``RunFormFields.inputs``) ask for, and the ticked rule names."""
    *head, parallel, fast = values  # the parallel-Notetaker and fast-mode checkboxes come last
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
        fast=bool(fast),
        role_backbones=dict(zip(AGENT_ROLES, rest[:count], strict=True)),
        role_models=dict(zip(AGENT_ROLES, rest[count : 2 * count], strict=True)),
        api_keys=session_keys(keys),
        agent=agent_name or "e",
        timeout_s=float(timeout_value) if timeout_value else None,
        max_retries=int(retries_value) if retries_value is not None else None,
    )
    return form, list(rule_names or [])


def wire_run_form(
    form: RunFormFields,
    settings: Settings,
    saved: gr.BrowserState,
    *,
    public: bool,
    lister: Callable[[], list[str]] | None,
) -> None:
    """Wire the form's own events; ``saved`` is the browser storage its remembered settings go to."""
    wire_agent_picker(form.agent, form.evolve)
    if form.doctor is not None:
        form.doctor.wire(settings, form.inputs, lambda values: read_form(settings, values)[0])

    def on_refresh_devices(current: str) -> Any:
        serials = attached(lister)
        choices = device_choices(serials)
        values = [value for _, value in choices]
        return gr.update(choices=choices, value=current if current in values else default_device(serials))

    if not public:
        form.refresh_devices.click(on_refresh_devices, form.device, form.device)

    def on_backbone(name: str) -> tuple[Any, Any]:
        preset = PRESETS.get(name)
        if name == CUSTOM or preset is None:
            custom_model = gr.update(placeholder="model name", info="")
            return gr.update(placeholder="http://127.0.0.1:8000/v1"), custom_model
        preset_model = gr.update(placeholder=preset.model, info=model_note(name))
        return gr.update(placeholder=preset.base_url), preset_model

    form.backbone.change(on_backbone, form.backbone, [form.base_url, form.model])

    def remember(device_name: str, *values: Any) -> dict[str, Any]:
        return {"device": device_name, **dict(zip(REMEMBERED, values, strict=True))}

    watched: list[Any] = [form.device, *form.remembered]
    gr.on([c.change for c in watched], remember, watched, saved, show_progress="hidden", queue=False)
