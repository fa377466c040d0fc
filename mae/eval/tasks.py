"""The tasks an evaluation runs: the virtual suite (graded by code) or Mobile-Eval-E files (judged)."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mae.errors import ConfigError
from mae.run.evolution import load_tasks


class EvalTask(BaseModel):
    """One task as the evaluation sees it; ``grader`` is the virtual task's code grader, if any."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    task_id: str
    scenario: str
    instruction: str
    rubrics: list[str] = Field(default_factory=list)
    reference_operations: int = 0
    source: Literal["virtual", "mobile-eval-e"]
    grader: Any = Field(default=None, exclude=True, description="a VirtualTask (has .grade(phone))")


def virtual_tasks(variant: str = "", realism: str = "task", seed: int | None = None) -> list[EvalTask]:
    """The virtual suite (``mae.eval.virtual_suite``), graded by code after every step.

    ``variant`` names the task set: ``hard`` (the default: 25 tasks shaped like Mobile-Eval-E's, with
    obstacles), ``basic`` (the first 17 short tasks), ``frontier`` (the self-evolution tier: scenarios
    whose tasks share app behaviours to be learnt) or ``all`` (hard and basic, hard first). ``realism``
    is ``task`` (each task's own obstacles), ``on`` (all of them, seeded) or ``off``.
    """
    from mae.device.virtual.realism import Realism
    from mae.eval.virtual_suite import SuiteName, load_task_suite

    chosen = variant or "hard"
    sets: dict[str, list[SuiteName]] = {
        "hard": ["hard"],
        "basic": ["basic"],
        "frontier": ["frontier"],
        "all": ["hard", "basic"],
    }
    if chosen not in sets:
        raise ConfigError(
            f"no virtual suite {chosen!r}: use virtual (the hard suite), virtual:basic, virtual:frontier "
            "or virtual:all"
        )
    override = None if realism == "task" else Realism(enabled=realism == "on", seed=seed or 0)
    tasks = []
    for task in (t for name in sets[chosen] for t in load_task_suite(suite=name, realism=override)):
        reference = len(task.reference_actions) or len(task.human_reference_operations)
        tasks.append(
            EvalTask(
                task_id=task.task_id,
                scenario=task.scenario or "VIRTUAL",
                instruction=task.instruction,
                rubrics=list(task.rubrics),
                reference_operations=reference,
                source="virtual",
                grader=task,
            )
        )
    return tasks


def mobile_eval_e_tasks(path: Path | str) -> list[EvalTask]:
    """Tasks of a Mobile-Eval-E scenario file, or of every ``*.json`` file in a folder (sorted)."""
    path = Path(path)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise ConfigError(f"{path} holds no task files (*.json in the Mobile-Eval-E format)")
    tasks: list[EvalTask] = []
    for file in files:
        specs = load_tasks(file)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            data = {}
        scenario = str(data.get("scenario") or file.stem) if isinstance(data, dict) else file.stem
        for spec in specs:
            extra = spec.model_extra or {}
            rubrics = extra.get("rubrics") or []
            operations = extra.get("human_reference_operations") or []
            if not isinstance(rubrics, list) or not all(isinstance(r, str) for r in rubrics):
                raise ConfigError(f"task {spec.task_id} in {file}: rubrics must be a list of texts")
            tasks.append(
                EvalTask(
                    task_id=spec.task_id,
                    scenario=scenario,
                    instruction=spec.instruction,
                    rubrics=rubrics,
                    reference_operations=len(operations) if isinstance(operations, list) else 0,
                    source="mobile-eval-e",
                )
            )
    ids = [t.task_id for t in tasks]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"task ids must be unique across the files; repeated: {', '.join(duplicates)}")
    return tasks


def load_eval_tasks(suite: str, realism: str = "task", seed: int | None = None) -> list[EvalTask]:
    """``virtual`` (or ``virtual:<set>``) or a path to Mobile-Eval-E task files."""
    if suite == "virtual" or suite.startswith("virtual:"):
        return virtual_tasks(suite.partition(":")[2], realism, seed)
    if realism != "task":
        raise ConfigError("--realism applies to the virtual suite only")
    if not Path(suite).exists():
        raise ConfigError(
            f"--suite {suite!r} is neither 'virtual' nor an existing file or folder of Mobile-Eval-E tasks"
        )
    return mobile_eval_e_tasks(suite)


def select_tasks(tasks: list[EvalTask], selection: str | None) -> list[EvalTask]:
    """Tasks whose id or scenario matches one of the comma-separated patterns (``*`` wildcards)."""
    if not selection:
        return tasks
    patterns = [p.strip() for p in selection.split(",") if p.strip()]
    chosen = [
        t
        for t in tasks
        if any(fnmatch.fnmatchcase(t.task_id, p) or fnmatch.fnmatchcase(t.scenario, p) for p in patterns)
    ]
    if not chosen:
        known = ", ".join(t.task_id for t in tasks[:8]) + (", ..." if len(tasks) > 8 else "")
        raise ConfigError(f"--tasks {selection!r} matches no task id or scenario; ids are: {known}")
    return chosen
