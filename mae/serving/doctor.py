"""The coordinate doctor: ask the served model where things are, and say which convention it answers in.

Calibration screens (``mae.serving.calibration``) go to the Operator's model exactly as the agent
would send them (its image policy, its stated screen size): half with a short grounding request in
mae's prompt style (``prompts/doctor_grounding.md``), half through the real Operator prompt with an
empty element list (so the model has to find the target in the picture, not copy its coordinates).
The replies are read (``mae.serving.doctor_replies``) and fitted against every convention and a free
frame (``mae.serving.doctor_fit``); the verdict says whether taps land under the configured convention,
which setting would make them land, or what to check when nothing explains the replies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from mae.agents.base import Screen
from mae.agents.operator import build_prompt
from mae.agents.prompting import render_prompt
from mae.errors import MaeError
from mae.llm.client import ChatClient, Message
from mae.llm.coordinates import CONVENTIONS, describe_tap_example, family_convention
from mae.llm.errors import ModelAuthError, ModelError
from mae.llm.keys import redact_url
from mae.memory.working import WorkingMemory
from mae.perception.elements import Perception
from mae.serving.calibration import CalibrationCase, calibration_cases
from mae.serving.doctor_fit import (
    DEFAULT_THRESHOLD,
    DEFAULT_TRIALS,
    FRACTIONS,
    DoctorReply,
    FreeFit,
    PromptStyle,
    ReadingFit,
    best_fit,
    fit_all,
    fit_free,
    readings,
)
from mae.serving.doctor_replies import read_point

ROLE = "operator"
"""The doctor checks the model the Operator uses: the one whose taps reach the phone."""
MAX_WORKERS = 4
REPLY_CHARS_KEPT = 2000
Verdict = Literal["ok", "switch", "unsupported", "unexplained", "unreadable"]
Progress = Callable[[int, int, str], None]
"""``(requests done, requests in all, what just happened)``."""


class DoctorError(MaeError):
    """The doctor could not run (bad options, or no calibration request got an answer)."""


class DoctorReport(BaseModel):
    """Everything one doctor run measured and concluded."""

    model: str
    base_url: str
    configured: str
    threshold: float
    replies: list[DoctorReply]
    fits: list[ReadingFit]
    free: FreeFit
    detected: str | None
    verdict: Verdict
    headline: str
    setting: str | None
    warnings: list[str]
    advice: list[str]
    by_style: dict[str, str | None]

    def fit(self, name: str) -> ReadingFit:
        return next(fit for fit in self.fits if fit.name == name)

    @property
    def configured_fit(self) -> ReadingFit:
        return self.fit(self.configured)

    @property
    def passed(self) -> bool:
        """Taps under the configured convention land on target at least ``threshold`` of the time."""
        return self.configured_fit.hit_rate >= self.threshold

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    @property
    def shown(self) -> ReadingFit:
        """The reading whose taps the picture shows: the detected one, else the configured one."""
        return self.fit(self.detected) if self.detected else self.configured_fit


def plan_requests(trials: int) -> list[tuple[PromptStyle, CalibrationCase]]:
    """``trials`` requests: the first half with the grounding prompt, the rest through the Operator
    prompt, on the same targets in the same order."""
    cases = calibration_cases()
    if not 2 <= trials <= 2 * len(cases):
        raise DoctorError(f"--trials must be between 2 and {2 * len(cases)} (one request each); got {trials}")
    grounding = math.ceil(trials / 2)
    plan: list[tuple[PromptStyle, CalibrationCase]] = [("grounding", case) for case in cases[:grounding]]
    plan += [("operator", case) for case in cases[: trials - grounding]]
    return plan


def _prompt(
    client: ChatClient, style: PromptStyle, case: CalibrationCase, screen: Screen, prompts_dir: Path | None
) -> str:
    if style == "operator":
        memory = WorkingMemory(instruction=f"Tap {case.description}.")
        return build_prompt(client, memory, screen, "", {}, 5, prompts_dir)
    mapper = screen.mapper(client, ROLE)
    tap_x, tap_y = describe_tap_example(mapper)
    values = {
        "target": case.description,
        "width": mapper.model_size[0],
        "height": mapper.model_size[1],
        "tap_x": tap_x,
        "tap_y": tap_y,
    }
    return render_prompt("doctor_grounding", values, prompts_dir)


def _ask(
    client: ChatClient,
    index: int,
    style: PromptStyle,
    case: CalibrationCase,
    screen: Screen,
    prompts_dir: Path | None,
) -> DoctorReply:
    encoded = screen.encoded(client, ROLE)
    reply = DoctorReply(
        index=index,
        style=style,
        screen=case.screen.name,
        target=case.description,
        box=case.box,
        screen_size=screen.size,
        sent_size=encoded.size,
        stated_size=screen.mapper(client, ROLE).model_size,
    )
    prompt = _prompt(client, style, case, screen, prompts_dir)
    try:
        answer = client.complete(ROLE, [Message("user", prompt, [encoded])])
    except ModelAuthError:
        raise
    except ModelError as exc:
        reply.error = str(exc)
        return reply
    reply.text = answer.text[:REPLY_CHARS_KEPT]
    reply.point = read_point(answer.text)
    return reply


def collect_replies(
    client: ChatClient,
    trials: int = DEFAULT_TRIALS,
    *,
    progress: Progress | None = None,
    prompts_dir: Path | None = None,
    workers: int = MAX_WORKERS,
) -> list[DoctorReply]:
    """Send the calibration requests (a few at a time) and read each reply's point."""
    plan = plan_requests(trials)
    screens: dict[str, Screen] = {}
    for _, case in plan:
        if case.screen.name not in screens:
            image = case.screen.image
            screens[case.screen.name] = Screen(image, Perception(width=image.width, height=image.height))
    replies: list[DoctorReply | None] = [None] * len(plan)
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="mae-doctor")
    try:
        futures = {
            pool.submit(_ask, client, i, style, case, screens[case.screen.name], prompts_dir): i
            for i, (style, case) in enumerate(plan)
        }
        for done, future in enumerate(as_completed(futures), start=1):
            reply = future.result()
            replies[futures[future]] = reply
            if progress is not None:
                outcome = "failed" if reply.error else ("no point" if reply.point is None else "answered")
                progress(done, len(plan), f"{reply.target} ({reply.style} prompt): {outcome}")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    ready = [reply for reply in replies if reply is not None]
    if not any(reply.error is None for reply in ready):
        raise DoctorError(
            f"no calibration request got an answer: {ready[0].error if ready else 'nothing was sent'}. "
            "Check that the server is running (`python -m mae models check`)"
        )
    return ready


