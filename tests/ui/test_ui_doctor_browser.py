"""The "Check this model" button in the page: the doctor runs against a local fake server that answers
in Qwen2.5-VL's resized-image pixels while mae is set for screen pixels, and the page shows the
verdict, the setting to use and the picture of targets and taps (screenshot in artifacts/ui/)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_testkit import MODEL, free_port, make_backend, settings_for

from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest
from mae.testing.grounding_fake import GroundingFake

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "ui"
TIMEOUT_MS = 180_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def served() -> Iterator[FakeModelServer]:
    fake = GroundingFake("qwen2.5-vl")

    def slow(request: RecordedRequest) -> FakeReply | None:
        text = fake(request)  # a second per reply: long enough to see the progress bar
        return None if text is None else FakeReply(text=text, delay_s=1.0)

    with FakeModelServer(responder=slow) as server:
        yield server


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory, served: FakeModelServer) -> Iterator[str]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    os.environ.pop("SPACE_ID", None)
    import app

    tmp = tmp_path_factory.mktemp("doctor")
    settings = settings_for(tmp, served.base_url)
    demo = app.build_demo(make_backend(settings, VirtualPhone()), lister=lambda: [])
    port = free_port()
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


def test_check_this_model_shows_the_verdict_and_the_picture(demo_url: str, served: FakeModelServer) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(TIMEOUT_MS)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.goto(demo_url)
            page.locator("#mae-phone img").wait_for()
            page.locator("#mae-model").locator("input, textarea").fill(MODEL)
            page.locator("#mae-doctor").click()
            verdict = page.locator("#mae-doctor-verdict")
            expect(verdict).to_contain_text("/20: ", timeout=TIMEOUT_MS)  # the progress bar's text
            page.screenshot(path=str(ARTIFACTS / "doctor-progress.png"), full_page=False)
            expect(verdict).to_contain_text("another convention fits", timeout=TIMEOUT_MS)
            expect(verdict).to_contain_text("MAE_COORDINATES=qwen2.5-vl")
            expect(verdict).to_contain_text("Full report")
            picture = page.locator("#mae-doctor-picture img")
            expect(picture).to_be_visible()
            picture.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / "doctor.png"), full_page=True)
        finally:
            browser.close()
    assert len(served.requests) == 20
    assert not served.unexpected
