"""Run an evaluation: every selected task (x repeats) on one runtime, one result line per task.

Virtual tasks are graded by code after every step (through the run's event listener), which gives
the SSS curve; Mobile-Eval-E tasks are recorded ungraded for the Judge view. The evolution setting
shares one long-term memory per scenario and repeat (kept in the eval folder) and tells the Experience
Reflectors the scenario's remaining tasks; the individual setting starts every task from the initial
memory. A finished task is never rerun; a task interrupted midway is not recorded and reruns.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from mae.agents.experience import PROVIDER_DOWN_ERRORS, ExperienceReport
from mae.device.base import Device
from mae.errors import ConfigError, ExitReason
from mae.eval.approvals import ApprovalEntry, SensitivePolicy
from mae.eval.code_proxy import ProxyAction, action_correctness, reflection_correctness
from mae.eval.prices import estimate_cost
from mae.eval.records import (
    RESULTS_FILE,
    ActionEntry,
    MemoryUse,
    TaskRecord,
    append_result,
    read_results,
    task_key,
)
from mae.eval.tasks import EvalTask
from mae.memory.atomic import atomic_write_text
from mae.memory.longterm import MemoryStore
from mae.memory.tips import INITIAL_TIPS, split_tips
from mae.run.events import Event
from mae.run.evolution import BetweenTasks, MemorySession, Prepared
from mae.run.loop import Approver, run_task
from mae.run.results import TaskResult
from mae.run.runtime import Runtime

OPTIONS_FILE = "eval.json"
Progress = Callable[[str], None]


class EvalOptions(BaseModel):
    """What an eval folder was started with (``eval.json``); ``--resume`` reuses it."""

    suite: str
    agent: str = "e"
    setting: Literal["individual", "evolution"] = "individual"
    tasks: str | None = None
    repeat: int = Field(1, ge=1)
    seed: int | None = Field(None, description="realism seed of repeat 0 (default: each task's own)")
    realism: Literal["task", "on", "off"] = "task"
    backbone: str = ""
    max_steps: int = 40
    skip_planning_while_loading: bool | None = Field(
        None, description="the loop option (None: a folder from before it was recorded, run with it off)"
    )
    fast: bool | None = Field(None, description="Mobile-Agent-E's fast mode (None: not recorded, off)")
    sensitive: SensitivePolicy | None = Field(
        None, description="who answered sensitive actions (None: a folder from before it was recorded)"
    )
    started_at: float = Field(default_factory=time.time)

    def same_run(self, other: EvalOptions) -> list[str]:
        """The fields that differ from ``other`` in what decides the results (the backbone is compared
        once the settings are known)."""
        fields = ("suite", "agent", "setting", "tasks", "repeat", "seed", "realism", "max_steps")
        differ = [f for f in fields if getattr(self, f) != getattr(other, f)]
        if bool(self.skip_planning_while_loading) != bool(other.skip_planning_while_loading):
            differ.append("skip_planning_while_loading")
        if bool(self.fast) != bool(other.fast):
            differ.append("fast")
        return differ


def read_options(folder: Path) -> EvalOptions | None:
    path = folder / OPTIONS_FILE
    if not path.is_file():
        return None
    try:
        return EvalOptions.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        raise ConfigError(f"{path} is damaged: start a new eval folder") from None


def write_options(folder: Path, options: EvalOptions) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / OPTIONS_FILE, options.model_dump_json(indent=2) + "\n")


def _signature(device: Device) -> str:
    """What the phone shows and holds now (to tell whether an action changed anything)."""
    digest = hashlib.sha1(device.screenshot().tobytes())
    state = getattr(device, "state", None)
    if callable(state):
        digest.update(state().model_dump_json(exclude={"clock_s", "log", "seen", "recents"}).encode())
    return digest.hexdigest()


class StepGrader:
    """An event listener that grades a virtual task after every step and notes whether each action
    changed the phone. ``grades[step]`` = the rubric verdicts after that step (0 = the start)."""

    def __init__(self, task: EvalTask, device: Device) -> None:
        self.task = task
        self.device = device
        self.grades: dict[int, list[bool]] = {}
        self.effects: dict[int, bool] = {}
        self._before: str | None = None
        self.last_step = 0

    def grade(self) -> list[bool]:
        result = self.task.grader.grade(self.device)
        return [bool(ok) for _, ok in result.items]

    def __call__(self, event: Event) -> None:
        if event.type == "run_started":
            self.grades[0] = self.grade()
        elif event.type == "action":
            self._before = _signature(self.device)
        elif event.type == "screen" and "shortcut_step" not in event.data:
            self.grades[event.step] = self.grade()
            self.effects[event.step] = self._before is None or _signature(self.device) != self._before
        elif event.type == "run_finished":
            self.last_step = max([event.step, *self.grades])
            self.grades[self.last_step] = self.grade()


def grade_record(record: TaskRecord, grader: StepGrader, result: TaskResult) -> TaskRecord:
    """Fill the grading of ``record`` from the per-step grades and the code's correctness proxies.

    AA and RA by code are proxies (see ``mae.eval.code_proxy``): an action is wrong when it did not
    change the phone, lost an item the end state lacks, or led away from every missing item for good.
    """
    actions = record.actions
    steps = [a.step for a in actions]

    def verdicts_at(index: int) -> list[bool]:
        limit = steps[index - 1] if index > 0 else 0
        if index == len(actions):
            limit = max(limit, grader.last_step)
        known = [s for s in grader.grades if s <= limit]
        return grader.grades[max(known)] if known else [False] * len(record.rubrics)

    per_index = [verdicts_at(i) for i in range(len(actions) + 1)]
    total = len(record.rubrics) or 1
    curve = [sum(v) / total for v in per_index]
    rubric_steps: list[int | None] = []
    for item in range(len(record.rubrics)):
        rubric_steps.append(next((i for i, v in enumerate(per_index) if v[item]), None))
    proxied = [
        ProxyAction(
            executed=entry.executed,
            effect=entry.effect,
            outcome=entry.outcome,
            self_judged=not entry.executed
            or bool(source.stopped)
            or (source.error or "").startswith("the phone refused"),
        )
        for entry, source in zip(actions, result.actions, strict=True)
    ]
    correct = action_correctness(per_index, proxied)
    action_correct: list[bool | None] = list(correct)
    # Mobile-Agent v1 has no Action Reflector (paper: RA "-")
    reflection_correct = reflection_correctness(correct, proxied, has_reflector=record.agent != "v1")
    return record.model_copy(
        update={
            "grader": "code",
            "curve": curve,
            "final_passed": per_index[-1],
            "rubric_steps": rubric_steps,
            "action_correct": action_correct,
            "reflection_correct": reflection_correct,
            "correctness_source": "code",
        }
    )


def prepare_phone(device: Device, task: EvalTask, repeat: int, seed: int | None) -> int:
    """Put the phone in the task's starting state; returns the realism seed used (0 when none).

    A suite task with ``prepare`` sets its own realism (seeded: ``seed + repeat``, or its own seed +
    ``repeat`` when no seed was given, so repeats meet different obstacles); otherwise the phone resets.
    """
    suite_task = task.grader
    realism = getattr(suite_task, "realism", None)
    used = 0
    if realism is not None and getattr(realism, "enabled", False):
        used = (realism.seed if seed is None else seed) + repeat
        suite_task = suite_task.model_copy(update={"realism": realism.model_copy(update={"seed": used})})
    prepare = getattr(suite_task, "prepare", None)
    if callable(prepare):
        prepare(device)
        return used
    reset = getattr(device, "reset", None)
    if callable(reset):
        reset()
    return used


def memory_folder_name(scenario: str, repeat: int) -> str:
    """The evolution setting's memory folder of one scenario and repeat (inside ``<eval>/memory``)."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in scenario) or "scenario"
    return f"{safe}-r{repeat}"


