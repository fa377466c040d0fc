"""``pip install .`` (not editable): the wheel carries prompts, the model catalog and data, and mae runs
from outside the repository in a fresh virtual environment."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import anyio
import pytest

from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _reply(request: RecordedRequest) -> str:
    """A whole task in one go: plan, open Notes, judge it done, no notes, then Finished."""
    role = request.role
    if role == "manager":
        return "### Thought ###\nPlan.\n\n### Plan ###\n1. Open Notes\n\n### Current Subgoal ###\n" + (
            "Finished" if _done.get("operator") else "Open Notes"
        )
    if role == "operator":
        _done["operator"] = True
        action = json.dumps({"name": "Open_App", "arguments": {"app_name": "Notes"}})
        return f"### Thought ###\nOpen it.\n\n### Action ###\n{action}\n\n### Description ###\nOpen Notes.\n"
    if role == "reflector":
        return (
            "### Outcome ###\nA\n\n### Error Description ###\nNone\n\n"
            "### Progress Status ###\nNotes is open.\n"
        )
    return "### Important Notes ###\nNone\n"


_done: dict[str, bool] = {}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (seeing this interpreter's packages, so nothing is downloaded) with mae's wheel."""
    root = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            str(REPO),
            "-w",
            root,
        ],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=180,
    )
    assert build.returncode == 0, build.stderr
    wheel = next(root.glob("mae-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "mae/_bundled/prompts/operator.md" in names and "mae/_bundled/models/catalog.toml" in names
    assert not [name for name in names if name.startswith("models/")]  # no top-level `models` package
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True, timeout=120)
    python = venv / "bin" / "python"
    _see_this_environments_packages(python)
    install = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert install.returncode == 0, install.stderr
    return python


def _see_this_environments_packages(python: Path) -> None:
    """Let the new venv import what this interpreter imports.

    ``--system-site-packages`` shows only the base interpreter's packages: when the tests run from a
    virtualenv, its site-packages would be missing. A ``.pth`` file lists them after the new venv's own
    (plain paths, so an editable install of mae in this environment is not picked up).
    """
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([python, "-c", ask], capture_output=True, text=True, check=True, timeout=60)
    on_path = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    found = [*site.getsitepackages(), *on_path]
    ours = [path for path in dict.fromkeys(found) if Path(path).is_dir()]
    (Path(purelib.stdout.strip()) / "_mae_test_parent_env.pth").write_text("".join(f"{p}\n" for p in ours))


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAE_") and k != "PYTHONPATH"}
    env["HOME"] = str(tmp_path)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return env


def test_installed_wheel_runs_from_outside_the_repository(
    installed: Path, tmp_path: Path, fake_server: FakeModelServer
) -> None:
    env = _env(tmp_path)
    where = subprocess.run(
        [
            installed,
            "-c",
            "import mae, mae.agents.prompting as p, mae.serving.catalog as c; "
            "print(mae.__file__); print(p.PROMPTS_DIR); print(c.CATALOG_FILE)",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert where.returncode == 0, where.stderr
    package, prompts, catalog = where.stdout.split()
    assert str(REPO) not in package and "site-packages" in package
    assert prompts.endswith("mae/_bundled/prompts") and catalog.endswith("mae/_bundled/models/catalog.toml")

    # every data file of the package is installed (the hard suite's and the frontier tier's content, the
    # price table: a fresh install once lacked them, and `--suite virtual:frontier` could not load)
    listing = subprocess.run(
        [
            installed,
            "-c",
            "import mae, pathlib; r = pathlib.Path(mae.__file__).parent; "
            "print('\\n'.join(str(p.relative_to(r)) for p in r.rglob('*.json')))",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    source = {str(p.relative_to(REPO / "mae")) for p in (REPO / "mae").rglob("*.json")}
    assert source and source <= set(listing.stdout.split()), source - set(listing.stdout.split())
    suites = subprocess.run(
        [
            installed,
            "-c",
            "from mae.eval.tasks import virtual_tasks as v; print(len(v('hard')), len(v('frontier')))",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert suites.stdout.split() == ["25", "20"], suites.stderr

    helped = subprocess.run(
        [installed, "-m", "mae", "--help"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    assert helped.returncode == 0 and "usage" in helped.stdout.lower()
    dry = subprocess.run(
        [installed, "-m", "mae", "models", "serve", "ui-tars-1.5-7b", "--dry-run"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert dry.returncode == 0 and dry.stdout.startswith("vllm serve ByteDance-Seed/UI-TARS-1.5-7B")

    _done.clear()
    fake_server.responder = _reply
    run = subprocess.run(
        [
            installed,
            "-m",
            "mae",
            "run",
            "Open the Notes app",
            "--device",
            "virtual",
            "--backbone",
            "custom",
            "--base-url",
            fake_server.base_url,
            "--model",
            "fake-vlm",
            "--max-steps",
            "3",
            "--no-evolve",
            "--yes",
            "--log-dir",
            str(tmp_path / "runs"),
            "--memory-dir",
            str(tmp_path / "memory"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    operator = fake_server.requests_for("operator")
    assert operator and "### Atomic Operations ###" in operator[0].text  # the bundled prompt was rendered
    assert list((tmp_path / "runs").iterdir())


def test_installed_mae_mcp_serves_its_tools_to_a_client_started_in_another_folder(
    installed: Path, tmp_path: Path
) -> None:
    """What a desktop client does: start the ``mae`` console script by its absolute path, from a folder
    that is not the checkout, and list the tools over stdio with the official SDK's client."""
    from mcp import Client, StdioServerParameters

    script = installed.parent / "mae"
    assert script.is_file()
    env = {**_env(tmp_path), "MAE_ICONS": "none", "MAE_CAPTIONS": "none", "MAE_ADB_AUTOSTART": "0"}
    server = StdioServerParameters(
        command=str(script),
        args=["mcp", "--device", "virtual", "--log-dir", str(tmp_path / "runs")],
        env=env,
        cwd=str(tmp_path),
    )

    async def listed() -> list[tuple[str, str]]:
        async with Client(server, read_timeout_seconds=120) as client:
            tools = (await client.list_tools()).tools
            return [(tool.name, tool.description or "") for tool in tools]

    tools = dict(anyio.run(listed))
    assert {"list_devices", "screenshot", "perceive", "act", "run_task"} <= set(tools)
    for name, description in tools.items():
        assert description and "\n " not in description, (name, description)  # dedented


def test_a_missing_package_is_one_line_on_stderr(installed: Path, tmp_path: Path) -> None:
    """A package mae needs is missing (here: hidden): the console script says which in one line."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "pydantic.py").write_text("raise ModuleNotFoundError('hidden', name='pydantic')\n")
    env = {**_env(tmp_path), "PYTHONPATH": str(blocker)}
    done = subprocess.run(
        [installed.parent / "mae", "mcp"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "package 'pydantic' is missing" in lines[0] and "pip install ." in lines[0]
