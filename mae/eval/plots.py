"""The evaluation's PNG plots (matplotlib, Agg backend): SSS curve, SS per scenario, seconds per operation.

Every plot names who graded the runs (code, a person, or a model judge) in its title.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mae.eval.metrics import EvalSummary, normalised_curve, regression_line
from mae.eval.records import GRADER_LABELS, TaskRecord

PLOT_FILES = {
    "sss": "sss_curve.png",
    "scenarios": "ss_per_scenario.png",
    "speed": "seconds_per_operation.png",
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def grader_label(records: Sequence[TaskRecord]) -> str:
    graders = sorted({r.grader for r in records if r.graded})
    if not graders:
        return GRADER_LABELS["none"]
    return " + ".join(GRADER_LABELS[g] for g in graders)


def plot_sss(records: Sequence[TaskRecord], path: Path) -> Path:
    """Left: each graded task's SS after every step. Right: all tasks on normalised steps, their mean
    and the least-squares regression line (as in the paper's Figure 5)."""
    plt = _pyplot()
    graded = [r for r in records if r.graded and r.curve]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    xs: list[float] = []
    ys: list[float] = []
    samples = []
    for record in graded:
        left.plot(
            range(len(record.curve)),
            [v * 100 for v in record.curve],
            marker=".",
            alpha=0.7,
            label=record.key if len(graded) <= 10 else None,
        )
        resampled = normalised_curve(record.curve)
        samples.append(resampled)
        steps = max(1, len(record.curve) - 1)
        for i, value in enumerate(record.curve):
            xs.append(i / steps)
            ys.append(value * 100)
        right.plot([i / 20 for i in range(21)], [v * 100 for v in resampled], color="0.75", lw=0.8)
    if samples:
        average = [sum(col) / len(col) * 100 for col in zip(*samples, strict=True)]
        right.plot([i / 20 for i in range(21)], average, color="C0", lw=2.2, label="mean over tasks")
    line = regression_line(xs, ys)
    if line is not None:
        slope, intercept = line
        right.plot(
            [0, 1],
            [intercept, intercept + slope],
            "--",
            color="C3",
            lw=2,
            label=f"regression: {slope:.1f}·x {intercept:+.1f}",
        )
    left.set(xlabel="step", ylabel="Satisfaction Score (%)", title="SSS curve per task", ylim=(-3, 103))
    right.set(
        xlabel="normalised step",
        ylabel="Satisfaction Score (%)",
        title="SSS curve, all tasks",
        xlim=(0, 1),
        ylim=(-3, 103),
    )
    for axis in (left, right):
        axis.grid(alpha=0.3)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=7, loc="lower right")
    if not graded:
        right.text(0.5, 50, "no graded task yet", ha="center")
    fig.suptitle(f"Satisfaction Score vs steps ({grader_label(records)})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_scenarios(summary: EvalSummary, records: Sequence[TaskRecord], path: Path) -> Path:
    """Mean SS per scenario (with 95% intervals when there are repeats)."""
    plt = _pyplot()
    names = [n for n, m in summary.scenarios.items() if m.ss is not None]
    values = [(summary.scenarios[n].ss or 0) * 100 for n in names]
    errors = [summary.scenarios[n].ci.get("ss", 0) * 100 for n in names]
    fig, axis = plt.subplots(figsize=(max(6, 1.3 * len(names) + 2), 4.5))
    if names:
        bars = axis.bar(range(len(names)), values, yerr=errors, capsize=4, color="C0")
        axis.bar_label(bars, labels=[f"{v:.1f}" for v in values], padding=2, fontsize=8)
        axis.set_xticks(
            range(len(names)),
            [n.replace("_", " ").title() for n in names],
            rotation=20,
            ha="right",
            fontsize=8,
        )
    else:
        axis.text(0.5, 0.5, "no graded task yet", ha="center", transform=axis.transAxes)
    axis.set(ylabel="Satisfaction Score (%)", ylim=(0, 105))
    axis.set_title(f"Satisfaction Score per scenario ({grader_label(records)})")
    axis.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_speed(summary: EvalSummary, path: Path) -> Path:
    """Seconds per operation, split into model, perception, execution and the rest, per scenario."""
    plt = _pyplot()
    groups = [("overall", summary.overall), *summary.scenarios.items()]
    groups = [(n, m) for n, m in groups if m.s_per_op is not None]
    fig, axis = plt.subplots(figsize=(max(6, 1.3 * len(groups) + 2), 4.5))
    bottom = [0.0] * len(groups)
    parts = [
        ("model", lambda m: m.model_s_per_op or 0.0),
        ("perception", lambda m: m.perception_s_per_op or 0.0),
        ("execution", lambda m: m.execution_s_per_op or 0.0),
        (
            "other",
            lambda m: max(
                0.0,
                (m.s_per_op or 0.0)
                - (m.model_s_per_op or 0.0)
                - (m.perception_s_per_op or 0.0)
                - (m.execution_s_per_op or 0.0),
            ),
        ),
    ]
    for index, (label, value) in enumerate(parts):
        heights = [value(m) for _, m in groups]
        axis.bar(range(len(groups)), heights, bottom=bottom, label=label, color=f"C{index}")
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    if groups:
        axis.set_xticks(
            range(len(groups)),
            [n.replace("_", " ").title() for n, _ in groups],
            rotation=20,
            ha="right",
            fontsize=8,
        )
        axis.legend(fontsize=8)
    else:
        axis.text(0.5, 0.5, "no operations yet", ha="center", transform=axis.transAxes)
    axis.set(ylabel="seconds per operation", title="Seconds per operation")
    axis.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(folder: Path, summary: EvalSummary, records: Sequence[TaskRecord]) -> dict[str, Path]:
    """All three plots into ``folder``; returns their paths by name."""
    return {
        "sss": plot_sss(records, folder / PLOT_FILES["sss"]),
        "scenarios": plot_scenarios(summary, records, folder / PLOT_FILES["scenarios"]),
        "speed": plot_speed(summary, folder / PLOT_FILES["speed"]),
    }
