"""Running tasks with long-term memory: one task, or a task list in the evolution or individual setting.

For every task: load the store, leave out withheld Shortcuts, let the Experience Retrievers pick the
relevant Tips and Shortcuts once the memory is large, run the loop with the precondition guard, then
(evolution) run the Experience Reflectors whatever the exit, telling them the remaining tasks'
instructions. ``individual`` runs every task from the initial memory and never writes the store.
Between tasks a configurable step puts the phone back in shape (see ``BetweenTasks``).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mae.actions.registry import Shortcut
from mae.agents.base import AgentTurn, TurnListener
from mae.agents.experience import ExperienceReport, reflect_on_task, withheld_shortcuts
from mae.agents.precondition import PreconditionGuard, make_guard
from mae.agents.retrieval import Retrieved, retrieve
from mae.config import Settings
from mae.device.base import Device
from mae.errors import ConfigError, DeviceError, MaeError
from mae.llm.client import ChatClient
from mae.memory.atomic import atomic_write_text
from mae.memory.longterm import MemoryStore, initial_state, policy_from
from mae.memory.tips import split_tips
from mae.run.loop import PerceptorLike, RunControls, RunRequest, run_task
from mae.run.results import TaskResult

log = logging.getLogger(__name__)

Setting = Literal["evolution", "individual"]
BetweenMode = Literal["reset", "command", "enter", "none"]
Progress = Callable[[str], None]
TaskRunner = Callable[[RunRequest], TaskResult]
"""Runs the loop for one task with the memory it was prepared with."""


class TaskSpec(BaseModel):
    """One task of a Mobile-Eval-E task list (extra fields such as rubrics are kept)."""

    model_config = ConfigDict(extra="allow")

    task_id: str = ""
    instruction: str = Field(min_length=1)
    type: str | None = None
    apps: list[str] = Field(default_factory=list)


def load_tasks(path: Path | str) -> list[TaskSpec]:
    """Tasks from a Mobile-Eval-E file (``{"tasks": [...]}``), a list of task objects, or of strings."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"task list {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the task list {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"task list {path} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except (RecursionError, ValueError):
        raise ConfigError(
            f"task list {path} is nested too deeply or holds numbers too long to read"
        ) from None
    items = data.get("tasks") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise ConfigError(
            f"task list {path} has no tasks: expected the Mobile-Eval-E format "
            '{"tasks": [{"task_id": ..., "instruction": ...}, ...]} or a JSON list of instructions'
        )
    tasks: list[TaskSpec] = []
    for index, item in enumerate(items, 1):
        value = {"instruction": item} if isinstance(item, str) else item
        try:
            task = TaskSpec.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "task"
            raise ConfigError(f"task {index} of {path} is invalid ({where}: {first['msg']})") from None
        tasks.append(task if task.task_id else task.model_copy(update={"task_id": f"task_{index}"}))
    return tasks


class BetweenTasks:
    """What happens between two tasks of a list.

    - ``reset``: the device's own ``reset()`` (the virtual phone goes back to its clean state);
    - ``command``: a shell command on this computer (e.g. an ``adb`` script that restores the phone),
      with ``MAE_DEVICE`` and ``MAE_NEXT_TASK`` in its environment; a failure stops the list;
    - ``enter``: ask the user to prepare the phone and press Enter;
    - ``none``: nothing.
    """

    def __init__(
        self,
        mode: BetweenMode,
        device: Device,
        *,
        command: str | None = None,
        timeout_s: float = 600.0,
        ask: Callable[[str], str] = input,
        progress: Progress | None = None,
    ) -> None:
        if mode == "command" and not command:
            raise ConfigError("--between command needs --reset-command 'the shell command to run'")
        if mode == "reset" and not callable(getattr(device, "reset", None)):
            raise ConfigError(
                f"the device {device.name} cannot reset itself (only the virtual phone can): use "
                "--reset-command 'CMD' or --between enter"
            )
        self.mode = mode
        self.device = device
        self.command = command
        self.timeout_s = timeout_s
        self.ask = ask
        self.progress = progress or (lambda _message: None)

    @classmethod
    def default_mode(cls, device: Device, command: str | None = None) -> BetweenMode:
        """``command`` if given, ``reset`` for a device that can, ``enter`` on a terminal, else ``none``."""
        if command:
            return "command"
        if callable(getattr(device, "reset", None)):
            return "reset"
        return "enter" if sys.stdin.isatty() else "none"

    def __call__(self, next_task: TaskSpec) -> None:
        if self.mode == "reset":
            self.progress("between tasks: resetting the phone")
            self.device.reset()  # type: ignore[attr-defined]
        elif self.mode == "command":
            assert self.command is not None
            self.progress(f"between tasks: running {self.command}")
            env = {**os.environ, "MAE_DEVICE": self.device.name, "MAE_NEXT_TASK": next_task.instruction}
            try:
                done = subprocess.run(
                    self.command, shell=True, env=env, capture_output=True, text=True, timeout=self.timeout_s
                )
            except subprocess.TimeoutExpired:
                raise DeviceError(
                    f"the reset command did not finish within {self.timeout_s:g} s: {self.command}"
                ) from None
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip()[-400:]
                raise DeviceError(
                    f"the reset command failed (exit {done.returncode}): {self.command}\n{tail}"
                )
        elif self.mode == "enter":
            self.ask(
                f"Prepare the phone for the next task ({next_task.instruction[:80]}), then press Enter: "
            )


@dataclass
class Prepared:
    """What one run gets from the memory, and the guard that watches its Shortcut calls."""

    tips: str
    shortcuts: dict[str, Shortcut]
    guard: PreconditionGuard | None
    memory_version: int
    retrieved: Retrieved | None = None
    withheld: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    store_tips: list[str] = field(default_factory=list)
    """Every Tip of the memory the run started from (``tips`` may hold a selection of them)."""

    def request(self, instruction: str) -> RunRequest:
        """The run of ``instruction`` with this memory and guard."""
        return RunRequest(instruction, self.tips, self.shortcuts, self.guard)


class MemorySession:
    """Connects one ``MemoryStore`` to runs: ``prepare`` before a task, ``finish`` after it.

    ``use_store=False`` gives every run the initial memory and writes nothing (the individual
    setting); ``evolve=False`` reads the store but leaves it unchanged.
    """

    def __init__(
        self,
        settings: Settings,
        client: ChatClient,
        *,
        store: MemoryStore | None = None,
        use_store: bool = True,
        evolve: bool = True,
        on_turn: TurnListener | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.settings = settings
        self.client = client
        self.store = store or MemoryStore(settings.memory_dir)
        self.use_store = use_store
        self.evolve = evolve and use_store
        self.policy = policy_from(settings.evolution)
        self.on_turn = on_turn
        self.shown = progress is not None
        """Whether the progress reaches a person (else problems go to the log)."""
        self.progress = progress or (lambda _message: None)

    def prepare(self, instruction: str) -> Prepared:
        """The Tips and Shortcuts for ``instruction`` and a fresh precondition guard."""
        state = self.store.load() if self.use_store else initial_state()
        notes = list(self.store.warnings) if self.use_store else []
        if self.use_store:
            self.store.record_run_start(state.version, instruction)  # the pruning policy keeps it
        shortcuts = state.usable_shortcuts(self.policy)
        withheld = withheld_shortcuts(state, self.policy)
        for name, why in withheld.items():
            notes.append(f"Shortcut {name} withheld: {why}")
        retrieved = retrieve(
            self.client,
            instruction,
            state.tips,
            shortcuts,
            self.settings.evolution,
            on_turn=self.on_turn,
            usage=state.usage,
        )
        if retrieved.tips_selected is not None or retrieved.shortcuts_selected is not None:
            notes.append(f"retrieval: {retrieved.summary()}")
        notes.extend(retrieved.problems)
        guard = make_guard(self.settings.evolution.precondition, self.client, on_turn=self.on_turn)
        for note in notes:
            self.progress(note)
        return Prepared(
            tips=retrieved.tips,
            shortcuts=retrieved.shortcuts,
            guard=guard,
            memory_version=state.version,
            retrieved=retrieved,
            withheld=withheld,
            notes=notes,
            store_tips=split_tips(state.tips),
        )

    def tips_now(self) -> list[str]:
        """The Tips the memory holds now (the initial ones when this session has no store)."""
        return split_tips((self.store.load() if self.use_store else initial_state()).tips)

    def finish(
        self, result: TaskResult, prepared: Prepared, future_tasks: Sequence[str] = ()
    ) -> ExperienceReport | None:
        """Store what the task taught (Shortcut usage and the reflections); None, with the memory left
        unchanged, when this session does not evolve (``--no-evolve``, the individual setting)."""
        if not self.evolve:
            return None
        refused = dict(prepared.guard.refused) if prepared.guard else {}
        self.progress("updating the long-term memory")
        run_dir = Path(result.run_dir) if result.run_dir and Path(result.run_dir).is_dir() else None

        def on_turn(turn: AgentTurn) -> None:
            if run_dir is not None:
                with (run_dir / "experience.jsonl").open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(turn.to_json(), ensure_ascii=False) + "\n")
            if self.on_turn is not None:
                self.on_turn(turn)

        report = reflect_on_task(
            self.store,
            self.client,
            result,
            policy=self.policy,
            future_tasks=list(future_tasks),
            refused=refused,
            on_turn=on_turn,
            progress=self.progress if self.shown else None,
            used_tips=prepared.tips,
            used_shortcuts=list(prepared.shortcuts),
        )
        if prepared.guard is not None:
            report.problems.extend(prepared.guard.problems)
        if run_dir is not None:
            atomic_write_text(run_dir / "experience.json", report.model_dump_json(indent=2) + "\n")
        self.progress(report.summary())
        return report


class TaskOutcome(BaseModel):
    """One task of a list: how it ended and what it did to the memory."""

    task_id: str
    instruction: str
    exit_reason: str | None = None
    finished: bool = False
    steps: int = 0
    seconds: float = 0.0
    run_dir: str | None = None
    memory_version_used: int | None = None
    experience: ExperienceReport | None = None
    error: str | None = None


class ListReport(BaseModel):
    """A task list run (written as JSON into the log directory)."""

    setting: str
    memory_dir: str | None
    started_at: float = Field(default_factory=time.time)
    finished_at: float | None = None
    outcomes: list[TaskOutcome] = Field(default_factory=list)
    not_run: list[str] = Field(default_factory=list)

    @property
    def finished_count(self) -> int:
        return sum(o.finished for o in self.outcomes)


def run_task_list(
    tasks: Sequence[TaskSpec],
    session: MemorySession,
    runner: TaskRunner,
    *,
    setting: Setting,
    between: Callable[[TaskSpec], None] | None = None,
    stop_event: threading.Event | None = None,
    report_path: Path | None = None,
) -> ListReport:
    """Run ``tasks`` in order; the session decides whether memory is shared (evolution) or not.

    A task that raises (the phone is gone, the memory cannot be written) ends the list; the
    remaining tasks are listed in ``not_run``. The report is saved to ``report_path`` after each task.
    """
    if setting == "evolution" and not session.evolve:
        raise ConfigError("the evolution setting needs a memory session that evolves (not --no-evolve)")
    report = ListReport(
        setting=setting, memory_dir=str(session.store.directory) if session.use_store else None
    )
    for index, task in enumerate(tasks):
        remaining = [t.instruction for t in tasks[index + 1 :]]
        outcome = TaskOutcome(task_id=task.task_id, instruction=task.instruction)
        report.outcomes.append(outcome)
        session.progress(f"[{index + 1}/{len(tasks)}] {task.task_id}: {task.instruction}")
        stopped = False
        try:
            prepared = session.prepare(task.instruction)
            outcome.memory_version_used = prepared.memory_version if session.use_store else None
            result = runner(prepared.request(task.instruction))
            outcome.exit_reason = result.exit_reason.value
            outcome.finished = result.finished
            outcome.steps = result.totals.steps
            outcome.seconds = result.totals.seconds
            outcome.run_dir = str(result.run_dir) if result.run_dir else None
            outcome.experience = session.finish(result, prepared, remaining if setting == "evolution" else ())
            stopped = result.exit_reason.value == "stopped" or bool(stop_event and stop_event.is_set())
            if remaining and not stopped and between is not None:
                between(tasks[index + 1])
        except MaeError as exc:
            outcome.error = str(exc)
            log.error("task %s: %s", task.task_id, outcome.error)
            stopped = True
        finally:
            _save(report, report_path)
        if stopped:
            report.not_run = [t.task_id for t in tasks[index + 1 :]]
            break
    report.finished_at = time.time()
    _save(report, report_path)
    return report


def _save(report: ListReport, path: Path | None) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, report.model_dump_json(indent=2) + "\n")


def report_path_for(log_dir: Path, setting: str) -> Path:
    """``<log_dir>/<setting>-<timestamp>.json``."""
    return Path(log_dir) / f"{setting}-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"


def runtime_runner(
    device: Device,
    client: ChatClient,
    perceptor: PerceptorLike,
    settings: Settings,
    controls: RunControls | None = None,
) -> TaskRunner:
    """A ``TaskRunner`` that calls ``run_task`` with these parts, and ``controls`` for every run."""
    controls = controls or RunControls()

    def run(request: RunRequest) -> TaskResult:
        return run_task(
            request.instruction,
            device=device,
            client=client,
            perceptor=perceptor,
            settings=settings.loop,
            tips=request.tips,
            shortcuts=request.shortcuts,
            shortcut_guard=request.shortcut_guard,
            log_dir=settings.log_dir,
            listener=controls.listener,
            stop_event=controls.stop_event,
            approver=controls.approver,
            safety=controls.safety,
            backbone=controls.backbone,
        )

    return run


def initial_memory() -> tuple[str, dict[str, Shortcut]]:
    """The initial Tips and Shortcuts (the individual setting, and runs without a store)."""
    state = initial_state()
    return state.tips, dict(state.shortcuts)


def summary_lines(report: ListReport) -> list[str]:
    """A short summary of a task list run, for the CLI."""
    lines = [f"{report.setting}: {report.finished_count} of {len(report.outcomes)} task(s) finished"]
    for outcome in report.outcomes:
        status = outcome.error or outcome.exit_reason or "?"
        memory = f", memory v{outcome.memory_version_used}" if outcome.memory_version_used is not None else ""
        lines.append(f"  {outcome.task_id}: {status} ({outcome.steps} steps{memory})")
    if report.not_run:
        lines.append(f"  not run: {', '.join(report.not_run)}")
    return lines
