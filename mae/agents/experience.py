"""The two Experience Reflectors (paper §2.2): after every task, update the Tips and propose Shortcuts.

``reflect_on_task`` runs both reflectors on a finished task (whatever its exit), with the remaining
tasks' instructions when a task list is known, and stores the outcome in one new memory version:
the task's Shortcut usage, the updated Tips, and every proposed Shortcut that passes validation.
Refused proposals are recorded with their reason; a reflector that fails (model error, reply still
unusable after the corrective retry) is recorded too, and the memory it would have changed is kept.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from mae.actions.registry import describe_atomic_actions
from mae.agents.base import AgentResult, TurnListener, ask
from mae.agents.experience_replies import (
    MAX_TIPS,
    ShortcutsReply,
    TipsReply,
    parse_shortcuts_reply,
    parse_tips_reply,
)
from mae.agents.prompting import render_prompt
from mae.errors import ExitReason
from mae.llm.client import ChatClient
from mae.llm.coordinates import swipe_example_in_frame
from mae.llm.errors import ModelError
from mae.memory.edits import Change
from mae.memory.limits import MAX_STORE_SHORTCUTS, MAX_STORE_TIPS, MAX_TIP_CHARS, trim_shortcut_text
from mae.memory.longterm import MemoryState, MemoryStore, UsagePolicy
from mae.memory.shortcuts import (
    Rejection,
    check_shortcut,
    same_definition,
    shortcut_to_json,
)
from mae.memory.slices import failing_shortcuts, merge_tips, shortcuts_slice, tips_slice
from mae.memory.tips import split_tips
from mae.memory.usage import apply_usage, failure_report
from mae.memory.working import WorkingMemory
from mae.wording import counted

ROLE = "experience"
AUTHOR = "experience reflector"
SOURCE = "Shortcuts reflector"

log = logging.getLogger(__name__)


class EndedTask(Protocol):
    """What the reflectors need of a finished run (the run layer's ``TaskResult`` has it)."""

    @property
    def instruction(self) -> str: ...
    @property
    def exit_reason(self) -> ExitReason: ...
    @property
    def finished(self) -> bool: ...
    @property
    def message(self) -> str: ...
    @property
    def memory(self) -> WorkingMemory: ...


class TaskExperience(BaseModel):
    """What the reflectors learn from: the task, how it ended, and its final working memory."""

    instruction: str
    exit_reason: str
    finished: bool
    message: str = ""
    memory: WorkingMemory

    @classmethod
    def from_result(cls, result: EndedTask) -> TaskExperience:
        return cls(
            instruction=result.instruction,
            exit_reason=result.exit_reason.value,
            finished=result.finished,
            message=result.message,
            memory=result.memory,
        )

    def outcome_text(self) -> str:
        if self.finished:
            return "The task was completed (the Manager judged everything the user asked for done)."
        detail = f": {self.message}" if self.message else ""
        return f"The task did NOT complete. It ended early because of {self.exit_reason}{detail}."

    def history_text(self) -> str:
        lines = []
        for action in self.memory.actions:
            line = f"- Step {action.step}: {action.summary()}"
            if action.shortcut and action.prompt_steps:
                line += f" | Shortcut steps: {'; '.join(action.prompt_steps)}"
            lines.append(line)
        return "\n".join(lines) or "(no actions were taken)"

    def errors_text(self) -> str:
        return "\n".join(f"- {e.summary()}" for e in self.memory.errors) or "(no errors)"


class ExperienceReport(BaseModel):
    """What one reflection did to the memory."""

    task: str
    version: int | None = Field(default=None, description="the memory version written, None if unchanged")
    tips_updated: bool = False
    tips_before: int = 0
    tips_after: int = 0
    added: list[str] = Field(default_factory=list)
    revised: list[str] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)
    usage: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list, description="reflector failures and skipped updates")

    def summary(self) -> str:
        """One line for the CLI."""
        parts = [f"memory version {self.version}" if self.version is not None else "memory unchanged"]
        if self.tips_updated:
            parts.append(f"Tips {self.tips_before} -> {self.tips_after}")
        if self.added:
            parts.append("new Shortcuts: " + ", ".join(self.added))
        if self.revised:
            parts.append("revised: " + ", ".join(self.revised))
        if self.rejected:
            count = len(self.rejected)
            parts.append(f"{counted(count, 'Shortcut proposal')} refused")
        if self.problems:
            parts.append(counted(len(self.problems), "problem"))
        return "; ".join(parts)


