"""The coordinate doctor's report: a Markdown file, one picture of the targets and taps, a short summary.

``summary_markdown`` holds only what mae wrote (verdict, numbers, advice), so the demo can render it;
``report_markdown`` adds the model's replies, quoted as code so nothing in them is rendered.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

from mae.device.virtual.render import font
from mae.serving.calibration import calibration_cases
from mae.serving.doctor import DoctorReport
from mae.serving.doctor_fit import ReadingFit

REPORT_NAME = "report.md"
PICTURE_NAME = "doctor.png"
THUMB_SIDE = 460
PICTURE_WIDTH = 1500
_VERDICT_TITLES = {
    "ok": "taps land on target",
    "switch": "another convention fits: change the setting",
    "unsupported": "the model answers in a form mae cannot use",
    "unexplained": "no convention explains the replies",
    "unreadable": "the replies give no points",
}


def _error_text(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f} px" if value < 100_000 else "far off screen"


def _percent(share: float) -> str:
    return f"{share * 100:.0f} %"


def apparent_size(report: DoctorReport) -> str | None:
    """The frame the model appears to answer in, for the image size most screenshots were sent at, and
    what the detected (else configured) convention predicts for it."""
    fitted = [group for group in report.free.groups if group.frame is not None]
    if not fitted:
        return None
    group = max(fitted, key=lambda g: g.replies)
    assert group.frame is not None
    shown = report.shown.name
    predicted = group.predicted.get(shown)
    expectation = f"; '{shown}' predicts {predicted[0]:g}x{predicted[1]:g}" if predicted else ""
    return (
        f"Screenshots sent at {group.sent_size[0]}x{group.sent_size[1]} are answered as if the image were "
        f"{group.frame[0]}x{group.frame[1]}{expectation}."
    )


def summary_markdown(report: DoctorReport) -> str:
    """Verdict, setting, advice and warnings: only text mae wrote."""
    lines = [f"### Verdict: {_VERDICT_TITLES[report.verdict]}", "", report.headline, ""]
    if report.setting:
        lines += [f"Setting: `{report.setting}`", ""]
    lines += [f"- {advice}" for advice in report.advice]
    if report.warnings:
        lines += ["", "**Warnings**", ""] + [f"- {warning}" for warning in report.warnings]
    configured = report.configured_fit
    apparent = apparent_size(report)
    lines += ["", apparent] if apparent else []
    lines += [
        "",
        f"Under the configured '{report.configured}' convention: {configured.hits}/{configured.total} on "
        f"target ({_percent(configured.hit_rate)}; the threshold is {_percent(report.threshold)}).",
    ]
    return "\n".join(lines).strip() + "\n"


def summary_text(report: DoctorReport) -> str:
    """The summary for a terminal: verdict, setting, advice, warnings, the configured hit rate."""
    configured = report.configured_fit
    lines = [f"verdict: {_VERDICT_TITLES[report.verdict]}", report.headline]
    if report.setting:
        lines.append(f"setting: {report.setting}")
    lines += [f"- {advice}" for advice in report.advice]
    lines += [f"warning: {warning}" for warning in report.warnings]
    apparent = apparent_size(report)
    lines += [apparent] if apparent else []
    lines.append(
        f"configured '{report.configured}': {configured.hits}/{configured.total} on target "
        f"({_percent(configured.hit_rate)}; threshold {_percent(report.threshold)})"
    )
    return "\n".join(lines)


def _fit_row(fit: ReadingFit, report: DoctorReport) -> str:
    marks = []
    if fit.name == report.configured:
        marks.append("configured")
    if fit.name == report.detected:
        marks.append("detected")
    name = f"{fit.name} ({', '.join(marks)})" if marks else fit.name
    setting = f"`{fit.setting}`" if fit.setting else "-"
    same = ", ".join(fit.same_as) or "-"
    return (
        f"| {name} | {setting} | {fit.hits}/{fit.total} | {_percent(fit.hit_rate)} | "
        f"{_error_text(fit.median_error_px)} | {same} |"
    )


def _quoted(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return "`" + flat.replace("`", "'").replace("|", "\\|") + "`" if flat else "(empty)"


def report_markdown(report: DoctorReport, picture: str | None = PICTURE_NAME) -> str:
    """The full report: summary, hit rate per convention, apparent image sizes, every reply."""
    lines = [
        f"# Coordinate doctor: {report.model}",
        "",
        f"Server {report.base_url}; configured convention '{report.configured}'; {len(report.replies)} "
        f"requests; threshold {_percent(report.threshold)}.",
        "",
        summary_markdown(report),
        "## Hit rate per convention",
        "",
        "Each reply read under each convention; a tap counts when it lands inside the target's box. The "
        "error is the distance from the tap to the target's centre, in screen pixels.",
        "",
        "| reading | setting | on target | hit rate | median error | same taps as |",
        "|---|---|---|---|---|---|",
        *[_fit_row(fit, report) for fit in report.fits],
        "",
        f"A free scale and offset fitted per image size puts {report.free.hits}/{report.free.total} on "
        "target.",
        "",
        "## Image size the server appears to use",
        "",
        "| sent at | screens | answers as if the image were | offset | qwen2.5-vl | ui-tars-1.5 | screen |",
        "|---|---|---|---|---|---|---|",
    ]
    for group in report.free.groups:
        frame = f"{group.frame[0]}x{group.frame[1]}" if group.frame else "(no fit)"
        predicted = [group.predicted.get(name) for name in ("qwen2.5-vl", "ui-tars-1.5", "screen")]
        cells = " | ".join(f"{p[0]:.0f}x{p[1]:.0f}" if p else "-" for p in predicted)
        screens = ", ".join(f"{w}x{h}" for w, h in group.screen_sizes)
        lines.append(
            f"| {group.sent_size[0]}x{group.sent_size[1]} | {screens} | {frame} | {group.offset} | {cells} |"
        )
    lines += ["", "## By prompt", ""]
    names = {"grounding": "mae's short grounding request", "operator": "the Operator prompt"}
    for style, best in report.by_style.items():
        lines.append(f"- {names[style]}: {f'fits {best!r}' if best else 'no convention fits'}")
    shown = report.shown
    lines += [
        "",
        f"## Replies (taps read as '{shown.name}')",
        "",
        "| # | prompt | screen | target | point as written | tap | on target | reply |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for reply, tap in zip(report.replies, shown.taps, strict=True):
        point = f"({reply.point[0]:g}, {reply.point[1]:g})" if reply.point else "-"
        hit = "yes" if tap is not None and reply.hit(tap) else "no"
        text = f"failed: {_quoted(reply.error)}" if reply.error else _quoted(reply.text)
        lines.append(
            f"| {reply.index + 1} | {reply.style} | {reply.screen} | {_quoted(reply.target, 60)} | {point} | "
            f"{tap or '-'} | {hit} | {text} |"
        )
    if picture:
        lines += ["", f"![targets and taps]({picture})"]
    return "\n".join(lines) + "\n"


def render_picture(report: DoctorReport) -> Image.Image:
    """Every calibration screen used, with each target's box and where the model's taps landed."""
    images = {case.screen.name: case.screen.image for case in calibration_cases()}
    shown = report.shown
    names = list(dict.fromkeys(reply.screen for reply in report.replies))
    thumbs: list[tuple[str, Image.Image, float]] = []
    for name in names:
        image = images[name]
        scale = THUMB_SIDE / max(image.size)
        thumb = image.resize(
            (round(image.width * scale), round(image.height * scale)), Image.Resampling.BILINEAR
        )
        thumbs.append((name, thumb, scale))
    gap, label_h, header_h = 16, 28, 64
    positions: list[tuple[int, int]] = []
    x, y, row_h = gap, header_h, 0
    for _, thumb, _ in thumbs:
        if x + thumb.width + gap > PICTURE_WIDTH and x > gap:
            x, y, row_h = gap, y + row_h + label_h + gap, 0
        positions.append((x, y + label_h))
        x += thumb.width + gap
        row_h = max(row_h, thumb.height)
    canvas = Image.new("RGB", (PICTURE_WIDTH, y + row_h + label_h + gap), "white")
    draw = ImageDraw.Draw(canvas)
    draw.text((gap, 12), f"Verdict: {_VERDICT_TITLES[report.verdict]}", fill="#202124", font=font(24))
    draw.text(
        (gap, 40),
        f"taps read as '{shown.name}': blue box = target, green = tap inside, red = missed "
        "(circle: mae's request, square: Operator prompt)",
        fill="#5f6368",
        font=font(16),
    )
    for (name, thumb, scale), (left, top) in zip(thumbs, positions, strict=True):
        canvas.paste(thumb, (left, top))
        draw.rectangle((left, top, left + thumb.width - 1, top + thumb.height - 1), outline="#9aa0a6")
        draw.text((left, top - label_h + 4), name, fill="#202124", font=font(16))
        for reply, tap in zip(report.replies, shown.taps, strict=True):
            if reply.screen != name:
                continue
            box = [round(v * scale) for v in reply.box]
            draw.rectangle(
                (left + box[0], top + box[1], left + box[2], top + box[3]), outline="#1a73e8", width=3
            )
            if tap is None:
                continue
            inside = reply.hit(tap)
            tx = left + min(max(round(tap[0] * scale), 0), thumb.width - 1)
            ty = top + min(max(round(tap[1] * scale), 0), thumb.height - 1)
            colour = "#188038" if inside else "#d93025"
            if not inside:
                cx, cy = reply.center
                draw.line((tx, ty, left + round(cx * scale), top + round(cy * scale)), fill=colour, width=2)
            r = 7
            marker = (tx - r, ty - r, tx + r, ty + r)
            if reply.style == "grounding":
                draw.ellipse(marker, fill=colour, outline="white", width=2)
            else:
                draw.rectangle(marker, fill=colour, outline="white", width=2)
    return canvas


def write_report(report: DoctorReport, folder: Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``doctor.png`` into ``folder`` (created if missing); their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    picture = folder / PICTURE_NAME
    render_picture(report).save(picture)
    markdown = folder / REPORT_NAME
    markdown.write_text(report_markdown(report), encoding="utf-8")
    return markdown, picture
