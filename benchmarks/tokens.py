"""Input tokens and estimated dollars per step, per role and provider, for one scripted run.

Runs the scripted 15-step multi-app task of ``loop_overhead.py`` once (virtual phone, real Perceptor,
fake model server) and records every request: its role, its text and its images. Then, for each
provider preset, it prices the same requests under two image policies:

- **before**: the policies this project shipped before (longest side 1664 px for GPT-4o, 1568 for
  Claude, 1536 for Gemini, a 1280-patch budget for Qwen; the Reflector's "before" screenshot at full
  size);
- **after**: the presets' current ``ImagePolicy`` (``mae.llm.providers``).

Image tokens follow each provider's documented rule (``mae.llm.images.image_tokens``); text tokens are
estimated as characters / 4 (the same text in both columns, so the difference is the images). Prices
are list prices per million input tokens, written below; edit ``PRICES`` when they change.

    python benchmarks/tokens.py            # table
    python benchmarks/tokens.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import machine, machine_line
from loop_overhead import TASK, Scripted
from profiles import CountingPhone

from mae.config import LoopSettings, PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.llm import ChatClient, ModelProfile
from mae.llm.images import ImagePolicy, before_policy, image_tokens, target_size
from mae.llm.providers import PRESETS
from mae.run.loop import run_task
from mae.run.runtime import build_perceptor
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest

PRICES: dict[str, float] = {  # US dollars per million input tokens (list prices of the preset models)
    "openai": 2.50,  # gpt-4o
    "anthropic": 3.00,  # claude-3-5-sonnet
    "google": 1.25,  # gemini-1.5-pro, prompts up to 128k tokens
    "dashscope": 0.80,  # qwen-vl-max (international endpoint)
    "vllm": 0.0,  # your own GPU
}

OLD_POLICIES: dict[str, ImagePolicy] = {
    "openai": ImagePolicy(max_side=1664, token_rule="openai_tiles"),
    "anthropic": ImagePolicy(max_side=1568, token_rule="anthropic_pixels"),
    "google": ImagePolicy(max_side=1536, token_rule="gemini_tiles"),
    "dashscope": ImagePolicy(resize="qwen", max_pixels=1280 * 28 * 28, token_rule="qwen_patches"),
    "vllm": ImagePolicy(resize="qwen", max_pixels=1280 * 28 * 28, token_rule="qwen_patches"),
}

Call = tuple[str, int, int]
"""(role, characters of text, images) of one request."""


def record_run() -> tuple[list[Call], int]:
    """The requests of one scripted run, and its number of steps."""
    phone = CountingPhone()
    calls: list[Call] = []
    scripted = Scripted(phone, 0.0)

    def responder(request: RecordedRequest) -> FakeReply | None:
        calls.append((request.role or "", len(request.text), request.image_count))
        return scripted(request)

    perceptor = build_perceptor(PerceptionSettings.model_validate({"captions": "none"}))
    with FakeModelServer(responder=responder) as server, tempfile.TemporaryDirectory() as tmp:
        profile = {"provider": "fake", "base_url": server.base_url, "model": "fake-vlm", "api_key_env": None}
        result = run_task(
            TASK,
            device=phone,
            client=ChatClient(ModelProfile.model_validate(profile)),
            perceptor=perceptor,
            settings=LoopSettings.model_validate({}),
            log_dir=Path(tmp),
        )
    if not result.finished:
        raise RuntimeError(f"the scripted run did not complete: {result.exit_reason.value}")
    return calls, len(result.actions)


def call_tokens(call: Call, policy: ImagePolicy, screen: tuple[int, int]) -> int:
    """Estimated input tokens of one request under ``policy``."""
    role, chars, images = call
    tokens = chars // 4
    for index in range(images):
        chosen = before_policy(policy, screen) if role == "reflector" and index == 0 else policy
        tokens += image_tokens(target_size(screen, chosen), policy.token_rule) or 0
    return tokens


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    info = machine()
    calls, steps = record_run()
    screen = VirtualPhone().screen_size()
    report: dict[str, Any] = {"machine": info, "steps": steps, "requests": len(calls), "providers": {}}
    for name, preset in PRESETS.items():
        policies = {"before": OLD_POLICIES[name], "after": preset.image}
        per_role: dict[str, dict[str, float]] = defaultdict(dict)
        for label, policy in policies.items():
            for call in calls:
                per_role[call[0]][label] = per_role[call[0]].get(label, 0) + call_tokens(call, policy, screen)
        price = PRICES.get(name, 0.0)
        roles = {
            role: {
                label: {
                    "input_tokens_per_step": round(total / steps),
                    "dollars_per_step": round(total / steps * price / 1e6, 5),
                }
                for label, total in by_label.items()
            }
            for role, by_label in per_role.items()
        }
        totals = {
            label: {
                "input_tokens_per_step": sum(r[label]["input_tokens_per_step"] for r in roles.values()),
                "dollars_per_step": round(sum(r[label]["dollars_per_step"] for r in roles.values()), 5),
            }
            for label in policies
        }
        report["providers"][name] = {
            "model": preset.model,
            "price_per_million": price,
            "image_rule": preset.image.token_rule,
            "roles": roles,
            "total": totals,
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(machine_line(info))
    print(f"scripted run: {steps} steps, {len(calls)} requests; tokens and dollars per step, before -> after")
    for name, part in report["providers"].items():
        old, new = part["total"]["before"], part["total"]["after"]
        print(
            f"  {name} ({part['model']}, ${part['price_per_million']:.2f}/M input): "
            f"{old['input_tokens_per_step']} -> {new['input_tokens_per_step']} tokens, "
            f"${old['dollars_per_step']:.4f} -> ${new['dollars_per_step']:.4f} per step"
        )
        for role, by_label in part["roles"].items():
            old, new = by_label["before"], by_label["after"]
            print(
                f"      {role:<10} {old['input_tokens_per_step']:>6} -> "
                f"{new['input_tokens_per_step']:>6} tokens  "
                f"${old['dollars_per_step']:.4f} -> ${new['dollars_per_step']:.4f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
