"""What the demo shares across sessions and how it runs one task: ``Backend`` and ``run_job``.

``Backend`` holds the server-wide parts: base settings, the device pool, a Perceptor per perception
configuration (models load once), the memory store. ``run_job`` runs one ``RunJob`` in a session's
background thread with the hooks of ``mae.ui.session``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from mae.actions.registry import ActionCall
from mae.actions.safety import DEFAULT_RULES, SafetyPolicy
from mae.config import Settings
from mae.device.base import Device
from mae.errors import ConfigError, DeviceBusyError, DeviceError
from mae.memory.longterm import MemoryStore, UsagePolicy, policy_from
from mae.perception.a11y import TreeSource
from mae.perception.elements import Perception
from mae.public_mode import is_public
from mae.run.events import Event
from mae.run.loop import MAX_TASK_CHARS, PerceptorLike
from mae.run.runtime import build_perceptor, build_runtime
from mae.ui.devices import DevicePool, fresh_start
from mae.ui.forms import RunForm, settings_from_form
from mae.ui.live import RunRegistry, idle_stop_seconds
from mae.ui.session import DEFAULT_APPROVAL_TIMEOUT_S, RunHooks
from mae.ui.views import Perceived

PerceptionListener = Callable[[Perceived], None]


def perceived(image: Image.Image, perception: Perception) -> Perceived:
    """The boxes of ``perception`` together with the picture they were computed for."""
    return Perceived(image=image, boxes=tuple((e.kind, e.box) for e in perception.elements))


class PerceptorTap:
    """Wraps a Perceptor and reports each result with its screenshot (the phone view's box overlay)."""

    def __init__(self, inner: PerceptorLike, listener: PerceptionListener) -> None:
        self.inner = inner
        self.listener = listener

    @property
    def accepts_tree(self) -> bool:
        return bool(getattr(self.inner, "accepts_tree", False))

    def perceive(
        self, image: Image.Image, keyboard_active: bool | None = None, tree: TreeSource | None = None
    ) -> Perception:
        if tree is None:
            perception = self.inner.perceive(image, keyboard_active)
        else:
            perception = self.inner.perceive(image, keyboard_active, tree=tree)  # type: ignore[call-arg]
        with contextlib.suppress(Exception):  # the overlay is cosmetic: never let it break a run
            self.listener(perceived(image, perception))
        return perception


@dataclass
class RunJob:
    """One task to run: the settings chosen in the form, session keys, the device, the safety rules."""

    task: str
    settings: Settings
    device: Device
    api_keys: dict[str, str] = field(default_factory=dict, repr=False)
    safety: SafetyPolicy = field(default_factory=SafetyPolicy)
    on_perception: PerceptionListener | None = None
    fresh_start: bool = True
    """Start from the home screen: the virtual phone with its apps closed, a real phone after Home."""


def safety_policy(rule_names: list[str] | None) -> SafetyPolicy:
    """The default rules whose names are in ``rule_names`` (all of them when None)."""
    if rule_names is None:
        return SafetyPolicy()
    wanted = set(rule_names)
    return SafetyPolicy(rules=[rule.model_copy() for rule in DEFAULT_RULES if rule.name in wanted])


ALLOW_WIFI_ENV = "MAE_ALLOW_WIFI_DEVICES"


class Backend:
    """Server-wide state of the demo."""

    def __init__(
        self,
        settings: Settings,
        *,
        pool: DevicePool | None = None,
        perceptor_factory: Callable[[Settings], PerceptorLike] | None = None,
        approval_timeout_s: float = DEFAULT_APPROVAL_TIMEOUT_S,
        runs: RunRegistry | None = None,
    ) -> None:
        self.settings = settings
        if runs is None:  # a public demo drops ended runs: they hold screens and nobody reloads into them
            runs = RunRegistry(idle_stop_seconds(), keep_finished=not is_public())
        self.runs = runs
        self.pool = pool or DevicePool()
        self.approval_timeout_s = approval_timeout_s
        self._perceptor_factory = perceptor_factory or (
            lambda s: build_perceptor(s.perception.model_copy(update={"captions": "none"}))
        )
        self._perceptors: dict[str, PerceptorLike] = {}
        self._lock = threading.Lock()

    @property
    def log_dir(self) -> Path:
        return Path(self.settings.log_dir)

    def memory_store(self) -> MemoryStore:
        return MemoryStore(self.settings.memory_dir)

    def usage_policy(self) -> UsagePolicy:
        return policy_from(self.settings.evolution)

    def perceptor(self, settings: Settings) -> PerceptorLike:
        """The Perceptor for ``settings.perception`` without captions, built once and shared by every
        run (captions need the run's own model client, so a run with captions builds its own)."""
        key = settings.perception.model_dump_json()
        with self._lock:
            perceptor = self._perceptors.get(key)
            if perceptor is None:
                perceptor = self._perceptor_factory(settings)
                self._perceptors[key] = perceptor
            return perceptor

    def check_device_allowed(self, name: str) -> None:
        """A visitor may not make the server connect to an arbitrary network address: a ``HOST:PORT``
        device must be the configured one, already attached, or allowed by ``MAE_ALLOW_WIFI_DEVICES=1``
        (a public demo's pool opens the virtual phone only: anything else is refused first)."""
        self.pool.check(name)
        if ":" not in name or name == self.settings.device or os.environ.get(ALLOW_WIFI_ENV) == "1":
            return
        from mae.device.adb import attached_serials

        if name not in attached_serials():
            raise DeviceError(
                f"connecting to {name!r} over Wi-Fi from the page is off: run `adb connect {name}` on the "
                f"server, start the demo with --device {name}, or set {ALLOW_WIFI_ENV}=1"
            )

    def make_job(self, form: RunForm, rule_names: list[str] | None = None) -> RunJob:
        """Check the form and turn it into a job; ``ConfigError``/``DeviceError`` say what to fix."""
        task = form.task.strip()
        if not task:
            raise ConfigError("type a task first, e.g. “Open Notes and write a shopping list”")
        if len(task) > MAX_TASK_CHARS:
            raise ConfigError(
                f"the task is {len(task):,} characters long; describe it in at most {MAX_TASK_CHARS:,}"
            )
        self.check_device_allowed(form.device)
        settings = settings_from_form(self.settings, form)
        self.perceptor(settings)  # built once (OCR models load here): a broken install fails now, clearly
        device = self.pool.get(form.device)
        if self.pool.busy(form.device):
            raise DeviceBusyError(
                f"device {form.device!r} is busy: another run is operating it; wait for it to finish, "
                "stop it, or pick another device"
            )
        return RunJob(
            task=task,
            settings=settings,
            device=device,
            api_keys=dict(form.api_keys),
            safety=safety_policy(rule_names),
            fresh_start=form.fresh_start,
        )

    def run_job(self, job: RunJob, hooks: RunHooks) -> Any:
        """Run ``job`` to its end with the long-term memory (``mae.run.evolution``); the ``TaskResult``.

        After the loop's ``run_finished`` the Experience Reflectors run when self-evolution is on; they
        are reported as an ``experience`` stage so the page shows the memory being updated.
        """
        from mae.run.evolution import MemorySession, runtime_runner
        from mae.run.loop import RunControls, RunRequest

        settings = job.settings
        # Icon captions call a model with this run's API keys: such a Perceptor is never shared.
        shared = self.perceptor(settings) if settings.perception.captions == "none" else None
        runtime = build_runtime(settings, job.api_keys, device=job.device, perceptor=shared)
        perceptor = runtime.perceptor
        if job.on_perception is not None:
            perceptor = PerceptorTap(perceptor, job.on_perception)

        if job.fresh_start:
            fresh_start(job.device)

        def approve(call: ActionCall, description: str, step: int) -> bool:
            return hooks.approve({"action": str(call), "description": description, "step": step})

        runner = runtime_runner(
            runtime.device,
            runtime.client,
            perceptor,
            settings,
            RunControls(
                listener=hooks.listener,
                stop_event=hooks.stop_event,
                approver=approve,
                safety=job.safety,
                backbone=runtime.backbone,
            ),
        )
        if settings.loop.agent != "e":  # the baselines neither read nor change the long-term memory
            return runner(RunRequest(job.task))
        memory = MemorySession(settings, runtime.client, evolve=settings.evolution.evolve)
        prepared = memory.prepare(job.task)
        for note in prepared.notes:  # withheld Shortcuts, retrieval, unreadable memory versions
            hooks.listener(Event("warning", data={"message": f"memory: {note}"}))
        result = runner(prepared.request(job.task))
        if not memory.evolve:
            return result
        step = result.totals.steps
        hooks.listener(Event("stage_started", step=step, data={"stage": "experience"}))
        started = time.monotonic()
        calls_before = len(runtime.client.records)
        report = memory.finish(result, prepared)
        records = runtime.client.records[calls_before:]
        data: dict[str, Any] = {
            "stage": "experience",
            "seconds": round(time.monotonic() - started, 3),
            "result": experience_result(report),
            "tokens": {
                "input": sum(r.input_tokens for r in records),
                "output": sum(r.output_tokens for r in records),
            },
        }
        hooks.listener(Event("stage_finished", step=step, data=data))
        return result


def experience_result(report: Any) -> dict[str, Any]:
    """The fields of an ``ExperienceReport`` the timeline shows."""
    if report is None:
        return {}
    rows: dict[str, Any] = {"summary": report.summary()}
    if report.added:
        rows["new_shortcuts"] = ", ".join(report.added)
    if report.revised:
        rows["revised"] = ", ".join(report.revised)
    if report.rejected:
        rows["refused"] = [str(r) for r in report.rejected]
    if report.problems:
        rows["problems"] = list(report.problems)
    return rows
