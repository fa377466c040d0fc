"""One task: the shared step loop (perception, execution, settling, trajectory, events, exits, approval,
stop, device lock) around an agent strategy that decides each action (``mae.agents.strategy``).

Step t: the agent decides (E: Manager -> Operator) -> execute and settle -> Perceptor(s_{t+1}) -> the
agent judges (E: Action Reflector -> Notetaker). W_V of s_{t+1} is reused as the next step's W_V, so
the Perceptor runs once per step. Model mistakes are fed back to the model; provider and phone failures
end the run with their own exit reason, never a traceback.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from PIL import Image

from mae.actions.annotate import annotate
from mae.actions.execution import ExecutionResult, execute
from mae.actions.registry import INITIAL_SHORTCUTS, REPEAT_EXEMPT, ActionCall, Shortcut, resolve_call
from mae.actions.safety import SafetyPolicy
from mae.agents import fast, operator
from mae.agents.base import AgentResult, AgentTurn, Screen
from mae.agents.choose import AgentName, EOptions, make_agent
from mae.agents.operator import OperatorDecision, ShortcutGuard
from mae.agents.strategy import AgentStrategy, Finish, Invalid, RunExit
from mae.config import LoopSettings
from mae.device.base import Device
from mae.device.lock import DeviceLock
from mae.errors import DeviceError, ExitReason, MaeError
from mae.llm.client import ChatClient
from mae.llm.errors import ModelError
from mae.memory.working import ActionRecord, WorkingMemory
from mae.perception.elements import Perception
from mae.run.events import Event, EventListener
from mae.run.results import EXIT_CODES, RunTotals, TaskResult
from mae.run.stats import RunStats
from mae.run.trajectory import ImageFormat, TrajectoryWriter, new_run_dir

__all__ = [
    "EXIT_CODES",
    "Approver",
    "ExitReason",
    "PerceptorLike",
    "RunControls",
    "RunParts",
    "RunRequest",
    "RunTotals",
    "TaskResult",
    "run_task",
]

V = TypeVar("V")

log = logging.getLogger(__name__)

DECLINED = "the user declined this action, so it did not run: find another way or stop"
"""What the agent reads after a refused sensitive action (its error for that step)."""

Approver = Callable[[ActionCall, str, int], bool]
"""``(action in screen pixels, the Operator's description, step) -> approve?`` for sensitive actions."""


class PerceptorLike(Protocol):
    """Anything that turns a screenshot into W_V (``mae.perception.Perceptor``)."""

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception: ...


@dataclass(frozen=True)
class RunParts:
    """Everything a run is built from besides the task and the agent (typed; see ``run_task``)."""

    device: Device
    client: ChatClient
    perceptor: PerceptorLike
    settings: LoopSettings
    listener: EventListener | None = None
    stop_event: threading.Event | None = None
    approver: Approver | None = None
    safety: SafetyPolicy | None = None
    log_dir: Path | str = "runs"
    backbone: str | None = None
    prompts_dir: Path | None = None
    image_format: ImageFormat = "jpg"


class _Runner:
    """The state of one run (the shared skeleton); ``run_task`` is the public entry point."""

    def __init__(self, instruction: str, parts: RunParts, agent: AgentStrategy) -> None:
        self.agent = agent
        self.device = parts.device
        self.client = parts.client
        self.perceptor = parts.perceptor
        self.settings = parts.settings
        self.listener = parts.listener
        self.stop_event = parts.stop_event or threading.Event()
        self.approver = parts.approver
        self.safety = parts.safety or SafetyPolicy()
        self.prompts_dir = parts.prompts_dir
        self.memory = WorkingMemory(instruction=instruction)
        self.run_dir = new_run_dir(parts.log_dir, instruction)
        self.writer = TrajectoryWriter(self.run_dir, parts.image_format)
        self.step = 0
        self.stats = RunStats(self.client)
        self._emit_lock = threading.Lock()
        profile = self.client.profile(operator.ROLE)
        self.backbone = parts.backbone or f"{profile.provider}:{profile.model}"

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

    def stage(self, name: str, work: Callable[[], V]) -> tuple[V, float]:
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
        tree = (
            getattr(self.device, "ui_tree", None) if getattr(self.perceptor, "accepts_tree", False) else None
        )

        def perceive() -> Perception:
            if tree is None:
                return self.perceptor.perceive(image, keyboard)
            return self.perceptor.perceive(image, keyboard, tree=tree)  # type: ignore[call-arg]

        screen, seconds = self.stage("perceive", lambda: Screen(image, perceive()))
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
            raise RunExit(ExitReason.STOPPED, "stopped by the user")

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
            agent=self.agent.name,
        )
        try:
            self.check_stop()
            screen, seconds = self.perceive(self.device.screenshot())
            self.stats.perception_seconds += seconds  # the first screen's, outside every step
            while True:
                if self.step >= settings.max_steps:
                    raise RunExit(ExitReason.MAX_STEPS, f"reached the limit of {settings.max_steps} steps")
                self.check_stop()
                self.step += 1
                screen = self.one_step(screen)
        except RunExit as stop:
            reason, message = stop.reason, stop.message
        except ModelError as exc:
            reason, message = ExitReason.MODEL_ERROR, str(exc)
            self.report_failed_call()
        except DeviceError as exc:
            reason, message = ExitReason.DEVICE_ERROR, str(exc)
        except MaeError as exc:
            reason, message = ExitReason.ERROR, str(exc)
        except KeyboardInterrupt:
            reason, message = ExitReason.STOPPED, "interrupted (Ctrl-C)"
        except BaseException:
            log.exception("the run stopped on an unexpected problem")
            self.finish(ExitReason.ERROR, "the run stopped on an unexpected problem (details in the log)")
            raise
        return self.finish(reason, message)

    def one_step(self, screen: Screen) -> Screen:
        """Run step ``self.step`` from ``screen``; return the screen after it (the next step's s_t)."""
        settings, memory = self.settings, self.memory
        mark = self.stats.mark()

        decision = self.agent.decide(self, screen)
        if isinstance(decision, Finish):
            memory.finished = True
            self.close_step(mark, 0.0, 0.0)
            raise RunExit(ExitReason.FINISHED, decision.message)
        if isinstance(decision, Invalid):
            self.record_invalid(decision)
            self.after_record(mark, 0.0, 0.0)
            return screen

        if decision.action["name"] not in REPEAT_EXEMPT:
            repeats = memory.trailing_repeats(decision.text)
            if repeats >= settings.max_repeated_actions:
                raise RunExit(
                    ExitReason.REPEATED_ACTION,
                    f"{decision.screen_text} would run {repeats + 1} times in a row",
                )
        if not self.approve(decision, screen):
            self.record_declined(decision)
            self.after_record(mark, 0.0, 0.0)
            return screen
        self.check_stop()

        # people read the action in screen pixels, as the phone and this screenshot are
        annotated = annotate(screen.image, decision.steps, f"{self.step}: {decision.screen_text}")
        before_path = self.writer.save_image(f"step_{self.step:03d}_before", annotated)
        self.emit(
            "action",
            image=annotated,
            action=decision.screen_text,
            written=decision.text,
            frame=decision.frame,
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
        record = decision.to_record(self.step, completed=done.completed)
        try:
            return self.after_action(decision, record, done, screen, mark, execution_s)
        except KeyboardInterrupt:  # Ctrl-C after the action ran: it is still a step of the run
            if not any(kept is record for kept in memory.actions):
                record.stopped = True
                record.error = record.error or "interrupted (Ctrl-C) before the step was judged"
                memory.record(record)
                self.close_step(mark, 0.0, execution_s)
            raise

    def after_action(
        self,
        decision: OperatorDecision,
        record: ActionRecord,
        done: ExecutionResult,
        screen: Screen,
        mark: tuple[float, int],
        execution_s: float,
    ) -> Screen:
        """Look at the phone after an executed action, have it judged, and record the step."""
        memory = self.memory
        after, perception_s = self.look("after")
        self.writer.record(  # what ran; its outcome follows in an "outcome" record once it is judged
            "action",
            self.step,
            **record.model_dump(mode="json", exclude={"outcome", "error"}),
            error_detail=done.error,
            screen_action=decision.screen_action,
        )
        if done.stopped:
            record.outcome, record.error = "B", "stopped by the user in the middle of a Shortcut"
            record.stopped = True
            self.record_outcome(record)
            memory.record(record)
            self.close_step(mark, perception_s, execution_s)
            raise RunExit(ExitReason.STOPPED, "stopped by the user")
        if done.completed == 0:
            record.outcome, record.error = "C", f"the phone refused the action: {done.error}"
            self.emit("outcome", outcome="C", progress=memory.progress, error_description=record.error)
        else:
            try:
                changed = self.agent.judge(self, record, screen, after, done.error)
            except RunExit:  # the action ran: it is a step even when judging or noting it failed
                memory.record(record)
                self.close_step(mark, perception_s, execution_s)
                raise
            if changed is not None:
                after = changed
        self.record_outcome(record)
        memory.record(record)
        self.after_record(mark, perception_s, execution_s)
        return after

    def record_outcome(self, record: ActionRecord) -> None:
        """Append the judged outcome of this step's action to ``steps.jsonl``."""
        self.writer.record(
            "outcome", self.step, outcome=record.outcome, error=record.error, stopped=record.stopped
        )

    def look(self, name: str) -> tuple[Screen, float]:
        """Screenshot the phone, save it as this step's ``name`` image, report it, perceive it."""
        image = self.device.screenshot()
        path = self.writer.save_image(f"step_{self.step:03d}_{name}", image)
        self.emit("screen", image=image, image_path=str(path))
        return self.perceive(image)

    def undo(self) -> Screen:
        """Press Back (an agent undoing a wrong page), settle, and return the screen after it."""
        steps = resolve_call(ActionCall(name="Back"), {})
        done, _ = self.stage(
            "undo", lambda: execute(self.device, steps, settle_timeout_s=self.settings.settle_timeout_s)
        )
        self.writer.record("undo", self.step, action="Back()", completed=done.completed, error=done.error)
        screen, seconds = self.look("undone")
        self.stats.perception_seconds += seconds
        return screen

    def screen_unchanged(self, screen: Screen) -> bool:
        """Whether a fresh screenshot still shows ``screen`` (fast mode's speculative Operator)."""
        return fast.same_picture(self.device.screenshot(), screen.image)

    def step_screen(self, index: int, step: Any, image: Image.Image) -> None:
        path = self.writer.save_image(f"step_{self.step:03d}_after_{index}", image)
        self.emit("screen", image=image, image_path=str(path), shortcut_step=index, action=str(step))

    def record_invalid(self, invalid: Invalid) -> None:
        record = ActionRecord(
            step=self.step,
            name="invalid",
            text=invalid.text,
            executed=False,
            outcome="C",
            error=f"invalid action, not executed: {invalid.problem}",
        )
        self.writer.record(
            "action", self.step, **record.model_dump(mode="json", exclude={"outcome", "error"})
        )
        self.record_outcome(record)
        self.emit("outcome", outcome="C", progress=self.memory.progress, error_description=record.error)
        self.memory.record(record)

    def approve(self, decision: OperatorDecision, screen: Screen | None = None) -> bool:
        """Ask the approver when the action is sensitive; False when the person (or the policy) declined."""
        elements = screen.perception.elements if screen is not None else None
        reason = self.safety.check(decision.call, decision.steps, decision.description, elements)
        if reason is None:
            self.safety.commit()
            return True
        shown = str(decision.call)  # in screen pixels, as the person approving sees the phone
        self.emit("approval_needed", action=shown, description=decision.description, reason=reason)
        if self.approver is None:
            self.emit("warning", message=f"sensitive action ({reason}) run without approval: no approver set")
            self.safety.commit()
            return True
        approved = bool(self.approver(decision.call, decision.description, self.step))
        self.check_stop()  # a Stop while the question waited ends the run, whatever the answer
        self.emit("approval", approved=approved, action=shown, reason=reason)
        self.writer.record("approval", self.step, action=shown, reason=reason, approved=approved)
        if approved:
            self.safety.commit()
        return approved

    def record_declined(self, decision: OperatorDecision) -> None:
        """A refused sensitive action: not run, and the agent reads the refusal as the user's answer."""
        record = decision.to_record(self.step, completed=0)
        record.outcome, record.error = "C", DECLINED
        self.writer.record(
            "action", self.step, **record.model_dump(mode="json", exclude={"outcome", "error"})
        )
        self.record_outcome(record)
        self.emit("outcome", outcome="C", progress=self.memory.progress, error_description=record.error)
        self.memory.record(record)
        self.agent.declined(record)

    def after_record(self, mark: tuple[float, int], perception_s: float, execution_s: float) -> None:
        memory, settings = self.memory, self.settings
        failures = memory.consecutive_failures()
        memory.error_flag = failures >= settings.escalate_after_errors
        self.close_step(mark, perception_s, execution_s)
        if failures >= settings.max_consecutive_errors:
            raise RunExit(ExitReason.CONSECUTIVE_ERRORS, f"{failures} failed actions in a row")

    def close_step(self, mark: tuple[float, int], perception_s: float, execution_s: float) -> None:
        timing = self.stats.close_step(self.step, mark, perception_s, execution_s)
        self.writer.record("step", self.step, **timing.model_dump())
        self.writer.write_summary(self.summary("running"))

    def summary(self, status: str, reason: ExitReason | None = None, message: str = "") -> dict[str, Any]:
        summary = self.stats.summary(
            self.memory,
            steps=len(self.memory.actions),
            status=status,
            device=self.device.name,
            backbone=self.backbone,
            reason=reason,
            message=message,
        )
        return {**summary, "agent": self.agent.name}

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


MAX_TASK_CHARS = 4000
"""Longest task accepted (Mobile-Eval-E's longest is under 500 characters)."""


@dataclass(frozen=True)
class RunRequest:
    """One task to run and the long-term memory it runs with (what ``MemorySession.prepare`` gives)."""

    instruction: str
    tips: str = ""
    shortcuts: Mapping[str, Shortcut] | None = None
    shortcut_guard: ShortcutGuard | None = None


@dataclass(frozen=True)
class RunControls:
    """How a caller watches and steers its runs: events, stopping, approval, the safety policy."""

    listener: EventListener | None = None
    stop_event: threading.Event | None = None
    approver: Approver | None = None
    safety: SafetyPolicy | None = None
    backbone: str | None = None


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
    agent: AgentName | None = None,
) -> TaskResult:
    """Carry out ``instruction`` on ``device``; returns why it ended and what happened.

    Holds the device for the whole run (``DeviceBusyError`` when another run has it). ``agent`` (default
    ``settings.agent``) picks Mobile-Agent-E (``e``), Mobile-Agent-v2 (``v2``) or Mobile-Agent v1
    (``v1``). ``tips`` and ``shortcuts`` are E's long-term memory (defaults: no Tips, the initial
    Shortcut; the baselines ignore them). ``approver`` is asked before sensitive actions (``safety``); a
    refusal is fed back to the agent as the user's answer (``DECLINED``) and the run goes on;
    ``shortcut_guard`` may refuse a Shortcut call with a reason the Operator gets as an error.
    ``parallel_notetaker`` (default ``settings.parallel_notetaker``) runs E's Notetaker beside the Action
    Reflector (it then sees the progress before this step's update).
    """
    if not instruction.strip():
        raise MaeError("the task is empty: describe what the phone should do")
    if len(instruction) > MAX_TASK_CHARS:
        raise MaeError(
            f"the task is {len(instruction):,} characters long; describe it in at most {MAX_TASK_CHARS:,} "
            "(it goes into every prompt of every step)"
        )
    loop_settings = settings or LoopSettings.model_validate({})
    parts = RunParts(
        device=device,
        client=client,
        perceptor=perceptor,
        settings=loop_settings,
        listener=listener,
        stop_event=stop_event,
        approver=approver,
        safety=safety,
        log_dir=log_dir,
        backbone=backbone,
        prompts_dir=prompts_dir,
        image_format=image_format,
    )
    chosen = make_agent(
        agent or loop_settings.agent,
        EOptions(
            tips=tips,
            shortcuts=INITIAL_SHORTCUTS if shortcuts is None else shortcuts,
            guard=shortcut_guard,
            parallel_notetaker=(
                loop_settings.parallel_notetaker if parallel_notetaker is None else parallel_notetaker
            ),
        ),
    )
    with DeviceLock(device, owner=f"task {instruction[:40]!r}"):
        return _Runner(instruction, parts, chosen).run()
