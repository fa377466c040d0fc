"""Time the reply reader on the worst inputs of issue #11 (each must read in under 50 ms).

    python benchmarks/reply_parsing.py              # slowest parser per input, in ms
    python benchmarks/reply_parsing.py --limit 20   # give up on an input after 20 s (old code hangs)

Every input goes through every agent's reply parser and the public helpers (``strip_fence``,
``extract_sections``, ``parse_action_text``), each input in its own process so a hang on one input
(catastrophic backtracking in an old pattern) is reported as a timeout instead of stalling the rest.
Exceptions other than the reply problem are reported by class name: they would have been tracebacks.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

WORST: dict[str, str] = {
    "fence-then-blank-lines": "```" + "\n" * 5000,
    "header-with-space-runs": "## " + " " * 60000 + "x\n",
    "header-space-runs-then-hash": "##" + (" " * 3000 + "#") * 20,
    "deep-json": "### Action ###\n" + "{" * 60000,
    "deep-call": "### Action ###\nTap(" + "[" * 60000,
    "deep-shortcuts": "### New Shortcuts ###\n" + "[" * 15000 + "]" * 15000,
    "long-number": '### Action ###\n{"name": "Tap", "arguments": {"x": ' + "9" * 5000 + ', "y": 1}}',
    "many-fences": "### Action ###\n" + "```" * 20000,
    "many-headers": "### Plan ###\n" * 5000,
    "huge-reply": "### Plan ###\n" + "word " * 400_000,
    "many-parens": "### Action ###\n" + "Tap(" * 15000,
    "many-bad-json": "### Action ###\n" + "{x} " * 15000,
    "many-calls": "### Action ###\n" + "Tap(1, 2) " * 6000,
    "many-reasoning-blocks": "<think>a</think>" * 4000 + "<think>" * 4000,
}
"""Inputs that made the old reader hang, crash or take seconds (also used by the parsing-budget test)."""


def parsers() -> dict[str, Callable[[str], Any]]:
    """Every reply parser reachable through the public API (present in old and new versions)."""
    try:
        from mae.actions.reading import parse_action_text
    except ImportError:  # a checkout from before the action layer was a package
        try:
            from mae.action_text import parse_action_text  # type: ignore[no-redef]
        except ImportError:  # from before the action reader had its own module
            from mae.actions import parse_action_text  # type: ignore[attr-defined,no-redef]
    from mae.agents import experience_replies, manager, notetaker, precondition, reflector, retrieval
    from mae.agents.parsing import extract_sections, strip_fence

    return {
        "manager": manager.parse_reply,
        "reflector": reflector.parse_reply,
        "notetaker": notetaker.parse_reply,
        "tips": experience_replies.parse_tips_reply,
        "shortcuts": experience_replies.parse_shortcuts_reply,
        "tips_retriever": lambda t: retrieval.parse_tip_selection(t, 10),
        "shortcuts_retriever": lambda t: retrieval.parse_shortcut_selection(t, ["Tap_Type_and_Enter"]),
        "precondition": precondition.parse_verdict,
        "action": parse_action_text,
        "strip_fence": strip_fence,
        "extract_sections": extract_sections,
    }


def measure(case: str) -> dict[str, Any]:
    """Seconds per parser on ``WORST[case]``, and the unexpected exceptions (class names)."""
    from mae.agents.parsing import ReplyProblem
    from mae.errors import ActionError

    text = WORST[case]
    times: dict[str, float] = {}
    crashes: dict[str, str] = {}
    for name, parse in parsers().items():
        started = time.perf_counter()
        try:
            parse(text)
        except (ReplyProblem, ActionError):
            pass
        except BaseException as exc:
            crashes[name] = type(exc).__name__
        times[name] = time.perf_counter() - started
    return {"times": times, "crashes": crashes}


def run_case(case: str, limit_s: float) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--one", case]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit_s, check=False, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"case": case, "worst_ms": None, "slowest": f"> {limit_s:g} s (hang)", "crashes": {}}
    if done.returncode != 0:
        return {
            "case": case,
            "worst_ms": None,
            "slowest": "process failed",
            "crashes": {"process": done.stderr[-200:]},
        }
    result = json.loads(done.stdout.strip().splitlines()[-1])
    slowest = max(result["times"], key=result["times"].get)
    return {
        "case": case,
        "worst_ms": round(result["times"][slowest] * 1000, 1),
        "slowest": slowest,
        "crashes": result["crashes"],
        "wall_s": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=20.0, help="seconds before an input counts as a hang")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        sys.setrecursionlimit(1000)
        print(json.dumps(measure(args.one)))
        return
    rows = [run_case(case, args.limit) for case in WORST]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        worst = f"{row['worst_ms']:>8.1f} ms" if row["worst_ms"] is not None else f"{'':>11}"
        crashes = ", ".join(f"{k}: {v}" for k, v in row["crashes"].items())
        print(
            f"{row['case']:28} {worst}  slowest {row['slowest']:20} {'CRASHES ' + crashes if crashes else ''}"
        )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
