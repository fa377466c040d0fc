"""What an evaluation stores per task: one ``TaskRecord`` per line of ``results.jsonl``.

A record keeps the facts of one run of one task (exit, actions with the Action Reflector's verdicts,
timings, tokens, cost) and how it was graded: the rubric items, after which step each one held, and the
Satisfaction Score after every step (the SSS curve). Grading comes from code (the virtual suite), from
a person (the Judge view's marks) or from a model judge; ``grader`` says which, and reports print it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from mae.errors import ConfigError, ExitReason
from mae.eval.approvals import ApprovalEntry
from mae.llm.coordinates import shown_action
from mae.run.results import RunTotals

PAPER_EXITS = frozenset(
    {
        ExitReason.MAX_STEPS,
        ExitReason.CONSECUTIVE_ERRORS,
        ExitReason.REPEATED_ACTION,
        ExitReason.UNUSABLE_REPLY,
    }
)
"""The paper's termination exits 2-5: the agent's own failures to finish."""
Grader = Literal["code", "person", "model", "none"]
GRADER_LABELS: dict[str, str] = {
    "code": "graded by code",
    "person": "judged by a person",
    "model": "MODEL JUDGE (not a person)",
    "none": "not graded yet",
}


class ActionEntry(BaseModel):
    """One Operator action of the run, with the Action Reflector's verdict (A/B/C)."""

    step: int
    text: str = Field(
        description="the action in screen pixels, as the annotated screenshots (records written before "
        "`written` existed hold the model's text)"
    )
    written: str | None = Field(
        default=None, description="the action as the model wrote it, when it wrote another frame's points"
    )
    frame: str = Field(default="", description="that frame in words, e.g. in its 768×1664 image")
    shortcut: str | None = None
    executed: bool = True
    outcome: str = "C"
    effect: bool | None = Field(default=None, description="the phone changed (virtual suite only)")
    operations: int | None = Field(
        default=None, description="atomic operations that ran (a Shortcut runs several); None in old records"
    )

    @property
    def shown(self) -> str:
        """The action for people: screen pixels, then what the model wrote when that differs."""
        return shown_action(self.text, self.written, self.frame)

    @property
    def operations_run(self) -> int:
        """Atomic operations that ran (old records without the count: one per executed action)."""
        return self.operations if self.operations is not None else int(self.executed)


class MemoryUse(BaseModel):
    """The long-term memory of one run: what it was given, what it used, and (in the evolution
    setting) what the Experience Reflectors wrote back after it."""

    tips_given: list[str] = Field(default_factory=list, description="the Tips the run's prompts held")
    tips_in_store: int = 0
    shortcuts_given: list[str] = Field(default_factory=list, description="the Shortcuts it could call")
    shortcuts_in_store: int = 0
    shortcuts_withheld: list[str] = Field(default_factory=list)
    retrieval: str = Field(default="", description="what the Experience Retrievers selected, if they ran")
    tips_written: list[str] = Field(default_factory=list, description="Tips the reflection added or reworded")
    shortcuts_added: list[str] = Field(default_factory=list)
    shortcuts_revised: list[str] = Field(default_factory=list)
    version_written: int | None = None

    def used(self, actions: list[ActionEntry]) -> dict[str, int]:
        """How many times each Shortcut was called, in the order of first use."""
        counts: dict[str, int] = {}
        for action in actions:
            if action.shortcut:
                counts[action.shortcut] = counts.get(action.shortcut, 0) + 1
        return counts


class TaskRecord(BaseModel):
    """One line of ``results.jsonl``: one task, one repeat."""

    key: str = Field(description="<task_id>#r<repeat>: unique within an eval folder")
    task_id: str
    scenario: str = ""
    instruction: str
    repeat: int = 0
    seed: int = 0
    order: int = Field(default=0, description="position of the task within its scenario (evolution)")
    source: Literal["virtual", "mobile-eval-e"] = "virtual"
    agent: str = "e"
    setting: Literal["individual", "evolution"] = "individual"
    backbone: str = ""
    run_dir: str | None = None
    exit_reason: ExitReason
    message: str = ""
    finished: bool = False
    rubrics: list[str] = Field(default_factory=list)
    grader: Grader = "none"
    rubric_steps: list[int | None] = Field(
        default_factory=list, description="per rubric: first step after which it held (0 = at the start)"
    )
    final_passed: list[bool] = Field(default_factory=list, description="per rubric: held at the end")
    curve: list[float] = Field(
        default_factory=list, description="Satisfaction Score after step 0 (start), 1, ..., n"
    )
    actions: list[ActionEntry] = Field(default_factory=list)
    approvals: list[ApprovalEntry] = Field(
        default_factory=list, description="every sensitive action of the run and its answer (--sensitive)"
    )
    action_correct: list[bool | None] = Field(default_factory=list, description="per action (AA)")
    reflection_correct: list[bool | None] = Field(default_factory=list, description="per verdict (RA)")
    correctness_source: Grader = "none"
    totals: RunTotals = Field(default_factory=RunTotals)
    cost_usd: float | None = None
    cost_note: str = ""
    memory_version: int | None = None
    memory: MemoryUse | None = Field(default=None, description="None in records from before it was kept")
    future_tasks: list[str] = Field(default_factory=list, description="given to the reflectors (evolution)")
    reference_operations: int = 0
    skip_planning_while_loading: bool | None = Field(
        None, description="the loop option the run had (None in records from before it was recorded)"
    )
    finished_at: float = 0.0

    @property
    def graded(self) -> bool:
        return self.grader != "none" and bool(self.rubrics)

    @property
    def termination_error(self) -> bool:
        """Ended by one of the paper's exits 2-5 (step limit, consecutive errors, repeated action,
        unusable reply): the agent's own termination error. Harness exits (a stop, a provider or
        phone failure, a crash; a refused sensitive action in old records) are not; reports count
        them apart."""
        return self.exit_reason in PAPER_EXITS

    @property
    def harness_exit(self) -> bool:
        """Ended by the harness, not by the agent: a refusal, a stop, a provider or phone failure."""
        return self.exit_reason is not ExitReason.FINISHED and not self.termination_error


def task_key(task_id: str, repeat: int) -> str:
    return f"{task_id}#r{repeat}"


RESULTS_FILE = "results.jsonl"


def read_results(folder: Path | str) -> list[TaskRecord]:
    """The records of an eval folder; the last line of a key wins (a rerun replaces the older one)."""
    path = Path(folder) / RESULTS_FILE
    if not path.is_file():
        raise ConfigError(f"{folder} is not an eval folder: it has no {RESULTS_FILE}")
    records: dict[str, TaskRecord] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = TaskRecord.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError):
                if not line.endswith("\n"):  # a line cut short by an interruption: that task reruns
                    continue
                raise ConfigError(f"{path} line {number} is not a task result; fix or remove it") from None
            records[record.key] = record
    return list(records.values())


def append_result(folder: Path | str, record: TaskRecord) -> None:
    """Add one record to ``results.jsonl`` (flushed at once: an interruption loses at most this line,
    whose task then reruns)."""
    path = Path(folder) / RESULTS_FILE
    if path.is_file():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):  # a line cut short by an interruption: drop it
            with path.open("r+b") as raw:
                raw.truncate(data.rfind(b"\n") + 1)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(record.model_dump_json() + "\n")
        handle.flush()
