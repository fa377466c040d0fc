"""How the long-term memory and the prompts scale with the number of Tips and Shortcuts, and with steps.

For stores of 10, 100, 1,000 and 10,000 Tips and as many Shortcuts (synthetic, about twenty apps,
imported in the paper's formats), against the fake model server (scripted replies, not a model):

- **tips counted**: how many Tips the store counts after the import (must equal the size);
- **load**: the *cold load*, the first ``MemoryStore(dir).load()`` in a fresh process (imports
  excluded, warm OS file cache) as a CLI command or a new demo does it: median wall clock and CPU time
  of 5 processes (CPU time is what a shared, loaded machine inflates least); and the *warm reload*,
  median of ``MemoryStore.load()`` with a fresh store object in a process that has loaded it before;
- **disk per version**: bytes one reflection (one Tip and one Shortcut added) adds to the folder, and
  the folder's total after it;
- **prompt sizes**: the longest prompt of each role in a short run prepared from that store (the two
  retrievers, Manager, Operator, Action Reflector, Notetaker, then the two Experience Reflectors), in
  characters and estimated tokens (characters / 4), and the Manager's and Operator's with a retriever
  that gives no usable reply (the fallback);
- **long run**: a scripted run of 40 steps from the initial memory whose Notetaker adds one fact per
  step; the text tokens of each step (all its requests) at steps 1, 10, 20 and 40.

Targets (issue #28): every prompt of every role at most 16k tokens at 1,000 and 10,000 items; load at
10,000 at most 100 ms; text tokens at step 40 within 10 % of step 10. Issue #28 also asked for the
Operator prompt within 10 % of its size with the initial memory; since issue #40 a run gets up to
4,000 characters of Tips (real models' Tips are 200 to 400 characters long, and 720 gave a run two or
three of them), so the Operator prompt can grow by up to about 3,900 characters: about 3 % of a
real Operator request's input tokens; measured here at 1,000 items, 1.06 times the initial memory's
with the retriever's choice and 1.18 with a failed retriever (docs/memory.md).

    python benchmarks/memory_scale.py                    # all sizes (about two minutes)
    python benchmarks/memory_scale.py --sizes 10,1000 --json
    python benchmarks/memory_scale.py --sizes 10000 --load-only    # only the import and the loads
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import load_average, machine, machine_line

from mae.config import EvolutionSettings, LoopSettings, Settings
from mae.device.virtual import VirtualPhone
from mae.llm import ChatClient, ModelProfile
from mae.memory.longterm import MemoryStore
from mae.perception.elements import Perception
from mae.run.evolution import MemorySession
from mae.run.loop import run_task
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

TASK = "Find the price of the Ninja DZ201 air fryer on Amazon and write it in a new note in Notes."
TOKEN_LIMIT = 16_000
APPS = [
    "Amazon", "Walmart", "Notes", "Maps", "Chrome", "YouTube", "Gmail", "Settings", "Calendar",
    "Contacts", "Phone", "Messages", "Photos", "Spotify", "Uber", "Booking", "Reddit", "X", "Clock",
    "Files",
]  # fmt: skip
VERBS = ["search", "open", "compare", "save", "share", "scroll", "filter", "sort", "copy", "check"]
OBJECTS = ["products", "reviews", "prices", "routes", "messages", "events", "contacts", "songs", "posts"]


class GroundTruthPerceptor:
    """W_V from the virtual phone's display list (the benchmark measures prompts, not OCR)."""

    def __init__(self, phone: VirtualPhone) -> None:
        self.phone = phone

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
        width, height = image.size
        return Perception(
            width=width,
            height=height,
            elements=self.phone.ground_truth(),
            keyboard_active=bool(keyboard_active),
        )