def outcome_text(record: TaskRecord) -> str:
    """``finished, 7 steps, SS 100%``: how a task run ended, for progress lines."""
    score = f"SS {record.curve[-1] * 100:.0f}%" if record.grader == "code" else "to be judged"
    text = f"{record.exit_reason.value}, {len(record.actions)} steps, {score}"
    memory = record.memory
    if memory is not None:
        used = memory.used(record.actions)
        if used:
            text += "; used " + ", ".join(f"{name} ({count}×)" for name, count in used.items())
        if memory.tips_written or memory.shortcuts_added or memory.shortcuts_revised:
            learnt = [f"{len(memory.tips_written)} Tip(s)"] if memory.tips_written else []
            learnt += [f"Shortcut {name}" for name in memory.shortcuts_added + memory.shortcuts_revised]
            text += "; wrote " + ", ".join(learnt)
    return text


@dataclass
class Episode:
    """One run of one task: what a worker needs to run it."""

    task: EvalTask
    repeat: int
    order: int = 0
    future: list[str] = field(default_factory=list)
    """The scenario's remaining instructions (told to the reflectors in the evolution setting)."""

    @property
    def key(self) -> str:
        return task_key(self.task.task_id, self.repeat)


def results_so_far(folder: Path) -> list[TaskRecord]:
    """The records of an eval folder so far (none when no task has finished yet)."""
    return read_results(folder) if (folder / RESULTS_FILE).exists() else []


