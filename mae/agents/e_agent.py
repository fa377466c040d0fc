"""Mobile-Agent-E as a strategy on the shared loop (paper §2.1).

Step t: Manager (plan, subgoal; the last k errors when the error flag is raised) -> Operator (action,
with Tips and Shortcuts) -> [the loop runs it] -> Action Reflector (outcome, progress, error) ->
Notetaker (notes), optionally beside the Reflector.

Fast mode (``LoopSettings.fast``, each part switchable on its own; docs/agents.md): the Manager is asked
only when it has something to decide (``manager_every``), a known pop-up is dismissed without a Manager
round (``dismiss_popups``), the Reflector writes the notes in its own reply (``notes_in_reflector``), and
the next step's Operator starts while the Reflector judges (``speculative_operator``, ``speculation``).
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from mae.actions.registry import Shortcut
from mae.agents import fast, manager, notes_budget, notetaker, operator, reflector, speculation
from mae.agents.base import AgentResult, Screen, TurnListener
from mae.agents.operator import OperatorDecision, ShortcutGuard
from mae.agents.strategy import Decision, Finish, Invalid, RunContext, invalid_text, require
from mae.memory.working import ActionRecord, ErrorRecord, WorkingMemory

LOADING_SUBGOAL = (
    "The screen is still loading: Wait() for its content. Then look again at the subgoal being worked on "
    "(it may be done already; do not repeat an action that ran): {subgoal}"
)
"""The Operator's subgoal on a loading screen where the Manager was not asked."""