def diagnose(
    replies: Sequence[DoctorReply],
    client: ChatClient,
    threshold: float = DEFAULT_THRESHOLD,
    configured_name: str | None = None,
) -> DoctorReport:
    """Fit ``replies`` and decide the verdict, the setting to use and what to check.

    ``configured_name`` names the configured convention where several read points alike (the setting
    said ``gui-owl``, not ``qwen2.5-vl``); by default the first that matches the Operator's profile."""
    if not 0 < threshold <= 1:
        raise DoctorError(f"the threshold is a share of taps between 0 and 1; got {threshold}")
    profile = client.profile(ROLE)
    found, configured = readings(profile.coordinate_space, profile.model_resize)
    if configured_name in CONVENTIONS and configured_name != configured:
        same = CONVENTIONS[configured_name]
        if (same.space, same.model_resize) == (profile.coordinate_space, profile.model_resize):
            configured = configured_name
    fits = fit_all(found, replies)
    family = family_convention(profile.model)
    prefer = [configured, *([family] if family else []), *CONVENTIONS]
    best = best_fit(fits, prefer)
    explained = best if best is not None and best.hit_rate >= threshold else None
    by_style: dict[str, str | None] = {}
    for style in ("grounding", "operator"):
        chosen = [reply for reply in replies if reply.style == style]
        if chosen:
            style_best = best_fit(fit_all(found, chosen), prefer)
            by_style[style] = style_best.name if style_best and style_best.hit_rate >= threshold else None
    report = DoctorReport(
        model=profile.model,
        base_url=redact_url(profile.base_url),
        configured=configured,
        threshold=threshold,
        replies=list(replies),
        fits=fits,
        free=fit_free(found, replies),
        detected=explained.name if explained else None,
        verdict="ok",
        headline="",
        setting=None,
        warnings=[],
        advice=[],
        by_style=by_style,
    )
    _conclude(report, best, family)
    return report


def _share(fit: ReadingFit) -> str:
    error = f", median error {fit.median_error_px:.0f} px" if fit.median_error_px is not None else ""
    return f"{fit.hits}/{fit.total} taps inside their targets{error}"


