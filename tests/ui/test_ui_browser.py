"""The demo in a real browser: Debian's chromium driven by Playwright against the app on 127.0.0.1.

The app runs in-process with the virtual phone and a Perceptor reading the phone's own elements; each
test starts its own fake model server and types its base URL into the page (backbone: custom).
Screenshots go to ``artifacts/ui/``; the finished-run test also refreshes ``docs/screenshot.png``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from ui_testkit import (
    MODEL,
    Script,
    free_port,
    make_backend,
    manager,
    notetaker,
    operator,
    reflector,
    settings_for,
    two_step_script,
)

from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer
from mae.ui.runner import Backend

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "ui"
TIMEOUT_MS = 120_000
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@dataclass
class DemoServer:
    url: str
    phone: VirtualPhone
    backend: Backend


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    import app

    tmp = tmp_path_factory.mktemp("demo")
    phone = VirtualPhone()
    backend = make_backend(settings_for(tmp, "http://127.0.0.1:9/v1"), phone, approval_timeout_s=120)
    demo = app.build_demo(backend, lister=lambda: [])
    port = free_port()
    app.launch(demo, backend, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield DemoServer(url=f"http://127.0.0.1:{port}/", phone=phone, backend=backend)
    finally:
        demo.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: object, demo_server: DemoServer) -> Iterator[object]:
    demo_server.phone.reset()
    context = browser.new_context(viewport={"width": 1600, "height": 1000})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(demo_server.url)
    page.locator("#mae-phone img").wait_for()
    try:
        yield page
    finally:
        context.close()


def shot(page: object, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]


def start_run(page: object, server: FakeModelServer, task: str) -> None:
    page.locator("#mae-base-url").locator("input, textarea").fill(server.base_url)  # type: ignore[attr-defined]
    page.locator("#mae-model").locator("input, textarea").fill(MODEL)  # type: ignore[attr-defined]
    page.locator("#mae-task textarea").fill(task)  # type: ignore[attr-defined]
    page.locator("#mae-run").click()  # type: ignore[attr-defined]


def test_a_run_shows_every_step_the_phone_and_the_final_status(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    before = page.locator("#mae-phone img").screenshot()  # type: ignore[attr-defined]
    script = Script(
        manager=[manager("Open the Notes app"), manager("Open Maps"), manager("Finished")],
        operator=[
            operator({"name": "Open_App", "arguments": {"app_name": "Notes"}}, "The Notes app opens"),
            operator({"name": "Open_App", "arguments": {"app_name": "Maps"}}, "Maps opens on the map view"),
        ],
        reflector=[reflector("Notes is open"), reflector("Maps is open")],
        notetaker=[notetaker("None"), notetaker("Checked Notes, then opened Maps")],
    )
    with FakeModelServer() as server:
        script.load(server)
        start_run(page, server, "Open Notes, then open Maps")
        expect(page.locator("#mae-stop")).to_be_enabled()
        status = page.locator("#mae-status")
        expect(status).to_contain_text("Finished", timeout=TIMEOUT_MS)
        expect(status).to_contain_text("9 model calls")
        server.assert_done()
    timeline = page.locator("#mae-timeline")
    for step, action in ((1, 'Open_App("Notes")'), (2, 'Open_App("Maps")')):
        card = timeline.locator(f"#mae-step-{step}")
        expect(card).to_contain_text(f"Step {step}")
        expect(card).to_contain_text(action)
        for stage in ("Manager", "Operator", "Action Reflector", "Notetaker", "Subgoal", "Outcome"):
            expect(card).to_contain_text(stage)
    expect(timeline.locator("#mae-step-3")).to_contain_text("judges the task finished")
    expect(page.locator("#mae-progress")).to_contain_text("Step")
    expect(page.locator("#mae-run")).to_be_enabled()
    page.wait_for_timeout(500)  # type: ignore[attr-defined]  # let the last image paint
    after = page.locator("#mae-phone img").screenshot()  # type: ignore[attr-defined]
    assert after != before
    assert demo_server.phone.current_app is not None and demo_server.phone.current_app.label == "Maps"
    shot(page, "finished-run")
    docs = ROOT / "docs" / "screenshot.png"
    page.screenshot(path=str(docs))  # type: ignore[attr-defined]

    # the History tab lists the run and replays it
    page.get_by_role("tab", name="History").click()  # type: ignore[attr-defined]
    expect(page.locator("#mae-run-summary")).to_contain_text("Open Notes, then open Maps")
    expect(page.locator("#mae-replay-card")).to_contain_text('Open_App("Notes")')
    shot(page, "history")


def test_stop_ends_the_run_before_the_next_action(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    with FakeModelServer() as server:
        two_step_script(delay_s=4.0).load(server)
        start_run(page, server, "Open Notes, then go home")
        expect(page.locator("#mae-timeline")).to_contain_text('Open_App("Notes")', timeout=TIMEOUT_MS)
        page.locator("#mae-stop").click()  # type: ignore[attr-defined]
        status = page.locator("#mae-status")
        expect(status).to_contain_text("stopped", timeout=TIMEOUT_MS)
        shot(page, "stopped-run")
    expect(page.locator("#mae-timeline")).not_to_contain_text("Home()")
    expect(page.locator("#mae-run")).to_be_enabled()
    assert demo_server.phone.current_app is not None and demo_server.phone.current_app.label == "Notes"


def test_a_sensitive_action_waits_for_approval(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    with FakeModelServer() as server:
        two_step_script(second_description="Send the message to Alice, then go home").load(server)
        start_run(page, server, "Open Notes, then send the message")
        approval = page.locator("#mae-approval").first  # Gradio puts the id on two nested divs
        expect(approval).to_be_visible(timeout=TIMEOUT_MS)
        expect(approval).to_contain_text("Home()")
        expect(approval).to_contain_text("sending a message")
        expect(page.locator("#mae-status")).to_contain_text("Waiting for your approval")
        assert demo_server.phone.current_app is not None  # still in Notes: nothing ran yet
        shot(page, "approval")
        page.locator("#mae-approve").click()  # type: ignore[attr-defined]
        expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
        server.assert_done()
    expect(approval).to_be_hidden()
    expect(page.locator("#mae-step-2")).to_contain_text("approved by the user")
    assert demo_server.phone.screen_name == "home"


def test_manual_control_when_no_run_is_active(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    phone = demo_server.phone
    x, y = next(e.center for e in phone.ground_truth() if e.text == "Notes")
    image = page.locator("#mae-phone img")
    box = image.bounding_box()  # type: ignore[attr-defined]
    scale = box["width"] / 1080
    image.click(position={"x": x * scale, "y": y * scale})  # type: ignore[attr-defined]
    expect(page.locator("#mae-manual-status")).to_contain_text("Tap(", timeout=TIMEOUT_MS)
    assert phone.current_app is not None and phone.current_app.label == "Notes"
    page.locator("#mae-manual-home").click()  # type: ignore[attr-defined]
    expect(page.locator("#mae-manual-status")).to_contain_text("Home()")
    assert phone.screen_name == "home"
