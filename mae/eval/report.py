"""``report.md`` and ``report.html`` of an eval folder, and ``compare`` of two folders.

Both reports hold the same tables: the paper's Table 3 layout (SS, AA, RA, TE), its Table 4 layout
(per backbone), the per-scenario and per-task tables, speed and cost (Table 5's seconds per
operation and Shortcut usage), and how each number was graded. The HTML embeds the plots.
"""

from __future__ import annotations

import base64
import html
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mae.eval.marks import judged_records
from mae.eval.metrics import EvalSummary, GroupMetrics, summarize
from mae.eval.plots import grader_label, write_plots
from mae.eval.records import TaskRecord, read_results
from mae.memory.atomic import atomic_write_text

AGENT_NAMES = {"e": ("Mobile-Agent-E", "Multi-Agent"), "v2": ("Mobile-Agent-v2", "Multi-Agent")}
AGENT_NAMES["v1"] = ("Mobile-Agent-v1", "Single-Agent")


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Report:
    title: str
    lines: list[str]
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def pct(value: float | None, ci: float | None = None) -> str:
    if value is None:
        return "–"
    return f"{value * 100:.1f}" + (f" ± {ci * 100:.1f}" if ci is not None else "")


def num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def model_name(records: Sequence[TaskRecord]) -> tuple[str, str]:
    first = records[0] if records else None
    name, kind = AGENT_NAMES.get(first.agent if first else "e", (first.agent if first else "?", "?"))
    if first is not None and first.setting == "evolution":
        name += " + Evo"
    return name, kind


def _metric_cells(m: GroupMetrics) -> list[str]:
    return [pct(getattr(m, k), m.ci.get(k)) for k in ("ss", "aa", "ra", "te")]


def _detail_cells(m: GroupMetrics) -> list[str]:
    cost = "–" if m.cost_usd is None else f"${m.cost_usd:.4f}"
    return [
        num(m.steps),
        pct(m.shortcut_pct),
        num(m.s_per_op, 2),
        num(m.model_s_per_op, 2),
        num(m.perception_s_per_op, 2),
        num(m.execution_s_per_op, 2),
        f"{m.tokens:.0f}",
        f"{m.images:.1f}",
        cost,
    ]


DETAIL_HEADERS = [
    "steps",
    "Shortcut %",
    "s/op",
    "model s/op",
    "perception s/op",
    "execution s/op",
    "tokens/task",
    "images/task",
    "cost/task",
]


def build_report(records: Sequence[TaskRecord], summary: EvalSummary) -> Report:
    name, kind = model_name(records)
    graded_by = grader_label(records)
    backbones = sorted({r.backbone for r in records}) or ["?"]
    repeats = summary.overall.repeats
    lines = [
        f"{name} · backbone {', '.join(backbones)} · setting {records[0].setting if records else '?'} · "
        f"{len({r.task_id for r in records})} task(s) × {repeats} repeat(s) · {graded_by}",
        f"Written {time.strftime('%Y-%m-%d %H:%M:%S')}; "
        f"{summary.overall.graded} of {len(records)} task runs graded.",
    ]
    if summary.overall.left_out:
        lines.append(
            f"{summary.overall.left_out} run(s) of unfinished repeats are left out of the figures: "
            "resume the eval to finish them."
        )
    overall = summary.overall
    ss_head = f"Satisfaction Score (%) ↑ [{graded_by}]"
    tables = [
        Table(
            "Overall (the paper's Table 3 layout)",
            [
                "Model",
                "Type",
                ss_head,
                "Action Accuracy (%) ↑",
                "Reflection Accuracy (%) ↑",
                "Termination Error (%) ↓",
            ],
            [[name, kind, *_metric_cells(overall)]],
            note="± is the 95% confidence interval over repeats." if repeats > 1 else "",
        ),
        Table(
            "By backbone (the paper's Table 4 layout)",
            ["Model", *[f"{b}: SS ↑ · AA ↑ · RA ↑ · TE ↓" for b in backbones]],
            [
                [
                    name,
                    *[
                        " · ".join(_metric_cells(summarize([r for r in records if r.backbone == b]).overall))
                        for b in backbones
                    ],
                ]
            ],
        ),
        Table(
            "Per scenario",
            ["Scenario", "tasks", "SS", "AA", "RA", "TE", *DETAIL_HEADERS],
            [[n, str(m.tasks), *_metric_cells(m), *_detail_cells(m)] for n, m in summary.scenarios.items()]
            + [["**overall**", str(overall.tasks), *_metric_cells(overall), *_detail_cells(overall)]],
        ),
    ]
    task_rows = []
    by_task: dict[str, list[TaskRecord]] = {}
    for record in records:
        by_task.setdefault(record.task_id, []).append(record)
    for task_id, group in by_task.items():
        m = summary.tasks[task_id]
        exits = ", ".join(sorted({r.exit_reason.value for r in group}))
        refs = group[0].reference_operations or "–"
        graders = ", ".join(sorted({r.grader for r in group}))
        task_rows.append(
            [
                task_id,
                group[0].scenario,
                str(len(group)),
                exits,
                num(m.steps),
                str(refs),
                *_metric_cells(m),
                graders,
            ]
        )
    tables.append(
        Table(
            "Per task",
            [
                "Task",
                "scenario",
                "runs",
                "exit",
                "steps",
                "reference ops",
                "SS",
                "AA",
                "RA",
                "TE",
                "graded by",
            ],
            task_rows,
        )
    )
    notes = [
        "SS = fulfilled rubric items / all items, averaged over graded tasks. AA = correct actions / judged "
        "actions. RA = correct Action Reflector verdicts / judged verdicts. TE = tasks that ended any way "
        "but the agent's own finish (step limit, repeated action, consecutive errors, unusable reply, "
        "provider or phone failure, rejection, stop, crash) / tasks.",
        "Seconds per operation = wall time of the runs / actions; model = time waiting for models, "
        "perception = the Perceptor, execution = actions on the phone including settling.",
    ]
    if any(r.correctness_source == "code" for r in records):
        notes.append(
            "AA and RA graded by code (virtual suite) are proxies: an action counts as correct when it ran, "
            "changed the phone and lost no rubric item; a verdict is correct when the Action Reflector said "
            "A exactly for such actions. Marks made in the Judge view replace them."
        )
    if any(r.grader == "model" or r.correctness_source == "model" for r in records):
        notes.append("Some grades come from a MODEL JUDGE, not a person: treat them as estimates.")
    costs = {r.cost_note for r in records if r.cost_note}
    if costs:
        notes.append("Cost: estimated from list prices; " + "; ".join(sorted(costs)) + ".")
    return Report("Evaluation report", lines, tables, notes)


