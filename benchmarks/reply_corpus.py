"""Accepted and refused replies per agent on the reply corpus (tests/replies/data), and how many were
read as the corpus expects.

    python benchmarks/reply_corpus.py                          # this checkout's reader
    PYTHONPATH=/path/to/old/checkout python benchmarks/reply_corpus.py --label before
    python benchmarks/reply_corpus.py --only header-trailing-remark,numbered-headers

Every base reply of the corpus goes through the style changes the corpus test applies (line endings,
fences, prose, header styles...), exactly as ``tests/replies/test_reply_corpus.py`` reads them; the
counts are over those variants. ``expected`` counts variants read as the corpus says (accepted with the
expected value, or refused for the expected reason). Run it with an older ``mae`` first on the path
to measure a change of the reader on the same corpus.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH, so an older checkout there is the one measured
import mae  # noqa: E402


def load_corpus_module() -> ModuleType:
    """The corpus test module (its cases, transforms and checker), loaded from its file."""
    path = ROOT / "tests" / "replies" / "test_reply_corpus.py"
    spec = importlib.util.spec_from_file_location("reply_corpus_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="this checkout", help="name of the reader measured")
    parser.add_argument("--only", default="", help="comma-separated base names to count (default: all)")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args()
    corpus = load_corpus_module()
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    counts: dict[str, dict[str, int]] = {}
    for base, transform in corpus.CASES:
        if only and base.name not in only:
            continue
        row = counts.setdefault(base.agent, {"replies": 0, "accepted": 0, "refused": 0, "expected": 0})
        text = corpus.TRANSFORMS[transform](base.text, base.agent)
        try:
            corpus.PARSERS[base.agent](text)
            row["accepted"] += 1
        except corpus.ReplyProblem:
            row["refused"] += 1
        row["replies"] += 1
        row["expected"] += corpus.check(base, transform) is None
    if args.json:
        print(json.dumps({"label": args.label, "mae": str(Path(mae.__file__).parent), "counts": counts}))
        return
    print(f"reader: {args.label} ({Path(mae.__file__).parent})")
    print(f"{'agent':<22}{'replies':>9}{'accepted':>10}{'refused':>9}{'expected':>10}")
    total = {"replies": 0, "accepted": 0, "refused": 0, "expected": 0}
    for agent, row in counts.items():
        print(f"{agent:<22}{row['replies']:>9}{row['accepted']:>10}{row['refused']:>9}{row['expected']:>10}")
        for key in total:
            total[key] += row[key]
    print(
        f"{'all':<22}{total['replies']:>9}{total['accepted']:>10}{total['refused']:>9}{total['expected']:>10}"
    )


if __name__ == "__main__":
    main()
