"""Keys stay home: a Base URL typed in the demo never receives the server's API key. Also: the
model call timeout set in the page bounds a run against a trickling provider.

The demo runs in-process with ``OPENAI_API_KEY`` set on the server and its settings naming that
variable; the visitor types the base URL of a local fake model server. The fake server records every
request's headers: without a typed key it must never see the server's key; with one, it sees exactly
the typed key.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_testkit import MODEL, free_port, make_backend, settings_for, two_step_script

from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer, FakeReply

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "ui"
SERVER_KEY = "sk-server-secret-0123456789"
VISITOR_KEY = "sk-visitor-typed-abcdef"
TIMEOUT_MS = 120_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    previous = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = SERVER_KEY
    import app

    tmp = tmp_path_factory.mktemp("keys")
    phone = VirtualPhone()
    settings = settings_for(tmp, "http://127.0.0.1:9/v1", api_key_env="OPENAI_API_KEY")
    demo = app.build_demo(make_backend(settings, phone), lister=lambda: [])
    port = free_port()
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()
        if previous is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = previous


def _run(demo_url: str, server: FakeModelServer, name: str, typed_key: str | None) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(demo_url)
            page.locator("#mae-phone img").wait_for()
            page.locator("#mae-base-url").locator("input, textarea").fill(server.base_url)
            page.locator("#mae-model").locator("input, textarea").fill(MODEL)
            if typed_key is not None:
                page.locator("#mae-advanced").get_by_text("Per-agent models, API keys and safety").click()
                page.locator("#mae-key-custom input").fill(typed_key)
            page.locator("#mae-task textarea").fill("Open Notes, then go home")
            page.locator("#mae-run").click()
            expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        finally:
            browser.close()


def test_typed_base_url_without_a_key_never_gets_the_server_key(demo_url: str) -> None:
    with FakeModelServer() as server:
        two_step_script().load(server)
        _run(demo_url, server, "keys-typed-url-no-key", typed_key=None)
        headers = [request.headers for request in server.requests]
    assert headers, "the run never reached the typed base URL"
    for sent in headers:
        assert SERVER_KEY not in " ".join(sent.values())
        assert sent.get("authorization") in (None, "Bearer EMPTY")


def test_typed_base_url_with_a_typed_key_gets_only_that_key(demo_url: str) -> None:
    with FakeModelServer() as server:
        two_step_script().load(server)
        _run(demo_url, server, "keys-typed-url-typed-key", typed_key=VISITOR_KEY)
        headers = [request.headers for request in server.requests]
    assert headers
    for sent in headers:
        assert SERVER_KEY not in " ".join(sent.values())
        assert sent.get("authorization") == f"Bearer {VISITOR_KEY}"


def test_model_call_timeout_from_the_page_bounds_a_trickling_provider(demo_url: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    with FakeModelServer() as server:
        server.responder = lambda request: FakeReply(text="### Plan ###\n1. x\n" * 20, trickle_s=0.05)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1600, "height": 1000})
                page.set_default_timeout(TIMEOUT_MS)
                page.goto(demo_url)
                page.locator("#mae-phone img").wait_for()
                page.locator("#mae-base-url").locator("input, textarea").fill(server.base_url)
                page.locator("#mae-model").locator("input, textarea").fill(MODEL)
                page.locator("#mae-advanced").get_by_text("Per-agent models, API keys and safety").click()
                # the real defaults are shown (an empty number field would send 0: no retries)
                expect(page.locator("#mae-timeout input")).to_have_value("120")
                expect(page.locator("#mae-retries input")).to_have_value("3")
                page.locator("#mae-timeout input").fill("2")
                page.locator("#mae-retries input").fill("0")
                page.locator("#mae-task textarea").fill("Open Notes")
                started = time.monotonic()
                page.locator("#mae-run").click()
                status = page.locator("#mae-status")
                expect(status).to_contain_text("did not answer within 2 s", timeout=60_000)
                elapsed = time.monotonic() - started
                page.screenshot(path=str(ARTIFACTS / "call-timeout.png"), full_page=True)
            finally:
                browser.close()
    assert elapsed < 30, elapsed  # one 2 s call instead of 20 lines x 0.05 s per byte
