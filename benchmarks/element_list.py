"""Benchmark the element list the agents read, before and after the accessibility tree and the tidy-up.

Replays the reference actions of the virtual suite's tasks and perceives every distinct screen twice
with the same OCR and icon detector: ``before`` (vision only, no tidy-up: the old list) and ``after``
(the virtual phone's accessibility tree fused in, keyboard collapsed, noise dropped). Reports:

- icon elements with a name (share, after; target >= 90 %);
- element lines and tokens per screen, all screens and screens with the keyboard shown (target:
  lines down >= 40 % with the keyboard shown); tokens are counted as words and punctuation marks;
- recall of what tasks need: for every distinct target a reference ``Tap`` hits, an element whose
  centre lies in it, and an element whose text names it (the text drawn inside it, or its icon's
  name when it has no text); these must not drop;
- caption requests per task if captions were on (icons with no a11y name; a cache as in a run);
- ``no_tree_no_captions``: the list a custom endpoint gets on a screen without an accessibility tree
  (a WebView) when no ``captioner`` is set: elements and unnamed icons per screen, near duplicates
  (the same text, any case, twice within 160 px) per screen, and the recall of tap targets and of
  their labels;
- ``rubric_labels``: on the hard suite's reference routes (realism as each task sets it), the texts its
  graders need the agent to see (product names and prices, places, times, posts: see
  ``rubric_texts.py``) found in the list, with the tree and without it (no captions either), and the
  elements and unnamed icons per screen there.

    python benchmarks/element_list.py               # summary
    python benchmarks/element_list.py --json --screens 60 --rubric-screens 80
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PIL import Image
from rubric_texts import collect_rubric_screens, found  # the hard suite's rubric labels (a helper module)

from mae.actions.reading import parse_action_text
from mae.actions.registry import Tap, resolve_call
from mae.device.virtual import VirtualPhone
from mae.eval.virtual_suite import load_task_suite
from mae.perception import Element, Perception, Perceptor
from mae.perception.a11y import A11yTree, TreeSource
from mae.perception.captions import CaptionCache, CaptionJob
from mae.perception.icons import make_icon_detector
from mae.perception.ocr import make_ocr
from mae.perception.tidy import in_status_bar


class CountingCaptioner:
    """Answers every caption request with a placeholder and counts the requests (no model needed)."""

    def __init__(self, cache: CaptionCache) -> None:
        self.cache = cache
        self.requests = 0

    def caption(self, image: Image.Image, icons: Sequence[Element]) -> tuple[list[str], list[str]]:
        job = CaptionJob(image, icons, self.cache)
        if not job.missing:
            return job.captions, []
        self.requests += 1
        reply = json.dumps({str(i + 1): f"icon {i + 1}" for i in range(len(job.missing))})
        return job.finish(reply), []


class Shot:
    def __init__(self, task: str, image: Image.Image, keyboard: bool, tree: A11yTree) -> None:
        self.task = task
        self.image = image
        self.keyboard = keyboard
        self.tree = tree
        self.needed: list[tuple[int, int, int, int]] = []
        self.labels: list[str] = []

    def tree_source(self) -> A11yTree:
        return self.tree


def collect(limit: int) -> list[Shot]:
    """Distinct screens of the reference replays, each with the targets its Taps hit."""
    shots: dict[str, Shot] = {}
    for task in load_task_suite():
        phone = VirtualPhone()
        for text in ["Home()", *task.reference_actions]:
            image = phone.screenshot()
            digest = hashlib.sha1(image.tobytes()).hexdigest()
            if digest not in shots and len(shots) < limit:
                shots[digest] = Shot(task.id, image, phone.keyboard_active(), phone.ui_tree())
            for step in resolve_call(parse_action_text(text), {}, phone.screen_size()):
                if isinstance(step, Tap) and digest in shots:
                    target = phone._frame.target_at(step.x, step.y)
                    needed = shots[digest].needed
                    if (
                        target is not None
                        and target.box not in needed
                        and not in_status_bar(Element(kind="icon", box=target.box), image.height)
                    ):
                        needed.append(target.box)
                        # The label a reader knows the target by: the text drawn in it, else the name
                        # of its icon (a field's hint names it, not the globe beside the hint).
                        inside = sorted(
                            (
                                e
                                for e in phone.ground_truth()
                                if target.box[0] <= e.center[0] < target.box[2]
                                and target.box[1] <= e.center[1] < target.box[3]
                                and e.text
                            ),
                            key=lambda e: e.kind != "text",
                        )
                        shots[digest].labels.append(inside[0].text if inside else target.label)
                step.execute(phone)
    return list(shots.values())


def tokens(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text))


def covered(perception: Perception, box: tuple[int, int, int, int]) -> bool:
    return any(box[0] <= e.center[0] < box[2] and box[1] <= e.center[1] < box[3] for e in perception.elements)


def squash(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def named(perception: Perception, label: str) -> bool:
    """Whether the list names ``label`` (an element whose text holds it, or is held by it)."""
    key = squash(label)
    return any(
        key and (key in squash(e.text) or (squash(e.text) and squash(e.text) in key))
        for e in perception.elements
    )


def near_duplicates(perception: Perception, reach: int = 160) -> int:
    """Pairs of elements with the same text (any case) whose centres lie within ``reach`` pixels."""
    named_elements = [e for e in perception.elements if e.text]
    pairs = 0
    for i, first in enumerate(named_elements):
        for second in named_elements[i + 1 :]:
            if first.text.casefold() != second.text.casefold():
                continue
            dx, dy = first.center[0] - second.center[0], first.center[1] - second.center[1]
            pairs += dx * dx + dy * dy <= reach * reach
    return pairs


def mean(values: list[float]) -> float:
    return round(statistics.fmean(values), 2) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--screens", type=int, default=200, help="distinct screens at most (default 200: the whole suite)"
    )
    parser.add_argument(
        "--rubric-screens",
        type=int,
        default=400,
        help="hard-suite screens with rubric labels at most (default 400: the whole suite; 0: skip)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)

    shots = collect(args.screens)
    ocr, icons = make_ocr("rapidocr"), make_icon_detector("contour")
    before = Perceptor(ocr, icons, a11y="off", tidy=False)
    with tempfile.TemporaryDirectory() as tmp:
        captioners = {
            "a11y_on": CountingCaptioner(CaptionCache(Path(tmp) / "on.json")),
            "a11y_off": CountingCaptioner(CaptionCache(Path(tmp) / "off.json")),
        }
        after = Perceptor(ocr, icons, captioners["a11y_on"])
        vision = Perceptor(ocr, icons, captioners["a11y_off"], a11y="off")
        bare = Perceptor(ocr, icons, a11y="off")  # a WebView on a custom endpoint without a captioner
        bare_rows: list[dict[str, float]] = []
        rows: list[dict[str, Any]] = []
        missed: list[str] = []
        requests: dict[str, dict[str, int]] = {"a11y_on": {}, "a11y_off": {}}
        for shot in shots:
            old = before.perceive(shot.image, shot.keyboard)
            plain = bare.perceive(shot.image, shot.keyboard)
            bare_rows.append(
                {
                    "elements": len(plain.elements),
                    "unnamed_icons": sum(1 for e in plain.icons if not e.text),
                    "duplicates": near_duplicates(plain),
                    "needed": len(shot.needed),
                    "hit": sum(covered(plain, b) for b in shot.needed),
                    "labels": sum(named(plain, t) for t in shot.labels),
                }
            )
            for name, perceptor in (("a11y_on", after), ("a11y_off", vision)):
                sent = captioners[name].requests
                source: TreeSource | None = shot.tree_source if name == "a11y_on" else None
                new = perceptor.perceive(shot.image, shot.keyboard, tree=source)
                requests[name][shot.task] = (
                    requests[name].get(shot.task, 0) + captioners[name].requests - sent
                )
                if name == "a11y_on":
                    fused = new
            for box in shot.needed:
                if not covered(fused, box):
                    found_before = "found" if covered(old, box) else "missed"
                    missed.append(f"{shot.task}: target {list(box)} ({found_before} before)")
            rows.append(
                {
                    "keyboard": shot.keyboard,
                    "tree": fused.a11y,
                    "lines": (len(old.describe().splitlines()), len(fused.describe().splitlines())),
                    "tokens": (tokens(old.describe()), tokens(fused.describe())),
                    "icons": len(fused.icons),
                    "named": sum(1 for e in fused.icons if e.text and e.named_by != "caption"),
                    "needed": len(shot.needed),
                    "hit": (
                        sum(covered(old, b) for b in shot.needed),
                        sum(covered(fused, b) for b in shot.needed),
                    ),
                    "labels": (
                        sum(named(old, t) for t in shot.labels),
                        sum(named(fused, t) for t in shot.labels),
                    ),
                }
            )

    def block(selected: list[dict[str, Any]]) -> dict[str, Any]:
        lines_b = [r["lines"][0] for r in selected]
        lines_a = [r["lines"][1] for r in selected]
        tok_b = [r["tokens"][0] for r in selected]
        tok_a = [r["tokens"][1] for r in selected]
        return {
            "screens": len(selected),
            "lines_before": mean(lines_b),
            "lines_after": mean(lines_a),
            "lines_change": round(sum(lines_a) / max(1, sum(lines_b)) - 1, 3),
            "tokens_before": mean(tok_b),
            "tokens_after": mean(tok_a),
            "tokens_change": round(sum(tok_a) / max(1, sum(tok_b)) - 1, 3),
        }

    with_tree = [r for r in rows if r["tree"]]
    icons_total = sum(r["icons"] for r in with_tree)
    needed = sum(r["needed"] for r in rows)
    report = {
        "screens": len(rows),
        "screens_with_tree": len(with_tree),
        "icon_name_share_a11y_no_captions": round(
            sum(r["named"] for r in with_tree) / max(1, icons_total), 3
        ),
        "icons_on_tree_screens": icons_total,
        "all": block(rows),
        "keyboard": block([r for r in rows if r["keyboard"]]),
        "needed_targets": needed,
        "recall_before": round(sum(r["hit"][0] for r in rows) / max(1, needed), 4),
        "recall_after": round(sum(r["hit"][1] for r in rows) / max(1, needed), 4),
        "missed_after": missed,
        "label_recall_before": round(sum(r["labels"][0] for r in rows) / max(1, needed), 4),
        "label_recall_after": round(sum(r["labels"][1] for r in rows) / max(1, needed), 4),
        "no_tree_no_captions": {
            "elements_per_screen": mean([r["elements"] for r in bare_rows]),
            "unnamed_icons_per_screen": mean([r["unnamed_icons"] for r in bare_rows]),
            "near_duplicates_per_screen": mean([r["duplicates"] for r in bare_rows]),
            "target_recall": round(sum(r["hit"] for r in bare_rows) / max(1, needed), 4),
            "label_recall": round(sum(r["labels"] for r in bare_rows) / max(1, needed), 4),
        },
        "caption_requests_per_task": {
            name: round(statistics.fmean(per.values()), 2) if per else 0.0 for name, per in requests.items()
        },
        "rubric_labels": rubric_recall(args.rubric_screens, Perceptor(ocr, icons), bare),
    }
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{report['screens']} virtual screens ({report['screens_with_tree']} with a usable a11y tree)")
    print(
        f"  icons with a name (a11y on, no captions): {report['icon_name_share_a11y_no_captions']:.1%} "
        f"of {icons_total}"
    )
    for key in ("all", "keyboard"):
        b = report[key]
        print(
            f"  {key:<8} {b['screens']:>3} screens: lines {b['lines_before']} -> {b['lines_after']} "
            f"({b['lines_change']:+.0%}), tokens {b['tokens_before']} -> {b['tokens_after']} "
            f"({b['tokens_change']:+.0%})"
        )
    print(
        f"  tapped targets present: before {report['recall_before']:.1%}, after {report['recall_after']:.1%} "
        f"of {needed}"
    )
    print(
        f"  tapped targets' labels in the list: before {report['label_recall_before']:.1%}, "
        f"after {report['label_recall_after']:.1%}"
    )
    for line in missed:
        print(f"    not in the list after: {line}")
    caps = report["caption_requests_per_task"]
    print(f"  caption requests per task: a11y on {caps['a11y_on']}, a11y off {caps['a11y_off']}")
    bare = report["no_tree_no_captions"]
    print(
        f"  no tree, no captions: {bare['elements_per_screen']} elements and "
        f"{bare['unnamed_icons_per_screen']} unnamed icons per screen, "
        f"{bare['near_duplicates_per_screen']} near duplicates; "
        f"target recall {bare['target_recall']:.1%}, label recall {bare['label_recall']:.1%}"
    )
    rubric = report["rubric_labels"]
    for key in ("a11y_on", "no_tree"):
        part = rubric[key]
        print(
            f"  rubric labels ({key}, {rubric['screens']} hard-suite screens): recall {part['recall']:.1%} "
            f"of {rubric['labels']}; {part['elements_per_screen']} elements and "
            f"{part['unnamed_icons_per_screen']} unnamed icons per screen"
        )
    for line in rubric["missed_examples"]:
        print(f"    rubric label not in the list without a tree: {line}")
    return 0


def rubric_recall(limit: int, fused: Perceptor, bare: Perceptor) -> dict[str, Any]:
    """Rubric-label recall on the hard suite's reference routes, with and without the tree."""
    shots = collect_rubric_screens(limit) if limit > 0 else []
    labels = sum(len(s.labels) for s in shots)
    out: dict[str, Any] = {"screens": len(shots), "labels": labels}
    missed: list[str] = []
    for key in ("a11y_on", "no_tree"):
        hits, elements, unnamed = 0, list[float](), list[float]()
        for shot in shots:
            source: TreeSource | None = shot.tree_source if key == "a11y_on" else None
            seen = (fused if key == "a11y_on" else bare).perceive(shot.image, shot.keyboard, tree=source)
            elements.append(len(seen.elements))
            unnamed.append(sum(1 for e in seen.icons if not e.text))
            for text, box in shot.labels:
                hit = found(seen, text, box)
                hits += hit
                if not hit and key == "no_tree":
                    missed.append(f"{shot.task}: {text!r}")
        out[key] = {
            "recall": round(hits / max(1, labels), 4),
            "elements_per_screen": mean(elements),
            "unnamed_icons_per_screen": mean(unnamed),
        }
    out["missed_examples"] = missed[:15]
    out["missed_no_tree"] = len(missed)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
