"""Space mode through the page: app.py started with SPACE_ID set, in Debian's chromium.

Checks the defaults a stranger gets (virtual phone, short step limit, the banner, no shared History or
Memory tabs), that the server's own API key is never used for a visitor, and that two visitors' runs
land in separate folders. Screenshot: ``artifacts/ui/space.png``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from mae.testing.fake_model_server import FakeModelServer, RecordedRequest
from mae.ui.space import SPACE_STEP_LIMIT

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "ui"
SERVER_KEY = "sk-server-side-secret-0000"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _chat_server_script() -> str:
    """A chat server that records each Authorization header it sees (to prove no server key leaks)."""
    return (
        "import http.server, json, sys\n"
        "log = open(sys.argv[2], 'a')\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "    def log_message(self, *a): pass\n"
        "    def do_POST(self):\n"
        "        self.rfile.read(int(self.headers.get('Content-Length') or 0))\n"
        "        log.write((self.headers.get('Authorization') or '-') + '\\n'); log.flush()\n"
        "        self.send_response(500); self.end_headers()\n"
        "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()\n"
    )


@pytest.fixture(scope="module")
def model_server() -> Iterator[FakeModelServer]:
    """The visitors' model endpoint: on 127.0.0.1, so the operator opens it (MAE_ALLOWED_BASE_URLS)."""
    with FakeModelServer(responder=_reply) as server:
        yield server


@pytest.fixture(scope="module")
def space(
    tmp_path_factory: pytest.TempPathFactory, model_server: FakeModelServer
) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("space")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAE_")}
    env.update(
        SPACE_ID="someone/mae-demo",
        GRADIO_SERVER_NAME="127.0.0.1",
        GRADIO_SERVER_PORT=str(port),
        GRADIO_ANALYTICS_ENABLED="False",
        MAE_BACKBONE="openai",
        OPENAI_API_KEY=SERVER_KEY,
        MAE_ALLOWED_BASE_URLS=model_server.base_url,
        TMPDIR=str(tmp),
        HOME=str(tmp),
    )
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "app.py")],
        cwd=tmp,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
            try:
                with urllib.request.urlopen(url, timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "app.py never answered"
                time.sleep(1)
        yield url, tmp
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def test_space_defaults_and_keys_through_the_page(space: tuple[str, Path]) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, tmp = space
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(90_000)
        page.goto(url)
        page.locator("#mae-phone img").wait_for()
        banner = page.locator("#mae-space-banner")
        expect(banner).to_contain_text("Hugging Face Space (someone/mae-demo)")
        expect(banner).to_contain_text("your own API key")
        expect(page.locator("#mae-max-steps input[type=number]")).to_have_value(str(SPACE_STEP_LIMIT))
        expect(page.locator("#mae-device input")).to_have_value("Virtual phone (built in)")
        expect(page.get_by_role("tab", name="Run")).to_be_visible()
        expect(page.get_by_role("tab", name="History")).to_have_count(0)
        expect(page.get_by_role("tab", name="Memory")).to_have_count(0)
        expect(page.get_by_role("tab", name="Evaluate")).to_have_count(0)  # it uses the server's phone
        expect(page.locator("#mae-manual-status")).to_contain_text("operated by your runs only")
        before = page.locator("#mae-phone img").screenshot()
        page.locator("#mae-manual-home").click()  # the shown phone is shared: no manual control here
        expect(page.locator("#mae-manual-status")).to_contain_text("operated by your runs only")
        assert page.locator("#mae-phone img").screenshot() == before
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "space.png"), full_page=True)

        # the server has OPENAI_API_KEY, but a visitor without a key is refused, not served on it
        page.locator("#mae-task textarea").fill("Open the Notes app")
        page.locator("#mae-run").click()
        status = page.locator("#mae-status")
        expect(status).to_contain_text("does not use the server's API keys")
        expect(status).to_contain_text("OPENAI_API_KEY")
        expect(status).not_to_contain_text("Error:")  # a sentence, no class name
        page.screenshot(path=str(ARTIFACTS / "space-refused.png"), full_page=True)
        assert SERVER_KEY not in page.content()
        browser.close()
    assert not list(tmp.glob("mae-space-*/sessions/*/runs/*"))  # nothing ran


def _reply(request: RecordedRequest) -> str:
    """Plan, open Notes, judge it done, then Finished (per request: the Manager sees the history)."""
    role = request.role
    if role == "manager":
        subgoal = "Finished" if "Notes is open" in request.text else "Open Notes"
        return f"### Thought ###\nPlan.\n\n### Plan ###\n1. Open Notes\n\n### Current Subgoal ###\n{subgoal}"
    if role == "operator":
        action = json.dumps({"name": "Open_App", "arguments": {"app_name": "Notes"}})
        return f"### Thought ###\nOpen it.\n\n### Action ###\n{action}\n\n### Description ###\nOpen Notes.\n"
    if role == "reflector":
        return (
            "### Outcome ###\nA\n\n### Error Description ###\nNone\n\n"
            "### Progress Status ###\nNotes is open.\n"
        )
    return "### Important Notes ###\nNone\n"


def test_two_visitors_get_separate_runs_memory_and_phones(
    space: tuple[str, Path], model_server: FakeModelServer
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, tmp = space
    server = model_server
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        for visitor in range(2):
            context = browser.new_context(viewport={"width": 1600, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(120_000)
            page.goto(url)
            page.locator("#mae-phone img").wait_for()
            page.locator("#mae-backbone input").click()
            page.get_by_role("option", name=re.compile("custom", re.I)).first.click()
            page.locator("#mae-base-url").locator("input, textarea").fill(server.base_url)
            page.locator("#mae-model").locator("input, textarea").fill("fake-vlm")
            page.locator("#mae-evolve input").uncheck()
            page.locator("#mae-task textarea").fill(f"Open the Notes app (visitor {visitor + 1})")
            page.locator("#mae-run").click()
            expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=120_000)
            if visitor == 1:
                page.screenshot(path=str(ARTIFACTS / "space-run.png"), full_page=True)
            context.close()
        browser.close()
    sessions = sorted(tmp.glob("mae-space-*/sessions/*"))
    assert len(sessions) == 2, sessions
    for folder in sessions:
        assert len(list((folder / "runs").iterdir())) == 1  # each visitor's run, in its own folder
    assert not list(tmp.glob("mae-space-*/runs/*"))  # nothing in the shared folder
