"""Stable prompt prefixes and the cost per step with and without prompt caching, per role and provider.

Runs a scripted 20-step multi-app task once (the 15 steps of ``loop_overhead.py`` and five more: the
shop again, scrolls, Notes again; virtual phone, real Perceptor, fake model server) and records every
request: its role, its text and its images. For each role it reports the **stable prefix**: the part
of a request's input that repeats, byte for byte, from the same role's previous request, which is what
a provider's automatic prompt cache can serve. Text before the first difference counts (characters /
4 tokens); the screenshots come after the text, so they are never part of it.

Then, per provider preset, it prices the same requests at ``mae/eval/prices.json``: input tokens (text
+ images by the provider's documented image rule) at the full rate, and again with the cacheable part
(the stable prefix, from 1024 tokens, in 128-token blocks, as OpenAI's automatic caching counts it) at
the cached rate. Output tokens are the same in both columns and left out.

``--before REV`` runs the task a second time with the Manager, Operator, Action Reflector and
Notetaker templates of git revision REV, to compare prompt orders.

    python benchmarks/tokens.py
    python benchmarks/tokens.py --before HEAD~3 --json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import machine, machine_line
from loop_overhead import SCROLL_DOWN, SCROLL_UP, TASK, Scripted
from profiles import CountingPhone

from mae.config import LoopSettings, PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.eval.prices import price_table
from mae.llm import ChatClient, ModelProfile
from mae.llm.images import before_policy, image_tokens, target_size
from mae.llm.providers import PRESETS
from mae.memory.tips import INITIAL_TIPS
from mae.run.loop import run_task
from mae.run.runtime import build_perceptor
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest, cached_prefix_tokens

ROOT = Path(__file__).resolve().parents[1]
ORDERED_TEMPLATES = ("manager", "operator", "action_reflector", "notetaker")
OPERATOR_GOAL = 0.60
"""Share of the Operator's prompt text that should be a stable prefix (its screenshot, new every step and
sent after the text, is reported beside it but cannot be cached)."""

Call = tuple[str, str, int]
"""(role, text, images) of one request."""


def _in_frame(action: dict[str, Any], scale: float) -> dict[str, Any]:
    """``action`` with its screen-pixel coordinates scaled into the image the model is sent."""
    arguments = {
        k: round(v * scale) if k in ("x", "y", "x1", "y1", "x2", "y2") else v
        for k, v in action["arguments"].items()
    }
    return {"name": action["name"], "arguments": arguments}


Action = Callable[[RecordedRequest], dict[str, Any]]


def _scaled(act: Action, scale: float) -> Action:
    return lambda request: _in_frame(act(request), scale)


class Scripted20(Scripted):
    """The 15-step task of ``loop_overhead.py`` with five more steps before going home; coordinates are
    written in the frame of the screenshot as sent (the fake model answers in that image's pixels)."""

    def __init__(self, phone: CountingPhone, profile: ModelProfile) -> None:
        super().__init__(phone, 0.0)
        screen = phone.screen_size()
        scale = target_size(screen, profile.image)[0] / screen[0]
        extra: list[tuple[str, Action]] = [
            ("Open the shop once more", lambda r: {"name": "Open_App", "arguments": {"app_name": "Amazon"}}),
            ("Scroll down the results again", lambda r: SCROLL_DOWN),
            ("Scroll back to the top again", lambda r: SCROLL_UP),
            ("Back to Notes once more", lambda r: {"name": "Open_App", "arguments": {"app_name": "Notes"}}),
            ("Look through the notes", lambda r: SCROLL_DOWN),
        ]
        steps = self.steps[:-1] + extra + self.steps[-1:]
        self.steps = [(goal, _scaled(act, scale)) for goal, act in steps]
        self.sizes = self.sizes[:-1] + [1] * len(extra) + self.sizes[-1:]
        self.subgoal_ends = {end for end in self.subgoal_ends if end < len(steps) - len(extra)}
        self.subgoal_ends |= {len(self.steps)}
        self.plan = "\n".join(f"{i}. {s}" for i, (s, _) in enumerate(self.steps, 1))


def record_run(prompts_dir: Path | None = None) -> tuple[list[Call], int]:
    """The requests of one scripted run, and its number of steps."""
    phone = CountingPhone()
    calls: list[Call] = []
    profile = ModelProfile(
        provider="fake", base_url="http://127.0.0.1:1/v1", model="fake-vlm", api_key_env=None
    )
    scripted = Scripted20(phone, profile)

    def responder(request: RecordedRequest) -> FakeReply | None:
        calls.append((request.role or "", request.text, request.image_count))
        return scripted(request)

    perceptor = build_perceptor(PerceptionSettings.model_validate({"captions": "none"}))
    with FakeModelServer(responder=responder) as server, tempfile.TemporaryDirectory() as tmp:
        result = run_task(
            TASK,
            device=phone,
            client=ChatClient(profile.model_copy(update={"base_url": server.base_url})),
            perceptor=perceptor,
            settings=LoopSettings.model_validate({}),
            log_dir=Path(tmp),
            prompts_dir=prompts_dir,
            tips=INITIAL_TIPS,
        )
    if not result.finished:
        raise RuntimeError(f"the scripted run did not complete: {result.exit_reason.value}")
    return calls, len(result.actions)


def templates_at(revision: str, folder: Path) -> Path:
    """A prompts folder with today's templates and the four ordered ones of git ``revision``."""
    shutil.copytree(ROOT / "prompts", folder)
    for name in ORDERED_TEMPLATES:
        text = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{revision}:prompts/{name}.md"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    return folder


def prefixes(calls: list[Call]) -> list[tuple[int, int]]:
    """Per request: (characters repeated from the same role's previous request, tokens cacheable)."""
    previous: dict[str, str] = {}
    found = []
    for role, text, _images in calls:
        before = previous.get(role)
        same = 0
        if before is not None:
            limit = min(len(before), len(text))
            same = next((i for i in range(limit) if before[i] != text[i]), limit)
        found.append((same, cached_prefix_tokens(text, [before]) if before is not None else 0))
        previous[role] = text
    return found


def image_cost(role: str, images: int, policy: Any, screen: tuple[int, int]) -> int:
    tokens = 0
    for index in range(images):
        chosen = before_policy(policy, screen) if role == "reflector" and index == 0 else policy
        tokens += image_tokens(target_size(screen, chosen), policy.token_rule) or 0
    return tokens


def _share(part: float, whole: float) -> float:
    return round(part / whole, 3) if whole else 0.0


def analyse(calls: list[Call], steps: int) -> dict[str, Any]:
    """Stable-prefix shares per role, and cost per step with and without caching per preset."""
    screen = VirtualPhone().screen_size()
    found = prefixes(calls)
    openai_policy = PRESETS["openai"].image
    roles: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for (role, text, images), (same, _cacheable) in zip(calls, found, strict=True):
        part = roles[role]
        part["requests"] += 1
        part["text_tokens"] += len(text) // 4
        part["input_tokens"] += len(text) // 4 + image_cost(role, images, openai_policy, screen)
        part["stable_tokens"] += same // 4
    shares = {
        role: {
            "requests": int(p["requests"]),
            "input_tokens_per_request": round(p["input_tokens"] / p["requests"]),
            "stable_prefix_share": _share(p["stable_tokens"], p["input_tokens"]),
            "stable_prefix_share_of_text": _share(p["stable_tokens"], p["text_tokens"]),
        }
        for role, p in roles.items()
    }
    table = price_table()
    providers: dict[str, Any] = {}
    for name, preset in PRESETS.items():
        price = table.price(preset.provider or name, preset.model)
        if price is None:
            continue
        cached_rate = table.cached_price(preset.provider or name, preset.model) or price[0]
        full = cached = 0.0
        for (role, text, images), (_same, cacheable) in zip(calls, found, strict=True):
            tokens = len(text) // 4 + image_cost(role, images, preset.image, screen)
            full += tokens * price[0]
            cached += (tokens - cacheable) * price[0] + cacheable * cached_rate
        providers[name] = {
            "model": preset.model,
            "input_price": price[0],
            "cached_price": cached_rate,
            "dollars_per_step_without_cache": round(full / 1e6 / steps, 5),
            "dollars_per_step_with_cache": round(cached / 1e6 / steps, 5),
        }
    return {"steps": steps, "requests": len(calls), "roles": shares, "providers": providers}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", metavar="REV", help="also run with the prompt templates of git REV")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    info = machine()
    calls, steps = record_run()
    report: dict[str, Any] = {
        "machine": info,
        "prices_as_of": price_table().as_of,
        "after": analyse(calls, steps),
    }
    if args.before:
        with tempfile.TemporaryDirectory() as tmp:
            old_calls, old_steps = record_run(templates_at(args.before, Path(tmp) / "prompts"))
        report["before"] = analyse(old_calls, old_steps)
        report["before"]["revision"] = args.before
    # the screenshot is new every step and comes last: the goal is judged on the text before it
    operator = report["after"]["roles"].get("operator", {}).get("stable_prefix_share_of_text", 0.0)
    report["operator_goal_met"] = operator >= OPERATOR_GOAL
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(machine_line(info))
    for label in ("before", "after"):
        part = report.get(label)
        if part is None:
            continue
        steps, requests = part["steps"], part["requests"]
        print(f"{label}: {steps} steps, {requests} requests (prices as of {report['prices_as_of']})")
        for role, figures in part["roles"].items():
            print(
                f"  {role:<10} stable prefix {figures['stable_prefix_share']:>6.1%} of "
                f"{figures['input_tokens_per_request']} input tokens per request (GPT image rule), "
                f"{figures['stable_prefix_share_of_text']:.1%} of the text"
            )
        for name, figures in part["providers"].items():
            without, with_cache = (
                figures["dollars_per_step_without_cache"],
                figures["dollars_per_step_with_cache"],
            )
            line = f"  {name:<13} {figures['model']:<20} ${without:.4f} per step without caching"
            print(f"{line}, ${with_cache:.4f} with")
    met = "met" if report["operator_goal_met"] else "NOT met"
    print(f"Operator goal (stable prefix >= {OPERATOR_GOAL:.0%} of the text): {met}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