def synthetic_tip(index: int) -> str:
    app = APPS[index % len(APPS)]
    verb, thing = VERBS[(index // 3) % len(VERBS)], OBJECTS[(index // 7) % len(OBJECTS)]
    return (
        f"In {app}, to {verb} {thing} wait for the list to load, then use the search box at the top "
        f"instead of scrolling (lesson {index})."
    )


def synthetic_shortcut(index: int) -> dict[str, Any]:
    app = APPS[index % len(APPS)]
    verb, thing = VERBS[(index // 3) % len(VERBS)], OBJECTS[(index // 7) % len(OBJECTS)]
    name = f"{verb.title()}_{thing.title()}_{re.sub(r'[^A-Za-z0-9]', '', app)}_{index}"
    return {
        "name": name,
        "arguments": ["x", "y", "text"],
        "description": f"In {app}, {verb} {thing}: tap the box at (x, y), type the text and press Enter.",
        "precondition": f"{app} is open and its search box is visible.",
        "atomic_action_sequence": [
            {"name": "Tap", "arguments_map": {"x": "x", "y": "y"}},
            {"name": "Type", "arguments_map": {"text": "text"}},
            {"name": "Enter", "arguments_map": {}},
        ],
    }


def write_memory_files(folder: Path, size: int) -> tuple[Path, Path]:
    tips = folder / "tips.txt"
    shortcuts = folder / "shortcuts.json"
    tips.write_text("".join(f"{i}. {synthetic_tip(i)}\n" for i in range(1, size + 1)), encoding="utf-8")
    data = {s["name"]: s for s in (synthetic_shortcut(i) for i in range(1, size + 1))}
    shortcuts.write_text(json.dumps(data, indent=4), encoding="utf-8")
    return tips, shortcuts


def _section(text: str, title: str) -> str:
    marker = f"### {title} ###\n"
    start = text.rfind(marker)
    if start < 0:
        return ""
    rest = text[start + len(marker) :]
    end = rest.find("\n### ")
    return (rest if end < 0 else rest[:end]).strip()


def agent_of(request: RecordedRequest) -> str:
    """Which agent sent a request (experience requests share one role; their sections tell them apart)."""
    role, text = request.role or "", request.text
    if role == "notetaker" and "### Current Important Notes ###" in text:
        return "notes_consolidator"
    if role != "experience":
        return role
    if "### All Tips ###" in text:
        return "tips_retriever"
    if "### All Shortcuts ###" in text:
        return "shortcuts_retriever"
    if "### Current Tips ###" in text:
        return "tips_reflector"
    return "shortcuts_reflector"


class ScriptedModel:
    """Scripted replies for every role; ``broken_retrievers`` makes the retrievers answer nonsense."""

    def __init__(self, broken_retrievers: bool = False, steps: int = 2, fact_per_step: bool = False) -> None:
        self.broken_retrievers = broken_retrievers
        self.steps = steps
        self.fact_per_step = fact_per_step
        self.requests: list[tuple[str, int]] = []
        self.manager_calls = 0
        self.operator_calls = 0
        self.notes_calls = 0

    def __call__(self, request: RecordedRequest) -> str | None:
        agent, text = agent_of(request), request.text
        self.requests.append((agent, len(text)))
        if agent in ("tips_retriever", "shortcuts_retriever") and self.broken_retrievers:
            return "I am sorry, I cannot help with that request."
        if agent == "tips_retriever":
            numbers = re.findall(r"^\[(\d+)\]", _section(text, "All Tips"), re.M)[:5]
            return (
                f"### Thought ###\nShopping and notes.\n### Selected Tips ###\n{', '.join(numbers) or 'None'}"
            )
        if agent == "shortcuts_retriever":
            names = re.findall(r"^- ([A-Za-z0-9_]+)\(", _section(text, "All Shortcuts"), re.M)[:3]
            return f"### Thought ###\nSearching.\n### Selected Shortcuts ###\n{', '.join(names) or 'None'}"
        if agent == "tips_reflector":
            current = _section(text, "Current Tips")
            items = re.findall(r"^\s*\d+[.)]\s+(.*)$", current, re.M)
            items.append("Compare prices on both shops before writing the note.")
            listing = "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1))
            return f"### Thought ###\nOne lesson.\n### Updated Tips ###\n{listing}"
        if agent == "shortcuts_reflector":
            new = synthetic_shortcut(10**6)
            new["name"] = "Search_And_Note_Price"
            return (
                f"### Thought ###\nA routine.\n### New Shortcuts ###\n{json.dumps([new])}\n"
                "### Revised Shortcuts ###\n[]"
            )
        if agent == "manager":
            self.manager_calls += 1
            subgoal = "Look through the results" if self.manager_calls <= self.steps else "Finished"
            plan = "### Plan ###\n1. Browse\n2. Note"
            return f"### Thought ###\nOn track.\n{plan}\n### Current Subgoal ###\n{subgoal}"
        if agent == "operator":
            self.operator_calls += 1
            down = self.operator_calls % 2
            y1, y2 = (1400, 500) if down else (500, 1400)  # on screen at 768x1664 and 1080x2340
            action = {"name": "Swipe", "arguments": {"x1": 540, "y1": y1, "x2": 540, "y2": y2}}
            return (
                f"### Thought ###\nNext.\n### Action ###\n{json.dumps(action)}\n### Description ###\nScroll."
            )
        if agent == "reflector":
            return "### Outcome ###\nA\n### Error Description ###\nNone\n### Progress Status ###\nBrowsing."
        if agent == "notetaker":
            return self.notetaker(text)
        if agent == "notes_consolidator":
            return self.consolidate(text)
        return None

    def consolidate(self, text: str) -> str:
        """Keeps the cheapest result found and the five latest, and names the rest under ### Dropped ###
        as the prompt asks (a scripted stand-in for a model)."""
        lines = [line for line in _section(text, "Current Important Notes").splitlines() if line.strip()]
        facts = [line for line in lines if line.startswith(("- Result", "Cheapest so far: Result"))]
        prices = [(float(m.group(1)), line) for line in facts if (m := re.search(r"\$(\d+\.\d+)", line))]
        cheapest = min(prices)[1] if prices else ""
        label = cheapest.removeprefix("Cheapest so far: ").removeprefix("- ")
        kept = [f"Cheapest so far: {label}"] if cheapest else []
        kept += [line for line in facts[-5:] if line != cheapest and line.removeprefix("- ") != label]
        dropped = [f"{line.removeprefix('- ')}: not the cheapest" for line in facts if line not in kept]
        dropped = [line for line in dropped if not line.startswith(("Cheapest", label))]
        return (
            "### Important Notes ###\n"
            + "\n".join(kept)
            + "\n### Dropped ###\n"
            + ("\n".join(dropped) or "None")
        )

    def notetaker(self, text: str) -> str:
        self.notes_calls += 1
        notes = _section(text, "Existing Important Notes")
        if notes.startswith("(none"):
            notes = ""
        if self.fact_per_step:
            k = self.notes_calls
            fact = (
                f"- Result {k}: Ninja air fryer model DZ{200 + k}, price ${100 + k}.99, rated "
                f"{3 + k % 20 / 10:.1f} stars from {40 * k} reviews, sold by Shop {k}."
            )
            notes = f"{notes}\n{fact}".strip()
        return f"### Important Notes ###\n{notes or 'None'}"


def _client(server: FakeModelServer) -> ChatClient:
    profile = {"provider": "fake", "base_url": server.base_url, "model": "fake-vlm", "api_key_env": None}
    return ChatClient(ModelProfile.model_validate({**profile, "max_retries": 0}))


def _settings(memory_dir: Path, log_dir: Path) -> Settings:
    return Settings.model_validate(
        {
            "memory_dir": str(memory_dir),
            "log_dir": str(log_dir),
            "evolution": EvolutionSettings().model_dump(),
        }
    )


def prepared_run(store_dir: Path, log_dir: Path, model: ScriptedModel, reflect: bool) -> dict[str, int]:
    """Longest prompt (characters) per agent of one short run with memory (and its reflection)."""
    phone = VirtualPhone()
    with FakeModelServer(responder=model) as server:
        client = _client(server)
        session = MemorySession(_settings(store_dir, log_dir), client, evolve=reflect)
        prepared = session.prepare(TASK)
        result = run_task(
            TASK,
            device=phone,
            client=client,
            perceptor=GroundTruthPerceptor(phone),
            settings=LoopSettings.model_validate({"max_steps": model.steps + 1}),
            tips=prepared.tips,
            shortcuts=prepared.shortcuts,
            log_dir=log_dir,
        )
        if reflect:
            session.finish(result, prepared)
    longest: dict[str, int] = {}
    for agent, chars in model.requests:
        longest[agent] = max(longest.get(agent, 0), chars)
    return longest


COLD_LOAD = (
    "import sys, time\n"
    "from mae.memory.longterm import MemoryStore\n"
    "started, cpu = time.perf_counter(), time.process_time()\n"
    "MemoryStore(sys.argv[1]).load()\n"
    "print(time.perf_counter() - started, time.process_time() - cpu)\n"
)
COLD_RUNS = 5


def cold_load_s(store_dir: Path) -> tuple[float, float]:
    """Seconds of the first ``load()`` in a fresh process (as the CLI does it), imports excluded: wall
    clock and the process's CPU time (which a shared, loaded machine inflates less)."""
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", COLD_LOAD, str(store_dir)],
        capture_output=True,
        text=True,
        cwd=root,
        check=True,
    )
    wall, cpu = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure_size(size: int, work: Path, load_only: bool = False) -> dict[str, Any]:
    folder = work / f"size-{size}"
    folder.mkdir()
    tips_file, shortcuts_file = write_memory_files(folder, size)
    store_dir = folder / "memory"
    store = MemoryStore(store_dir)
    started = time.perf_counter()
    store.import_files(tips=tips_file, shortcuts=shortcuts_file)
    import_s = time.perf_counter() - started
    loaded = store.load()
    counted = len(loaded.tip_items())
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        MemoryStore(store_dir).load()
        timings.append(time.perf_counter() - started)
    cold = [cold_load_s(store_dir) for _ in range(COLD_RUNS)]
    loads = {
        "size": size,
        "tips_counted": counted,
        "shortcuts_counted": len(loaded.shortcuts),
        "import_s": round(import_s, 3),
        "load_ms": round(statistics.median(timings) * 1000, 1),
        "load_cold_ms": round(statistics.median(wall for wall, _ in cold) * 1000, 1),
        "load_cold_cpu_ms": round(statistics.median(cpu for _, cpu in cold) * 1000, 1),
        "load_cold_best_ms": round(min(wall for wall, _ in cold) * 1000, 1),
        "load_average": load_average(),
    }
    if load_only:
        return loads
    before = folder_bytes(store_dir)
    prompts = prepared_run(store_dir, folder / "runs", ScriptedModel(), reflect=True)
    after = folder_bytes(store_dir)
    fallback = prepared_run(store_dir, folder / "runs", ScriptedModel(broken_retrievers=True), reflect=False)
    return {
        **loads,
        "disk_per_version_bytes": after - before,
        "disk_total_bytes": after,
        "prompt_chars": prompts,
        "fallback_chars": {k: v for k, v in fallback.items() if k in ("manager", "operator")},
    }


def initial_prompts(work: Path) -> dict[str, int]:
    """Prompt sizes with the initial memory (nothing stored)."""
    folder = work / "initial"
    folder.mkdir()
    return prepared_run(folder / "memory", folder / "runs", ScriptedModel(), reflect=False)


def long_run(work: Path, steps: int) -> dict[int, int]:
    """Text tokens (characters / 4) of every step of a scripted run of ``steps`` steps."""
    folder = work / "long"
    folder.mkdir()
    model = ScriptedModel(steps=steps, fact_per_step=True)
    per_step: dict[int, int] = {}
    step = 0
    original: Callable[[RecordedRequest], str | None] = model.__call__

    def responder(request: RecordedRequest) -> str | None:
        nonlocal step
        if request.role == "manager":
            step += 1
        per_step[step] = per_step.get(step, 0) + len(request.text) // 4
        return original(request)

    phone = VirtualPhone()
    with FakeModelServer(responder=responder) as server:
        run_task(
            TASK,
            device=phone,
            client=_client(server),
            perceptor=GroundTruthPerceptor(phone),
            settings=LoopSettings.model_validate({"max_steps": steps}),
            log_dir=folder / "runs",
        )
    return per_step


def tokens(chars: int) -> int:
    return chars // 4


def print_size(fig: dict[str, Any], initial: dict[str, int]) -> None:
    print(
        f"\n{fig['size']:,} items: {fig['tips_counted']:,} tips and {fig['shortcuts_counted']:,} Shortcuts "
        f"counted; import {fig['import_s']:.2f} s"
    )
    print(
        f"  cold load (a fresh process, median of {COLD_RUNS}): {fig['load_cold_ms']:.1f} ms wall "
        f"(best {fig['load_cold_best_ms']:.1f}), {fig['load_cold_cpu_ms']:.1f} ms CPU; warm reload in one "
        f"process: {fig['load_ms']:.1f} ms; load average {fig['load_average']}"
    )
    if "disk_per_version_bytes" not in fig:
        sys.stdout.flush()
        return
    print(f"  one version adds {fig['disk_per_version_bytes']:,} bytes (folder {fig['disk_total_bytes']:,})")
    for agent, chars in sorted(fig["prompt_chars"].items()):
        flag = "  OVER 16k" if tokens(chars) > TOKEN_LIMIT else ""
        print(f"  {agent:<20} {chars:>12,} chars {tokens(chars):>10,} tokens{flag}")
    ratio = fig["prompt_chars"].get("operator", 0) / max(1, initial["operator"])
    print(f"  Operator / initial-memory Operator: {ratio:.2f}")
    for agent, chars in sorted(fig["fallback_chars"].items()):
        print(f"  failed retriever -> {agent:<9} {chars:>10,} chars {tokens(chars):>10,} tokens")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000,10000", help="comma-separated store sizes")
    parser.add_argument("--steps", type=int, default=40, help="steps of the long scripted run")
    parser.add_argument("--no-long-run", action="store_true", help="skip the long scripted run")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--load-only", action="store_true", help="only import and time the loads (no runs, no long run)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    info = machine()
    figures = []
    long_figures: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="mae-memory-scale-") as tmp:
        work = Path(tmp)
        if not args.json:
            print(machine_line(info), flush=True)
        if not args.no_long_run and not args.load_only:
            per_step = long_run(work, args.steps)
            marks = [s for s in (1, 10, 20, 40, args.steps) if s <= args.steps]
            long_figures = {str(s): per_step.get(s, 0) for s in dict.fromkeys(marks)}
            if not args.json:
                print("long run, text tokens per step (characters / 4):")
                print("  " + ", ".join(f"step {s}: {t:,}" for s, t in long_figures.items()))
                ten, last = long_figures.get("10", 0), long_figures.get(str(args.steps), 0)
                if ten:
                    print(f"  step {args.steps} / step 10: {last / ten:.2f}", flush=True)
        initial = initial_prompts(work)
        if not args.json:
            operator = initial["operator"]
            print(f"initial memory: Operator prompt {operator:,} chars ({tokens(operator):,} tokens)")
        for size in sizes:
            figures.append(measure_size(size, work, load_only=args.load_only))
            if not args.json:
                print_size(figures[-1], initial)
    if args.json:
        out = {
            "machine": info,
            "initial_prompt_chars": initial,
            "sizes": figures,
            "long_run_tokens": long_figures,
        }
        print(json.dumps(out, indent=2))
    else:
        print(machine_line(machine(), load_average()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
