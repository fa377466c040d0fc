"""Benchmark the Perceptor's local models: GroundingDINO icons and in-process Qwen2.5-VL captions.

Builds tiny randomly initialised checkpoints (``mae.testing.tiny_models``) in the hub layout and loads
them through the same code as the real weights, on every device present (CPU in float32, and a CUDA GPU
in half precision when there is one). Random weights mean the figures time the code around the model
(loading, pre-processing, transfers, generation steps), not a real model's compute: a real
grounding-dino-tiny or Qwen2.5-VL-3B is far larger. Captioning generates its whole token budget
(a random model never stops early), so seconds per generated token is the comparable figure.

    python benchmarks/local_models.py                 # every device present
    python benchmarks/local_models.py --devices cpu --repeat 3 --json
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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--devices", nargs="*", help="devices to time (default: cpu, and cuda if present)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per stage (default 5)")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="caption token budget (default 64)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()

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
