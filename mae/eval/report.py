"""``report.md`` and ``report.html`` of an eval folder, and ``compare`` of two folders.

Both reports hold the same tables: the paper's Table 3 layout (SS, AA, RA, TE), its Table 4 layout
(per backbone), the per-scenario and per-task tables, and how each number was graded. Every table
also shows the code's AA/RA proxies under their own names, the harness exits apart from TE, and the
efficiency figures (steps, steps / reference operations, model calls, input tokens, dollars and
seconds per task, seconds per operation). The HTML embeds the plots. ``compare`` shows B - A deltas,
with 95% intervals over the tasks both evals ran where a figure has one value per run.
"""

from __future__ import annotations

import base64
import html
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mae.errors import MaeError
from mae.eval.marks import judged_records
from mae.eval.memory_report import MEMORY_HEADERS, memory_rows
from mae.eval.metrics import (
    EvalSummary,
    GroupMetrics,
    confidence_interval,
    group_metrics,
    satisfaction,
    summarize,
)
from mae.eval.plots import grader_label, write_plots
from mae.eval.records import TaskRecord, read_results
from mae.eval.runner import EvalOptions, read_options
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


NOT_JUDGED = "not judged"


def loading_option(records: Sequence[TaskRecord]) -> str:
    """Whether the runs skipped the Manager and the Notetaker on screens still loading (the loop option
    ``skip_planning_while_loading``): "on", "off", "on in k of n runs", or "not recorded"."""
    if records and all(r.agent != "e" for r in records):
        return "not used (it applies to Mobile-Agent-E; the baselines' loops are the papers')"
    known = [r.skip_planning_while_loading for r in records if r.skip_planning_while_loading is not None]
    if not known:
        return "not recorded"
    if len(known) == len(records) and len(set(known)) == 1:
        return "on" if known[0] else "off"
    return f"on in {sum(known)} of {len(records)} runs"


def _settings_rows(records: Sequence[TaskRecord]) -> list[tuple[str, str]]:
    """What a run was started with, as compared between two evals."""
    return [
        ("agent", model_name(records)[0]),
        ("backbone", ", ".join(sorted({r.backbone for r in records})) or "?"),
        ("setting", ", ".join(sorted({r.setting for r in records})) or "?"),
        ("skip planning while loading", loading_option(records)),
    ]


FROM_RESULTS = {"agent", "backbone", "setting", "skip_planning_while_loading"}
"""The options ``_settings_rows`` reads from the results themselves (what each run really used)."""
NOT_SETTINGS = {"started_at"}
UNSET = {"tasks": "all of the suite", "seed": "each task's own"}
"""How an option left unset reads (``None`` in ``eval.json``)."""


def _options_rows(folder: Path | str) -> list[tuple[str, str]]:
    """Every other option ``eval.json`` records (max steps, repeats, realism, seed, ...), one row each;
    "not recorded" where the folder has no ``eval.json``."""
    names = [n for n in EvalOptions.model_fields if n not in FROM_RESULTS | NOT_SETTINGS]
    try:
        options = read_options(Path(folder))
    except MaeError:
        options = None
        missing = "unreadable"
    else:
        missing = "not recorded"
    rows = []
    for name in names:
        value = getattr(options, name) if options is not None else None
        shown = missing if options is None else UNSET.get(name, "–") if value is None else str(value)
        rows.append((name.replace("_", " "), shown))
    return rows


def judged(m: GroupMetrics, name: str) -> str:
    """AA or RA as the paper means them (a person's or a model judge's marks), or "not judged"."""
    value = getattr(m, name)
    return NOT_JUDGED if value is None else pct(value, m.ci.get(name))


def _metric_cells(m: GroupMetrics) -> list[str]:
    """The paper's four columns: SS, AA, RA (judged), TE (exits 2-5)."""
    return [pct(m.ss, m.ci.get("ss")), judged(m, "aa"), judged(m, "ra"), pct(m.te, m.ci.get("te"))]


def _proxy_cells(m: GroupMetrics) -> list[str]:
    return [
        pct(m.aa_proxy, m.ci.get("aa_proxy")),
        pct(m.ra_proxy, m.ci.get("ra_proxy")),
        pct(m.harness_exits),
    ]


PROXY_HEADERS = ["AA (code proxy) ↑", "RA (code proxy) ↑", "harness exits (%)"]


