"""Shortcut usage tracking: calls, successes and failures from a finished task's action history.

A call counts as a success when the Action Reflector judged it A and every atomic step ran; any other
executed call is a failure (kept with its error for the Shortcuts reflector). Calls the precondition
check refused never ran: they are counted separately (``refused``), from the guard's tally.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mae.memory.models import MemoryState, ShortcutFailure, UsagePolicy
from mae.memory.working import ActionRecord


def shortcut_calls(actions: Sequence[ActionRecord]) -> list[ActionRecord]:
    """The executed actions that called a Shortcut (a call the user stopped half-way says nothing about
    the Shortcut, so it is left out)."""
    return [a for a in actions if a.shortcut and a.executed and not a.stopped]


def call_succeeded(action: ActionRecord) -> bool:
    """Outcome A and no atomic step left undone."""
    complete = not action.atomic_steps or action.completed_steps >= len(action.atomic_steps)
    return action.outcome == "A" and complete


def apply_usage(
    state: MemoryState,
    actions: Sequence[ActionRecord],
    *,
    task: str,
    refused: Mapping[str, int] | None = None,
    policy: UsagePolicy | None = None,
) -> list[str]:
    """Add a task's Shortcut calls to ``state.usage`` in place; return one line per Shortcut touched.

    Calls of Shortcuts no longer in ``state`` are ignored. With ``policy``, a Shortcut that becomes
    flagged or withheld through this task is said so in its line.
    """
    before = {name: state.status(name, policy) for name in state.shortcuts} if policy else {}
    touched: dict[str, list[str]] = {}
    for action in shortcut_calls(actions):
        name = action.shortcut or ""
        if name not in state.shortcuts:
            continue
        usage = state.usage_of(name)
        if call_succeeded(action):
            usage.record(True)
            touched.setdefault(name, []).append("success")
            continue
        error = action.error or (
            f"only {action.completed_steps} of {len(action.atomic_steps)} steps ran"
            if action.outcome == "A"
            else f"outcome {action.outcome}"
        )
        usage.record(
            False,
            ShortcutFailure(task=task, action=action.text, outcome=action.outcome, error=error),
        )
        touched.setdefault(name, []).append("failure")
    for name, count in (refused or {}).items():
        if name in state.shortcuts and count > 0:
            state.usage_of(name).refused += count
            touched.setdefault(name, []).append(f"{count} refused by the precondition check")
    lines = []
    for name, events in touched.items():
        line = f"{name}: " + ", ".join(events)
        if policy is not None:
            after = state.status(name, policy)
            if after != before.get(name) and after in ("flagged", "withheld"):
                line += f" -> {after}"
        lines.append(line)
    return lines


def failure_report(state: MemoryState, names: Sequence[str], policy: UsagePolicy) -> str:
    """Prompt text about Shortcuts that keep failing: status, counts and their recent failures."""
    blocks = []
    for name in names:
        if name not in state.shortcuts:
            continue
        usage = state.usage_of(name)
        status = state.status(name, policy)
        lines = [
            f"- {state.shortcuts[name].signature()} is {status.upper()}: {usage.failures} failure(s) in "
            f"{usage.calls} call(s), the last {usage.failure_streak} in a row."
        ]
        for failure in usage.recent_failures:
            where = f" (task: {failure.task})" if failure.task else ""
            lines.append(f"    * {failure.action} -> {failure.error}{where}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