def _md_table(table: Table) -> str:
    out = [
        f"## {table.title}",
        "",
        "| " + " | ".join(table.headers) + " |",
        "|" + "|".join("---" for _ in table.headers) + "|",
    ]
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in table.rows]
    if table.note:
        out += ["", table.note]
    return "\n".join(out) + "\n"


def render_markdown(report: Report, plots: dict[str, Path] | None = None) -> str:
    parts = [f"# {report.title}", "", *report.lines, ""]
    parts += [_md_table(t) for t in report.tables]
    if plots:
        parts.append("## Plots\n")
        parts += [f"![{name}]({path.name})\n" for name, path in plots.items()]
    parts.append("## How these numbers were graded\n")
    parts += [f"- {note}" for note in report.notes]
    return "\n".join(parts) + "\n"


def render_html(report: Report, plots: dict[str, Path] | None = None) -> str:
    def cell(text: str, tag: str = "td") -> str:
        return f"<{tag}>{html.escape(text.replace('**', ''))}</{tag}>"

    body = [f"<h1>{html.escape(report.title)}</h1>"]
    body += [f"<p>{html.escape(line)}</p>" for line in report.lines]
    for table in report.tables:
        body.append(
            f"<h2>{html.escape(table.title)}</h2><table><tr>"
            + "".join(cell(h, "th") for h in table.headers)
            + "</tr>"
        )
        body += ["<tr>" + "".join(cell(c) for c in row) + "</tr>" for row in table.rows]
        body.append("</table>")
        if table.note:
            body.append(f"<p class='note'>{html.escape(table.note)}</p>")
    for name, path in (plots or {}).items():
        if path.is_file():
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            body.append(
                f"<figure><img alt='{html.escape(name)}' src='data:image/png;base64,{data}'>"
                f"<figcaption>{html.escape(path.name)}</figcaption></figure>"
            )
    body.append("<h2>How these numbers were graded</h2><ul>")
    body += [f"<li>{html.escape(note)}</li>" for note in report.notes]
    body.append("</ul>")
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;"
        "margin:0.5em 0 1.5em}th,td{border:1px solid #ccc;padding:4px 8px;font-size:13px;text-align:left}"
        "th{background:#f3f4f6}img{max-width:100%;border:1px solid #eee}.note{color:#555;font-size:13px}"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(report.title)}</title>"
        f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n"
    )


