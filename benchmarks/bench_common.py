"""Shared by the benchmarks: the machine they ran on and robust summaries of repeated timings.

Every benchmark prints the machine line first (CPU, cores, load average at the start and end, Python,
onnxruntime and its providers), so a figure is never read without the conditions it was taken in.
"""

from __future__ import annotations

import os
import platform
import statistics
from collections.abc import Sequence
from typing import Any


def cpu_model() -> str:
    """The CPU's model name (Linux ``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages (empty where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def usable_cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    info: dict[str, Any] = {
        "cpu": cpu_model(),
        "cpus": usable_cpus(),
        "load_average": load_average(),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
    }
    try:
        import onnxruntime

        info["onnxruntime"] = onnxruntime.__version__
        info["onnxruntime_providers"] = onnxruntime.get_available_providers()
    except ImportError:
        pass
    return info


def machine_line(info: dict[str, Any], load_after: Sequence[float] | None = None) -> str:
    """One human-readable line about the machine."""
    load = "/".join(f"{x:.2f}" for x in info.get("load_average", []))
    after = f" -> {'/'.join(f'{x:.2f}' for x in load_after)}" if load_after else ""
    runtime = f", onnxruntime {info['onnxruntime']}" if "onnxruntime" in info else ""
    return (
        f"machine: {info['cpu']}, {info['cpus']} CPUs, load {load}{after} (1/5/15 min), "
        f"Python {info['python']}{runtime}"
    )


def spread(values: Sequence[float], digits: int = 3) -> dict[str, Any]:
    """Median, interquartile range, min, max and count of ``values``."""
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return {
        "median": round(statistics.median(ordered), digits),
        "p25": round(q1, digits),
        "p75": round(q3, digits),
        "min": round(ordered[0], digits),
        "max": round(ordered[-1], digits),
        "n": len(ordered),
    }


def spread_text(figures: dict[str, Any], unit: str = "s", scale: float = 1.0) -> str:
    """``median 0.412 s (IQR 0.398-0.431, n 30)``."""
    if not figures.get("n"):
        return "no data"
    f = {k: v * scale for k, v in figures.items() if k != "n"}
    fmt = "{:.0f}" if scale >= 1000 else "{:.3f}"
    return (
        f"median {fmt.format(f['median'])} {unit} (IQR {fmt.format(f['p25'])}-{fmt.format(f['p75'])}, "
        f"min {fmt.format(f['min'])}, max {fmt.format(f['max'])}, n {figures['n']})"
    )
