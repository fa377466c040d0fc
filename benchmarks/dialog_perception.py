"""Benchmark what perception makes of the virtual phone's dialogs, with the app dimmed behind them.

Opens every app of the virtual phone with realism on (seeds ``0..--seeds``), and on every screen with a
dialog on top perceives it with the same OCR and icon detector as a run, once with the accessibility
tree fused in (``a11y``) and once from pixels only (``vision``: a WebView or a phone with no tree).
Per screen it reports:

- ``elements``: elements in the list the Operator reads;
- ``behind``: elements outside the dialog (centre outside the box around the dialog's drawn texts, icons
  and buttons, below the status bar and above the navigation bar): read through the scrim from the app;
- ``behind_buttons``: those of them marked as a button or field (what would invite a tap);
- ``dialog_recall``: share of the dialog's buttons that an element lies on (must stay 1.0).

Run it on a checkout before and after a change to compare (the figures are in docs/evaluation-suite.md).

    python benchmarks/dialog_perception.py
    python benchmarks/dialog_perception.py --seeds 4 --json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PIL import Image

from mae.device.virtual import VirtualPhone, theme
from mae.device.virtual.realism import Realism
from mae.perception import Element, Perceptor
from mae.perception.a11y import A11yTree, TreeSource
from mae.perception.icons import make_icon_detector
from mae.perception.ocr import make_ocr

APPS = ("Maps", "Amazon", "Walmart", "Chrome", "X", "Best Buy", "Notes", "Calendar")
NAV = ("back button", "home button", "recent apps button")
Box = tuple[int, int, int, int]


@dataclass
class Shot:
    image: Image.Image
    tree: A11yTree
    dialog: Box
    """The box around everything the dialog draws (texts, icons, buttons)."""
    buttons: list[Box]
    app_area: tuple[int, int]

    def tree_source(self) -> A11yTree:
        return self.tree


def _inside(box: Box, point: tuple[int, int], margin: int = 8) -> bool:
    left, top, right, bottom = box
    return left - margin <= point[0] < right + margin and top - margin <= point[1] < bottom + margin


def collect(seeds: int) -> list[Shot]:
    """Every distinct screen with a dialog on top, over ``seeds`` seeds and the apps above."""
    shots: list[Shot] = []
    hashes: set[str] = set()
    for seed in range(seeds):
        phone = VirtualPhone(realism_settings=Realism(enabled=True, seed=seed, loading=False))
        k = phone.screen_size()[0] / theme.DESIGN_WIDTH
        area = (round(theme.STATUS_H * k), phone.screen_size()[1] - round(theme.NAV_H * k))
        for app in APPS:
            phone.open_app(app)
            while phone.realism.busy(app):
                phone.wait(2)
            while phone.realism.dialog(app) is not None:
                image = phone.screenshot()
                digest = hashlib.sha1(image.tobytes()).hexdigest()
                if digest not in hashes:
                    hashes.add(digest)
                    buttons = [box for label, box in phone.tap_targets() if label not in NAV]
                    drawn = [e.box for e in phone.ground_truth() if area[0] <= e.center[1] < area[1]]
                    drawn += buttons
                    hull = (
                        min(b[0] for b in drawn),
                        min(b[1] for b in drawn),
                        max(b[2] for b in drawn),
                        max(b[3] for b in drawn),
                    )
                    shots.append(Shot(image, phone.ui_tree(), hull, buttons, area))
                phone.back()
    return shots


def measure(shot: Shot, elements: list[Element]) -> dict[str, float]:
    top, bottom = shot.app_area
    behind = [e for e in elements if top <= e.center[1] < bottom and not _inside(shot.dialog, e.center)]
    found = sum(any(_inside(b, e.center, 0) for e in elements) for b in shot.buttons)
    return {
        "elements": len(elements),
        "behind": len(behind),
        "behind_buttons": sum(1 for e in behind if e.role in ("button", "field")),
        "dialog_recall": found / len(shot.buttons) if shot.buttons else 1.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--seeds", type=int, default=6, help="realism seeds to open the apps with (default 6)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    shots = collect(args.seeds)
    ocr, icons = make_ocr("rapidocr"), make_icon_detector("contour")
    perceptors = {"a11y": Perceptor(ocr, icons), "vision": Perceptor(ocr, icons, a11y="off")}
    summary: dict[str, object] = {"screens": len(shots)}
    for name, perceptor in perceptors.items():
        rows = []
        for shot in shots:
            source: TreeSource | None = shot.tree_source if name == "a11y" else None
            result = perceptor.perceive(shot.image, False, tree=source)
            rows.append(measure(shot, result.elements))
        summary[name] = {
            key: round(statistics.fmean(r[key] for r in rows), 3) if rows else 0.0 for key in rows[0]
        } | {"screens_with_behind": sum(1 for r in rows if r["behind"])}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"dialog screens: {summary['screens']}")
        for name in perceptors:
            row = summary[name]
            assert isinstance(row, dict)
            print(f"{name:7} " + "  ".join(f"{k} {v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
