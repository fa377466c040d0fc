"""Benchmark the Perceptor's local models: GroundingDINO icons and in-process Qwen2.5-VL captions.

Builds tiny randomly initialised checkpoints (``mae.testing.tiny_models``) in the hub layout and loads
them through the same code as the real weights, on every device present (CPU in float32, and a CUDA GPU
in half precision when there is one). Random weights mean the figures time the code around the model
(loading, pre-processing, transfers, generation steps), not a real model's compute: a real
grounding-dino-tiny or Qwen2.5-VL-3B is far larger. Captioning generates its whole token budget
(a random model never stops early), so seconds per generated token is the comparable figure.

    python benchmarks/local_models.py                 # every device present
    python benchmarks/local_models.py --devices cpu --repeat 3 --json

``--real-size`` builds random checkpoints in the exact shapes of grounding-dino-tiny and
Qwen2.5-VL-3B-Instruct instead (``mae.testing.real_size_models``: a 7.5 GB captioner, meant for a GPU)
and times, through mae's own ``GroundingDinoDetector`` and ``LocalQwenCaptioner``: detection of one
1080x2340 screen, the captioner's load and warm-up, the prefill and the per-token decode of one batch
of icons, and whole screens of ``--icons`` new icons, with the dynamic and the static (compiled on a GPU)
cache. ``--vllm-url`` also times the same screens captioned by a running vLLM server, one request per
icon in parallel. On a CPU keep it short: ``--layers 1 --vision-depth 1 --screens 1 --repeat 1``
(real widths, fewer layers: not real-size figures).

    python benchmarks/local_models.py --real-size --devices cuda --screens 3
    python benchmarks/local_models.py --real-size --devices cpu --layers 1 --vision-depth 1 \\
        --screens 1 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from mae.device.virtual import VirtualPhone
from mae.perception.caption_cache import CaptionCache
from mae.perception.icons import make_icon_detector


def _median_spread(values: list[float]) -> dict[str, float]:
    return {
        "median_s": round(statistics.median(values), 4),
        "min_s": round(min(values), 4),
        "max_s": round(max(values), 4),
    }


def bench_device(device: str, dino: Path, qwen: Path, repeat: int, max_new_tokens: int) -> dict[str, Any]:
    """Load, detect and caption on ``device``; times per stage."""
    from mae.perception.groundingdino import GroundingDinoDetector
    from mae.perception.qwen_local import LocalQwenCaptioner

    screen = VirtualPhone().screenshot().convert("RGB")
    rgb = np.asarray(screen)
    contour = make_icon_detector("contour")
    assert contour is not None
    icons = contour.detect(rgb)

    started = time.perf_counter()
    detector = GroundingDinoDetector(str(dino), box_threshold=0.0, device=device)
    dino_load = time.perf_counter() - started
    detector.detect(rgb)  # warm-up: kernels, allocator
    detect = []
    for _ in range(repeat):
        started = time.perf_counter()
        detector.detect(rgb)
        detect.append(time.perf_counter() - started)

    started = time.perf_counter()
    captioner = LocalQwenCaptioner(
        str(qwen), CaptionCache(None), device=device, max_new_tokens=max_new_tokens
    )
    qwen_load = time.perf_counter() - started
    captioner.caption(screen, icons[:2])  # warm-up
    caption = []
    for _ in range(repeat):
        captioner.cache = CaptionCache(None)  # nothing cached: every icon is asked again
        started = time.perf_counter()
        captioner.caption(screen, icons)
        caption.append(time.perf_counter() - started)
    return {
        "device": device,
        "dtype": str(detector.loaded.dtype).replace("torch.", ""),
        "caption_dtype": str(captioner.loaded.dtype).replace("torch.", ""),
        "groundingdino_load_s": round(dino_load, 3),
        "groundingdino_detect": _median_spread(detect),
        "qwen_load_s": round(qwen_load, 3),
        "icons_captioned": len(icons),
        "max_new_tokens": max_new_tokens,
        "qwen_caption": _median_spread(caption),
        "seconds_per_generated_token": round(statistics.median(caption) / max_new_tokens, 5),
    }


def _screen_with_icons(seed: int, count: int) -> tuple[Any, list[Any]]:
    """A virtual-phone screen with ``count`` distinct icon-like marks (nothing cached from another seed)."""
    from PIL import ImageDraw

    from mae.perception.elements import Element

    rng = np.random.default_rng(seed)
    screen = VirtualPhone().screenshot().convert("RGB")
    draw = ImageDraw.Draw(screen)
    icons = []
    for index in range(count):
        left, top = 40 + (index % 5) * 200, 500 + (index // 5) * 200
        size = int(rng.integers(60, 120))
        colour = tuple(int(v) for v in rng.integers(0, 255, 3))
        draw.rounded_rectangle((left, top, left + size, top + size), radius=12, fill=colour)
        draw.text((left + 10, top + 10), f"{seed}-{index}", fill=(255, 255, 255))
        icons.append(Element(kind="icon", box=(left, top, left + size, top + size)))
    return screen, icons


class _StepClock:
    """A logits processor that notes when each generated token's logits are ready (after prefill, then
    after each decode step), synchronising the GPU so the times are real."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.marks: list[float] = []

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()
        self.marks.append(time.perf_counter())
        return scores