def dollars(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


def _efficiency_cells(m: GroupMetrics) -> list[str]:
    return [
        num(m.steps),
        num(m.steps_per_ref, 2),
        num(m.model_calls),
        f"{m.input_tokens:.0f}",
        dollars(m.cost_usd),
        num(m.s_per_task),
        num(m.s_per_op, 2),
    ]


EFFICIENCY_HEADERS = ["steps", "steps/ref ops", "model calls", "input tokens", "$/task", "s/task", "s/op"]


RUN_HEADERS = ["SS", "AA", "RA", *PROXY_HEADERS[:2], *EFFICIENCY_HEADERS]
"""The figures of one task run, named as in the per-task table (the Evaluate tab's results table)."""


def run_cells(record: TaskRecord) -> list[str]:
    """One task run's SS, judged AA/RA ("not judged" when nobody marked), the code proxies and the
    efficiency figures, as the report's tables show them (``RUN_HEADERS``)."""
    m = group_metrics([record])
    return [
        pct(m.ss),
        judged(m, "aa"),
        judged(m, "ra"),
        pct(m.aa_proxy),
        pct(m.ra_proxy),
        *_efficiency_cells(m),
    ]


def _detail_cells(m: GroupMetrics) -> list[str]:
    return [
        pct(m.shortcut_pct),
        num(m.model_s_per_op, 2),
        num(m.perception_s_per_op, 2),
        num(m.execution_s_per_op, 2),
        f"{m.tokens:.0f}",
        f"{m.images:.1f}",
    ]


DETAIL_HEADERS = [
    "Shortcut %",
    "model s/op",
    "perception s/op",
    "execution s/op",
    "tokens/task",
    "images/task",
]


def build_report(records: Sequence[TaskRecord], summary: EvalSummary) -> Report:
    name, kind = model_name(records)
    graded_by = grader_label(records)
    backbones = sorted({r.backbone for r in records}) or ["?"]
    repeats = summary.overall.repeats
    lines = [
        f"{name} · backbone {', '.join(backbones)} · setting {records[0].setting if records else '?'} · "
        f"{len({r.task_id for r in records})} task(s) × {repeats} repeat(s) · {graded_by}",
        f"Loop option: skip planning while loading {loading_option(records)}.",
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
                *PROXY_HEADERS,
                *EFFICIENCY_HEADERS,
            ],
            [[name, kind, *_metric_cells(overall), *_proxy_cells(overall), *_efficiency_cells(overall)]],
            note="± is the 95% confidence interval over repeats." if repeats > 1 else "",
        ),
        Table(
            "By backbone (the paper's Table 4 layout)",
            ["Model", *[f"{b}: SS ↑ · AA ↑ · RA ↑ · TE ↓ · steps · $/task · s/task" for b in backbones]],
            [
                [
                    name,
                    *[
                        _backbone_cell(summarize([r for r in records if r.backbone == b]).overall)
                        for b in backbones
                    ],
                ]
            ],
        ),
        Table(
            "Per scenario",
            [
                "Scenario",
                "tasks",
                "SS",
                "AA",
                "RA",
                "TE",
                *PROXY_HEADERS,
                *EFFICIENCY_HEADERS,
                *DETAIL_HEADERS,
            ],
            [[n, str(m.tasks), *_all_cells(m)] for n, m in summary.scenarios.items()]
            + [["**overall**", str(overall.tasks), *_all_cells(overall)]],
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
                str(refs),
                *_metric_cells(m),
                *_proxy_cells(m),
                *_efficiency_cells(m),
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
                "reference ops",
                "SS",
                "AA",
                "RA",
                "TE",
                *PROXY_HEADERS,
                *EFFICIENCY_HEADERS,
                "graded by",
            ],
            task_rows,
        )
    )
    memory = memory_rows(records)
    if memory:
        tables.append(
            Table(
                "Long-term memory per task (Tips and Shortcuts)",
                MEMORY_HEADERS,
                memory,
                note="Tips given: the Tips in the run's prompts, of those in the memory it started from "
                "(retrieved: the Experience Retrievers chose them). Shortcuts used: calls the Operator "
                "made. Written after it: what the Experience Reflectors added to the memory the "
                "scenario's next task starts from (evolution setting).",
            )
        )
    notes = [
        "SS = fulfilled rubric items / all items, averaged over graded tasks. AA = correct actions / judged "
        "actions and RA = correct Action Reflector verdicts / judged verdicts, as marked by a person (or a "
        'model judge) in the Judge view; "not judged" when nobody marked them. TE = tasks that ended by '
        "one of the paper's exits 2-5 (step limit, consecutive errors, repeated action, unusable reply) / "
        "tasks; harness exits (a refused sensitive action, a stop, a provider or phone failure, a crash) "
        "are not the agent's and are counted apart.",
        "Efficiency: steps per task, steps / the task's reference operations, model calls, input tokens, "
        "dollars (at the backbone's list prices) and seconds per task; seconds per operation = wall time "
        "of the runs / atomic operations; model = time waiting for models, perception = the Perceptor, "
        "execution = actions on the phone including settling.",
    ]
    if any(r.correctness_source == "code" for r in records):
        notes.append(
            "AA (code proxy) and RA (code proxy) are the virtual suite's estimates, not the paper's AA and "
            "RA: an action counts as wrong when it did not change the phone, lost a rubric item the final "
            "state lacks, or came after the run's last progress in a run that fell short; leaving a page to "
            "explore is not wrong. A verdict is right when the Action Reflector said A exactly for the "
            "actions counted right. Marks made in the Judge view replace them."
        )
    if any(r.grader == "model" or r.correctness_source == "model" for r in records):
        notes.append("Some grades come from a MODEL JUDGE, not a person: treat them as estimates.")
    costs = {r.cost_note for r in records if r.cost_note}
    if costs:
        notes.append("Cost: estimated from list prices; " + "; ".join(sorted(costs)) + ".")
    return Report("Evaluation report", lines, tables, notes)