def future_tasks_text(future_tasks: Sequence[str] | None) -> str:
    if not future_tasks:
        return "(none known)"
    return "\n".join(f"- {task}" for task in future_tasks)


def describe_known_shortcuts(state: MemoryState, names: Sequence[str] | None = None) -> str:
    """Existing Shortcuts (all, or ``names``) as JSON lines with their usage, for the Shortcuts reflector;
    a last line says how many more the memory holds."""
    lines = []
    shown = list(state.shortcuts) if names is None else [n for n in names if n in state.shortcuts]
    for name in shown:
        shortcut = state.shortcuts[name]
        usage = state.usage.get(name)
        counts = (
            f"used {usage.calls} time(s): {usage.successes} succeeded, {usage.failures} failed"
            if usage and usage.calls
            else "not used yet"
        )
        lines.append(f"- {json.dumps(shortcut_to_json(shortcut), ensure_ascii=False)}\n  ({counts})")
    hidden = len(state.shortcuts) - len(shown)
    if hidden > 0:
        lines.append(
            f"({hidden:,} more Shortcuts, less related to this task, are in the memory and stay as they are; "
            "give a new Shortcut a specific name)"
        )
    return "\n".join(lines) or "(none)"


def reflect_tips(
    client: ChatClient,
    experience: TaskExperience,
    tips: str,
    *,
    future_tasks: Sequence[str] | None = None,
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
) -> AgentResult[TipsReply]:
    """Ask the Tips reflector for the updated Tips (one corrective retry on an unusable reply)."""
    memory = experience.memory
    prompt = render_prompt(
        "experience_tips",
        {
            "instruction": experience.instruction,
            "outcome": experience.outcome_text(),
            "plan": memory.plan or "(no plan)",
            "progress": memory.progress or "(none)",
            "notes": memory.notes or "(none)",
            "history": experience.history_text(),
            "errors": experience.errors_text(),
            "future_tasks": future_tasks_text(future_tasks),
            "tips": tips.strip() or "(none yet)",
            "max_tip_chars": MAX_TIP_CHARS,
            "max_tips": MAX_TIPS,
        },
        prompts_dir,
    )
    count = len(split_tips(tips))
    return ask(
        client,
        ROLE,
        prompt,
        [],
        lambda text: parse_tips_reply(text, count),
        agent="tips_reflector",
        on_turn=on_turn,
    )


def reflect_shortcuts(
    client: ChatClient,
    experience: TaskExperience,
    state: MemoryState,
    policy: UsagePolicy,
    *,
    future_tasks: Sequence[str] | None = None,
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
    used: Sequence[str] = (),
) -> AgentResult[ShortcutsReply]:
    """Ask the Shortcuts reflector for new and revised Shortcuts, showing it the failing ones and (in a
    large memory) the slice of Shortcuts related to the task, first those it ``used``."""
    memory = experience.memory
    flagged = failure_report(state, failing_shortcuts(state, policy), policy)
    query = "\n".join([experience.instruction, *(future_tasks or [])])
    called = [a.shortcut for a in memory.actions if a.shortcut]
    shown = shortcuts_slice(state, query, [*called, *used], policy)
    prompt = render_prompt(
        "experience_shortcuts",
        {
            "instruction": experience.instruction,
            "outcome": experience.outcome_text(),
            "plan": memory.plan or "(no plan)",
            "progress": memory.progress or "(none)",
            "history": experience.history_text(),
            "errors": experience.errors_text(),
            "future_tasks": future_tasks_text(future_tasks),
            "atomic_actions": describe_atomic_actions(
                next((ex for a in memory.actions if (ex := swipe_example_in_frame(a.frame))), None)
            ),
            "shortcuts": describe_known_shortcuts(state, shown),
            "flagged": flagged or "(none: every Shortcut is working)",
        },
        prompts_dir,
    )
    return ask(client, ROLE, prompt, [], parse_shortcuts_reply, agent="shortcuts_reflector", on_turn=on_turn)


