"""The demo's "Check this model" button: the coordinate doctor (``mae.serving.doctor``) on the backbone the
Run form names, with a progress bar, its verdict and its picture of targets and taps.

Private mode only: the doctor spends the server's model calls and reaches the base URL typed in the
page, so ``mae.ui.run_form`` does not build (or register) it when the demo is public.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from mae.config import Settings
from mae.errors import MaeError
from mae.llm.client import ChatClient
from mae.llm.coordinates import family_convention
from mae.serving.doctor import ROLE, run_doctor
from mae.serving.doctor_fit import DEFAULT_TRIALS
from mae.serving.doctor_report import render_picture, summary_markdown, write_report
from mae.ui.forms import RunForm, settings_from_form
from mae.ui.session import error_markdown

DOCTOR_HINT = (
    f"Sends {DEFAULT_TRIALS} calibration screenshots to the Operator's model and measures where its taps "
    "land (about as much as one or two agent steps cost)."
)


@dataclass
class DoctorPanel:
    """The button and where its result shows."""

    button: gr.Button
    verdict: gr.Markdown
    picture: gr.Image

    @classmethod
    def build(cls) -> DoctorPanel:
        """Create the components where the caller's layout is (under the backbone's fields)."""
        button = gr.Button("Check this model", size="sm", elem_id="mae-doctor")
        verdict = gr.Markdown(DOCTOR_HINT, elem_id="mae-doctor-verdict")
        picture = gr.Image(
            label="Targets and taps",
            show_label=False,
            type="pil",
            interactive=False,
            visible=False,
            elem_id="mae-doctor-picture",
            buttons=["fullscreen"],
        )
        return cls(button, verdict, picture)

    def wire(
        self,
        base: Settings,
        inputs: Sequence[Any],
        read_form: Callable[[tuple[Any, ...]], RunForm],
    ) -> None:
        """Run the doctor on click with the backbone, model, keys and call limits the Run form holds."""

        def check(*values: Any, progress: gr.Progress = gr.Progress()) -> tuple[Any, Any]:
            try:
                form = read_form(values)
                settings = settings_from_form(base, form)
                client = ChatClient(settings.profile_for, api_keys=form.api_keys)
                client.check_key(ROLE)
                progress(0.0, desc="sending calibration screens")

                def step(done: int, total: int, text: str) -> None:
                    progress(done / total, desc=f"{done}/{total}: {text}")

                configured = settings.coordinates or family_convention(client.profile(ROLE).model)
                report = run_doctor(client, progress=step, configured_name=configured)
            except MaeError as exc:
                text = f"**The model could not be checked:** {error_markdown(exc)}"
                return gr.update(value=text), gr.update(visible=False, value=None)
            folder = settings.log_dir / time.strftime("doctor-%Y%m%d-%H%M%S")
            try:
                markdown, picture = write_report(report, folder)
            except OSError as exc:
                saved = f"\n\nThe report could not be saved ({exc.strerror or 'file error'})."
                shown: Any = render_picture(report)
            else:
                saved, shown = f"\n\nFull report: `{markdown}`", str(picture)
            return gr.update(value=summary_markdown(report) + saved), gr.update(visible=True, value=shown)

        self.button.click(check, list(inputs), [self.verdict, self.picture], show_progress="full")
