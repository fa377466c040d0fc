"""Do the facts the graders check survive the Notetaker's consolidation of its notes (issue #28)?

For every task of the hard virtual suite (``mae/eval/data/virtual_tasks_hard.json``):

1. the reference route is replayed on a fresh virtual phone, keeping the text of every screen;
2. the task's **rubric facts** are taken from its checks and rubric, kept only where the route's screens
   show them: the terms and values a note check looks for, the name of the item a final-screen, route or
   cart check wants, and the names and figures a rubric item spells out in brackets ("(Walmart, $144.00)");
3. the notes a run along that route would hold are built: one line per rubric fact with the screen text
   around it (its item's name, rating, price, hours), mixed with the other rows those screens showed and
   step-by-step lines, past the consolidation budget (1,500 characters);
4. the notes are consolidated twice with the same backbone: without the fact safeguard (the reply as
   parsed, or the old notes when it is unusable) and with it (``mae.agents.notes_budget.consolidate``),
   and the share of rubric facts still in the notes is counted for each.

The backbone is a real model (``--base-url``/``--model``, OpenAI-compatible; ``--api-key-env`` names the
variable holding its key) or, by default, a local scripted server that answers each task with every one
of a mix of replies written the way models write them: good, good with a ``### Dropped ###`` list,
lossy (drops a price; swaps two prices; cuts every line short), prose-wrapped, fenced, CRLF, a refusal,
an empty reply and a huge one. A scripted reply is not a model: it measures the safeguard, not what a
given model keeps.

    python benchmarks/notes_survival.py                       # scripted mix, all 25 hard tasks
    python benchmarks/notes_survival.py --tasks h_air_fryer_best_deal --json
    python benchmarks/notes_survival.py --base-url http://127.0.0.1:8000/v1 --model qwen2.5-vl-7b
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mae.agents.base import ask
from mae.agents.notes_budget import (
    NOTES_BUDGET_CHARS,
    ConsolidatedNotes,
    consolidate,
    consolidation_prompt,
    parse_consolidated,
)
from mae.agents.notes_facts import VALUE_KINDS, extract_facts, find_losses, normalise
from mae.agents.notetaker import ROLE
from mae.device.virtual import VirtualPhone
from mae.eval.virtual_suite import Check, VirtualTask, load_task_suite
from mae.llm import ChatClient, ModelProfile
from mae.memory.working import WorkingMemory
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

NOTES_CHARS = 2_200
"""How long the built notes grow (past the 1,500-character budget, as a long run's do)."""
CHROME = {
    "battery", "wifi", "mobile signal", "back button", "home button", "recent apps button", "shift",
    "backspace", "enter", "clear text", "?123", "loading spinner", "product photo", "close", "search",
    "cart", "back", "directions", "not now", "sign in", "got it", "allow", "don't allow",
}  # fmt: skip
KINDS = [
    "good", "good_dropped", "lossy_drop", "lossy_swap", "terse", "prose", "fenced", "crlf", "refusal",
    "empty", "huge",
]  # fmt: skip
STORE_PREFIXES = {"wm", "bb", "bk", "yt", "az"}


# ---------------------------------------------------------------------------- the notes of a route


def route_screens(task: VirtualTask) -> list[tuple[str, list[str]]]:
    """``(app, texts)`` of the screen after every reference action, keyboard and system bars left out."""
    phone = VirtualPhone()
    task.prepare(phone)
    screens: list[tuple[str, list[str]]] = []
    for action in task.reference_actions:
        task.replay(phone, [action])
        texts = [
            e.text.strip()
            for e in phone.ground_truth()
            if e.text and len(e.text.strip()) > 1 and e.text.strip().lower() not in CHROME
        ]
        texts = [t for t in texts if not re.fullmatch(r"\d{1,2}:\d{2}", t)]  # the status bar's clock
        app = phone.current_app.spec.label if phone.current_app else "Home"
        screens.append((app, texts))
    return screens


def _walk(checks: list[Check]) -> list[Check]:
    out: list[Check] = []
    for check in checks:
        out.append(check)
        out.extend(_walk(check.checks or []))
    return out


def _compact(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def item_name(key: str, texts: list[str]) -> str | None:
    """The screen text naming the item ``key`` (``gangnam-bbq`` -> ``Gangnam BBQ House``)."""
    tokens = [t for t in key.split("-") if len(t) >= 3 and t not in STORE_PREFIXES]
    for text in texts:
        if tokens and all(t in _compact(text) for t in tokens) and not re.search(r"\$\d", text):
            return text
    return None


def rubric_facts(task: VirtualTask, screens: list[tuple[str, list[str]]]) -> list[str]:
    """The facts the graders check that the route's screens show, in the words the screens use."""
    texts = [t for _, screen in screens for t in screen]
    shown = normalise(" ".join(texts))
    facts: list[str] = []

    def add(term: str) -> None:
        if normalise(term) in shown and all(normalise(term) != normalise(f) for f in facts):
            facts.append(term)

    checks = _walk(list(task.checks))
    for check in checks:
        if check.kind == "note":
            for group in check.groups or []:
                found = [t for t in group if normalise(t) in shown]
                if found:
                    add(found[0])
            for fact in check.facts or []:
                found = [t for t in fact.item if normalise(t) in shown]
                if found:
                    add(found[0])
                for value in fact.values:
                    add(value)
        items = [check.item] if check.item else []
        if check.kind == "cart" and check.values:
            items.append(check.values[0])
        for key in items:
            if key and (name := item_name(key, texts)):
                add(name)
    for rubric in task.rubrics:
        for inside in re.findall(r"\(([^)]+)\)", rubric):
            for part in inside.split(", "):
                if re.search(r"\d|[A-Z]\w+ [A-Z]", part):
                    add(part.strip())
    return facts


_VALUE = re.compile(r"\$\d|\d\.\d|\d:\d\d|\d ?[AP]M|\(\d|\d{3}-\d{4}|\d+ ?(?:min|mi|stars|likes|GB|qt)\b")
_VERB = {"Open_App": "opened", "Tap": "tapped", "Type": "typed", "Swipe": "scrolled", "Back": "went back on",
         "Enter": "searched on", "Wait": "waited on", "Home": "went home from"}  # fmt: skip


def screen_rows(app: str, texts: list[str]) -> list[str]:
    """What a Notetaker writes about a screen's rows: ``- App: name; figure, figure``, one per row.

    A row starts at a text that is not a figure, runs on over the texts that continue its name (a long
    title wraps onto a second text) and takes the figures after it, up to the next name."""
    rows: list[tuple[list[str], list[str]]] = []
    for text in texts:
        if _VALUE.search(text) or re.fullmatch(r"[\d.,()/ ]+", text):
            if rows:
                if not rows[-1][1]:
                    del rows[-1][0][:-2]  # a title wraps onto two texts at most: the rest is headings
                rows[-1][1].append(text)
        elif rows and not rows[-1][1] and len(" ".join(rows[-1][0])) < 80:
            rows[-1][0].append(text)
        else:
            rows.append(([text], []))
    lines = []
    for name, values in rows:
        if not values:
            continue
        kept = [v for v in dict.fromkeys(values) if not any(v != w and v in w for w in values)]
        lines.append(f"- {app}: {' '.join(name)}; {', '.join(kept)}"[:200])
    return lines


def build_notes(
    task: VirtualTask, screens: list[tuple[str, list[str]]], facts: list[str]
) -> tuple[str, dict[str, str]]:
    """The notes a run along the route would hold (a line per rubric fact, the other rows those screens
    showed, a line per step), and the line each rubric fact is on."""
    lines: list[str] = []
    fact_lines: dict[str, str] = {}
    rows: list[str] = []
    for step, ((app, texts), action) in enumerate(zip(screens, task.reference_actions, strict=True), 1):
        verb = _VERB.get(action.split("(")[0], "acted on")
        lines.append(f"Step {step}: {verb} {app}; nothing to keep from this screen yet.")
        for row in screen_rows(app, texts):
            needed = [f for f in facts if f not in fact_lines and normalise(f) in normalise(row)]
            if needed and row not in lines:
                lines.append(row)
            if needed:
                fact_lines.update((f, row) for f in needed)
            else:
                rows.append(row)
        for text in texts:  # a fact outside any row (a heading, a URL, a review's words)
            needed = [f for f in facts if f not in fact_lines and normalise(f) in normalise(text)]
            if needed:
                lines.append(f"- {app}: {text}")
                fact_lines.update((f, lines[-1]) for f in needed)
    for fact in facts:  # spelled across two screen texts: written as the agent read it
        if fact not in fact_lines:
            lines.append(f"- {fact}")
            fact_lines[fact] = lines[-1]
    for line in dict.fromkeys(r for r in rows if r not in fact_lines.values()):
        if len("\n".join(lines)) >= NOTES_CHARS:
            break
        if line not in lines:
            lines.insert(len(lines) * 2 // 3, line)
    while len("\n".join(lines)) < NOTES_CHARS:
        lines.append(f"Step {len(lines)}: looked again; nothing new for the request.")
    return "\n".join(lines), fact_lines


# ---------------------------------------------------------------------------- scripted replies


def _good(notes: str) -> list[str]:
    """What a careful model keeps: every line with a fact, without the step-by-step lines, merged."""
    kept: list[str] = []
    for line in notes.splitlines():
        if line.startswith("Step ") or not line.strip():
            continue
        short = re.sub(r"\s+", " ", line.replace("- ", "", 1)).strip()
        if short not in kept:
            kept.append(short)
    return kept


_FIGURES = re.compile(r"[$€£]?\d[\d,]*(?:\.\d+)?(?: ?(?:stars|AM|PM))?,? ?")


def _swap_prices(lines: list[str]) -> list[str]:
    """The first price of each pair of priced lines swapped (line 1 with 2, 3 with 4, ...)."""
    found = [(i, m) for i, line in enumerate(lines) if (m := re.search(r"\$\d[\d,.]*\d", line))]
    out = list(lines)
    for (i, first), (j, second) in zip(found[::2], found[1::2], strict=False):
        if first.group(0) != second.group(0):
            out[i] = lines[i].replace(first.group(0), second.group(0), 1)
            out[j] = lines[j].replace(second.group(0), first.group(0), 1)
    return out


def scripted_reply(kind: str, notes: str, instruction: str, retry: bool) -> str:
    """A consolidation reply of ``kind`` to ``notes``, written the way models write them."""
    good = _good(notes)
    header = "### Important Notes ###\n"
    body = "\n".join(good)
    if kind == "good" or (kind == "lossy_swap" and retry):
        return header + body
    if kind == "good_dropped":
        words = set(normalise(instruction).split()) - {"the", "a", "on", "in", "and", "of", "to", "find"}
        keep = [line for line in good if words & set(normalise(line).split())]
        gone = [line for line in good if line not in keep]
        dropped = "\n".join(f"{line[:60]}: not needed" for line in gone) or "None"
        return f"{header}{chr(10).join(keep or good)}\n### Dropped ###\n{dropped}"
    if kind == "lossy_drop":  # forgets the figures of every other line, and one line altogether
        lines = [_FIGURES.sub("", line) if i % 2 else line for i, line in enumerate(good)]
        return header + "\n".join(lines[:-1] if len(lines) > 2 else lines)
    if kind == "lossy_swap":  # attaches two prices to the wrong items, then fixes it when told
        return header + "\n".join(_swap_prices(good))
    if kind == "terse":
        return header + "\n".join(line[:48].rstrip(", ") for line in good)
    if kind == "prose":
        opening = "Sure! Here are the consolidated notes:\n\n"
        return f"{opening}{header}{body}\n\nLet me know if you need anything else."
    if kind == "fenced":
        return f"```markdown\n{header}{body}\n```"
    if kind == "crlf":
        return (header + body).replace("\n", "\r\n")
    if kind == "refusal":
        return "I'm sorry, but I can't help with rewriting these notes."
    if kind == "empty":
        return ""
    if kind == "huge":
        return header + "\n".join([notes] * 40)
    raise ValueError(f"unknown reply kind {kind}")


class ScriptedConsolidator:
    """The fake server's responder: every consolidation request gets a reply of ``self.kind``."""

    def __init__(self) -> None:
        self.kind = "good"

    def __call__(self, request: RecordedRequest) -> str | None:
        text = request.text
        notes = _section(text, "Current Important Notes")
        instruction = _section(text, "User Request")
        return scripted_reply(self.kind, notes, instruction, retry="could not be used" in text)


def _section(text: str, name: str) -> str:
    found = re.search(rf"### {name} ###\n(.*?)(?:\n### |\Z)", text, re.DOTALL)
    return found.group(1).strip() if found else ""


# ---------------------------------------------------------------------------- measuring


@dataclass
class Outcome:
    task: str
    kind: str
    facts: int
    kept_without: int
    kept_with: int
    chars_before: int
    chars_without: int
    chars_with: int
    repaired: bool
    kept_old: bool
    calls_with: int
    lost_with: list[str] = field(default_factory=list)


def survives(fact: str, line: str, notes: str) -> bool:
    """``fact`` is in ``notes`` (word for word, or every figure in it in any spelling) and, when it is a
    figure, on a line that still names its row (``- Walmart: <name>; ...``: the shop and the item)."""
    figures = [f for f in extract_facts(fact) if f.kind in VALUE_KINDS]
    if not figures:
        return normalise(fact) in normalise(notes)
    row = re.match(r"- ([^:]+): ([^;]+);", line)
    for text in notes.splitlines():
        if normalise(fact) not in normalise(text) and find_losses(fact, text).lost:
            continue
        if row is None or all(normalise(part) in normalise(text) for part in row.groups()):
            return True
    return False


def without_safeguard(client: ChatClient, memory: WorkingMemory) -> str:
    """The notes after a consolidation whose reply is only parsed (unusable: the old notes stay)."""
    before = memory.notes
    prompt = consolidation_prompt(memory)
    result = ask(client, ROLE, prompt, [], lambda text: parse_consolidated(text, before))
    return result.value.notes if result.value is not None else before


def measure(task: VirtualTask, client: ChatClient, kind: str, notes: str, facts: dict[str, str]) -> Outcome:
    memory = WorkingMemory(instruction=task.instruction, notes=notes)
    plain = without_safeguard(client, memory)
    result = consolidate(client, memory)
    value: ConsolidatedNotes | None = result.value
    guarded = value.notes if value is not None else notes
    return Outcome(
        task=task.id,
        kind=kind,
        facts=len(facts),
        kept_without=sum(survives(f, line, plain) for f, line in facts.items()),
        kept_with=sum(survives(f, line, guarded) for f, line in facts.items()),
        chars_before=len(notes),
        chars_without=len(plain),
        chars_with=len(guarded),
        repaired=bool(value and value.restored),
        kept_old=value is None,
        calls_with=len(result.turns),
        lost_with=[f for f, line in facts.items() if not survives(f, line, guarded)],
    )


def run(
    tasks: list[VirtualTask],
    make_client: Callable[[], ChatClient],
    kinds: list[str],
    model: ScriptedConsolidator | None,
) -> list[Outcome]:
    client = make_client()
    outcomes: list[Outcome] = []
    for task in tasks:
        screens = route_screens(task)
        facts = rubric_facts(task, screens)
        notes, fact_lines = build_notes(task, screens, facts)
        for kind in kinds:
            if model is not None:
                model.kind = kind
            outcomes.append(measure(task, client, kind, notes, fact_lines))
    return outcomes


def summary(outcomes: list[Outcome]) -> dict[str, dict[str, float]]:
    by_kind: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_kind.setdefault(o.kind, []).append(o)
    by_kind["all"] = outcomes
    out: dict[str, dict[str, float]] = {}
    for kind, rows in by_kind.items():
        facts = sum(o.facts for o in rows) or 1
        out[kind] = {
            "consolidations": len(rows),
            "facts": sum(o.facts for o in rows),
            "survive_without": sum(o.kept_without for o in rows) / facts,
            "survive_with": sum(o.kept_with for o in rows) / facts,
            "chars_before": sum(o.chars_before for o in rows) / len(rows),
            "chars_without": sum(o.chars_without for o in rows) / len(rows),
            "chars_with": sum(o.chars_with for o in rows) / len(rows),
            "repaired": sum(o.repaired for o in rows),
            "kept_old": sum(o.kept_old for o in rows),
            "calls_with": sum(o.calls_with for o in rows) / len(rows),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: every hard task)")
    parser.add_argument(
        "--base-url", default="", help="an OpenAI-compatible server (default: scripted replies)"
    )
    parser.add_argument("--model", default="", help="the model name at --base-url")
    parser.add_argument(
        "--api-key-env", default="", help="environment variable holding the key for --base-url"
    )
    parser.add_argument("--kinds", default=",".join(KINDS), help="scripted reply kinds to use")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.base_url and not args.model:
        parser.error("--base-url needs --model (the model's name on that server)")
    tasks = load_task_suite(suite="hard")
    wanted = {t for t in args.tasks.split(",") if t}
    unknown = wanted - {t.id for t in tasks}
    if unknown:
        parser.error(f"no hard task named {', '.join(sorted(unknown))}")
    tasks = [t for t in tasks if not wanted or t.id in wanted]
    started = time.perf_counter()
    if args.base_url:
        profile = ModelProfile(
            provider="custom", base_url=args.base_url, model=args.model, api_key_env=args.api_key_env or None
        )
        outcomes = run(tasks, lambda: ChatClient(profile), ["model"], None)
    else:
        kinds = [k for k in args.kinds.split(",") if k]
        bad = [k for k in kinds if k not in KINDS]
        if bad:
            parser.error(f"unknown reply kinds {', '.join(bad)}; choose from {', '.join(KINDS)}")
        scripted = ScriptedConsolidator()
        with FakeModelServer(responder=scripted) as server:
            profile = ModelProfile.model_validate(
                {
                    "provider": "fake",
                    "base_url": server.base_url,
                    "model": "fake-vlm",
                    "api_key_env": None,
                    "max_retries": 0,
                }
            )
            outcomes = run(tasks, lambda: ChatClient(profile), kinds, scripted)
    figures = summary(outcomes)
    elapsed = time.perf_counter() - started
    if args.json:
        print(
            json.dumps(
                {"summary": figures, "outcomes": [o.__dict__ for o in outcomes], "seconds": elapsed}, indent=2
            )
        )
        return 0
    print(
        f"{len(tasks)} hard tasks, notes built to {NOTES_CHARS:,} characters (budget {NOTES_BUDGET_CHARS:,})"
    )
    heads = [
        "n",
        "facts",
        "kept w/o",
        "kept with",
        "chars w/o",
        "chars with",
        "repaired",
        "kept old",
        "calls",
    ]
    widths = [4, 6, 9, 10, 10, 11, 9, 9, 6]
    print(f"{'reply':<13} " + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths, strict=True)))
    for kind, row in figures.items():
        print(
            f"{kind:<13} {row['consolidations']:>4.0f} {row['facts']:>6.0f} {row['survive_without']:>9.1%} "
            f"{row['survive_with']:>10.1%} {row['chars_without']:>10.0f} {row['chars_with']:>11.0f} "
            f"{row['repaired']:>9.0f} {row['kept_old']:>9.0f} {row['calls_with']:>6.2f}"
        )
    lost = [o for o in outcomes if o.lost_with]
    for o in lost[:10]:
        print(f"  lost with the safeguard: {o.task} ({o.kind}): {', '.join(o.lost_with)}")
    print(f"({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
