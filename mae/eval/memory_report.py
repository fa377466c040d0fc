"""The long-term memory per task in eval reports: which Tips and Shortcuts each run was given, which
Shortcuts it called and how often, and what the Experience Reflectors wrote after it (evolution)."""

from __future__ import annotations

from collections.abc import Sequence

from mae.eval.records import MemoryUse, TaskRecord

MEMORY_HEADERS = [
    "Task",
    "scenario",
    "order",
    "SS",
    "steps",
    "Shortcuts used",
    "Tips given",
    "Shortcuts given",
    "written after it",
]
TIP_CHARS = 80
"""Each Tip is shortened to this many characters in the table (the run folder holds the whole text)."""


def short(text: str, limit: int = TIP_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def used_text(memory: MemoryUse, record: TaskRecord) -> str:
    used = memory.used(record.actions)
    return ", ".join(f"{name} ({count}×)" for name, count in used.items()) or "none"


def tips_text(memory: MemoryUse) -> str:
    head = f"{len(memory.tips_given)} of {memory.tips_in_store}"
    if memory.retrieval:
        head += " (retrieved)"
    return head + (": " + " · ".join(f"«{short(t)}»" for t in memory.tips_given) if memory.tips_given else "")


def shortcuts_text(memory: MemoryUse) -> str:
    text = f"{len(memory.shortcuts_given)} of {memory.shortcuts_in_store}"
    if memory.shortcuts_given:
        text += ": " + ", ".join(memory.shortcuts_given)
    if memory.shortcuts_withheld:
        text += "; withheld: " + ", ".join(memory.shortcuts_withheld)
    return text


def written_text(memory: MemoryUse, setting: str) -> str:
    if setting != "evolution":
        return "– (individual: the memory is not written)"
    parts = []
    if memory.tips_written:
        tips = " · ".join(f"«{short(t)}»" for t in memory.tips_written)
        parts.append(f"{len(memory.tips_written)} Tip(s) new or reworded: {tips}")
    if memory.shortcuts_added:
        parts.append("new Shortcut(s): " + ", ".join(memory.shortcuts_added))
    if memory.shortcuts_revised:
        parts.append("revised Shortcut(s): " + ", ".join(memory.shortcuts_revised))
    if memory.version_written is None:
        parts.append("memory unchanged")
    else:
        parts.append(f"memory version {memory.version_written}")
    return "; ".join(parts)


def memory_rows(records: Sequence[TaskRecord]) -> list[list[str]]:
    """One row per run that kept its memory use, in scenario order (records before it was kept: none)."""
    kept = [r for r in records if r.memory is not None]
    kept.sort(key=lambda r: (r.scenario, r.repeat, r.order))
    rows = []
    for record in kept:
        memory = record.memory
        assert memory is not None
        task = record.task_id if not record.repeat else f"{record.task_id} (repeat {record.repeat})"
        score = f"{record.curve[-1]:.2f}" if record.graded and record.curve else "–"
        rows.append(
            [
                task,
                record.scenario,
                str(record.order + 1),
                score,
                str(len(record.actions)),
                used_text(memory, record),
                tips_text(memory),
                shortcuts_text(memory),
                written_text(memory, record.setting),
            ]
        )
    return rows