def _conclude(report: DoctorReport, best: ReadingFit | None, family: str | None) -> None:
    """Fill in the verdict, headline, setting, warnings and advice of ``report``."""
    configured = report.configured_fit
    answered = [r for r in report.replies if r.error is None]
    readable = [r for r in answered if r.point is not None]
    detected = report.fit(report.detected) if report.detected else None
    same_as_configured = detected is not None and report.configured in (detected.name, *detected.same_as)
    if len(readable) < len(answered) / 2:
        report.verdict = "unreadable"
        report.headline = (
            f"Only {len(readable)} of {len(answered)} replies gave a point to tap, so the model's "
            "coordinates cannot be measured."
        )
        report.advice = [
            "Read the replies in the report: a refusal, an empty reply or prose without numbers means the "
            "model is not following the request.",
            "Check the chat template the server uses (a wrong template garbles instructions and drops "
            "images) and that the model is a vision-language model that grounds elements.",
        ]
    elif report.passed:
        report.verdict = "ok"
        report.setting = configured.setting
        report.headline = (
            f"Taps land on target under the configured '{report.configured}' convention: "
            f"{_share(configured)}."
        )
        report.advice = ["Nothing to change."]
    elif detected is not None and detected.name == FRACTIONS:
        report.verdict = "unsupported"
        report.headline = (
            f"The model answers in 0-1 fractions of the image ({_share(detected)} read that way), which no "
            f"mae setting reads; under '{report.configured}' only {configured.hits}/{configured.total} land."
        )
        report.advice = [
            "Use a model that answers in pixels or on a 0-1000 grid (Qwen2.5-VL, Qwen3-VL, UI-TARS-1.5, "
            "GUI-Owl, or a hosted model told the screen size).",
        ]
    elif detected is not None:
        report.verdict = "switch"
        report.setting = detected.setting
        report.headline = (
            f"The model answers in {detected.label}: read that way {_share(detected)}, but under the "
            f"configured '{report.configured}' convention only {configured.hits}/{configured.total}. "
            f"Set {detected.setting}."
        )
        report.advice = [
            f'Set {detected.setting} in the environment (or coordinates = "{detected.name}" in the settings '
            "profile) and run the doctor again: mae then also sends images the way that convention expects.",
        ]
    else:
        report.verdict = "unexplained"
        best_text = (
            f"the best reading, '{best.name}', puts {_share(best)}"
            if best
            else "no reading puts a tap on target"
        )
        report.headline = f"No coordinate convention explains the replies: {best_text}."
        report.advice = _unexplained_advice(report)
    if detected is not None and not same_as_configured and report.verdict == "ok":
        report.warnings.append(
            f"The replies fit '{detected.name}' better than the configured '{report.configured}' "
            f"({_share(detected)}); consider {detected.setting or 'another model'}."
        )
    if detected is not None and family is not None and family not in (detected.name, *detected.same_as):
        report.warnings.append(
            f"The model's name says it is a {family} model, which answers in {CONVENTIONS[family].label}, "
            f"but its replies fit '{detected.name}': check which weights the server loaded and its chat "
            "template."
        )
    grounding, operator = report.by_style.get("grounding"), report.by_style.get("operator")
    if grounding and operator and operator not in (grounding, *report.fit(grounding).same_as):
        report.warnings.append(
            f"With mae's short request the model answers like '{grounding}', but through the Operator prompt "
            f"like '{operator}': the Operator prompt's stated screen size or its examples steer it."
        )
    failed = [r for r in report.replies if r.error]
    if failed:
        report.warnings.append(
            f"{len(failed)} of {len(report.replies)} requests failed (the report says why); they count as "
            "misses."
        )


def _unexplained_advice(report: DoctorReport) -> list[str]:
    free = report.free
    advice = []
    if free.hit_rate >= report.threshold:
        fitted = [group for group in free.groups if group.frame is not None]
        sizes = "; ".join(
            f"images sent at {g.sent_size[0]}x{g.sent_size[1]} are answered as if they were "
            f"{g.frame[0]}x{g.frame[1]}" + (f" shifted by {g.offset}" if g.offset != (0, 0) else "")
            for g in fitted[:3]
            if g.frame is not None
        )
        advice.append(
            f"The taps do follow one scale ({free.hits}/{free.total} on target when fitted freely): {sizes}. "
            "No convention predicts that, so the server resizes images differently from what mae assumes."
        )
        advice.append(
            "Check the server's image pixel limit (vLLM: --mm-processor-kwargs '{\"max_pixels\": ...}' or "
            "--limit-mm-per-prompt, and the model's preprocessor_config.json) and the vLLM version "
            "(Qwen2.5-VL image resizing changed between releases); then run the doctor again."
        )
    else:
        advice.append(
            f"The taps follow no scale at all ({free.hits}/{free.total} on target even when fitted freely): "
            "the model is not finding the targets."
        )
        advice.append(
            "Check that the image reaches the model (the chat template must contain the image placeholder; "
            "vLLM --limit-mm-per-prompt must allow an image), the vLLM version, the maximum image pixels, "
            "and the quantisation; a model too small to ground GUI elements cannot drive a phone."
        )
    return advice


def run_doctor(
    client: ChatClient,
    *,
    trials: int = DEFAULT_TRIALS,
    threshold: float = DEFAULT_THRESHOLD,
    progress: Progress | None = None,
    prompts_dir: Path | None = None,
    configured_name: str | None = None,
) -> DoctorReport:
    """Send the calibration requests to the Operator's model and diagnose its coordinates."""
    if not 0 < threshold <= 1:
        raise DoctorError(f"the threshold is a share of taps between 0 and 1; got {threshold}")
    replies = collect_replies(client, trials, progress=progress, prompts_dir=prompts_dir)
    return diagnose(replies, client, threshold, configured_name)
