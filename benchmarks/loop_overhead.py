"""The framework's own time per step of the agent loop, and seconds per operation at a model latency.

A fixed scripted multi-app run of 15 steps on the virtual phone with perception ON (the real Perceptor:
rapidocr OCR + contour icons, no captions): open a shop, search with the Tap_Type_and_Enter Shortcut,
scroll the results down and up, open Notes, start a note, type the price, save it, go back to the shop,
scroll, switch to Notes again and go home. Models are the fake chat-completions server, answering after
a simulated latency; wall time minus time inside model calls is the framework overhead: perception,
screenshots, image encoding, prompt rendering, parsing, execution, annotation, trajectory.

- **framework, cold**: a fresh Perceptor (empty line cache) for each run; the OCR models are loaded.
- **framework, warm**: the same task again with the line cache the cold run left behind.
- **seconds per operation**: wall time per step at ``--model-latency`` seconds per model call (default
  3.5, the order of a hosted GPT-4o call) in each of the ``--profiles`` (``profiles.py``: the paper's
  order, the parallel Notetaker, fast mode...), with the sequential model calls a step waits for;
  comparable with the paper's 30.1 s per operation for Mobile-Agent-E (their phone and models; the
  virtual phone settles at once, a real phone adds its own settling time).

    python benchmarks/loop_overhead.py                      # everything (about 8 minutes)
    python benchmarks/loop_overhead.py --model-latency 0.3  # quick check of the end-to-end figures
    python benchmarks/loop_overhead.py --model-latency 0    # framework figures only
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import load_average, machine, machine_line, spread, spread_text
from profiles import PROFILES, CountingPhone, call_figures

from mae.config import LoopSettings, PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.llm import ChatClient, ModelProfile
from mae.llm.client import CallRecord
from mae.run.loop import PerceptorLike, run_task
from mae.run.results import TaskResult
from mae.run.runtime import build_perceptor
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest

TASK = "Find the price of the Ninja DZ201 air fryer on Amazon and write it in a new note in Notes."
TARGET_MEDIAN_S = 1.0
CALL_KEYS = ("model_calls_per_step", "sequential_calls_per_step", "input_tokens_per_step")
PAPER_S_PER_OPERATION = 30.1
SCROLL_DOWN = {"name": "Swipe", "arguments": {"x1": 540, "y1": 1800, "x2": 540, "y2": 700}}
SCROLL_UP = {"name": "Swipe", "arguments": {"x1": 540, "y1": 700, "x2": 540, "y2": 1800}}


def _center(phone: VirtualPhone, text: str) -> tuple[int, int]:
    for element in phone.ground_truth():
        if element.text == text:
            return element.center
    raise RuntimeError(f"{text!r} is not on the virtual phone's screen {phone.screen_name}")


def _section(text: str, title: str) -> str:
    marker = f"### {title} ###\n"
    start = text.find(marker)
    if start < 0:
        return ""
    rest = text[start + len(marker) :]
    end = rest.find("\n### ")
    return (rest if end < 0 else rest[:end]).strip()


class Scripted:
    """Answers each agent role for the fixed task (actions from the phone's ground truth)."""

    def __init__(self, phone: CountingPhone, latency_s: float) -> None:
        self.phone = phone
        self.latency_s = latency_s
        self.steps: list[tuple[str, Callable[[RecordedRequest], dict[str, Any]]]] = [
            ("Open Amazon", lambda r: {"name": "Open_App", "arguments": {"app_name": "Amazon"}}),
            ("Search for the air fryer", self._search),
            ("Look through the results", lambda r: SCROLL_DOWN),
            ("Look further down", lambda r: SCROLL_DOWN),
            ("Go back up", lambda r: SCROLL_UP),
            ("Back to the top", lambda r: SCROLL_UP),
            ("Open Notes", lambda r: {"name": "Open_App", "arguments": {"app_name": "Notes"}}),
            ("Create a new note", self._new_note),
            (
                "Type the price",
                lambda r: {"name": "Type", "arguments": {"text": _section(r.text, "Important Notes")}},
            ),
            ("Save the note", lambda r: {"name": "Back", "arguments": {}}),
            ("Check the shop again", lambda r: {"name": "Open_App", "arguments": {"app_name": "Amazon"}}),
            ("Scroll the results", lambda r: SCROLL_DOWN),
            ("Scroll back", lambda r: SCROLL_UP),
            ("Return to Notes", lambda r: {"name": "Open_App", "arguments": {"app_name": "Notes"}}),
            ("Go home", lambda r: {"name": "Home", "arguments": {}}),
        ]
        self.plan = "\n".join(f"{i}. {s}" for i, (s, _) in enumerate(self.steps, 1))
        self.sizes = [3 if i == 1 else 1 for i in range(len(self.steps))]  # the search is a Shortcut
        self.subgoal_ends = {2, 6, 10, 13, len(self.steps)}
        """Where a subgoal of several steps ends (fast mode's Reflector says so; the Manager moves on)."""

    @staticmethod
    def _notes(request: RecordedRequest) -> str:
        if "Ninja DZ201" in request.text and "$159.99" in request.text:
            return "Ninja DZ201 price on Amazon: $159.99"
        return _section(request.text, "Existing Important Notes")

    def _search(self, request: RecordedRequest) -> dict[str, Any]:
        x, y = _center(self.phone, "Search Amazon")
        return {"name": "Tap_Type_and_Enter", "arguments": {"x": x, "y": y, "text": "ninja air fryer 8 qt"}}

    def _new_note(self, request: RecordedRequest) -> dict[str, Any]:
        x, y = _center(self.phone, "new note")
        return {"name": "Tap", "arguments": {"x": x, "y": y}}

    def __call__(self, request: RecordedRequest) -> FakeReply | None:
        role = request.role or ""
        index = self.phone.actions_done(self.sizes)  # what has run: a speculative Operator asks early
        if role == "manager":
            subgoal = self.steps[index][0] if index < len(self.steps) else "Finished"
            text = (
                f"### Thought ###\nOn track.\n### Plan ###\n{self.plan}\n### Current Subgoal ###\n{subgoal}"
            )
        elif role == "operator":
            step = self.steps[min(index, len(self.steps) - 1)]  # after the last: a discarded speculation
            action = json.dumps(step[1](request))
            text = f"### Thought ###\nNext.\n### Action ###\n{action}\n### Description ###\nAs planned."
        elif role == "reflector":
            text = "### Outcome ###\nA\n### Error Description ###\nNone\n### Progress Status ###\nOn track."
            if "### Subgoal Done ###" in request.text:
                text += f"\n### Subgoal Done ###\n{'Yes' if index in self.subgoal_ends else 'No'}"
            if "### Existing Important Notes ###" in request.text:
                text += f"\n### Important Notes ###\n{self._notes(request)}"
        elif role == "notetaker":
            text = f"### Important Notes ###\n{self._notes(request)}"
        else:
            return None
        return FakeReply(text=text, delay_s=self.latency_s)


def one_run(
    perceptor: PerceptorLike, latency_s: float, log_dir: Path, loop: dict[str, Any] | None = None
) -> tuple[TaskResult, list[CallRecord]]:
    phone = CountingPhone()
    with FakeModelServer(responder=Scripted(phone, latency_s)) as server:
        client = ChatClient(
            ModelProfile.model_validate(
                {
                    "provider": "fake",
                    "base_url": server.base_url,
                    "model": "fake-vlm",
                    "api_key_env": None,
                    "image": {"resize": "none"},  # the scripts tap screen pixels
                }
            )
        )
        result = run_task(
            TASK,
            device=phone,
            client=client,
            perceptor=perceptor,
            settings=LoopSettings.model_validate(loop or {}),
            log_dir=log_dir,
        )
    notes = [n.text for n in phone.state().notes if not n.seeded]
    if not result.finished or not any("$159.99" in n for n in notes):
        raise RuntimeError(f"the scripted run did not complete: {result.exit_reason.value} {result.message}")
    return result, client.records


def _per_step(result: TaskResult) -> float:
    return result.totals.seconds / max(1, result.totals.steps)


def framework_figures(results: list[TaskResult]) -> dict[str, Any]:
    steps = [t for r in results for t in r.steps if t.execution_s > 0 or t.perception_s > 0]
    return {
        "framework_s_per_step": spread([t.framework_s for t in steps]),
        "perception_s_per_step": spread([t.perception_s for t in steps]),
        "other_s_per_step": spread([t.framework_s - t.perception_s for t in steps]),
        "model_calls_per_step": round(statistics.fmean(t.model_calls for t in steps), 2),
        "input_tokens_per_step": round(statistics.fmean(t.input_tokens for t in steps)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="cold+warm run pairs for the framework figures")
    parser.add_argument(
        "--model-latency",
        type=float,
        default=3.5,
        help="simulated seconds per model call for the end-to-end figure (default 3.5; 0 skips it)",
    )
    parser.add_argument("--e2e-repeat", type=int, default=1, help="runs per order for the end-to-end figure")
    parser.add_argument(
        "--profiles",
        default="paper order,parallel Notetaker,fast",
        help=f"comma-separated loop profiles for the end-to-end figure, among: {', '.join(PROFILES)}",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    info = machine()
    settings = PerceptionSettings.model_validate({"captions": "none"})
    started = time.monotonic()
    build_perceptor(settings).perceive(VirtualPhone().screenshot())  # load the OCR models once
    setup_s = time.monotonic() - started
    cold: list[TaskResult] = []
    warm: list[TaskResult] = []
    chosen = [name.strip() for name in args.profiles.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in PROFILES]
    if unknown:
        parser.error(f"unknown profile(s) {', '.join(unknown)}: choose among {', '.join(PROFILES)}")
    e2e: dict[str, list[tuple[TaskResult, list[CallRecord]]]] = {name: [] for name in chosen}
    with tempfile.TemporaryDirectory(prefix="mae-bench-") as tmp:
        for _ in range(args.repeat):
            perceptor = build_perceptor(settings)  # an empty line cache: nothing seen yet
            cold.append(one_run(perceptor, 0.0, Path(tmp))[0])
            warm.append(one_run(perceptor, 0.0, Path(tmp))[0])
        if args.model_latency > 0:
            for index in range(args.e2e_repeat):  # alternate the orders so the load falls on both
                orders = list(e2e) if index % 2 == 0 else list(reversed(e2e))
                for order in orders:
                    perceptor = build_perceptor(settings)
                    e2e[order].append(one_run(perceptor, args.model_latency, Path(tmp), PROFILES[order]))
    figures: dict[str, Any] = {
        "machine": info,
        "steps_per_run": len(cold[0].actions),
        "perceptor_setup_s": round(setup_s, 3),
        "cold": framework_figures(cold),
        "warm": framework_figures(warm),
        "target_median_s": TARGET_MEDIAN_S,
        "model_latency_s": args.model_latency,
    }
    if args.model_latency > 0:
        figures["seconds_per_operation"] = {
            order: {
                "median": round(statistics.median(_per_step(r) for r, _ in runs), 2),
                "runs": [round(_per_step(r), 2) for r, _ in runs],
                **{
                    key: round(statistics.fmean(call_figures(r, calls)[key] for r, calls in runs), 2)
                    for key in CALL_KEYS
                },
            }
            for order, runs in e2e.items()
        }
        figures["paper_s_per_operation"] = PAPER_S_PER_OPERATION
    figures["load_average_after"] = load_average()
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(machine_line(info, figures["load_average_after"]))
    steps = figures["steps_per_run"]
    print(f"scripted multi-app task, {steps} steps, perception ON (rapidocr + contour icons)")
    for label in ("cold", "warm"):
        part = figures[label]
        print(f"  framework time per step, {label}: {spread_text(part['framework_s_per_step'])}")
        print(
            f"    perception {spread_text(part['perception_s_per_step'])}\n"
            f"    everything else {spread_text(part['other_s_per_step'])}"
        )
    print(
        f"  per step: {figures['cold']['model_calls_per_step']} model calls, "
        f"{figures['cold']['input_tokens_per_step']} input tokens (fake server's estimate)"
    )
    print(f"  OCR model loading once per process: {figures['perceptor_setup_s']:.2f} s")
    if args.model_latency > 0:
        print(f"  seconds per operation at {args.model_latency:g} s per model call (paper: 30.1 s/op):")
        for order, part in figures["seconds_per_operation"].items():
            print(
                f"    {order:<24} {part['median']:.2f} s/op ({part['sequential_calls_per_step']} sequential "
                f"of {part['model_calls_per_step']} model calls per step, "
                f"{part['input_tokens_per_step']:.0f} input tokens per step; runs {part['runs']})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