@dataclass
class MobileAgentE:
    """Manager, Operator, Action Reflector and Notetaker, with long-term Tips and Shortcuts."""

    tips: str
    shortcuts: Mapping[str, Shortcut]
    guard: ShortcutGuard | None = None
    parallel_notetaker: bool = False
    name: str = "e"
    stages: tuple[str, ...] = ("manager", "operator", "reflector", "notetaker")

    _since_manager: int = field(default=0, init=False)
    _subgoal_done: bool | None = field(default=None, init=False)
    _speculation: speculation.Speculation | None = field(default=None, init=False)

    def decide(self, run: RunContext, screen: Screen) -> Decision:
        memory, settings = run.memory, run.settings
        escalate = memory.recent_errors(settings.escalate_after_errors) if memory.error_flag else []
        pending, self._speculation = self._speculation, None
        why = self._manager_reason(run, screen, bool(escalate))
        if why is None:
            self._since_manager += 1
        else:
            if pending is not None:  # the plan or subgoal may change: the speculative action may not fit
                self._record_discarded(run, pending, "a Manager round is due")
                pending = None
            if self._plan(run, screen, escalate):
                return Finish("the Manager judged the task finished")
        if self._fast_mode(run):
            run.emit("fast_mode", manager="asked" if why else "skipped", reason=why or "")
        decision = self._use_speculation(run, screen, pending) if pending is not None else None
        if decision is None:
            decision = self._act(run, screen)
        if not _says_done(decision):
            return decision
        # The Operator says the request is complete. Only the Manager ends a task (paper): ask it now,
        # unless it was asked this step with this screen and kept the task going.
        if why is None:
            if self._fast_mode(run):
                run.emit("fast_mode", manager="asked", reason="the Operator said Done")
            if self._plan(run, screen, escalate):
                return Finish("the Manager judged the task finished (the Operator said Done)")
            decision = self._act(run, screen)
            if not _says_done(decision):
                return decision
        assert isinstance(decision, OperatorDecision)
        return Invalid(
            decision.text,
            "Done() while the Manager's plan goes on: the Manager has not judged the task finished; "
            "act on the current subgoal",
        )

    def _plan(self, run: RunContext, screen: Screen, escalate: list[ErrorRecord]) -> bool:
        """A Manager round: update the plan and subgoal; whether the Manager judged the task finished."""
        memory = run.memory
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
        self._since_manager, self._subgoal_done = 1, None
        return plan.finished

    @staticmethod
    def _fast_mode(run: RunContext) -> bool:
        settings = run.settings
        return settings.manager_every > 1 or settings.dismiss_popups or settings.speculative_operator

    def _manager_reason(self, run: RunContext, screen: Screen, escalate: bool) -> str | None:
        """Why the Manager is asked this step, or None when its plan and subgoal stand."""
        memory, settings = run.memory, run.settings
        if not memory.plan:
            return "start"
        if escalate:
            return "repeated errors"
        if settings.skip_planning_while_loading and screen.perception.still_loading:
            return None  # nothing to plan on yet: the plan and subgoal stand
        if settings.dismiss_popups and fast.popup_dismiss(screen.perception) is not None:
            return None  # the Operator dismisses it with the subgoal it has
        if settings.manager_every <= 1:
            return "every step"
        last = memory.actions[-1] if memory.actions else None
        if last is None or last.outcome != "A":
            return "failed action"
        if self._subgoal_done is not False:
            return "subgoal done" if self._subgoal_done else "subgoal state unknown"
        if self._since_manager >= settings.manager_every:
            return f"every {settings.manager_every} steps"
        return None

    def _operator_memory(self, run: RunContext, memory: WorkingMemory, screen: Screen) -> WorkingMemory:
        """The memory the Operator is asked with: on a screen still loading whose Manager round was
        skipped (``skip_planning_while_loading``), a copy whose subgoal says to wait for it first (what
        every Manager asked on such a screen answered, in real-model runs); on a known pop-up
        (``dismiss_popups``) a copy whose subgoal says to dismiss it first."""
        if (
            run.settings.skip_planning_while_loading
            and screen.perception.still_loading
            and memory.plan
            and not memory.error_flag
        ):
            return memory.model_copy(update={"subgoal": LOADING_SUBGOAL.format(subgoal=memory.subgoal)})
        button = fast.popup_dismiss(screen.perception) if run.settings.dismiss_popups else None
        if button is None or not memory.plan:
            return memory
        subgoal = fast.popup_subgoal(memory, button, screen.perception)
        return memory.model_copy(update={"subgoal": subgoal})

    def _ask_operator(
        self, run: RunContext, memory: WorkingMemory, screen: Screen, on_turn: TurnListener
    ) -> AgentResult[OperatorDecision]:
        return operator.act(
            run.client,
            self._operator_memory(run, memory, screen),
            screen,
            tips=self.tips,
            shortcuts=self.shortcuts,
            history=run.settings.operator_history,
            max_repeats=run.settings.max_repeated_actions,
            guard=self.guard,
            on_turn=on_turn,
            prompts_dir=run.prompts_dir,
        )

    def _act(self, run: RunContext, screen: Screen) -> Decision:
        acted, _ = run.stage("operator", lambda: self._ask_operator(run, run.memory, screen, run.on_turn))
        return self._decision(acted)

    @staticmethod
    def _decision(acted: AgentResult[OperatorDecision]) -> Decision:
        if acted.value is None and acted.problem_kind == "action":
            return Invalid(invalid_text(acted.raw), acted.problem or "invalid action")
        return require(acted, "Operator")

    def _use_speculation(
        self, run: RunContext, screen: Screen, pending: speculation.Speculation
    ) -> Decision | None:
        """The speculative Operator's decision when it still fits (verdict A, same screen), else None."""
        last = run.memory.actions[-1] if run.memory.actions else None
        if last is None or last.outcome != "A":
            self._record_discarded(run, pending, "the action was not judged A")
            return None
        if pending.screen is not screen or not run.screen_unchanged(screen):
            self._record_discarded(run, pending, "the screen changed")
            return None
        acted, _ = run.stage("operator", pending.result)
        for turn in pending.turns:
            run.on_turn(turn)
        run.emit("fast_mode", speculation="used", reason="")
        return self._decision(acted)

    @staticmethod
    def _record_discarded(run: RunContext, pending: speculation.Speculation, why: str) -> None:
        for turn in pending.discard():
            run.on_turn(turn)
        run.emit("fast_mode", speculation="discarded", reason=why)

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

        settings = run.settings
        skip_notes = settings.skip_planning_while_loading and after.perception.still_loading
        joint_notes = settings.notes_in_reflector and not skip_notes

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
                ask_subgoal_done=settings.manager_every > 1,
                ask_notes=joint_notes,
            )

        if settings.speculative_operator and settings.manager_every > 1 and not failure:
            # (with the Manager asked every step, a speculative action would always be discarded)
            assumed = speculation.assumed_success(memory, record)
            self._speculation = speculation.start(
                after, lambda on_turn: self._ask_operator(run, assumed, after, on_turn)
            )

        notes_future: Future[AgentResult[notetaker.NotetakerReply]] | None = None
        pool: ThreadPoolExecutor | None = None
        if self.parallel_notetaker and not skip_notes and not joint_notes:
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mae-notetaker")
            snapshot = memory.model_copy(deep=True)
            notes_future = pool.submit(self._notes, run, snapshot, after, record)
        try:
            judged, _ = run.stage("reflector", run_reflector)
            verdict = require(judged, "Action Reflector")
            self._subgoal_done = verdict.subgoal_done
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
            if joint_notes and verdict.notes is not None:
                memory.notes = verdict.notes or memory.notes  # "None": the existing notes stand
                return self._consolidate(run, memory)
            if notes_future is not None:
                notes, _ = run.stage("notetaker", notes_future.result)
            else:
                notes, _ = run.stage("notetaker", lambda: self._notes(run, memory, after, record))
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
        memory.notes = require(notes, "Notetaker").notes
        return self._consolidate(run, memory)

    @staticmethod
    def _consolidate(run: RunContext, memory: WorkingMemory) -> None:
        """Shorten the notes when they are over their budget (``notes_budget``)."""
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


def _says_done(decision: Decision) -> bool:
    return isinstance(decision, OperatorDecision) and decision.call.is_done


def _in_model_frame(failure: str | None, record: ActionRecord) -> str | None:
    """The execution error with the failed Shortcut step as the model wrote it (the phone names it in
    screen pixels), so that no coordinate of the prompt is in another frame."""
    index = record.completed_steps
    if not failure or not record.written_steps or index >= len(record.written_steps):
        return failure
    return failure.replace(f"({record.atomic_steps[index]})", f"({record.written_steps[index]})", 1)