def _backbone_cell(m: GroupMetrics) -> str:
    return " · ".join([*_metric_cells(m), num(m.steps), dollars(m.cost_usd), num(m.s_per_task)])


def _all_cells(m: GroupMetrics) -> list[str]:
    return [*_metric_cells(m), *_proxy_cells(m), *_efficiency_cells(m), *_detail_cells(m)]


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


def proxy_agreement(raw: Sequence[TaskRecord], judged: Sequence[TaskRecord]) -> str:
    """How often the code's AA/RA proxies agree with a person's marks, over the runs a person marked
    (a sentence for the report; empty when no run has both)."""
    by_key = {r.key: r for r in raw if r.correctness_source == "code"}
    pairs = {"actions": [0, 0], "verdicts": [0, 0]}
    runs = 0
    for record in judged:
        code = by_key.get(record.key)
        if code is None or record.correctness_source != "person":
            continue
        runs += 1
        for name, mine, theirs in (
            ("actions", code.action_correct, record.action_correct),
            ("verdicts", code.reflection_correct, record.reflection_correct),
        ):
            both = [(a, b) for a, b in zip(mine, theirs, strict=False) if a is not None and b is not None]
            pairs[name][0] += sum(a == b for a, b in both)
            pairs[name][1] += len(both)
    if not runs:
        return ""
    parts = [f"{same} of {total} {name}" for name, (same, total) in pairs.items() if total]
    return (
        f"Agreement of the code proxies with a person's marks, over the {runs} run(s) a person marked: "
        + ("; ".join(parts) or "nothing to compare")
        + "."
    )


def write_reports(folder: Path | str) -> dict[str, Path]:
    """Recompute the metrics of ``folder`` (with the Judge's marks) and write the reports and plots."""
    folder = Path(folder)
    raw = read_results(folder)
    records = judged_records(folder, raw)
    summary = summarize(records)
    plots = write_plots(folder, summary, records)
    report = build_report(records, summary)
    agreement = proxy_agreement(raw, records)
    if agreement:
        report.notes.append(agreement)
    atomic_write_text(folder / "report.md", render_markdown(report, plots))
    atomic_write_text(folder / "report.html", render_html(report, plots))
    atomic_write_text(folder / "metrics.json", summary.model_dump_json(indent=2) + "\n")
    return {"report.md": folder / "report.md", "report.html": folder / "report.html", **plots}


def _delta(a: float | None, b: float | None, scale: float = 100.0, digits: int = 1) -> str:
    if a is None or b is None:
        return "–"
    return f"{(b - a) * scale:+.{digits}f}"


RunValue = Callable[[TaskRecord], float | None]


def _steps_per_ref(r: TaskRecord) -> float | None:
    return len(r.actions) / r.reference_operations if r.reference_operations > 0 else None


