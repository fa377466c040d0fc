"""Benchmark the Perceptor on 1080x2340 screenshots: cold and in-task latency, CPU time, text recall.

Screens: by default the distinct screens the virtual phone shows while replaying the reference actions
of its task suite, in task order; ``--hard`` adds degraded copies of each (JPEG at quality 55 with a
slight blur, dark mode, and a 720 px render upscaled to 1080 px) to stand in for real screenshots;
``--dense`` adds copies with the content drawn at 75 % and 60 % of its size (the text of a phone set to
a smaller display size), for choosing the detection resolution; pass image files to use your own.

Two figures, each the median with its spread over every screen of every pass:

- **cold**: a screen never seen before, nothing cached (the line cache off); models loaded.
- **in task**: the screens in task order with the line cache on, starting empty each pass, so lines
  seen on earlier screens of the same task (unchanged or scrolled) are not recognised again.

Wall time and CPU time (all threads of this process) per screen are both reported: CPU time moves much
less than wall time when other processes share the machine. ``--accuracy`` (virtual screens only)
reports text and icon recall against the phone's ground truth: a text line (2+ characters) counts when
an element has the same text (ignoring spaces) with its centre within 12 px; an icon counts when a found
icon box holds its centre and covers 30% of it. ``--compare`` measures OCR settings side by side,
interleaved screen by screen so the machine's load falls on each alike.

    python benchmarks/perception.py                              # cold + in task, 30 virtual screens
    python benchmarks/perception.py --accuracy --hard            # plus recall, plus harder screens
    python benchmarks/perception.py --compare det_max_side=1600 det_max_side=1280 --accuracy
    python benchmarks/perception.py --compare det_max_side=1600 det_max_side=1472 --accuracy --dense
    python benchmarks/perception.py --compare mem_arena=1 mem_arena=0  # onnxruntime's memory arena
    python benchmarks/perception.py --ocr-device cuda            # the GPU (needs onnxruntime-gpu)
    python benchmarks/perception.py shots/*.png --repeat 3       # your own screenshots
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import load_average, machine, machine_line, spread, spread_text
from PIL import Image, ImageFilter, ImageOps

from mae.actions.reading import parse_action_text
from mae.actions.registry import resolve_call
from mae.device.virtual import VirtualPhone
from mae.eval.virtual_suite import load_task_suite
from mae.perception import Element, Perceptor
from mae.perception.geometry import box_area, intersection
from mae.perception.icons import IconDetector, make_icon_detector
from mae.perception.ocr import RapidOcrBackend, make_ocr

TARGET_S = 0.45
"""Target: median cold Perceptor time per new 1080x2340 screenshot on 2 quiet cores."""

Screen = tuple[Image.Image, list[Element] | None, str]
"""(image, ground truth or None, variant name)."""

OCR_OPTIONS = dict.fromkeys(
    (
        "det_max_side",
        "det_blank_keep",
        "rec_workers",
        "threads",
        "rec_strip",
        "rec_min_width",
        "fold",
        "mem_arena",
    ),
    int,
)


def virtual_screens(limit: int) -> list[Screen]:
    """Distinct screens of the virtual task suite's reference replays (task order), with ground truth."""
    seen: set[str] = set()
    screens: list[Screen] = []
    for task in load_task_suite():
        phone = VirtualPhone()
        for text in ["Home()", *task.reference_actions]:
            for step in resolve_call(parse_action_text(text), {}, phone.screen_size()):
                step.execute(phone)
            shot = phone.screenshot()
            digest = hashlib.sha1(shot.tobytes()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                screens.append((shot, phone.ground_truth(), "virtual"))
            if len(screens) >= limit:
                return screens
    return screens


def harder(image: Image.Image) -> list[tuple[Image.Image, str]]:
    """Degraded copies of a screenshot that keep its layout (the ground truth still holds)."""
    buffer = io.BytesIO()
    image.filter(ImageFilter.GaussianBlur(0.6)).save(buffer, format="JPEG", quality=55)
    jpeg = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    dark = ImageOps.invert(image.convert("RGB"))
    small = image.resize((image.width * 2 // 3, image.height * 2 // 3), Image.Resampling.BILINEAR)
    upscaled = small.resize(image.size, Image.Resampling.BICUBIC)
    return [(jpeg, "jpeg55+blur"), (dark, "dark"), (upscaled, "720p-upscaled")]


DENSER = (0.75, 0.6)
"""Scales ``--dense`` draws each virtual screen's content at (smaller text, as with a smaller display
size or font on a real phone)."""


def denser(image: Image.Image, truth: list[Element]) -> list[Screen]:
    """Copies of a screen with its content drawn at each of ``DENSER``'s scales in the top-left corner,
    the rest filled with the colour at the bottom of the screen, and the ground truth scaled alike."""
    rgb = image.convert("RGB")
    background = rgb.getpixel((image.width // 2, image.height - 2))
    copies: list[Screen] = []
    for scale in DENSER:
        size = (round(image.width * scale), round(image.height * scale))
        canvas = Image.new("RGB", image.size, background)
        canvas.paste(rgb.resize(size, Image.Resampling.LANCZOS), (0, 0))
        scaled = [
            label.model_copy(update={"box": tuple(round(v * scale) for v in label.box)}) for label in truth
        ]
        copies.append((canvas, scaled, f"content-x{scale}"))
    return copies


def _squash(text: str) -> str:
    return "".join(text.split())


def one_edit_apart(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by at most one character changed, added or removed."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    start = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))
    if len(a) == len(b):
        return a[start + 1 :] == b[start + 1 :]
    return a[start:] == b[start + 1 :]


def recall(perceptor: Perceptor, screens: list[Screen]) -> dict[str, dict[str, Any]]:
    """Line-level text recall (texts of 2+ characters; exactly, and within one character's misreading)
    and icon recall per screen variant."""
    merge, perceptor.merge = perceptor.merge, False
    counts: dict[str, list[int]] = {}
    try:
        for image, truth, variant in screens:
            if truth is None:
                continue
            found = perceptor.perceive(image)
            tally = counts.setdefault(variant, [0, 0, 0, 0, 0])
            for label in truth:
                if label.kind == "text" and len(_squash(label.text)) > 1:
                    near = [e for e in found.texts if math.dist(e.center, label.center) <= 12]
                    tally[0] += 1
                    tally[1] += any(_squash(e.text) == _squash(label.text) for e in near)
                    tally[4] += any(one_edit_apart(_squash(e.text), _squash(label.text)) for e in near)
                elif label.kind == "icon":
                    tally[2] += 1
                    x, y = label.center
                    tally[3] += any(
                        e.box[0] <= x <= e.box[2]
                        and e.box[1] <= y <= e.box[3]
                        and intersection(e.box, label.box) > 0.3 * max(1, box_area(label.box))
                        for e in found.icons
                    )
    finally:
        perceptor.merge = merge
    return {
        variant: {
            "text_lines": t,
            "text_recall": round(th / t, 4) if t else None,
            "text_recall_one_edit": round(tn / t, 4) if t else None,
            "icons": i,
            "icon_recall": round(ih / i, 4) if i else None,
        }
        for variant, (t, th, i, ih, tn) in counts.items()
    }


def timed_perceive(perceptor: Perceptor, image: Image.Image) -> tuple[float, float, dict[str, float]]:
    """(wall seconds, CPU seconds of this process, per-stage timings) of one perception."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = perceptor.perceive(image)
    return time.perf_counter() - wall, time.process_time() - cpu, result.timings


def parse_spec(spec: str) -> dict[str, Any]:
    """``det_max_side=1280,rec_workers=1`` -> options for ``RapidOcrBackend``."""
    options: dict[str, Any] = {}
    for part in filter(None, spec.split(",")):
        key, _, value = part.partition("=")
        if key not in OCR_OPTIONS or not value:
            known = ", ".join(OCR_OPTIONS)
            raise SystemExit(f"--compare: use KEY=VALUE with KEY one of {known} (got {part!r})")
        options[key] = OCR_OPTIONS[key](value)
    return options


def make_perceptor(
    args: argparse.Namespace, icons: IconDetector | None, cache: bool, **extra: Any
) -> Perceptor:
    options: dict[str, Any] = {}
    if args.ocr == "rapidocr":
        options = {"rec_cache": 4096 if cache else 0, "device": args.ocr_device}
        if args.rec_workers:
            options["rec_workers"] = args.rec_workers
        if args.det_max_side:
            options["det_max_side"] = args.det_max_side
        options.update(extra)
    return Perceptor(make_ocr(args.ocr, **options), icons, tidy=not args.no_tidy)


def run_compare(
    args: argparse.Namespace, screens: list[Screen], icons: IconDetector | None
) -> dict[str, Any]:
    """Each spec's cold figures, measured round-robin screen by screen."""
    perceptors = {spec: make_perceptor(args, icons, cache=False, **parse_spec(spec)) for spec in args.compare}
    for perceptor in perceptors.values():
        perceptor.perceive(screens[0][0])  # load the models outside the measurement
    wall: dict[str, list[float]] = {spec: [] for spec in perceptors}
    cpu: dict[str, list[float]] = {spec: [] for spec in perceptors}
    for repeat in range(args.repeat):
        for index, (image, _, _) in enumerate(screens):
            order = list(perceptors)
            shift = (index + repeat) % len(order)  # rotate who goes first
            for spec in order[shift:] + order[:shift]:
                w, c, _ = timed_perceive(perceptors[spec], image)
                wall[spec].append(w)
                cpu[spec].append(c)
    report: dict[str, Any] = {}
    for spec, perceptor in perceptors.items():
        report[spec] = {"cold_wall_s": spread(wall[spec]), "cold_cpu_s": spread(cpu[spec])}
        if args.accuracy:
            report[spec]["accuracy"] = recall(perceptor, screens)
    return report


def run_main(args: argparse.Namespace, screens: list[Screen], icons: IconDetector | None) -> dict[str, Any]:
    cold = make_perceptor(args, icons, cache=False)
    cold.perceive(screens[0][0])  # load the models outside the measurement
    figures: dict[str, Any] = {}
    cold_wall: list[float] = []
    cold_cpu: list[float] = []
    task_wall: list[float] = []
    task_cpu: list[float] = []
    stages: dict[str, list[float]] = {}
    lines = cached = 0
    for _ in range(args.repeat):  # passes alternate cold and in-task so the load falls on both alike
        for image, _, _ in screens:
            w, c, timings = timed_perceive(cold, image)
            cold_wall.append(w)
            cold_cpu.append(c)
            for stage, seconds in timings.items():
                stages.setdefault(stage, []).append(seconds)
        in_task = make_perceptor(args, icons, cache=True)  # an empty line cache each pass
        for image, _, _ in screens:
            w, c, _ = timed_perceive(in_task, image)
            task_wall.append(w)
            task_cpu.append(c)
        if isinstance(in_task.ocr, RapidOcrBackend):
            lines += in_task.ocr.lines_seen
            cached += in_task.ocr.lines_cached
    figures["cold_wall_s"] = spread(cold_wall)
    figures["cold_cpu_s"] = spread(cold_cpu)
    figures["cold_stage_median_s"] = {k: spread(v)["median"] for k, v in stages.items()}
    figures["in_task_wall_s"] = spread(task_wall)
    figures["in_task_cpu_s"] = spread(task_cpu)
    figures["in_task_lines_from_cache"] = round(cached / lines, 3) if lines else None
    if isinstance(cold.ocr, RapidOcrBackend):
        figures["ocr_providers"] = cold.ocr.providers
        figures["ocr_det_max_side"] = cold.ocr.det_max_side
        figures["ocr_rec_workers"] = cold.ocr.rec_workers
    if args.accuracy:
        figures["accuracy"] = recall(cold, screens)
    figures["target_s"] = TARGET_S
    figures["meets_target"] = figures["cold_wall_s"]["median"] <= TARGET_S
    return figures


def print_accuracy(accuracy: dict[str, dict[str, Any]], indent: str = "  ") -> None:
    for variant, acc in accuracy.items():
        print(
            f"{indent}recall on {variant} screens: text {acc['text_recall']} over {acc['text_lines']} lines"
            f" ({acc['text_recall_one_edit']} within one misread character), icons {acc['icon_recall']} "
            f"over {acc['icons']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("images", nargs="*", type=Path, help="screenshots (default: virtual phone screens)")
    parser.add_argument("--screens", type=int, default=30, help="virtual screens to use (default 30)")
    parser.add_argument("--hard", action="store_true", help="add degraded copies of each virtual screen")
    parser.add_argument(
        "--dense",
        action="store_true",
        help="add copies of each virtual screen with its content drawn at 75%% and 60%% (smaller text)",
    )
    parser.add_argument("--repeat", type=int, default=2, help="passes over the screens (default 2)")
    parser.add_argument("--ocr", default="rapidocr", choices=["rapidocr", "paddleocr"])
    parser.add_argument(
        "--ocr-device", default="auto", choices=["auto", "cpu", "cuda"], help="rapidocr device"
    )
    parser.add_argument("--icons", default="contour", choices=["contour", "groundingdino", "none"])
    parser.add_argument("--rec-workers", type=int, help="RapidOCR recognition threads (default: up to 2)")
    parser.add_argument("--det-max-side", type=int, help="RapidOCR detection size (default: the backend's)")
    parser.add_argument("--accuracy", action="store_true", help="also report recall against ground truth")
    parser.add_argument(
        "--no-tidy",
        action="store_true",
        help="keep the status bar and keyboard keys (recall of what OCR and icon detection read; the "
        "ground truth lists them, the tidied element list leaves them out)",
    )
    parser.add_argument(
        "--compare",
        nargs="+",
        metavar="SPEC",
        help="OCR settings to compare, interleaved, e.g. det_max_side=1280,rec_workers=1 (keys: "
        + ", ".join(OCR_OPTIONS)
        + ")",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)

    info = machine()
    if args.images and (args.hard or args.dense or args.accuracy):
        print(
            "--hard, --dense and --accuracy need the virtual screens' ground truth: ignored for image files",
            file=sys.stderr,
        )
    if args.images:
        screens: list[Screen] = []
        for path in args.images:
            with Image.open(path) as opened:
                screens.append((opened.convert("RGB"), None, "file"))
    else:
        screens = virtual_screens(args.screens)
        plain = list(screens)
        if args.hard:
            screens += [(img, truth, name) for shot, truth, _ in plain for img, name in harder(shot)]
        if args.dense:
            screens += [copy for shot, truth, _ in plain for copy in denser(shot, truth or [])]
    icons = make_icon_detector(args.icons)
    report: dict[str, Any] = {
        "machine": info,
        "screens": len(screens),
        "variants": sorted({variant for _, _, variant in screens}),
        "size": list(screens[0][0].size),
        "backends": {"ocr": args.ocr, "ocr_device": args.ocr_device, "icons": args.icons, "captions": "none"},
        "repeat": args.repeat,
    }
    if args.compare:
        report["compare"] = run_compare(args, screens, icons)
    else:
        report.update(run_main(args, screens, icons))
    report["load_average_after"] = load_average()
    if args.json:
        print(json.dumps(report))
        return 0
    print(machine_line(info, report["load_average_after"]))
    print(
        f"Perceptor ({args.ocr} on {args.ocr_device}, {args.icons} icons, no captions) on "
        f"{report['screens']} screens {report['size'][0]}x{report['size'][1]} "
        f"({', '.join(report['variants'])}), {args.repeat} passes"
    )
    if args.compare:
        for spec, figures in report["compare"].items():
            print(f"  {spec}:")
            print(f"    cold wall {spread_text(figures['cold_wall_s'])}")
            print(f"    cold CPU  {spread_text(figures['cold_cpu_s'])}")
            if "accuracy" in figures:
                print_accuracy(figures["accuracy"], "    ")
        return 0
    if "ocr_providers" in report:
        print(
            f"  rapidocr: detection at {report['ocr_det_max_side']} px, "
            f"{report['ocr_rec_workers']} recognition workers, providers {report['ocr_providers']}"
        )
    print(f"  cold (new screen, nothing cached): wall {spread_text(report['cold_wall_s'])}")
    print(f"                                     CPU  {spread_text(report['cold_cpu_s'])}")
    stage_text = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in report["cold_stage_median_s"].items())
    print(f"    stage medians: {stage_text}")
    print(f"  in task (line cache on):           wall {spread_text(report['in_task_wall_s'])}")
    print(f"                                     CPU  {spread_text(report['in_task_cpu_s'])}")
    print(f"    lines answered by the line cache: {report['in_task_lines_from_cache']}")
    verdict = "meets" if report["meets_target"] else "misses"
    print(f"  cold median {verdict} the target of {TARGET_S * 1000:.0f} ms (2 quiet cores)")
    if args.accuracy:
        print_accuracy(report["accuracy"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