def plan_groups(options: EvalOptions, tasks: list[EvalTask]) -> list[tuple[int, str, list[EvalTask]]]:
    """``(repeat, scenario, tasks in order)`` for every scenario of every repeat."""
    groups: dict[str, list[EvalTask]] = {}
    for task in tasks:
        groups.setdefault(task.scenario, []).append(task)
    return [(k, name, group) for k in range(options.repeat) for name, group in groups.items()]


def pending_episodes(folder: Path, options: EvalOptions, tasks: list[EvalTask]) -> list[list[Episode]]:
    """The task runs of ``folder`` still to do, as chains that must run in order on one phone: each task
    run alone in the individual setting, each scenario of each repeat in the evolution setting (they
    share a long-term memory). A serial eval runs the chains in this order."""
    done = {r.key for r in results_so_far(folder)}
    chains: list[list[Episode]] = []
    for repeat, _scenario, group in plan_groups(options, tasks):
        chain = [
            Episode(task=task, repeat=repeat, order=order, future=[t.instruction for t in group[order + 1 :]])
            for order, task in enumerate(group)
            if task_key(task.task_id, repeat) not in done
        ]
        if options.setting == "evolution":
            chains.extend([chain] if chain else [])
        else:
            chains.extend([episode] for episode in chain)
    return chains


