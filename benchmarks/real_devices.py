"""Benchmark the accessibility-tree parser and its fusion with OCR on real phones' dumps.

Reads the real-device corpus (``../shared/data/real_devices/``, see its README): 204 ``uiautomator
dump`` files from public repositories, 32 of them paired with the screenshot taken at the same moment.

On every dump (the screen is the pair's screenshot size, else the dump's largest bounds):

- ``parse``: dumps read, refused with a clear warning, and crashes (any other exception: must be 0);
- ``clickable_found``: clickable nodes with a label (their own or their children's, as a screen reader
  says it) for which the tree-only element list (``fuse([], tree)``) has an element centred inside;
- ``labels_kept``: texts and content descriptions of on-screen nodes found again in the parsed nodes;
- ``boxes_inside``: elements of the tree-only list whose box lies inside the screen;
- ``dialog_windows_marked``: of the dumps the manifest's notes call a dialog, those whose parsed tree
  marks the focused window (the notes also call full-screen TV pages and an app named ``..._dialog``
  so); ``windows_marked`` lists every dump with a marked window, to check by eye.

On the pairs, the Perceptor (RapidOCR + contour icons, no captions, the tree fused in) gives the list the
agents read: elements, icons with a name, duplicates (the same text twice with overlapping boxes),
elements from behind a dialog (outside the focused window and every node) and boxes off the screen.

    python benchmarks/real_devices.py               # summary
    python benchmarks/real_devices.py --json --no-ocr
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import xml.etree.ElementTree as ET
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mae.perception.a11y import A11yError, A11yTree, parse_uiautomator  # noqa: E402
from mae.perception.elements import Element  # noqa: E402
from mae.perception.fusion import fuse  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "real_devices"
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
Box = tuple[int, int, int, int]


def _box(text: str) -> Box | None:
    match = _BOUNDS.fullmatch(text.strip())
    if match is None:
        return None
    left, top, right, bottom = (int(v) for v in match.groups())
    return (left, top, right, bottom) if right > left and bottom > top else None


def _center_in(box: Box, element: Element) -> bool:
    x, y = element.center
    return box[0] <= x < box[2] and box[1] <= y < box[3]


def raw_root(raw: bytes) -> ET.Element:
    """The dump's XML root, read independently of mae's parser (the benchmark's ground truth)."""
    text = raw.decode("utf-16") if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else raw.decode("utf-8")
    start = text.find("<hierarchy")
    end = text.rfind("</hierarchy>")
    return ET.fromstring(text[start : end + len("</hierarchy>")])


def _subtree_label(node: ET.Element) -> str:
    for item in node.iter("node"):
        label = (item.get("content-desc", "") or item.get("text", "")).strip()
        if label:
            return label
    return ""


def _on_screen(box: Box, screen: tuple[int, int]) -> bool:
    return box[0] < screen[0] and box[1] < screen[1] and box[2] > 0 and box[3] > 0


def measure_dump(raw: bytes, screen: tuple[int, int], totals: dict[str, Any]) -> A11yTree | None:
    """Add one dump's figures to ``totals``; the tree mae parsed (``None`` when it refused or crashed)."""
    try:
        tree = parse_uiautomator(raw, screen)
    except A11yError:
        totals["refused"] += 1
        return None
    except Exception:
        totals["crashes"] += 1
        return None
    totals["parsed"] += 1
    root = raw_root(raw)
    kept = {n.text.strip() for n in tree.nodes} | {n.content_desc.strip() for n in tree.nodes}
    elements = fuse([], tree)
    for item in root.iter("node"):
        box = _box(item.get("bounds", ""))
        if box is None or not _on_screen(box, screen) or item.get("visible-to-user") == "false":
            continue
        for attribute in ("text", "content-desc"):
            value = item.get(attribute, "").strip()
            if value:
                totals["labels"] += 1
                totals["labels_kept"] += value in kept
        if item.get("clickable") == "true" and _subtree_label(item):
            totals["clickable"] += 1
            totals["clickable_found"] += any(_center_in(box, e) for e in elements)
    for element in elements:
        totals["elements"] += 1
        left, top, right, bottom = element.box
        totals["boxes_inside"] += left >= 0 and top >= 0 and right <= screen[0] and bottom <= screen[1]
    return tree


def _duplicates(elements: list[Element]) -> int:
    count = 0
    for i, a in enumerate(elements):
        for b in elements[i + 1 :]:
            if a.text and a.text.strip().lower() == b.text.strip().lower() and _overlap(a.box, b.box):
                count += 1
    return count


def _overlap(a: Box, b: Box) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _same(tree: A11yTree) -> A11yTree:
    return tree


def corpus_files(corpus: Path) -> tuple[list[Path], dict[str, tuple[int, int]], dict[str, str]]:
    """Dumps, the pairs' screenshot sizes by dump name, and the manifest's notes by dump name."""
    from PIL import Image

    dumps = sorted((corpus / "dumps").glob("*.xml"))
    sizes: dict[str, tuple[int, int]] = {}
    for png in sorted((corpus / "pairs").glob("*.png")):
        with Image.open(png) as image:
            sizes[png.stem + ".xml"] = image.size
    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    notes = {
        Path(entry["file"]).name: f"{entry.get('app_or_screen', '')} {entry.get('notes', '')}"
        for entry in manifest
        if entry["file"].startswith("dumps/")
    }
    return dumps, sizes, notes


def estimated_screen(raw: bytes) -> tuple[int, int]:
    """The screen a dump without a screenshot was taken on: its largest bounds, widened by the left
    margin when its only window is inset a little from the left (a dialog-only dump: dialogs are centred)."""
    root = raw_root(raw)
    boxes = [b for b in (_box(n.get("bounds", "")) for n in root.iter("node")) if b is not None]
    width, height = max(b[2] for b in boxes), max(b[3] for b in boxes)
    windows = [b for b in (_box(n.get("bounds", "")) for n in root) if b is not None]
    if len(windows) == 1 and 0 < windows[0][0] <= 0.15 * width and windows[0][2] == width:
        width += windows[0][0]
    return width, height


def run(corpus: Path, ocr: bool) -> dict[str, Any]:
    dumps, sizes, notes = corpus_files(corpus)
    totals: dict[str, Any] = dict.fromkeys(
        [
            "dumps",
            "parsed",
            "refused",
            "crashes",
            "labels",
            "labels_kept",
            "clickable",
            "clickable_found",
            "elements",
            "boxes_inside",
            "dialogs",
            "dialogs_marked",
        ],
        0,
    )
    trees: dict[str, A11yTree] = {}
    marked: list[str] = []
    started = time.perf_counter()
    for path in dumps:
        raw = path.read_bytes()
        totals["dumps"] += 1
        screen = sizes.get(path.name) or estimated_screen(raw)
        tree = measure_dump(raw, screen, totals)
        if tree is not None and tree.window is not None:
            marked.append(path.stem)
        if "dialog" in notes.get(path.name, "").lower():
            totals["dialogs"] += 1
            totals["dialogs_marked"] += tree is not None and tree.window is not None
        if tree is not None and path.name in sizes:
            trees[path.name] = tree
    report: dict[str, Any] = {
        "dumps": totals["dumps"],
        "parse": {k: totals[k] for k in ("parsed", "refused", "crashes")},
        "labels_kept": f"{totals['labels_kept']}/{totals['labels']}",
        "clickable_found": f"{totals['clickable_found']}/{totals['clickable']}",
        "boxes_inside": f"{totals['boxes_inside']}/{totals['elements']}",
        "dialog_windows_marked": f"{totals['dialogs_marked']}/{totals['dialogs']}",
        "windows_marked": " ".join(marked),
        "tree_seconds": round(time.perf_counter() - started, 2),
    }
    if ocr:
        report["pairs"] = measure_pairs(corpus, trees, sizes)
    return report


def measure_pairs(
    corpus: Path, trees: dict[str, A11yTree], sizes: dict[str, tuple[int, int]]
) -> dict[str, Any]:
    """The Perceptor's list on each pair's screenshot with its tree fused in."""
    from PIL import Image

    from mae.perception.icons import make_icon_detector
    from mae.perception.ocr import make_ocr
    from mae.perception.perceptor import Perceptor

    perceptor = Perceptor(make_ocr("rapidocr"), make_icon_detector("contour"), a11y="on")
    figures = dict.fromkeys(["pairs", "elements", "icons", "named", "duplicates", "behind", "outside"], 0)
    started = time.perf_counter()
    try:
        for name, tree in sorted(trees.items()):
            with Image.open(corpus / "pairs" / name.replace(".xml", ".png")) as image:
                rgb = image.convert("RGB")
            elements = perceptor.perceive(rgb, tree=partial(_same, tree)).elements
            width, height = sizes[name]
            figures["pairs"] += 1
            figures["elements"] += len(elements)
            icons = [e for e in elements if e.kind == "icon"]
            figures["icons"] += len(icons)
            figures["named"] += sum(bool(e.text) for e in icons)
            figures["duplicates"] += _duplicates(elements)
            if tree.window is not None:
                window = tree.window
                figures["behind"] += sum(
                    not _center_in(window, e) and not any(_center_in(n.bounds, e) for n in tree.nodes)
                    for e in elements
                )
            figures["outside"] += sum(
                not (e.box[0] >= 0 and e.box[1] >= 0 and e.box[2] <= width and e.box[3] <= height)
                for e in elements
            )
    finally:
        perceptor.close()
    return {
        "pairs": figures["pairs"],
        "elements_per_screen": round(figures["elements"] / max(1, figures["pairs"]), 1),
        "icons_named": f"{figures['named']}/{figures['icons']}",
        "duplicates": figures["duplicates"],
        "behind_dialog": figures["behind"],
        "boxes_outside_screen": figures["outside"],
        "ocr_seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the real-device corpus folder")
    parser.add_argument(
        "--no-ocr", action="store_true", help="skip the pairs' OCR fusion (tree figures only)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not (args.corpus / "manifest.json").is_file():
        print(f"No real-device corpus at {args.corpus}: pass --corpus with the folder holding manifest.json.")
        return 2
    report = run(args.corpus, ocr=not args.no_ocr)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
