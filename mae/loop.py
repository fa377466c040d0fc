"""One task: the Mobile-Agent-E step loop (paper §2.1) with escalation, exits, events and a trajectory.

Step t: Manager (plan, subgoal) -> Operator (action) -> execute and settle -> Perceptor(s_{t+1}) ->
Action Reflector (outcome, progress, error) -> Notetaker (notes). W_V of s_{t+1} is reused as the next
step's W_V, so the Perceptor runs once per step. Model mistakes are fed back to the model; provider
and phone failures end the run with their own exit reason, never a traceback.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from PIL import Image

from mae.actions import INITIAL_SHORTCUTS, REPEAT_EXEMPT, ActionCall, Shortcut
from mae.agents import manager, notetaker, operator, reflector
from mae.agents.base import AgentResult, AgentTurn, Screen
from mae.agents.operator import OperatorDecision, ShortcutGuard
from mae.annotate import annotate
from mae.config import LoopSettings
from mae.device.base import Device
from mae.device.lock import DeviceLock
from mae.errors import DeviceError, MaeError
from mae.events import Event, EventListener
from mae.execution import execute
from mae.llm.client import ChatClient
from mae.llm.errors import ModelError
from mae.memory.working import ActionRecord, WorkingMemory
from mae.perception.elements import Perception
from mae.results import EXIT_CODES, ExitReason, RunTotals, TaskResult
from mae.run_stats import RunStats
from mae.safety import SafetyPolicy
from mae.trajectory import ImageFormat, TrajectoryWriter, new_run_dir

__all__ = ["EXIT_CODES", "Approver", "ExitReason", "PerceptorLike", "RunTotals", "TaskResult", "run_task"]

log = logging.getLogger(__name__)

Approver = Callable[[ActionCall, str, int], bool]
"""``(action in screen pixels, the Operator's description, step) -> approve?`` for sensitive actions."""


class PerceptorLike(Protocol):
    """Anything that turns a screenshot into W_V (``mae.perception.Perceptor``)."""

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception: ...


class _Exit(Exception):
    def __init__(self, reason: ExitReason, message: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class _Runner:
    """The state of one run; ``run_task`` is the public entry point."""

    def __init__(self, instruction: str, **kw: Any) -> None:
        self.device: Device = kw["device"]
        self.client: ChatClient = kw["client"]
        self.perceptor: PerceptorLike = kw["perceptor"]
        self.settings: LoopSettings = kw["settings"] or LoopSettings.model_validate({})
        self.tips: str = kw["tips"]
        self.shortcuts: Mapping[str, Shortcut] = kw["shortcuts"]
        self.listener: Callable[[Event], None] | None = kw["listener"]
        self.stop_event: threading.Event = kw["stop_event"] or threading.Event()
        self.approver: Approver | None = kw["approver"]
        self.guard: ShortcutGuard | None = kw["shortcut_guard"]
        self.safety: SafetyPolicy = kw["safety"] or SafetyPolicy()
        self.prompts_dir: Path | None = kw["prompts_dir"]
        parallel = kw["parallel_notetaker"]
        self.parallel_notes: bool = self.settings.parallel_notetaker if parallel is None else parallel
        self.memory = WorkingMemory(instruction=instruction)
        self.run_dir = new_run_dir(kw["log_dir"], instruction)
        self.writer = TrajectoryWriter(self.run_dir, kw["image_format"])
        self.step = 0
        self.stats = RunStats(self.client)
        self._emit_lock = threading.Lock()
        self.agent_kw: dict[str, Any] = {"on_turn": self.on_turn, "prompts_dir": self.prompts_dir}
        profile = self.client.profile(operator.ROLE)
        self.backbone = kw["backbone"] or f"{profile.provider}:{profile.model}"

    # ------------------------------------------------------------------ plumbing
    def emit(self, type_: str, image: Image.Image | None = None, **data: Any) -> None:
        if self.listener is None:
            return
        with self._emit_lock:
            try:
                self.listener(Event(type_, step=self.step, data=data, image=image))
            except Exception:  # a broken consumer must not break the run or leave the phone locked
                log.exception("event listener failed on %s", type_)

    def on_turn(self, turn: AgentTurn) -> None:
        self.writer.record("agent", self.step, **turn.to_json())
        data = {k: getattr(turn, k) for k in ("model", "input_tokens", "output_tokens", "images")}
        self.emit(
            "model_call",
            role=turn.agent,
            latency_s=round(turn.latency_s, 3),
            ok=True,
            error=turn.problem,
            **data,
        )

    def stage(self, name: str, work: Callable[[], Any]) -> tuple[Any, float]:
        self.emit("stage_started", stage=name)
        started = time.monotonic()
        value = work()
        seconds = time.monotonic() - started
        data: dict[str, Any] = {"stage": name, "seconds": round(seconds, 3), "result": None, "raw": None}
        if isinstance(value, AgentResult):
            data["result"] = value.value.model_dump(mode="json") if value.value is not None else None
            data["raw"] = value.raw
            data["tokens"] = value.tokens
            if value.problem:
                data["problem"] = value.problem
        elif isinstance(value, Screen):
            data["result"] = {"elements": len(value.perception.elements), "timings": value.perception.timings}
        self.emit("stage_finished", **data)
        return value, seconds

    def perceive(self, image: Image.Image) -> tuple[Screen, float]:
        keyboard = self.device.keyboard_active()
        screen, seconds = self.stage(
            "perceive", lambda: Screen(image, self.perceptor.perceive(image, keyboard))
        )
        perception = screen.perception
        details = perception.model_dump(include={"keyboard_active", "timings", "warnings"})
        self.writer.record(
            "perception", self.step, elements=len(perception.elements), seconds=round(seconds, 3), **details
        )
        for warning in perception.warnings:
            self.emit("warning", message=f"perception: {warning}")
        return screen, seconds

    def check_stop(self) -> None:
        if self.stop_event.is_set():
            raise _Exit(ExitReason.STOPPED, "stopped by the user")

    # ------------------------------------------------------------------ the loop
    def run(self) -> TaskResult:
        settings = self.settings
        reason, message = ExitReason.ERROR, ""
        self.emit(
            "run_started",
            task=self.memory.instruction,
            device=self.device.name,
            backbone=self.backbone,
            run_dir=str(self.run_dir),
            max_steps=settings.max_steps,
        )
        try:
            self.check_stop()
            screen, _ = self.perceive(self.device.screenshot())
            while True:
                if self.step >= settings.max_steps:
                    raise _Exit(ExitReason.MAX_STEPS, f"reached the limit of {settings.max_steps} steps")
                self.check_stop()
                self.step += 1
                screen = self.one_step(screen)
        except _Exit as stop:
            reason, message = stop.reason, stop.message
        except ModelError as exc:
            reason, message = ExitReason.MODEL_ERROR, str(exc)
            self.report_failed_call()
        except DeviceError as exc:
            reason, message = ExitReason.DEVICE_ERROR, str(exc)
        except MaeError as exc:
            reason, message = ExitReason.ERROR, f"{type(exc).__name__}: {exc}"
        except KeyboardInterrupt:
            reason, message = ExitReason.STOPPED, "interrupted (Ctrl-C)"
        except BaseException as exc:
            self.finish(ExitReason.ERROR, f"crashed: {type(exc).__name__}: {exc}")
            raise
        return self.finish(reason, message)

    def one_step(self, screen: Screen) -> Screen:
        """Run step ``self.step`` from ``screen``; return the screen after it (the next step's s_t)."""
        settings, memory = self.settings, self.memory
        mark = self.stats.mark()
        perception_s = execution_s = 0.0

        escalate = memory.recent_errors(settings.escalate_after_errors) if memory.error_flag else []
        kw = self.agent_kw
        planned, _ = self.stage(
            "manager",
            lambda: manager.plan(self.client, memory, screen, self.shortcuts, escalate=escalate, **kw),
        )
        if planned.value is None:
            raise _Exit(ExitReason.UNUSABLE_REPLY, f"Manager: {planned.problem}")
        memory.plan, memory.subgoal = planned.value.plan, planned.value.subgoal
        if planned.value.finished:
            memory.finished = True
            self.close_step(mark, 0.0, 0.0)
            raise _Exit(ExitReason.FINISHED, "the Manager judged the task finished")

        acted, _ = self.stage(
            "operator",
            lambda: operator.act(
                self.client,
                memory,
                screen,
                tips=self.tips,
                shortcuts=self.shortcuts,
                history=settings.operator_history,
                guard=self.guard,
                **kw,
            ),
        )
        if acted.value is None:
            if acted.problem_kind != "action":
                raise _Exit(ExitReason.UNUSABLE_REPLY, f"Operator: {acted.problem}")
            self.record_invalid(acted)
            self.after_record(mark, 0.0, 0.0)
            return screen
        decision = acted.value

        if decision.action["name"] not in REPEAT_EXEMPT:
            repeats = memory.trailing_repeats(decision.text)
            if repeats >= settings.max_repeated_actions:
                raise _Exit(
                    ExitReason.REPEATED_ACTION, f"{decision.text} would run {repeats + 1} times in a row"
                )
        self.approve(decision)
        self.check_stop()

        annotated = annotate(screen.image, decision.steps, f"{self.step}: {decision.text}")
        before_path = self.writer.save_image(f"step_{self.step:03d}_before", annotated)
        self.emit(
            "action",
            image=annotated,
            action=decision.text,
            description=decision.description,
            steps=decision.atomic,
            shortcut=decision.shortcut,
            image_path=str(before_path),
        )
        done, execution_s = self.stage(
            "execute",
            lambda: execute(
                self.device,
                decision.steps,
                settle_timeout_s=settings.settle_timeout_s,
                should_stop=self.stop_event.is_set,
                on_step_screen=self.step_screen,
            ),
        )
        after_image = self.device.screenshot()
        after_path = self.writer.save_image(f"step_{self.step:03d}_after", after_image)
        self.emit("screen", image=after_image, image_path=str(after_path))
        after, perception_s = self.perceive(after_image)
        record = decision.to_record(self.step, completed=done.completed)
        self.writer.record(
            "action",
            self.step,
            **record.model_dump(mode="json"),
            error_detail=done.error,
            screen_action=decision.screen_action,
        )
        if done.stopped:
            record.outcome, record.error = "B", "stopped by the user in the middle of a Shortcut"
            record.stopped = True
            memory.record(record)
            self.close_step(mark, perception_s, execution_s)
            raise _Exit(ExitReason.STOPPED, "stopped by the user")
        if done.completed == 0:
            record.outcome, record.error = "C", f"the phone refused the action: {done.error}"
            self.emit("outcome", outcome="C", progress=memory.progress, error_description=record.error)
        else:
            self.reflect_and_note(record, screen, after, done.error)
        memory.record(record)
        self.after_record(mark, perception_s, execution_s)
        return after

    def reflect_and_note(
        self, record: ActionRecord, before: Screen, after: Screen, failure: str | None
    ) -> None:
        memory = self.memory
        action = record.text
        if record.shortcut:
            action += f"\nShortcut {record.shortcut} ran: " + "; ".join(
                record.atomic_steps[: record.completed_steps]
            )
        if failure:
            action += f"\nIt stopped early: {failure}"

        def run_reflector() -> AgentResult[reflector.ReflectorReply]:
            return reflector.reflect(
                self.client,
                memory,
                before,
                after,
                action=action,
                description=record.description,
                **self.agent_kw,
            )

        notes_future = None
        pool: ThreadPoolExecutor | None = None
        if self.parallel_notes:
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mae-notetaker")
            snapshot = memory.model_copy(deep=True)
            notes_future = pool.submit(self.take_notes, snapshot, after)
        try:
            judged, _ = self.stage("reflector", run_reflector)
            if judged.value is None:
                raise _Exit(ExitReason.UNUSABLE_REPLY, f"Action Reflector: {judged.problem}")
            verdict = judged.value
            record.outcome = verdict.outcome
            if failure and record.outcome == "A":
                record.outcome = "B"  # the Shortcut did not run to its end: not what was expected
            if record.outcome == "A":
                memory.progress = verdict.progress
            else:
                record.error = "; ".join(x for x in (verdict.error_description, failure) if x)
            self.emit(
                "outcome", outcome=record.outcome, progress=memory.progress, error_description=record.error
            )
            if notes_future is not None:
                future = notes_future
                notes, _ = self.stage("notetaker", future.result)
            else:
                notes = self.take_notes(memory, after)
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
        if notes.value is None:
            raise _Exit(ExitReason.UNUSABLE_REPLY, f"Notetaker: {notes.problem}")
        memory.notes = notes.value.notes

    def take_notes(self, memory: WorkingMemory, after: Screen) -> AgentResult[notetaker.NotetakerReply]:
        work = lambda: notetaker.take_notes(self.client, memory, after, **self.agent_kw)  # noqa: E731
        if self.parallel_notes:  # events from a worker thread would interleave: report it as one stage
            return work()
        result, _ = self.stage("notetaker", work)
        return result

    def step_screen(self, index: int, step: Any, image: Image.Image) -> None:
        path = self.writer.save_image(f"step_{self.step:03d}_after_{index}", image)
        self.emit("screen", image=image, image_path=str(path), shortcut_step=index, action=str(step))

    def record_invalid(self, acted: AgentResult[OperatorDecision]) -> None:
        raw = acted.raw.strip().splitlines()
        text = next((line for line in raw if line.strip().startswith("{")), "(invalid action)")[:200]
        record = ActionRecord(
            step=self.step,
            name="invalid",
            text=text,
            executed=False,
            outcome="C",
            error=f"invalid action, not executed: {acted.problem}",
        )
        self.writer.record("action", self.step, **record.model_dump(mode="json"))
        self.emit("outcome", outcome="C", progress=self.memory.progress, error_description=record.error)
        self.memory.record(record)

    def approve(self, decision: OperatorDecision) -> None:
        reason = self.safety.check(decision.call, decision.steps, decision.description)
        if reason is None:
            return
        self.emit("approval_needed", action=decision.text, description=decision.description, reason=reason)
        if self.approver is None:
            self.emit("warning", message=f"sensitive action ({reason}) run without approval: no approver set")
            return
        approved = bool(self.approver(decision.call, decision.description, self.step))
        self.emit("approval", approved=approved, action=decision.text)
        self.writer.record("approval", self.step, action=decision.text, reason=reason, approved=approved)
        if not approved:
            raise _Exit(ExitReason.REJECTED, f"the user rejected {decision.text} ({reason})")

    def after_record(self, mark: tuple[float, int], perception_s: float, execution_s: float) -> None:
        memory, settings = self.memory, self.settings
        failures = memory.consecutive_failures()
        memory.error_flag = failures >= settings.escalate_after_errors
        self.close_step(mark, perception_s, execution_s)
        if failures >= settings.max_consecutive_errors:
            raise _Exit(ExitReason.CONSECUTIVE_ERRORS, f"{failures} failed actions in a row")

    def close_step(self, mark: tuple[float, int], perception_s: float, execution_s: float) -> None:
        timing = self.stats.close_step(self.step, mark, perception_s, execution_s)
        self.writer.record("step", self.step, **timing.model_dump())
        self.writer.write_summary(self.summary("running"))

    def summary(self, status: str, reason: ExitReason | None = None, message: str = "") -> dict[str, Any]:
        return self.stats.summary(
            self.memory,
            steps=len(self.memory.actions),
            status=status,
            device=self.device.name,
            backbone=self.backbone,
            reason=reason,
            message=message,
        )

    def report_failed_call(self) -> None:
        records = self.stats.records()
        if records and not records[-1].ok:
            last = records[-1]
            self.emit(
                "model_call",
                role=last.role,
                model=last.model,
                latency_s=round(last.latency_s, 3),
                input_tokens=0,
                output_tokens=0,
                images=last.images,
                ok=False,
                error=last.error,
            )

    # ------------------------------------------------------------------ the end
    def finish(self, reason: ExitReason, message: str) -> TaskResult:
        finished = reason is ExitReason.FINISHED
        problems: list[OSError] = []
        for write in (
            lambda: self.writer.record("exit", self.step, exit_reason=reason.value, message=message),
            lambda: self.writer.write_summary(self.summary("done", reason, message)),
            self.writer.close,
        ):
            try:
                write()
            except OSError as exc:  # a full disk must not lose the result (or the memory update after it)
                problems.append(exc)
        if problems:
            log.error("could not finish the trajectory in %s: %s", self.run_dir, problems[0])
            self.emit("warning", message=f"the trajectory in {self.run_dir} is incomplete: {problems[0]}")
        totals = self.stats.totals(len(self.memory.actions))
        self.emit(
            "run_finished",
            exit_reason=reason.value,
            finished=finished,
            steps=len(self.memory.actions),
            seconds=totals.seconds,
            totals=totals.model_dump(),
            run_dir=str(self.run_dir),
            message=message,
        )
        return TaskResult(
            instruction=self.memory.instruction,
            exit_reason=reason,
            message=message,
            finished=finished,
            memory=self.memory,
            totals=totals,
            steps=self.stats.timings,
            run_dir=self.run_dir,
        )


def run_task(
    instruction: str,
    *,
    device: Device,
    client: ChatClient,
    perceptor: PerceptorLike,
    settings: LoopSettings | None = None,
    tips: str = "",
    shortcuts: Mapping[str, Shortcut] | None = None,
    listener: EventListener | None = None,
    stop_event: threading.Event | None = None,
    approver: Approver | None = None,
    log_dir: Path | str = "runs",
    shortcut_guard: ShortcutGuard | None = None,
    safety: SafetyPolicy | None = None,
    backbone: str | None = None,
    prompts_dir: Path | None = None,
    image_format: ImageFormat = "jpg",
    parallel_notetaker: bool | None = None,
) -> TaskResult:
    """Carry out ``instruction`` on ``device``; returns why it ended and what happened.

    Holds the device for the whole run (``DeviceBusyError`` when another run has it). ``tips`` and
    ``shortcuts`` are the long-term memory (defaults: no Tips, the initial Shortcut). ``approver`` is
    asked before sensitive actions (``safety``); ``shortcut_guard`` may refuse a Shortcut call with a
    reason the Operator gets as an error. ``parallel_notetaker`` (default: ``settings.parallel_notetaker``)
    runs the Notetaker beside the Action Reflector (it then sees the progress before this step's update).
    """
    if not instruction.strip():
        raise MaeError("the task is empty: describe what the phone should do")
    with DeviceLock(device, owner=f"task {instruction[:40]!r}"):
        runner = _Runner(
            instruction,
            device=device,
            client=client,
            perceptor=perceptor,
            settings=settings,
            tips=tips,
            shortcuts=INITIAL_SHORTCUTS if shortcuts is None else shortcuts,
            listener=listener,
            stop_event=stop_event,
            approver=approver,
            log_dir=log_dir,
            shortcut_guard=shortcut_guard,
            safety=safety,
            backbone=backbone,
            prompts_dir=prompts_dir,
            image_format=image_format,
            parallel_notetaker=parallel_notetaker,
        )
        return runner.run()
