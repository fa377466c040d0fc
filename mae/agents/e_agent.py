"""Mobile-Agent-E as a strategy on the shared loop (paper §2.1).

Step t: Manager (plan, subgoal; the last k errors when the error flag is raised) -> Operator (action,
with Tips and Shortcuts) -> [the loop runs it] -> Action Reflector (outcome, progress, error) ->
Notetaker (notes), optionally beside the Reflector.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from mae.actions.registry import Shortcut
from mae.agents import manager, notes_budget, notetaker, operator, reflector
from mae.agents.base import AgentResult, Screen
from mae.agents.operator import ShortcutGuard
from mae.agents.strategy import Decision, Finish, Invalid, RunContext, invalid_text, require
from mae.memory.working import ActionRecord, WorkingMemory


@dataclass
class MobileAgentE:
    """Manager, Operator, Action Reflector and Notetaker, with long-term Tips and Shortcuts."""

    tips: str
    shortcuts: Mapping[str, Shortcut]
    guard: ShortcutGuard | None = None
    parallel_notetaker: bool = False
    name: str = "e"
    stages: tuple[str, ...] = ("manager", "operator", "reflector", "notetaker")

    def decide(self, run: RunContext, screen: Screen) -> Decision:
        memory, settings = run.memory, run.settings
        escalate = memory.recent_errors(settings.escalate_after_errors) if memory.error_flag else []
        if (
            memory.plan
            and not escalate
            and settings.skip_planning_while_loading
            and screen.perception.still_loading
        ):
            return self._act(run, screen)  # nothing to plan on yet: the plan and subgoal stand
        planned, _ = run.stage(
            "manager",
            lambda: manager.plan(
                run.client,
                memory,
                screen,
                self.shortcuts,
                escalate=escalate,
                on_turn=run.on_turn,
                prompts_dir=run.prompts_dir,
            ),
        )
        plan = require(planned, "Manager")
        memory.plan, memory.subgoal = plan.plan, plan.subgoal
        if plan.finished:
            return Finish("the Manager judged the task finished")
        return self._act(run, screen)

    def _act(self, run: RunContext, screen: Screen) -> Decision:
        memory, settings = run.memory, run.settings
        acted, _ = run.stage(
            "operator",
            lambda: operator.act(
                run.client,
                memory,
                screen,
                tips=self.tips,
                shortcuts=self.shortcuts,
                history=settings.operator_history,
                guard=self.guard,
                on_turn=run.on_turn,
                prompts_dir=run.prompts_dir,
            ),
        )
        if acted.value is None and acted.problem_kind == "action":
            return Invalid(invalid_text(acted.raw), acted.problem or "invalid action")
        return require(acted, "Operator")

    def declined(self, record: ActionRecord) -> None:
        """Nothing of E's own: the Operator and the Manager read the refusal in the working memory."""

    def judge(
        self, run: RunContext, record: ActionRecord, before: Screen, after: Screen, failure: str | None
    ) -> Screen | None:
        memory = run.memory
        action = record.text
        failure = _in_model_frame(failure, record)
        if record.shortcut:  # in the model's frame, as every coordinate of the prompt
            action += f"\nShortcut {record.shortcut} ran: " + "; ".join(
                record.prompt_steps[: record.completed_steps]
            )
        if failure:
            action += f"\nIt stopped early: {failure}"

        def run_reflector() -> AgentResult[reflector.ReflectorReply]:
            return reflector.reflect(
                run.client,
                memory,
                before,
                after,
                action=action,
                description=record.description,
                on_turn=run.on_turn,
                prompts_dir=run.prompts_dir,
            )

        notes_future: Future[AgentResult[notetaker.NotetakerReply]] | None = None
        pool: ThreadPoolExecutor | None = None
        skip_notes = run.settings.skip_planning_while_loading and after.perception.still_loading
        if self.parallel_notetaker and not skip_notes:
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mae-notetaker")
            snapshot = memory.model_copy(deep=True)
            notes_future = pool.submit(self._notes, run, snapshot, after, record)
        try:
            judged, _ = run.stage("reflector", run_reflector)
            verdict = require(judged, "Action Reflector")
            record.outcome = verdict.outcome
            if failure and record.outcome == "A":
                record.outcome = "B"  # the Shortcut did not run to its end: not what was expected
            if not (failure and verdict.outcome == "A"):  # a Shortcut cut short made no progress it claims
                memory.progress = reflector.progress_after(record.outcome, memory.progress, verdict.progress)
            if record.outcome != "A":
                record.error = "; ".join(x for x in (verdict.error_description, failure) if x)
            run.emit(
                "outcome", outcome=record.outcome, progress=memory.progress, error_description=record.error
            )
            if skip_notes:
                return None  # nothing to note on a screen that is still loading: the notes stand
            if notes_future is not None:
                notes, _ = run.stage("notetaker", notes_future.result)
            else:
                notes, _ = run.stage("notetaker", lambda: self._notes(run, memory, after, record))
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
        memory.notes = require(notes, "Notetaker").notes
        if notes_budget.over_budget(memory.notes):
            shorter, _ = run.stage(
                "notetaker",
                lambda: notes_budget.consolidate(
                    run.client, memory, on_turn=run.on_turn, prompts_dir=run.prompts_dir
                ),
            )
            if shorter.value is not None:
                memory.notes = shorter.value.notes
                if shorter.value.restored:
                    run.emit("warning", message=notes_budget.restored_warning(shorter.value))
        return None

    @staticmethod
    def _notes(
        run: RunContext, memory: WorkingMemory, after: Screen, record: ActionRecord
    ) -> AgentResult[notetaker.NotetakerReply]:
        return notetaker.take_notes(
            run.client,
            memory,
            after,
            action=record.text,
            on_turn=run.on_turn,
            prompts_dir=run.prompts_dir,
        )


def _in_model_frame(failure: str | None, record: ActionRecord) -> str | None:
    """The execution error with the failed Shortcut step as the model wrote it (the phone names it in
    screen pixels), so that no coordinate of the prompt is in another frame."""
    index = record.completed_steps
    if not failure or not record.written_steps or index >= len(record.written_steps):
        return failure
    return failure.replace(f"({record.atomic_steps[index]})", f"({record.written_steps[index]})", 1)
