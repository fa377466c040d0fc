"""A finished run as one self-contained HTML page: hand it out, open it offline in any browser.

The page holds everything inline (screens as base64 JPEG, styles, the SSS curve as SVG): for each step
the screen with the action drawn on it next to the step's card (every agent's reasoning, timings and
tokens), then the final screen; a header with the task, exit, totals and, when the run was graded,
its Satisfaction Score curve.
"""

from __future__ import annotations

import base64
import html
import io
import tempfile
import time
from pathlib import Path

from PIL import Image

from mae.ui.history import Grade, RunReplay, grade_of, load_replay, summary_markdown
from mae.ui.style import CSS
from mae.ui.views import step_html

PAGE_CSS = """
:root { --body-text-color-subdued: #6b7280; --border-color-primary: #e5e7eb;
  --background-fill-secondary: #f9fafb; }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1100px;
  color: #111827; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; }
.mae-meta { color: #4b5563; margin-bottom: 16px; }
.mae-row { display: grid; grid-template-columns: 320px 1fr; gap: 20px; margin: 18px 0; align-items: start; }
.mae-row img { width: 320px; border-radius: 14px; background: #111; }
.mae-curve { margin: 12px 0 20px; }
.mae-rubric { margin: 4px 0 12px 0; padding-left: 20px; }
"""


def _image_uri(path: Path, width: int = 360) -> str:
    """``path`` scaled to ``width`` as a JPEG data URI ("" when it cannot be read)."""
    try:
        with Image.open(path) as handle:
            image = handle.convert("RGB")
    except OSError:
        return ""
    if image.width > width:
        image = image.resize(
            (width, max(1, round(image.height * width / image.width))), Image.Resampling.LANCZOS
        )
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=82)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def curve_svg(curve: list[float], width: int = 520, height: int = 180) -> str:
    """The Satisfaction Score after each step (0 = the start) as an inline SVG line chart."""
    pad = 34
    steps = max(1, len(curve) - 1)

    def point(i: int, value: float) -> tuple[float, float]:
        x = pad + (width - 2 * pad) * i / steps
        y = height - pad - (height - 2 * pad) * max(0.0, min(1.0, value))
        return round(x, 1), round(y, 1)

    points = [point(i, v) for i, v in enumerate(curve)]
    line = " ".join(f"{x},{y}" for x, y in points)
    dots = "".join(f'<circle cx="{x}" cy="{y}" r="3.5" fill="#6366f1"/>' for x, y in points)
    ticks = "".join(
        f'<text x="{point(i, 0)[0]}" y="{height - pad + 16}" font-size="11" text-anchor="middle">{i}</text>'
        for i in range(len(curve))
    )
    axes = (
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#9ca3af"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#9ca3af"/>'
        f'<text x="{pad - 6}" y="{pad + 4}" font-size="11" text-anchor="end">100%</text>'
        f'<text x="{pad - 6}" y="{height - pad + 4}" font-size="11" text-anchor="end">0%</text>'
        f'<text x="{width / 2}" y="{height - 4}" font-size="11" text-anchor="middle">step</text>'
    )
    return (
        f'<svg class="mae-curve" id="mae-sss-curve" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="Satisfaction Score after each step">'
        f'{axes}<polyline points="{line}" fill="none" stroke="#6366f1" stroke-width="2"/>{dots}{ticks}</svg>'
    )


def _grade_html(grade: Grade) -> str:
    score = grade.score or 0.0
    parts = [f"<h2>Satisfaction Score: {score:.0%}</h2>", curve_svg(grade.curve)]
    if grade.rubrics:
        items = "".join(
            f"<li>{'✔' if i < len(grade.passed) and grade.passed[i] else '✖'} {html.escape(r)}</li>"
            for i, r in enumerate(grade.rubrics)
        )
        parts.append(f'<ul class="mae-rubric">{items}</ul>')
    return "".join(parts)


def _markdown_line(text: str) -> str:
    """The replay summary's Markdown as simple HTML (bold and code only)."""
    out = html.escape(text)
    for marker, tag in (("**", "b"), ("`", "code")):
        pieces = out.split(marker)
        out = "".join(p if i % 2 == 0 else f"<{tag}>{p}</{tag}>" for i, p in enumerate(pieces))
    return out.replace("\n\n", "<br>")


def render_html(replay: RunReplay) -> str:
    """The whole page of ``replay`` (a string; nothing outside it is referenced)."""
    info = replay.info
    rows = []
    for step, path in replay.frames:
        record = replay.steps.get(step)
        if record is None:
            card = f'<p class="mae-empty">Final screen after step {step - 1}.</p>'
        else:
            card = step_html(record)
        uri = _image_uri(path)
        picture = f'<img alt="screen of step {step}" src="{uri}">' if uri else "<p>(screen missing)</p>"
        body = f'{picture}<div class="mae-timeline">{card}</div>'
        rows.append(f'<section class="mae-row" id="frame-{step}">{body}</section>')
    pictured = {step for step, _ in replay.frames}
    for index in sorted(replay.steps):  # steps without a screenshot (e.g. the Manager finishing)
        if index > 0 and index not in pictured:
            rows.append(
                f'<section class="mae-row" id="frame-{index}"><div></div>'
                f'<div class="mae-timeline">{step_html(replay.steps[index])}</div></section>'
            )
    grade = grade_of(info.path)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.started)) if info.started else ""
    meta = _markdown_line(summary_markdown(replay))
    title = html.escape(info.task[:80] or info.path.name)
    message = html.escape(str(replay.summary.get("message") or ""))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>'
        f"<style>{PAGE_CSS}{CSS}</style></head><body>"
        f'<h1>Mobile-Agent-E run</h1><div class="mae-meta">{meta}<br>{html.escape(when)}'
        f"{' · ' + message if message else ''}</div>"
        f"{_grade_html(grade) if grade is not None else ''}"
        f'<main id="mae-run-steps">{"".join(rows)}</main></body></html>'
    )


def export_html(run_dir: Path | str, out_dir: Path | None = None) -> Path:
    """Write ``<run>.html`` (self-contained) for a finished run; ``ValueError`` if it is not a run."""
    replay = load_replay(run_dir)
    if replay is None:
        raise ValueError(f"{Path(run_dir).name} is not a run folder: there is nothing to export")
    out_dir = out_dir or Path(tempfile.mkdtemp(prefix="mae-html-"))
    target = out_dir / f"{replay.info.path.name}.html"
    target.write_text(render_html(replay), encoding="utf-8")
    return target