class EvalRunner:
    """Runs an eval into ``folder`` with one runtime; ``run()`` returns every record of the folder."""

    def __init__(
        self,
        folder: Path,
        options: EvalOptions,
        tasks: list[EvalTask],
        runtime: Runtime,
        *,
        approver: Approver | None = None,
        progress: Progress | None = None,
        stop_event: threading.Event | None = None,
        listener: Callable[[Event], None] | None = None,
    ) -> None:
        self.folder = folder
        self.options = options
        self.tasks = tasks
        self.runtime = runtime
        self.approver = approver
        self.progress = progress or (lambda _message: None)
        self.stop_event = stop_event or threading.Event()
        self.listener = listener
        self.halted: str | None = None
        """Why the eval stopped by itself (the model provider failed), None otherwise."""
        self.virtual = any(t.source == "virtual" for t in tasks)
        if self.virtual and not callable(getattr(runtime.device, "state", None)):
            raise ConfigError(
                "the virtual suite is graded on the virtual phone: run it with --device virtual"
            )

    def plan(self) -> list[tuple[int, str, list[EvalTask]]]:
        """``(repeat, scenario, tasks in order)`` for every scenario of every repeat."""
        return plan_groups(self.options, self.tasks)

    def episodes(self) -> list[list[Episode]]:
        """The task runs still to do (see ``pending_episodes``)."""
        return pending_episodes(self.folder, self.options, self.tasks)

    def run(self) -> list[TaskRecord]:
        """Run every task run not done yet, one after another on this runtime's phone."""
        chains = self.episodes()
        todo = sum(len(chain) for chain in chains)
        total_all = self.options.repeat * len(self.tasks)
        if todo < total_all:
            self.progress(f"resuming: {total_all - todo} of {total_all} task runs already done")
        started, finished_now = time.monotonic(), 0
        device = self.runtime.device
        for chain in chains:
            session = self.session(self.runtime, chain[0].repeat, chain[0].task.scenario)
            between = BetweenTasks(BetweenTasks.default_mode(device), device)
            for episode in chain:
                if self.stop_event.is_set():
                    return self._results()
                eta = ""
                if finished_now:
                    left = (time.monotonic() - started) / finished_now * (todo - finished_now)
                    eta = f", about {duration_text(left)} left"
                self.progress(
                    f"[{finished_now + 1}/{todo}{eta}] {episode.key}: {episode.task.instruction[:70]}"
                )
                record = self.run_episode(self.runtime, episode, session, between)
                if record is None:  # interrupted: not recorded, so it reruns on resume
                    self.progress(
                        f"{episode.key}: {self.interruption()}; it is not recorded and runs again on resume"
                    )
                    return self._results()
                append_result(self.folder, record)
                finished_now += 1
                self.progress(f"  {episode.key}: {outcome_text(record)}")
        return self._results()

    def interruption(self) -> str:
        """Why a task run ended without a record."""
        return f"the model provider failed ({self.halted})" if self.halted else "it was interrupted"

    def _results(self) -> list[TaskRecord]:
        return results_so_far(self.folder)

    def session(
        self, runtime: Runtime, repeat: int, scenario: str, memory_root: Path | None = None
    ) -> MemorySession:
        """The long-term memory session of one scenario and repeat on ``runtime`` (the evolution setting's
        store lives under ``memory_root``, by default the eval folder's ``memory``)."""
        settings = runtime.settings
        if self.options.setting == "individual":
            return MemorySession(settings, runtime.client, use_store=False, progress=self.progress)
        store = MemoryStore((memory_root or self.folder / "memory") / memory_folder_name(scenario, repeat))
        return MemorySession(settings, runtime.client, store=store, evolve=True)

    def run_episode(
        self,
        runtime: Runtime,
        episode: Episode,
        session: MemorySession,
        between: BetweenTasks,
        *,
        log_dir: Path | None = None,
        listener: Callable[[Event], None] | None = None,
        stop_event: threading.Event | None = None,
    ) -> TaskRecord | None:
        """Run one task on ``runtime``'s phone and grade it; None when it was interrupted or the provider
        failed (``halted`` says which), so that it is not recorded and reruns on resume."""
        options, task, repeat = self.options, episode.task, episode.repeat
        stop_event = stop_event or self.stop_event
        future = episode.future
        seed = 0
        if task.source == "virtual":
            seed = prepare_phone(runtime.device, task, repeat, options.seed)
        else:
            between(_spec(task))
        first_call = len(runtime.client.records)
        grader = StepGrader(task, runtime.device) if task.grader is not None else None
        prepared = session.prepare(task.instruction)
        extra = listener or self.listener

        approvals: list[ApprovalEntry] = []

        def on_event(event: Event) -> None:
            if event.type == "approval":
                approvals.append(ApprovalEntry(step=event.step, **event.data))
            if grader is not None:
                grader(event)
            if extra is not None:
                extra(event)

        result = run_task(
            task.instruction,
            device=runtime.device,
            client=runtime.client,
            perceptor=runtime.perceptor,
            settings=runtime.settings.loop,
            tips=prepared.tips,
            shortcuts=prepared.shortcuts,
            shortcut_guard=prepared.guard,
            listener=on_event,
            stop_event=stop_event,
            approver=self.approver,
            log_dir=log_dir or self.folder / "runs",
            backbone=runtime.backbone,
        )
        if result.exit_reason is ExitReason.STOPPED:
            stop_event.set()
            return None
        failed = [call for call in runtime.client.records[first_call:] if not call.ok]
        if (
            result.exit_reason is ExitReason.MODEL_ERROR
            and failed
            and failed[-1].error in PROVIDER_DOWN_ERRORS
        ):
            self.halted = result.message  # an outage or a refused key says nothing of the agent: stop here
            return None
        experience = session.finish(result, prepared, future if options.setting == "evolution" else ())
        memory = memory_use(prepared, experience, session.tips_now() if experience else [])
        if options.agent != "e":  # the baselines get the paper's four user Tips and no Shortcuts
            memory = memory.model_copy(
                update={"tips_given": split_tips(INITIAL_TIPS), "shortcuts_given": [], "retrieval": ""}
            )
        cost, note = estimate_cost(runtime.client.records[first_call:])
        record = TaskRecord(
            key=task_key(task.task_id, repeat),
            task_id=task.task_id,
            scenario=task.scenario,
            instruction=task.instruction,
            repeat=repeat,
            seed=seed,
            order=episode.order,
            source=task.source,
            agent=options.agent,
            setting=options.setting,
            backbone=runtime.backbone,
            run_dir=str(result.run_dir) if result.run_dir else None,
            exit_reason=result.exit_reason,
            message=result.message,
            finished=result.finished,
            rubrics=task.rubrics,
            actions=[
                ActionEntry(
                    step=a.step,
                    text=a.screen_text or a.text,  # screen pixels, as the annotated screenshots
                    written=a.text if a.screen_text else None,
                    frame=a.frame,
                    shortcut=a.shortcut,
                    executed=a.executed,
                    outcome=a.outcome,
                    effect=grader.effects.get(a.step) if grader is not None else None,
                    operations=a.completed_steps,
                )
                for a in result.actions
            ],
            approvals=approvals,
            totals=result.totals,
            cost_usd=cost,
            cost_note=note,
            memory_version=prepared.memory_version if options.setting == "evolution" else None,
            memory=memory,
            future_tasks=future if options.setting == "evolution" else [],
            reference_operations=task.reference_operations,
            skip_planning_while_loading=runtime.settings.loop.skip_planning_while_loading,
            finished_at=time.time(),
        )
        if grader is not None:
            record = grade_record(record, grader, result)
        else:
            record = record.model_copy(
                update={
                    "curve": [0.0] * (len(record.actions) + 1),
                    "action_correct": [None] * len(record.actions),
                    "reflection_correct": [None] * len(record.actions),
                }
            )
        return record