def _failure(name: str, result: AgentResult[Any] | None, error: Exception | None) -> str:
    if error is not None:
        return f"{name} failed ({error}); the memory it updates was kept"
    problem = result.problem if result is not None else "no reply"
    return f"{name} gave no usable reply after the corrective retry ({problem}); the memory was kept"


def apply_proposals(
    state: MemoryState,
    base: MemoryState,
    new: Sequence[Any],
    revised: Sequence[Any],
    report: ExperienceReport,
) -> list[str]:
    """Validate proposals against the latest memory and add the valid ones to ``state`` in place.

    ``base`` is the memory the reflector saw: a revision of a Shortcut someone changed meanwhile is
    refused rather than silently overwriting that change.
    """
    changes: list[str] = []
    new, revised = _trimmed(new, changes), _trimmed(revised, changes)
    for value in new:
        checked = check_shortcut(value, source=SOURCE)
        if isinstance(checked, Rejection):
            report.rejected.append(checked)
        elif len(state.shortcuts) >= MAX_STORE_SHORTCUTS:
            reason = f"the memory holds {MAX_STORE_SHORTCUTS:,} Shortcuts, its limit; delete some to add more"
            report.rejected.append(Rejection(name=checked.name, reason=reason, source=SOURCE))
        elif checked.name in state.shortcuts:
            reason = (
                f"duplicate name: a Shortcut named {checked.name} already exists; an improved version "
                "must be proposed under Revised Shortcuts"
            )
            report.rejected.append(Rejection(name=checked.name, reason=reason, source=SOURCE))
        else:
            state.shortcuts[checked.name] = checked
            report.added.append(checked.name)
            changes.append(f"added {checked.name}")
    for value in revised:
        checked = check_shortcut(value, source=SOURCE)
        if isinstance(checked, Rejection):
            report.rejected.append(checked)
            continue
        current = state.shortcuts.get(checked.name)
        seen = base.shortcuts.get(checked.name)
        if current is None:
            reason = f"revision of an unknown Shortcut {checked.name}; propose it under New Shortcuts"
            report.rejected.append(Rejection(name=checked.name, reason=reason, source=SOURCE))
        elif seen is None or not same_definition(current, seen):
            reason = "the Shortcut was changed by someone else while the reflector ran; revision not applied"
            report.rejected.append(Rejection(name=checked.name, reason=reason, source=SOURCE))
        elif same_definition(current, checked):
            continue
        else:
            state.shortcuts[checked.name] = checked
            state.usage.pop(checked.name, None)
            report.revised.append(checked.name)
            changes.append(f"revised {checked.name} (previous definition kept in version {base.version})")
    return changes


def _trimmed(values: Sequence[Any], changes: list[str]) -> list[Any]:
    """Proposals with over-long descriptions and preconditions cut (a warning for each)."""
    kept = []
    for value in values:
        trimmed, cut = trim_shortcut_text(value)
        if cut:
            name = trimmed.get("name", "(unnamed)") if isinstance(trimmed, Mapping) else "(unnamed)"
            log.warning(
                "the Shortcuts reflector wrote a very long description or precondition for %s; cut", name
            )
            changes.append(f"cut the long description or precondition of {name}")
        kept.append(trimmed)
    return kept