def write_reports(folder: Path | str) -> dict[str, Path]:
    """Recompute the metrics of ``folder`` (with the Judge's marks) and write the reports and plots."""
    folder = Path(folder)
    records = judged_records(folder, read_results(folder))
    summary = summarize(records)
    plots = write_plots(folder, summary, records)
    report = build_report(records, summary)
    atomic_write_text(folder / "report.md", render_markdown(report, plots))
    atomic_write_text(folder / "report.html", render_html(report, plots))
    atomic_write_text(folder / "metrics.json", summary.model_dump_json(indent=2) + "\n")
    return {"report.md": folder / "report.md", "report.html": folder / "report.html", **plots}


def _delta(a: float | None, b: float | None, scale: float = 100.0, digits: int = 1) -> str:
    if a is None or b is None:
        return "–"
    return f"{(b - a) * scale:+.{digits}f}"


COMPARED: list[tuple[str, Callable[[GroupMetrics], float | None], float, int]] = [
    ("Satisfaction Score (%)", lambda m: m.ss, 100.0, 1),
    ("Action Accuracy (%)", lambda m: m.aa, 100.0, 1),
    ("Reflection Accuracy (%)", lambda m: m.ra, 100.0, 1),
    ("Termination Error (%)", lambda m: m.te, 100.0, 1),
    ("steps per task", lambda m: m.steps, 1.0, 1),
    ("Shortcut usage (%)", lambda m: m.shortcut_pct, 100.0, 1),
    ("seconds per operation", lambda m: m.s_per_op, 1.0, 2),
    ("model s/op", lambda m: m.model_s_per_op, 1.0, 2),
    ("perception s/op", lambda m: m.perception_s_per_op, 1.0, 2),
    ("execution s/op", lambda m: m.execution_s_per_op, 1.0, 2),
    ("tokens per task", lambda m: m.tokens, 1.0, 0),
    ("cost per task ($)", lambda m: m.cost_usd, 1.0, 4),
]


def compare(a: Path | str, b: Path | str) -> str:
    """Markdown: two eval folders side by side (overall and per-scenario SS) with B − A deltas, over the
    tasks both ran (a different task set would make the deltas say nothing of the agents)."""
    records_a = judged_records(a, read_results(a))
    records_b = judged_records(b, read_results(b))
    name_a, name_b = model_name(records_a)[0], model_name(records_b)[0]
    out = [f"# Comparison: A = {a} ({name_a}) vs B = {b} ({name_b})", ""]
    ids_a, ids_b = {r.task_id for r in records_a}, {r.task_id for r in records_b}
    shared = ids_a & ids_b
    if not shared:
        return "\n".join([*out, "The two evals share no task, so there is nothing to compare."]) + "\n"
    if ids_a != ids_b:
        out += [
            f"Compared over the {len(shared)} task(s) both ran; left out: {len(ids_a - shared)} only in A, "
            f"{len(ids_b - shared)} only in B.",
            "",
        ]
        records_a = [r for r in records_a if r.task_id in shared]
        records_b = [r for r in records_b if r.task_id in shared]
    sa, sb = summarize(records_a), summarize(records_b)
    out += [
        f"A: {grader_label(records_a)}; B: {grader_label(records_b)}",
        "",
        "| metric | A | B | B − A |",
        "|---|---|---|---|",
    ]

    def show(value: float | None, scale: float, digits: int) -> str:
        return "–" if value is None else f"{value * scale:.{digits}f}"

    for label, get, scale, digits in COMPARED:
        va, vb = get(sa.overall), get(sb.overall)
        out.append(
            f"| {label} | {show(va, scale, digits)} | {show(vb, scale, digits)} | "
            f"{_delta(va, vb, scale, digits)} |"
        )
    out += ["", "## Satisfaction Score per scenario (%)", ""]
    out += ["| scenario | A | B | B − A |", "|---|---|---|---|"]
    for scenario in dict.fromkeys([*sa.scenarios, *sb.scenarios]):
        va = sa.scenarios[scenario].ss if scenario in sa.scenarios else None
        vb = sb.scenarios[scenario].ss if scenario in sb.scenarios else None
        out.append(f"| {scenario} | {pct(va)} | {pct(vb)} | {_delta(va, vb)} |")
    common = [t for t in sa.tasks if t in sb.tasks]
    if common:
        out += ["", "## Satisfaction Score per task (%)", "", "| task | A | B | B − A |", "|---|---|---|---|"]
        for task in common:
            va, vb = sa.tasks[task].ss, sb.tasks[task].ss
            out.append(f"| {task} | {pct(va)} | {pct(vb)} | {_delta(va, vb)} |")
    return "\n".join(out) + "\n"