def memory_use(prepared: Prepared, experience: ExperienceReport | None, tips_now: list[str]) -> MemoryUse:
    """What the memory gave a run and, when it evolved, what the reflection wrote (``tips_now``: the
    store's Tips after it)."""
    retrieved = prepared.retrieved
    selected = retrieved is not None and (
        retrieved.tips_selected is not None or retrieved.shortcuts_selected is not None
    )
    before = set(prepared.store_tips)
    return MemoryUse(
        tips_given=split_tips(prepared.tips),
        tips_in_store=len(prepared.store_tips),
        shortcuts_given=list(prepared.shortcuts),
        shortcuts_in_store=retrieved.shortcuts_total if retrieved else len(prepared.shortcuts),
        shortcuts_withheld=list(prepared.withheld),
        retrieval=retrieved.summary() if retrieved is not None and selected else "",
        tips_written=[tip for tip in tips_now if tip not in before] if experience else [],
        shortcuts_added=list(experience.added) if experience else [],
        shortcuts_revised=list(experience.revised) if experience else [],
        version_written=experience.version if experience else None,
    )


def _spec(task: EvalTask) -> Any:
    from mae.run.evolution import TaskSpec

    return TaskSpec(task_id=task.task_id, instruction=task.instruction)


def duration_text(seconds: float) -> str:
    """``42s``, ``3m05s`` or ``1h02m``."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