def reflect_on_task(
    store: MemoryStore,
    client: ChatClient,
    result: EndedTask | TaskExperience,
    *,
    policy: UsagePolicy | None = None,
    future_tasks: Sequence[str] | None = None,
    refused: Mapping[str, int] | None = None,
    reflect: bool = True,
    on_turn: TurnListener | None = None,
    prompts_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    used_tips: str = "",
    used_shortcuts: Sequence[str] = (),
) -> ExperienceReport:
    """Update the long-term memory after a task: usage counts, then (if ``reflect``) both reflectors.

    ``refused`` counts Shortcut calls the precondition check refused during the task. Model errors and
    unusable replies are reported in ``ExperienceReport.problems`` (and the store history), never
    raised; ``MemoryStoreError`` (the store itself cannot be written) is raised. In a large memory the
    reflectors see a slice (``mae.memory.slices``) led by ``used_tips`` / ``used_shortcuts`` (what the run
    was given); their edits are merged into the full store.
    """
    policy = policy or UsagePolicy()
    experience = result if isinstance(result, TaskExperience) else TaskExperience.from_result(result)
    task = experience.instruction
    report = ExperienceReport(task=task)
    base = store.load()
    for warning in store.warnings:
        report.problems.append(warning)
    preview = base.model_copy(deep=True)
    apply_usage(preview, experience.memory.actions, task=task, refused=refused, policy=policy)

    seen_tips = tips_slice(base.tips, "\n".join([task, *(future_tasks or [])]), used_tips)
    tips_reply: TipsReply | None = None
    shortcuts_reply: ShortcutsReply | None = None
    say = progress or (lambda _message: None)
    down = provider_down(client, experience.exit_reason) if reflect else None
    if down is not None:
        message = f"Experience Reflectors skipped: {down}; the long-term memory is unchanged"
        if progress is not None:
            say(message)
        else:  # nobody shows the progress: the log is the one place it is said
            log.warning("%s", message)
        report.problems.append(message)
        return report
    if reflect:
        calls_before = len(client.records)
        say("Experience Reflector: updating the Tips")
        tips_reply = _run(
            "Tips reflector",
            lambda: reflect_tips(
                client,
                experience,
                seen_tips,
                future_tasks=future_tasks,
                on_turn=on_turn,
                prompts_dir=prompts_dir,
            ),
            report,
        )
        down = provider_down(client, "model_error", since=calls_before)
        if down is not None:
            report.problems.append(f"Shortcuts reflector skipped: {down}")
        say("Experience Reflector: looking for Shortcuts")
        shortcuts_reply = (
            None
            if down is not None
            else _run(
                "Shortcuts reflector",
                lambda: reflect_shortcuts(
                    client,
                    experience,
                    preview,
                    policy,
                    future_tasks=future_tasks,
                    on_turn=on_turn,
                    prompts_dir=prompts_dir,
                    used=used_shortcuts,
                ),
                report,
            )
        )

    def mutate(state: MemoryState) -> Change:
        report.added, report.revised, report.rejected = [], [], []
        change = Change(summary=f"experience from task: {_short(task)}")
        report.usage = apply_usage(
            state, experience.memory.actions, task=task, refused=refused, policy=policy
        )
        change.changes.extend(f"usage {line}" for line in report.usage)
        report.tips_before = len(split_tips(state.tips))
        report.tips_after = report.tips_before
        report.tips_updated = False
        if tips_reply is not None and tips_reply.tips != seen_tips:
            whole = seen_tips == base.tips and state.tips == base.tips
            # the reflector saw everything and nobody changed the Tips meanwhile: its list, as written;
            # otherwise its edits to what it saw, merged into the latest full list
            merged = tips_reply.tips if whole else merge_tips(seen_tips, tips_reply.tips, state.tips)
            merged = _within_store_limit(merged, state.tips, report)
            if merged != state.tips:
                state.tips = merged
                report.tips_updated = True
                report.tips_after = len(split_tips(state.tips))
                how = "" if whole else ", merged with a concurrent change" if seen_tips == base.tips else ""
                change.changes.append(f"Tips updated{how} ({report.tips_before} -> {report.tips_after} tips)")
        if shortcuts_reply is not None:
            change.changes.extend(
                apply_proposals(state, base, shortcuts_reply.new, shortcuts_reply.revised, report)
            )
        change.rejected = list(report.rejected)
        change.problems = list(report.problems)
        return change

    outcome = store.update(mutate, author=AUTHOR, task=task)
    report.version = outcome.version
    for rejection in report.rejected:
        log.warning("refused Shortcut proposal %s", rejection)
    for problem in report.problems:
        log.warning("%s", problem)
    return report


