"""Two pages, one phone, in chromium.

- Private demo: a second tab that presses Run while the first tab's run goes on is told the phone is
  busy with that task from another tab, keeps its own task text, and can watch the run by pressing
  Watch it here. Screenshot: ``artifacts/ui/busy-second-tab.png``.
- Public demo with ``MAE_MAX_RUNS=1``: the second visitor waits in line and sees their position, then
  their run starts by itself. Screenshot: ``artifacts/ui/public-queue.png``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_testkit import MODEL, free_port, held, make_backend, settings_for, two_step_script

from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer
from mae.ui import space

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "ui"
TIMEOUT_MS = 120_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def serve(tmp: Path, public: bool, model_url: str) -> tuple[Any, str]:
    import app

    settings = settings_for(tmp, model_url)
    if public:
        settings = space.apply_defaults(settings)
    demo = app.build_demo(make_backend(settings, VirtualPhone()), lister=lambda: [])
    port = free_port()
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    return demo, f"http://127.0.0.1:{port}/"


def open_page(browser: Any, url: str) -> Any:
    page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    page.locator("#mae-phone img").wait_for()
    return page


def press_run(page: Any, server: FakeModelServer, task: str) -> None:
    page.locator("#mae-base-url").locator("input, textarea").fill(server.base_url)
    page.locator("#mae-model").locator("input, textarea").fill(MODEL)
    page.locator("#mae-task textarea").fill(task)
    page.locator("#mae-run").click()


@pytest.fixture()
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


def test_a_second_tab_is_told_the_phone_is_busy_and_can_watch(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    with FakeModelServer() as server, held() as running:
        two_step_script(hold=running).load(server)  # the first tab's run stays busy until the second watches
        demo, url = serve(tmp_path, public=False, model_url=server.base_url)
        try:
            first, second = open_page(browser, url), open_page(browser, url)
            press_run(first, server, "Open Notes, then go home")
            expect(first.locator("#mae-status")).to_contain_text("Running", timeout=TIMEOUT_MS)
            press_run(second, server, "Something else entirely")
            status = second.locator("#mae-status")
            busy = "The phone is busy with “Open Notes, then go home” from another tab"
            expect(status).to_contain_text(busy)
            expect(second.locator("#mae-task textarea")).to_have_value("Something else entirely")
            watch = second.locator("#mae-watch")
            expect(watch).to_be_visible()
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            second.screenshot(path=str(ARTIFACTS / "busy-second-tab.png"), full_page=True)
            watch.click()
            running.set()
            expect(status).to_contain_text("Finished", timeout=TIMEOUT_MS)  # the other tab's run, followed
            expect(second.locator("#mae-timeline")).to_contain_text("Open_App")
            expect(watch).to_be_hidden()
            expect(first.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
        finally:
            demo.close()


def test_a_public_demo_queues_the_second_visitor_and_shows_the_position(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    with FakeModelServer() as server, held() as busy:
        monkeypatch.setenv("MAE_PUBLIC", "1")
        monkeypatch.setenv("MAE_MAX_RUNS", "1")
        monkeypatch.setenv("MAE_ALLOWED_BASE_URLS", server.base_url)
        two_step_script(hold=busy).load(server)  # the first run stays busy until the second waits
        two_step_script().load(server)
        demo, url = serve(tmp_path, public=True, model_url=server.base_url)
        try:
            first, second = open_page(browser, url), open_page(browser, url)
            expect(first.get_by_role("tab", name="Memory")).to_have_count(0)
            press_run(first, server, "Open Notes, then go home")
            expect(first.locator("#mae-status")).to_contain_text("Running", timeout=TIMEOUT_MS)
            press_run(second, server, "Open Notes, then go home too")
            status = second.locator("#mae-status")
            expect(status).to_contain_text("Waiting in line: position 1")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            second.screenshot(path=str(ARTIFACTS / "public-queue.png"), full_page=True)
            busy.set()
            expect(first.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
            expect(status).to_contain_text("Finished", timeout=TIMEOUT_MS)  # it started by itself
        finally:
            demo.close()
