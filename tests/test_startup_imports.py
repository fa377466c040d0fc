"""Start-up: the CLI's entry modules must not import the model SDK, Gradio or OpenCV.

A subprocess imports each module in a fresh interpreter and reports which heavy packages ended up in
``sys.modules`` (no timing: a loaded machine cannot make this pass or fail).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("openai", "gradio", "cv2", "onnxruntime", "torch")
REPO = Path(__file__).resolve().parents[1]


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


LIGHT_HELP = ("numpy", "PIL", "pydantic", "mae.config", "mae.cli.run_cmd")


def test_the_top_level_help_imports_no_subcommand_and_no_library() -> None:
    code = (
        "import json, runpy, sys\n"
        "sys.argv = ['mae', '--help']\n"
        "try:\n"
        "    runpy.run_module('mae', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps([m for m in {LIGHT_HELP + HEAVY!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, cwd=REPO
    )
    lines = done.stdout.strip().splitlines()
    assert "usage:" in done.stdout and "run" in done.stdout
    assert json.loads(lines[-1]) == []


def test_app_py_reports_a_taken_port_before_importing_gradio() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = (
            "import runpy, sys\n"
            f"sys.argv = ['app.py', '--port', '{port}']\n"
            "try:\n"
            f"    runpy.run_path({str(REPO / 'app.py')!r}, run_name='__main__')\n"
            "finally:\n"
            "    print('gradio' in sys.modules)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO
        )
    assert done.returncode == 1
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr
    assert done.stdout.strip() == "False"