def _time_generation(captioner: Any, tiles: list[Any], tokens: int) -> tuple[float, float]:
    """Prefill seconds and seconds per decoded token of one batch of ``tiles``, forced to ``tokens``."""
    from transformers import LogitsProcessorList

    from mae.perception.captions import ICON_PROMPT

    model = captioner.loaded.model
    real_generate = model.generate
    clock = _StepClock(captioner.device)

    def timed(**kwargs: Any) -> Any:
        return real_generate(**kwargs, logits_processor=LogitsProcessorList([clock]))

    model.generate = timed
    try:
        started = time.perf_counter()
        captioner.generate_batch([ICON_PROMPT] * len(tiles), tiles, tokens, min_new_tokens=tokens)
    finally:
        model.generate = real_generate
    prefill = clock.marks[0] - started
    decode = (clock.marks[-1] - clock.marks[0]) / max(1, len(clock.marks) - 1)
    return prefill, decode


def bench_real_size(args: argparse.Namespace, device: str, dino: Path, qwen: Path) -> dict[str, Any]:
    """Real-size detection and captions on ``device`` (dynamic and static cache, optionally vLLM)."""
    from mae.perception.captions import icon_tile
    from mae.perception.groundingdino import GroundingDinoDetector
    from mae.perception.qwen_local import LocalQwenCaptioner

    screen, _ = _screen_with_icons(0, args.icons)
    rgb = np.asarray(screen)
    started = time.perf_counter()
    detector = GroundingDinoDetector(str(dino), box_threshold=0.0, device=device)
    result: dict[str, Any] = {
        "device": device,
        "groundingdino_load_s": round(time.perf_counter() - started, 2),
    }
    detector.detect(rgb)  # warm-up
    detect = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        detector.detect(rgb)
        detect.append(time.perf_counter() - started)
    result["groundingdino_detect"] = _median_spread(detect)
    del detector

    caches = args.caches or (["dynamic", "static"] if device.startswith("cuda") else ["dynamic"])
    for kind in caches:
        started = time.perf_counter()
        captioner = LocalQwenCaptioner(
            str(qwen),
            CaptionCache(None),
            device=device,
            max_new_tokens=args.caption_tokens,
            batch_size=args.batch_size,
            static_cache=kind == "static",
            warm_up=False,
        )
        load = time.perf_counter() - started
        warm = captioner.warm_up() if kind == "static" else 0.0
        sample, sample_icons = _screen_with_icons(10_000, args.batch_size)
        tiles = [icon_tile(sample.crop(icon.box)) for icon in sample_icons]
        prefill, per_token = _time_generation(captioner, tiles, args.caption_tokens)
        screens = []
        for index in range(args.screens):
            page, icons = _screen_with_icons(index + 1, args.icons)
            started = time.perf_counter()
            captioner.caption(page, icons)
            screens.append(time.perf_counter() - started)
        result[f"captions_{kind}"] = {
            "dtype": str(captioner.loaded.dtype).replace("torch.", ""),
            "load_s": round(load, 2),
            "warm_up_s": round(warm, 2),
            "batch": args.batch_size,
            "prefill_s": round(prefill, 4),
            "decode_ms_per_token": round(per_token * 1000, 2),
            "screen": _median_spread(screens),
            "icons_per_screen": args.icons,
            "tokens_per_caption": args.caption_tokens,
        }
        from mae.perception.local_models import forget_loaded

        del captioner
        forget_loaded()
        if device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()
    if args.vllm_url:
        result["captions_vllm"] = bench_vllm(args)
    return result


def bench_vllm(args: argparse.Namespace) -> dict[str, Any]:
    """Whole screens captioned by a running vLLM server: one request per new icon, in parallel."""
    from mae.llm import ChatClient, ModelProfile
    from mae.perception.captions import ApiCaptioner

    profile = ModelProfile(provider="vllm", base_url=args.vllm_url, model=args.vllm_model, api_key_env=None)
    captioner = ApiCaptioner(ChatClient(profile), CaptionCache(None), parallel=args.icons)
    screens = []
    for index in range(args.screens):
        page, icons = _screen_with_icons(20_000 + index, args.icons)
        started = time.perf_counter()
        _, warnings = captioner.caption(page, icons)
        screens.append(time.perf_counter() - started)
    return {
        "server": args.vllm_url,
        "model": args.vllm_model,
        "screen": _median_spread(screens),
        "warnings": warnings,
    }


def _machine() -> dict[str, Any]:
    import torch
    import transformers

    cpu = platform.processor() or platform.machine()
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    gpu = None
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        gpu = f"{props.name}, {props.total_memory / 2**30:.0f} GiB"
    return {
        "cpu": cpu,
        "cpu_threads": torch.get_num_threads(),
        "gpu": gpu,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }


def real_size_main(args: argparse.Namespace) -> None:
    import torch

    from mae.testing.real_size_models import build_real_size_groundingdino, build_real_size_qwen

    devices = args.devices or (["cuda"] if torch.cuda.is_available() else ["cpu"])
    machine = _machine()
    shrunk = args.layers is not None or args.vision_depth is not None
    print(f"machine: {machine}", flush=True)
    if shrunk:
        print(
            f"not real-size: {args.layers} text layers, vision depth {args.vision_depth} (widths real)",
            flush=True,
        )
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        build_on = "cuda" if "cuda" in devices[0] else "cpu"
        started = time.perf_counter()
        dino = build_real_size_groundingdino(Path(tmp) / "dino", device=build_on)
        qwen = build_real_size_qwen(
            Path(tmp) / "qwen", device=build_on, layers=args.layers, vision_depth=args.vision_depth
        )
        print(f"random checkpoints written in {time.perf_counter() - started:.0f} s", flush=True)
        if build_on == "cuda":
            torch.cuda.empty_cache()
        results = [bench_real_size(args, device, dino, qwen) for device in devices]
    report = {"machine": machine, "real_size": not shrunk, "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for r in results:
        print(
            f"{r['device']}: GroundingDINO-T load {r['groundingdino_load_s']} s"
            if args.skip_detect
            else f"{r['device']}: GroundingDINO-T detect of a 1080x2340 screen, median "
            f"{r['groundingdino_detect']['median_s']} s"
        )
        for kind in ("dynamic", "static"):
            c = r.get(f"captions_{kind}")
            if c:
                print(
                    f"  captions, {kind} cache ({c['dtype']}, batch {c['batch']}): load {c['load_s']} s, "
                    f"warm-up {c['warm_up_s']} s, prefill {c['prefill_s']} s, "
                    f"decode {c['decode_ms_per_token']} ms/token; a screen of {c['icons_per_screen']} new "
                    f"icons ({c['tokens_per_caption']} tokens each) median {c['screen']['median_s']} s"
                )
        if "captions_vllm" in r:
            v = r["captions_vllm"]
            print(f"  captions by vLLM at {v['server']}: a screen median {v['screen']['median_s']} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--devices", nargs="*", help="devices to time (default: cpu, and cuda if present)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per stage (default 5)")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="caption token budget (default 64)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    real = parser.add_argument_group("--real-size")
    real.add_argument(
        "--real-size", action="store_true", help="random weights in the real checkpoints' shapes"
    )
    real.add_argument("--screens", type=int, default=3, help="screens of new icons to caption (default 3)")
    real.add_argument("--icons", type=int, default=20, help="new icons per screen (default 20)")
    real.add_argument("--caption-tokens", type=int, default=16, help="tokens per caption (default 16)")
    real.add_argument("--batch-size", type=int, default=16, help="icons per generate call (default 16)")
    real.add_argument("--caches", nargs="*", choices=["dynamic", "static"], help="default: both on a GPU")
    real.add_argument("--layers", type=int, help="fewer text layers (quick run; not real-size)")
    real.add_argument("--vision-depth", type=int, help="fewer vision blocks (quick run; not real-size)")
    real.add_argument("--skip-detect", action="store_true", help="load GroundingDINO, time no detection")
    real.add_argument("--workdir", help="where to write the random checkpoints (default: temp dir)")
    real.add_argument("--vllm-url", help="also time captions by this vLLM server (http://HOST:PORT/v1)")
    real.add_argument("--vllm-model", default="Qwen/Qwen2.5-VL-3B-Instruct", help="its served model name")
    args = parser.parse_args()
    if args.real_size:
        real_size_main(args)
        return

    import torch

    from mae.testing.tiny_models import build_tiny_groundingdino, build_tiny_qwen

    devices = args.devices or ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]
    machine = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpu_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }
    with tempfile.TemporaryDirectory() as tmp:
        dino = build_tiny_groundingdino(Path(tmp) / "dino")
        qwen = build_tiny_qwen(Path(tmp) / "qwen")
        results = [bench_device(d, dino, qwen, args.repeat, args.max_new_tokens) for d in devices]
    if args.json:
        print(json.dumps({"machine": machine, "results": results}, indent=2))
        return
    print(f"machine: {machine}")
    for r in results:
        print(
            f"{r['device']:>5} ({r['dtype']}/{r['caption_dtype']}): "
            f"GroundingDINO load {r['groundingdino_load_s']} s, "
            f"detect median {r['groundingdino_detect']['median_s']} s; Qwen load {r['qwen_load_s']} s, "
            f"caption {r['icons_captioned']} icons median {r['qwen_caption']['median_s']} s "
            f"({r['seconds_per_generated_token']} s per generated token)"
        )


if __name__ == "__main__":
    main()