COMPARED: list[tuple[str, Callable[[GroupMetrics], float | None], float, int, RunValue | None]] = [
    ("Satisfaction Score (%)", lambda m: m.ss, 100.0, 1, satisfaction),
    ("Action Accuracy (%)", lambda m: m.aa, 100.0, 1, None),
    ("Reflection Accuracy (%)", lambda m: m.ra, 100.0, 1, None),
    ("AA (code proxy) (%)", lambda m: m.aa_proxy, 100.0, 1, None),
    ("RA (code proxy) (%)", lambda m: m.ra_proxy, 100.0, 1, None),
    ("Termination Error (%)", lambda m: m.te, 100.0, 1, lambda r: float(r.termination_error)),
    ("harness exits (%)", lambda m: m.harness_exits, 100.0, 1, lambda r: float(r.harness_exit)),
    ("steps per task", lambda m: m.steps, 1.0, 1, lambda r: float(len(r.actions))),
    ("steps / reference ops", lambda m: m.steps_per_ref, 1.0, 2, _steps_per_ref),
    ("model calls per task", lambda m: m.model_calls, 1.0, 1, lambda r: float(r.totals.model_calls)),
    ("input tokens per task", lambda m: m.input_tokens, 1.0, 0, lambda r: float(r.totals.input_tokens)),
    ("dollars per task", lambda m: m.cost_usd, 1.0, 4, lambda r: r.cost_usd),
    ("seconds per task", lambda m: m.s_per_task, 1.0, 1, lambda r: r.totals.seconds),
    ("seconds per operation", lambda m: m.s_per_op, 1.0, 2, None),
    ("Shortcut usage (%)", lambda m: m.shortcut_pct, 100.0, 1, None),
    ("model s/op", lambda m: m.model_s_per_op, 1.0, 2, None),
    ("perception s/op", lambda m: m.perception_s_per_op, 1.0, 2, None),
    ("execution s/op", lambda m: m.execution_s_per_op, 1.0, 2, None),
    ("tokens per task", lambda m: m.tokens, 1.0, 0, None),
]
"""Label, the group figure, display scale and digits, and the figure of one run when it has one (those
get an interval for B - A)."""


def paired_interval(a: Sequence[TaskRecord], b: Sequence[TaskRecord], value: RunValue) -> float | None:
    """95% half-width of B - A for a per-run figure, paired by task: each task's mean over its runs in
    B minus that in A, over the tasks where both have a value (None below two such tasks)."""

    def per_task(records: Sequence[TaskRecord]) -> dict[str, float]:
        values: dict[str, list[float]] = {}
        for r in records:
            v = value(r)
            if v is not None:
                values.setdefault(r.task_id, []).append(v)
        return {task: sum(vs) / len(vs) for task, vs in values.items()}

    ta, tb = per_task(a), per_task(b)
    return confidence_interval([tb[t] - ta[t] for t in ta if t in tb])


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
    out += ["| settings | A | B | |", "|---|---|---|---|"]
    rows_a = [*_settings_rows(records_a), *_options_rows(a)]
    rows_b = [*_settings_rows(records_b), *_options_rows(b)]
    for (label, in_a), (_, in_b) in zip(rows_a, rows_b, strict=True):
        out.append(f"| {label} | {in_a} | {in_b} | {'same' if in_a == in_b else 'differs'} |")
    out += [
        "",
        f"A: {grader_label(records_a)}; B: {grader_label(records_b)}",
        "",
        "| metric | A | B | B − A | 95% interval of B − A |",
        "|---|---|---|---|---|",
    ]

    def show(value: float | None, scale: float, digits: int) -> str:
        return "–" if value is None else f"{value * scale:.{digits}f}"

    for label, get, scale, digits, per_run in COMPARED:
        va, vb = get(sa.overall), get(sb.overall)
        half = paired_interval(records_a, records_b, per_run) if per_run is not None else None
        interval = "–" if half is None or va is None or vb is None else f"± {half * scale:.{digits}f}"
        out.append(
            f"| {label} | {show(va, scale, digits)} | {show(vb, scale, digits)} | "
            f"{_delta(va, vb, scale, digits)} | {interval} |"
        )
    out += [
        "",
        "Intervals are paired by task (each task's B − A, over the tasks both ran); none below two tasks "
        "or for pooled ratios. AA and RA are a person's or model judge's marks; the code proxies are "
        "the virtual suite's estimates.",
    ]
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
