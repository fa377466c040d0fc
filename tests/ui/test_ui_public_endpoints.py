"""Every named endpoint of the public demo, called as an attacker would with ``gradio_client``.

The demo runs in-process in public mode (``MAE_PUBLIC=1``). Each endpoint listed by ``view_api`` is
called with ordinary and hostile values (an ADB address as the phone, paths, a private base URL).
Afterwards: the shared long-term memory and run folder are unchanged, no phone other than the virtual
one was opened and ADB was never asked, no eval started, no answer carries one of the server's data
folders or another session's file (``gradio_client`` rewrites picture paths: what the raw answers
carry is checked in ``test_ui_public_raw.py``). One legitimate run through the API lands in its own
session folder.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_testkit import TruthPerceptor, free_port, settings_for, two_step_script

from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer
from mae.ui import space
from mae.ui.devices import DevicePool
from mae.ui.runner import Backend

ADB_TARGET = "10.255.255.1:5555"
OTHER_SECRET = "SECRET-OF-ANOTHER-SESSION-42"
HOSTILE_TEXT = [ADB_TARGET, "../../../../etc/passwd", "http://169.254.169.254/latest/meta-data"]


class Recorder:
    """Opens the virtual phone only and records every device name asked for."""

    def __init__(self) -> None:
        self.phone = VirtualPhone()
        self.names: list[str] = []

    def __call__(self, name: str) -> VirtualPhone:
        self.names.append(name)
        if name != "virtual":
            raise AssertionError(f"the pool was asked to open {name!r}")
        return self.phone


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` outside ``sessions/`` with a digest of its bytes."""
    files = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and relative.parts[0] != "sessions":
            files[str(relative)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


@pytest.fixture(scope="module")
def public_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import app
    from mae.device import adb

    tmp = tmp_path_factory.mktemp("public")
    server = FakeModelServer()
    server.__enter__()
    names = ("MAE_PUBLIC", "MAE_ALLOWED_BASE_URLS", "GRADIO_ANALYTICS_ENABLED")
    saved = {k: os.environ.get(k) for k in names}
    os.environ.update(MAE_PUBLIC="1", MAE_ALLOWED_BASE_URLS=server.base_url, GRADIO_ANALYTICS_ENABLED="False")
    adb_calls: list[str] = []
    real_attached = adb.attached_serials
    adb.attached_serials = lambda *a, **k: adb_calls.append("attached_serials") or []  # type: ignore[assignment]
    settings = space.apply_defaults(settings_for(tmp, "http://127.0.0.1:9/v1"))
    root = Path(settings.log_dir).parent
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memory" / "tips.md").write_text("1. a tip every visitor starts from\n")
    other = root / "sessions" / "0123456789abcdef01234567" / "runs"
    other.mkdir(parents=True)
    (other / "notes.txt").write_text(OTHER_SECRET)
    recorder = Recorder()
    backend = Backend(
        settings, pool=DevicePool(opener=recorder), perceptor_factory=lambda s: TruthPerceptor(recorder.phone)
    )
    demo = app.build_demo(backend, lister=lambda: [ADB_TARGET])
    port = free_port()
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield {
            "url": f"http://127.0.0.1:{port}/",
            "root": root,
            "recorder": recorder,
            "adb_calls": adb_calls,
            "server": server,
            "downloads": tmp / "downloads",
        }
    finally:
        demo.close()
        server.__exit__(None, None, None)
        adb.attached_serials = real_attached  # type: ignore[assignment]
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def argument_sets(parameters: list[dict[str, Any]]) -> list[list[Any]]:
    """Ordinary values, then each hostile text in every text or choice parameter."""

    def value(parameter: dict[str, Any], hostile: str | None) -> Any:
        kind = str(parameter["python_type"]["type"])
        if kind.startswith("Literal["):
            first = kind[len("Literal[") :].split(",")[0].strip(" ']")
            return hostile if hostile is not None else first
        if kind == "str":
            return hostile if hostile is not None else "Open Notes"
        if kind == "bool":
            return True
        if kind in ("float", "int"):
            return 1
        if kind.startswith("list"):
            return [hostile] if hostile is not None else []
        return {"device": hostile} if hostile is not None else {}

    sets = [[value(p, None) for p in parameters]]
    sets += [[value(p, text) for p in parameters] for text in HOSTILE_TEXT]
    return sets


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


@pytest.mark.slow
def test_no_named_endpoint_changes_shared_state_or_reaches_the_server(public_demo: dict[str, Any]) -> None:
    from gradio_client import Client

    root: Path = public_demo["root"]
    downloads: Path = public_demo["downloads"]
    before = snapshot(root)
    client = Client(public_demo["url"], verbose=False, download_files=str(downloads))
    endpoints = client.view_api(return_format="dict", print_info=False)
    named = endpoints["named_endpoints"]
    assert "/on_run" in named and not endpoints["unnamed_endpoints"]
    threads_before = {t.name for t in threading.enumerate()}
    answers: dict[str, list[Any]] = {}
    for name, endpoint in named.items():
        for arguments in argument_sets(endpoint["parameters"]):
            try:
                answers.setdefault(name, []).append(client.predict(*arguments, api_name=name))
            except Exception as exc:  # a refusal (bad choice, validation): its text is checked too
                answers.setdefault(name, []).append(str(exc))

    assert snapshot(root) == before  # shared memory and the shared run folder are untouched
    assert set(public_demo["recorder"].names) <= {"virtual"}  # no ADB phone was ever opened
    assert public_demo["adb_calls"] == []  # nor were attached phones listed
    new_threads = {t.name for t in threading.enumerate()} - threads_before
    assert not [t for t in new_threads if "eval" in t.lower()]  # no eval started
    assert not list(root.rglob("evals")) and not list(root.rglob("eval-*"))
    assert public_demo["server"].requests == []  # nothing was sent to a model
    for name, results in answers.items():
        for text in strings_in(results):
            if text.startswith(str(downloads)):
                continue  # a picture the client downloaded to its own folder
            assert OTHER_SECRET not in text, name
            for server_path in (str(root), "/tmp/", str(Path.home())):
                assert server_path not in text, (name, text)


@pytest.mark.slow
def test_a_visitors_run_through_the_api_stays_in_its_own_session(public_demo: dict[str, Any]) -> None:
    from gradio_client import Client

    root: Path = public_demo["root"]
    server: FakeModelServer = public_demo["server"]
    before = snapshot(root)
    two_step_script().load(server)
    client = Client(public_demo["url"], verbose=False, download_files=str(public_demo["downloads"]))
    parameters = client.view_api(return_format="dict", print_info=False)["named_endpoints"]["/on_run"]
    arguments = argument_sets(parameters["parameters"])[0]
    names = [p["parameter_name"] for p in parameters["parameters"]]
    for index, parameter in enumerate(parameters["parameters"]):
        if parameter["python_type"]["type"] == "str":
            arguments[index] = ""  # no typed keys, no per-agent models
        if str(parameter.get("label", "")).startswith(("Fast mode", "Notetaker beside")):
            arguments[index] = False  # the paper's order, which the script answers
    arguments[names.index("param_2")] = "Open Notes, then go home"
    arguments[names.index("param_4")] = "custom"  # backbone
    arguments[names.index("param_5")] = server.base_url  # the operator opened this endpoint
    arguments[names.index("param_6")] = "fake-vlm"
    arguments[names.index("param_7")] = 5  # max steps
    arguments[names.index("param_8")] = False  # no self-evolution
    arguments[names.index("param_11")] = "e"
    status = client.predict(*arguments, api_name="/on_run")[0]
    assert "Finished" in str(status), status
    assert snapshot(root) == before
    sessions = [p for p in (root / "sessions").iterdir() if p.name != "0123456789abcdef01234567"]
    assert len(sessions) == 1 and list((sessions[0] / "runs").iterdir())
