"""The framework's own time per step of the agent loop (everything except waiting for models).

A fixed scripted run on the virtual phone with perception ON (the real Perceptor: rapidocr OCR + contour
icons, no captions): open a shop, search with the Tap_Type_and_Enter Shortcut, open Notes, start a
note, type the price, go back. Models are the fake chat-completions server answering at once (plus an
optional simulated latency), so wall time minus time inside model calls is the framework overhead:
perception, screenshots, image encoding, prompt rendering, parsing, execution, annotation, trajectory.

    python benchmarks/loop_overhead.py [--repeat 3] [--model-latency 0] [--parallel-notetaker] [--json]
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

from mae.config import LoopSettings, PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.llm import ChatClient, ModelProfile
from mae.loop import PerceptorLike, run_task
from mae.results import TaskResult
from mae.runtime import build_perceptor
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest

TASK = "Find the price of the Ninja DZ201 air fryer on Amazon and write it in a new note in Notes."
TARGET_MEDIAN_S = 1.0


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

    def __init__(self, phone: VirtualPhone, latency_s: float) -> None:
        self.phone = phone
        self.latency_s = latency_s
        self.counts: dict[str, int] = {}
        self.steps: list[tuple[str, Callable[[RecordedRequest], dict[str, Any]]]] = [
            ("Open Amazon", lambda r: {"name": "Open_App", "arguments": {"app_name": "Amazon"}}),
            ("Search for the air fryer", self._search),
            ("Open Notes", lambda r: {"name": "Open_App", "arguments": {"app_name": "Notes"}}),
            ("Create a new note", self._new_note),
            (
                "Type the price",
                lambda r: {"name": "Type", "arguments": {"text": _section(r.text, "Important Notes")}},
            ),
            ("Save the note", lambda r: {"name": "Back", "arguments": {}}),
        ]
        self.plan = "\n".join(f"{i}. {s}" for i, (s, _) in enumerate(self.steps, 1))

    def _search(self, request: RecordedRequest) -> dict[str, Any]:
        x, y = _center(self.phone, "Search Amazon")
        return {"name": "Tap_Type_and_Enter", "arguments": {"x": x, "y": y, "text": "ninja air fryer 8 qt"}}

    def _new_note(self, request: RecordedRequest) -> dict[str, Any]:
        x, y = _center(self.phone, "new note")
        return {"name": "Tap", "arguments": {"x": x, "y": y}}

    def _next(self, role: str) -> int:
        index = self.counts.get(role, 0)
        self.counts[role] = index + 1
        return index

    def __call__(self, request: RecordedRequest) -> FakeReply | None:
        role = request.role or ""
        index = self._next(role)
        if role == "manager":
            subgoal = self.steps[index][0] if index < len(self.steps) else "Finished"
            text = (
                f"### Thought ###\nOn track.\n### Plan ###\n{self.plan}\n### Current Subgoal ###\n{subgoal}"
            )
        elif role == "operator":
            action = json.dumps(self.steps[index][1](request))
            text = f"### Thought ###\nNext.\n### Action ###\n{action}\n### Description ###\nAs planned."
        elif role == "reflector":
            text = "### Outcome ###\nA\n### Error Description ###\nNone\n### Progress Status ###\nOn track."
        elif role == "notetaker":
            notes = _section(request.text, "Existing Important Notes")
            if "Ninja DZ201" in request.text and "$159.99" in request.text:
                notes = "Ninja DZ201 price on Amazon: $159.99"
            text = f"### Important Notes ###\n{notes}"
        else:
            return None
        return FakeReply(text=text, delay_s=self.latency_s)


def one_run(perceptor: PerceptorLike, latency_s: float, parallel: bool, log_dir: Path) -> TaskResult:
    phone = VirtualPhone()
    with FakeModelServer(responder=Scripted(phone, latency_s)) as server:
        client = ChatClient(
            ModelProfile.model_validate(
                {"provider": "fake", "base_url": server.base_url, "model": "fake-vlm", "api_key_env": None}
            )
        )
        result = run_task(
            TASK,
            device=phone,
            client=client,
            perceptor=perceptor,
            settings=LoopSettings.model_validate({}),
            log_dir=log_dir,
            parallel_notetaker=parallel,
        )
    notes = [n.text for n in phone.state().notes if not n.seeded]
    if not result.finished or not any("$159.99" in n for n in notes):
        raise RuntimeError(f"the scripted run did not complete: {result.exit_reason.value} {result.message}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs to measure (after one warm-up run)")
    parser.add_argument("--model-latency", type=float, default=0.0, help="simulated seconds per model call")
    parser.add_argument("--parallel-notetaker", action="store_true", help="Notetaker beside the Reflector")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    started = time.monotonic()
    perceptor = build_perceptor(PerceptionSettings.model_validate({"captions": "none"}))
    setup_s = time.monotonic() - started
    results: list[TaskResult] = []
    with tempfile.TemporaryDirectory(prefix="mae-bench-") as tmp:
        one_run(perceptor, args.model_latency, args.parallel_notetaker, Path(tmp))  # warm-up (model loading)
        for _ in range(args.repeat):
            results.append(one_run(perceptor, args.model_latency, args.parallel_notetaker, Path(tmp)))

    action_steps = [t for r in results for t in r.steps if t.execution_s > 0 or t.perception_s > 0]
    framework = [t.framework_s for t in action_steps]
    perception = [t.perception_s for t in action_steps]
    figures: dict[str, Any] = {
        "runs": len(results),
        "steps_per_run": len(results[0].actions),
        "perceptor_setup_s": round(setup_s, 3),
        "framework_s_per_step": {
            "median": round(statistics.median(framework), 3),
            "mean": round(statistics.fmean(framework), 3),
            "max": round(max(framework), 3),
        },
        "perception_s_per_step_median": round(statistics.median(perception), 3),
        "framework_minus_perception_s_median": round(
            statistics.median(f - p for f, p in zip(framework, perception, strict=True)), 3
        ),
        "model_calls_per_step": round(statistics.fmean(t.model_calls for t in action_steps), 2),
        "input_tokens_per_step": round(statistics.fmean(t.input_tokens for t in action_steps)),
        "images_per_step": round(statistics.fmean(t.images for t in action_steps), 2),
        "run_seconds": [r.totals.seconds for r in results],
        "model_latency_s": args.model_latency,
        "parallel_notetaker": args.parallel_notetaker,
        "target_median_s": TARGET_MEDIAN_S,
    }
    figures["meets_target"] = figures["framework_s_per_step"]["median"] <= TARGET_MEDIAN_S
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    per = figures["framework_s_per_step"]
    print(f"loop overhead over {figures['runs']} runs x {figures['steps_per_run']} steps (perception ON):")
    print(
        f"  framework time per step: median {per['median']:.3f} s, mean {per['mean']:.3f} s, "
        f"max {per['max']:.3f} s"
        f"  (target <= {TARGET_MEDIAN_S:.1f} s: {'met' if figures['meets_target'] else 'NOT met'})"
    )
    print(
        f"    of which perception (median): {figures['perception_s_per_step_median']:.3f} s; everything else "
        f"{figures['framework_minus_perception_s_median']:.3f} s"
    )
    print(
        f"  per step: {figures['model_calls_per_step']} model calls, "
        f"{figures['input_tokens_per_step']} input tokens, {figures['images_per_step']} images"
    )
    print(f"  Perceptor setup {figures['perceptor_setup_s']:.2f} s; run wall times {figures['run_seconds']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