PROVIDER_FAILURES = {
    "ModelAuthError": "the provider refused the API key",
    "ModelTimeoutError": "the provider timed out",
    "ModelRateLimitError": "the provider is rate limiting",
    "ModelResponseError": "the provider sends replies that are not chat completions",
    "ModelRequestError": "the provider refused the request (check the model name and the base URL)",
    "ModelNotFoundError": "the provider refused the request (it does not serve the model: check its name)",
    "ModelCutOffError": "the model used its whole reply length before answering (raise MAE_MAX_TOKENS)",
    "ModelProviderError": "the provider failed or could not be reached",
}
"""What a failed call (after the client's retries) says about the endpoint, by the error's kind."""
PROVIDER_DOWN_ERRORS = frozenset(PROVIDER_FAILURES) - {
    "ModelRequestError",
    "ModelNotFoundError",
    "ModelCutOffError",
}
"""The failures that also stop an eval (the endpoint is unusable for every task); a refused request
(HTTP 4xx) may belong to one task's prompt, so the eval records that task and goes on."""


def provider_down(client: ChatClient, exit_reason: str, since: int = 0) -> str | None:
    """Why the Experience Reflectors' endpoint must not be called again, or None.

    One rule for every provider failure: when the run (or a reflector) ended on a model error, and its
    last failed call (of the calls from ``since`` on) went to the base URL the reflectors use, the
    remaining model work is skipped, whatever the failure was (unreachable, key refused, rate limit,
    timeout, a request refused with HTTP 4xx such as an unknown model name).
    """
    if exit_reason != "model_error":
        return None
    failed = [record for record in client.records[since:] if not record.ok]
    if not failed:
        return None
    last = failed[-1]
    try:
        same = client.profile(last.role).base_url == client.profile(ROLE).base_url
    except Exception:  # a role the client cannot describe: assume the same endpoint
        same = True
    if not same:
        return None
    return PROVIDER_FAILURES.get(last.error or "", "the provider failed or could not be reached")


def _within_store_limit(merged: str, current: str, report: ExperienceReport) -> str:
    """``merged``, or ``current`` when the merge would pass ``MAX_STORE_TIPS`` (with a problem noted)."""
    count = len(split_tips(merged))
    if count <= MAX_STORE_TIPS:
        return merged
    report.problems.append(
        f"the Tips reflector's additions were not stored: the memory would hold {count:,} tips, more than "
        f"its limit of {MAX_STORE_TIPS:,}"
    )
    return current


def _run(name: str, call: Callable[[], AgentResult[Any]], report: ExperienceReport) -> Any:
    try:
        result = call()
    except ModelError as exc:
        report.problems.append(_failure(name, None, exc))
        return None
    if result.value is None:
        report.problems.append(_failure(name, result, None))
    return result.value


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def withheld_shortcuts(state: MemoryState, policy: UsagePolicy) -> dict[str, str]:
    """Name -> why, for Shortcuts kept from the Operator."""
    reasons: dict[str, str] = {}
    for name in state.shortcuts:
        status = state.status(name, policy)
        if status == "withheld":
            usage = state.usage.get(name)
            streak = usage.failure_streak if usage else 0
            reasons[name] = f"failed {streak} times in a row (flagged for revision)"
        elif status == "invalid":
            reasons[name] = "; ".join(state.shortcuts[name].problems())
    return reasons
