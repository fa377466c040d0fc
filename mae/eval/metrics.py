"""The paper's metrics over task records: per task, per scenario and overall.

- Satisfaction Score (SS): fulfilled rubric items / all items, averaged over graded tasks.
- Action Accuracy (AA): correct actions / judged actions, over the actions a person or a model judge
  marked. Reflection Accuracy (RA): correct Action Reflector verdicts / judged verdicts, likewise.
- AA (code proxy), RA (code proxy): the same ratios over what the virtual suite's code judged
  (``mae.eval.code_proxy``); kept apart from AA and RA, which are the paper's human-judged figures.
- Termination Error (TE): tasks that ended by one of the paper's exits 2-5 (step limit, consecutive
  errors, repeated action, unusable model reply) / tasks. Harness exits (a refused sensitive action,
  a stop, a provider or phone failure, a crash) are not the agent's termination errors: they are
  counted apart, as ``harness_exits``.
- efficiency: steps per task and steps / reference operations, model calls, input tokens and dollars
  per task, seconds per task and per operation (wall, and its model / perception / execution parts,
  over the atomic operations that ran: a Shortcut's steps count one each, an invalid action none, as
  in the paper's Table 5), Shortcut usage, tokens and images per task.

With several repeats, SS, AA, RA and TE get a 95% confidence interval (Student's t over the repeats'
group values).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import mean, stdev

from pydantic import BaseModel, Field

from mae.eval.records import TaskRecord

JUDGES = ("person", "model")

# two-sided 95% Student t quantiles by degrees of freedom (beyond 30: the normal 1.96)
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160]
_T95 += [2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056]
_T95 += [2.052, 2.048, 2.045, 2.042]


def t95(df: int) -> float:
    return _T95[df - 1] if 1 <= df <= len(_T95) else 1.96


def confidence_interval(values: Sequence[float]) -> float | None:
    """Half-width of the 95% interval of the mean of ``values`` (None below two values)."""
    if len(values) < 2:
        return None
    return t95(len(values) - 1) * stdev(values) / math.sqrt(len(values))


def satisfaction(record: TaskRecord) -> float | None:
    if not record.graded or not record.final_passed:
        return None
    return sum(record.final_passed) / len(record.final_passed)


def _ratio(hits: int, total: int) -> float | None:
    return hits / total if total else None


class GroupMetrics(BaseModel):
    """Metrics of a set of task records (one task's repeats, a scenario, or everything)."""

    tasks: int
    graded: int
    ss: float | None = None
    aa: float | None = None
    ra: float | None = None
    aa_proxy: float | None = Field(None, description="AA judged by code (virtual suite): a proxy")
    ra_proxy: float | None = Field(None, description="RA judged by code (virtual suite): a proxy")
    te: float | None = Field(None, description="the paper's exits 2-5 / runs; None when there is no run")
    harness_exits: float | None = Field(None, description="refusals, stops, provider/phone failures / runs")
    steps: float = 0.0
    steps_per_ref: float | None = Field(None, description="steps / the task's reference operations")
    model_calls: float = 0.0
    input_tokens: float = 0.0
    s_per_task: float | None = None
    shortcut_pct: float | None = None
    s_per_op: float | None = None
    model_s_per_op: float | None = None
    perception_s_per_op: float | None = None
    execution_s_per_op: float | None = None
    tokens: float = 0.0
    images: float = 0.0
    cost_usd: float | None = None
    graders: list[str] = Field(default_factory=list)
    repeats: int = 1
    ci: dict[str, float] = Field(default_factory=dict, description="95% half-widths when repeats > 1")
    left_out: int = Field(0, description="runs of unfinished repeats left out (an interrupted eval)")


def group_metrics(records: Sequence[TaskRecord]) -> GroupMetrics:
    """Pool ``records`` (see the module docstring for each metric's definition)."""
    n = len(records)
    scores = [s for s in (satisfaction(r) for r in records) if s is not None]
    actions = [a for r in records for a in r.actions]
    judged = [r for r in records if r.correctness_source in JUDGES]
    proxied = [r for r in records if r.correctness_source == "code"]
    judged_actions = [c for r in judged for c in r.action_correct if c is not None]
    judged_verdicts = [c for r in judged for c in r.reflection_correct if c is not None]
    proxy_actions = [c for r in proxied for c in r.action_correct if c is not None]
    proxy_verdicts = [c for r in proxied for c in r.reflection_correct if c is not None]
    with_ref = [len(r.actions) / r.reference_operations for r in records if r.reference_operations > 0]
    ops = sum(a.operations_run for a in actions)
    totals = [r.totals for r in records]
    costs = [r.cost_usd for r in records if r.cost_usd is not None]

    def per_op(seconds: Callable[[TaskRecord], float]) -> float | None:
        return sum(seconds(r) for r in records) / ops if ops else None

    graders = {r.grader for r in records if r.graded} | {r.correctness_source for r in records}
    return GroupMetrics(
        tasks=n,
        graded=len(scores),
        ss=mean(scores) if scores else None,
        aa=_ratio(sum(judged_actions), len(judged_actions)),
        ra=_ratio(sum(judged_verdicts), len(judged_verdicts)),
        aa_proxy=_ratio(sum(proxy_actions), len(proxy_actions)),
        ra_proxy=_ratio(sum(proxy_verdicts), len(proxy_verdicts)),
        te=sum(r.termination_error for r in records) / n if n else None,
        harness_exits=sum(r.harness_exit for r in records) / n if n else None,
        steps=mean(len(r.actions) for r in records) if n else 0.0,
        steps_per_ref=mean(with_ref) if with_ref else None,
        model_calls=mean(t.model_calls for t in totals) if n else 0.0,
        input_tokens=mean(t.input_tokens for t in totals) if n else 0.0,
        s_per_task=mean(t.seconds for t in totals) if n else None,
        shortcut_pct=_ratio(sum(1 for a in actions if a.shortcut), len(actions)),
        s_per_op=per_op(lambda r: r.totals.seconds),
        model_s_per_op=per_op(lambda r: r.totals.model_seconds),
        perception_s_per_op=per_op(lambda r: r.totals.perception_seconds),
        execution_s_per_op=per_op(lambda r: r.totals.execution_seconds),
        tokens=mean(t.input_tokens + t.output_tokens for t in totals) if n else 0.0,
        images=mean(t.images for t in totals) if n else 0.0,
        cost_usd=sum(costs) / len(costs) if costs else None,
        graders=sorted(graders - {"none"}),
        repeats=len({r.repeat for r in records}) or 1,
    )


def with_intervals(records: Sequence[TaskRecord]) -> GroupMetrics:
    """``group_metrics`` plus 95% intervals of SS, AA, RA and TE across repeats.

    Only repeats that ran every task of the group count when some did not (an interrupted eval): a
    repeat with half the tasks would weigh the tasks it has twice and make the interval meaningless."""
    tasks = {r.task_id for r in records}
    repeats = sorted({r.repeat for r in records})
    complete = [k for k in repeats if {r.task_id for r in records if r.repeat == k} == tasks]
    if complete and len(complete) < len(repeats):
        kept = [r for r in records if r.repeat in complete]
        pooled = with_intervals(kept)
        pooled.left_out = len(records) - len(kept)
        return pooled
    pooled = group_metrics(records)
    if len(repeats) < 2:
        return pooled
    per_repeat = [group_metrics([r for r in records if r.repeat == k]) for k in repeats]
    for name in ("ss", "aa", "ra", "aa_proxy", "ra_proxy", "te"):
        values = [getattr(m, name) for m in per_repeat if getattr(m, name) is not None]
        half = confidence_interval(values)
        if half is not None:
            pooled.ci[name] = half
    return pooled


class EvalSummary(BaseModel):
    """Everything a report shows."""

    overall: GroupMetrics
    scenarios: dict[str, GroupMetrics]
    tasks: dict[str, GroupMetrics]


def summarize(records: Sequence[TaskRecord]) -> EvalSummary:
    """Overall, per-scenario and per-task metrics (tasks and scenarios in first-seen order)."""
    scenarios: dict[str, list[TaskRecord]] = {}
    tasks: dict[str, list[TaskRecord]] = {}
    for record in records:
        scenarios.setdefault(record.scenario or "(none)", []).append(record)
        tasks.setdefault(record.task_id, []).append(record)
    return EvalSummary(
        overall=with_intervals(records),
        scenarios={name: with_intervals(group) for name, group in scenarios.items()},
        tasks={name: with_intervals(group) for name, group in tasks.items()},
    )


def normalised_curve(curve: Sequence[float], points: int = 21) -> list[float]:
    """The SSS curve resampled at ``points`` evenly spaced normalised steps in [0, 1] (step function:
    the score after the last step at or before each point)."""
    if not curve:
        return [0.0] * points
    last = len(curve) - 1
    if last == 0:
        return [curve[0]] * points
    return [curve[math.floor(i / (points - 1) * last + 1e-9)] for i in range(points)]


def regression_line(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float] | None:
    """Least-squares ``(slope, intercept)``; None when x does not vary."""
    if len(xs) < 2:
        return None
    mx, my = mean(xs), mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return slope, my - slope * mx
