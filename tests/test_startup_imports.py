"""Start-up: the CLI's entry modules must not import the model SDK, Gradio or OpenCV.

A subprocess imports each module in a fresh interpreter and reports which heavy packages ended up in
``sys.modules`` (no timing: a loaded machine cannot make this pass or fail).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("openai", "gradio", "cv2", "onnxruntime", "torch")


def _heavy_after_import(statement: str) -> list[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "statement",
    [
        "import mae.cli",
        "import mae.config",
        "from mae.cli import build_parser; build_parser()",
        "import mae.llm.providers, mae.perception.elements",
    ],
)
def test_cli_start_up_imports_no_heavy_package(statement: str) -> None:
    assert _heavy_after_import(statement) == []


def test_lazy_names_still_resolve() -> None:
    loaded = _heavy_after_import("from mae.llm import ChatClient\nfrom mae.perception import Perceptor")
    assert "openai" in loaded and "cv2" in loaded  # the check above can see a heavy import
