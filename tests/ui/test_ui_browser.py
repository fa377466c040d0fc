"""The demo in a real browser: Debian's chromium driven by Playwright against the app on 127.0.0.1.

The app runs in-process with the virtual phone and a Perceptor reading the phone's own elements; each
test starts its own fake model server and types its base URL into the page (backbone: custom).
Screenshots go to ``artifacts/ui/``; with ``MAE_UPDATE_SCREENSHOT=1`` the finished-run test also refreshes
``docs/screenshot.png``, the picture the README shows.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from ui_testkit import (
    MODEL,
    SEND_TAP,
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
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
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


def wait_until_changed(page: object, selector: str, before: bytes, timeout_s: float = 60) -> None:
    """Poll the element's pixels until they differ from ``before``."""
    deadline = time.monotonic() + timeout_s
    while page.locator(selector).screenshot() == before:  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, f"{selector} never changed"
        page.wait_for_timeout(250)  # type: ignore[attr-defined]


def start_run(page: object, server: FakeModelServer, task: str) -> None:
    page.locator("#mae-base-url").locator("input, textarea").fill(server.base_url)  # type: ignore[attr-defined]
    page.locator("#mae-model").locator("input, textarea").fill(MODEL)  # type: ignore[attr-defined]
    page.locator("#mae-task textarea").fill(task)  # type: ignore[attr-defined]
    page.locator("#mae-run").click()  # type: ignore[attr-defined]


TASK = "Find the best-rated Korean restaurant in Champaign on Maps"
TIPS_REPLY = (
    "### Thought ###\nSearching from the app's own search box was quick.\n### Updated Tips ###\n"
    "0. Do not add any payment information. If you are asked to sign in, ignore it or sign in as a guest if "
    "possible. Close any pop-up windows when opening an app.\n1. By default, no apps are opened in the "
    "background.\n2. Screenshots may show partial text in text boxes from your previous input; this does not "
    "count as an error.\n3. When creating new Notes, you do not need to enter a title unless the user "
    "specifically requests it.\n4. Search from inside the app (its search box) rather than scrolling.\n"
)
SHORTCUTS_REPLY = "### New Shortcuts ###\n" + json.dumps(
    [
        {
            "name": "Open_And_Search",
            "arguments": ["app_name", "x", "y", "text"],
            "description": "Open an app, tap its search box at (x, y), type the text and search.",
            "precondition": "The app is installed and its search box is at (x, y) once it opens.",
            "atomic_action_sequence": [
                {"name": "Open_App", "arguments_map": {"app_name": "app_name"}},
                {"name": "Tap", "arguments_map": {"x": "x", "y": "y"}},
                {"name": "Type", "arguments_map": {"text": "text"}},
                {"name": "Enter", "arguments_map": {}},
            ],
        }
    ]
)
PLAN = "1. Open Maps\n2. Search for Korean restaurants\n3. Compare the ratings and pick the best one"


def maps_search_script() -> Script:
    """Open Maps, search with the Tap_Type_and_Enter Shortcut, then finish (what the screenshot shows)."""
    scratch = VirtualPhone()
    scratch.open_app("Maps")
    x, y = next(e.center for e in scratch.ground_truth() if e.text == "Search here")
    search = {"name": "Tap_Type_and_Enter", "arguments": {"x": x, "y": y, "text": "Korean restaurant"}}
    return Script(
        manager=[
            manager("Open the Maps app", PLAN),
            manager("Search for Korean restaurants near Champaign", PLAN),
            manager("Finished", PLAN),
        ],
        operator=[
            operator(
                {"name": "Open_App", "arguments": {"app_name": "Maps"}},
                "Maps opens on the map view",
                "Maps is on the home screen; open it directly.",
            ),
            operator(
                search,
                "The results list Korean restaurants with their ratings",
                "The search box is at the top; the Shortcut taps it, types and searches.",
            ),
        ],
        reflector=[
            reflector("Maps is open."),
            reflector("Searched for Korean restaurants; Seoul Garden has the best rating (4.7)."),
        ],
        notetaker=[
            notetaker("None"),
            notetaker(
                "Seoul Garden: 4.7 stars (812 reviews), open until 10 PM; Gangnam BBQ House: 4.6 stars."
            ),
        ],
    )


def test_a_run_shows_every_step_the_phone_and_the_final_status(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    before = page.locator("#mae-phone img").screenshot()  # type: ignore[attr-defined]
    script = maps_search_script()
    with FakeModelServer() as server:
        script.load(server)
        server.add(TIPS_REPLY, SHORTCUTS_REPLY, role="experience")
        page.locator("#mae-evolve input").check()  # type: ignore[attr-defined]
        start_run(page, server, TASK)
        expect(page.locator("#mae-stop")).to_be_enabled()
        status = page.locator("#mae-status")
        expect(status).to_contain_text("Finished", timeout=TIMEOUT_MS)
        expect(status).to_contain_text("9 model calls")
        expect(status).to_contain_text("Self-evolution: memory version 1", timeout=TIMEOUT_MS)
        server.assert_done()
    timeline = page.locator("#mae-timeline")
    for step, action in ((1, 'Open_App("Maps")'), (2, "Tap_Type_and_Enter(")):
        card = timeline.locator(f"#mae-step-{step}")
        expect(card).to_contain_text(f"Step {step}")
        expect(card).to_contain_text(action)
        for stage in ("Manager", "Operator", "Action Reflector", "Notetaker", "Subgoal", "Outcome"):
            expect(card).to_contain_text(stage)
    expect(timeline.locator("#mae-step-3")).to_contain_text("judges the task finished")
    expect(timeline.locator("#mae-step-experience")).to_contain_text("new Shortcuts: Open_And_Search")
    expect(page.locator("#mae-progress")).to_contain_text("Step")
    expect(page.locator("#mae-run")).to_be_enabled()
    wait_until_changed(page, "#mae-phone img", before)  # the last image may still be loading
    assert demo_server.phone.current_app is not None and demo_server.phone.current_app.label == "Maps"
    assert any(e.text == "Seoul Garden" for e in demo_server.phone.ground_truth())
    shot(page, "finished-run")
    if os.environ.get("MAE_UPDATE_SCREENSHOT") == "1":
        page.screenshot(path=str(ROOT / "docs" / "screenshot.png"))  # type: ignore[attr-defined]

    # the Perceptor's boxes drawn over the latest screen
    plain = page.locator("#mae-phone img").screenshot()  # type: ignore[attr-defined]
    page.locator("#mae-overlay input").check()  # type: ignore[attr-defined]
    wait_until_changed(page, "#mae-phone img", plain)
    shot(page, "perceptor-boxes")

    # the Memory tab shows what the run taught
    page.get_by_role("tab", name="Memory").click()  # type: ignore[attr-defined]
    expect(page.locator("#mae-memory-header")).to_contain_text("version 1")
    expect(page.locator("#mae-shortcut-table")).to_contain_text("Open_And_Search")
    expect(page.locator("#mae-tips textarea")).to_have_value(re.compile("Search from inside the app"))
    shot(page, "memory")

    # the History tab lists the run and replays it
    page.get_by_role("tab", name="History").click()  # type: ignore[attr-defined]
    expect(page.locator("#mae-run-summary")).to_contain_text(TASK)
    expect(page.locator("#mae-replay-card")).to_contain_text('Open_App("Maps")')
    page.locator("#mae-replay-step input[type=number]").fill("2")  # type: ignore[attr-defined]
    page.locator("#mae-replay-step input[type=number]").press("Enter")  # type: ignore[attr-defined]
    expect(page.locator("#mae-replay-card")).to_contain_text("Tap_Type_and_Enter")
    page.locator("#mae-gif").click()  # type: ignore[attr-defined]
    expect(page.locator("#mae-download")).to_contain_text(".gif")
    page.locator("#mae-zip").click()  # type: ignore[attr-defined]
    expect(page.locator("#mae-download")).to_contain_text(".zip")
    shot(page, "history")


def test_stop_ends_the_run_before_the_next_action(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    with FakeModelServer() as server:
        two_step_script(delay_s=6.0).load(server)
        start_run(page, server, "Open Notes, then go home")
        expect(page.locator("#mae-timeline")).to_contain_text('Open_App("Notes")', timeout=TIMEOUT_MS)
        page.locator("#mae-stop").click()  # type: ignore[attr-defined]
        status = page.locator("#mae-status")
        expect(status).to_contain_text("stopped", timeout=TIMEOUT_MS)
        shot(page, "stopped-run")
    # the Operator may have proposed Home() while Stop was pressed, but it never ran
    expect(page.locator("#mae-timeline .mae-step-head").filter(has_text="Home()")).to_have_count(0)
    expect(page.locator("#mae-run")).to_be_enabled()
    assert demo_server.phone.current_app is not None and demo_server.phone.current_app.label == "Notes"


def test_a_sensitive_action_waits_for_approval(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    with FakeModelServer() as server:
        two_step_script(second_description="Send the message to Alice", second_action=SEND_TAP).load(server)
        start_run(page, server, "Open Notes, then send the message")
        approval = page.locator("#mae-approval").first  # Gradio puts the id on two nested divs
        expect(approval).to_be_visible(timeout=TIMEOUT_MS)
        expect(approval).to_contain_text("Tap(900, 400)")
        expect(approval).to_contain_text("sending a message")
        expect(page.locator("#mae-status")).to_contain_text("Waiting for your approval")
        assert demo_server.phone.current_app is not None  # still in Notes: nothing ran yet
        shot(page, "approval")
        page.locator("#mae-approve").click()  # type: ignore[attr-defined]
        expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
        server.assert_done()
    expect(approval).to_be_hidden()
    expect(page.locator("#mae-step-2")).to_contain_text("approved by the user")
    assert any(entry.action == "Tap(900, 400)" for entry in demo_server.phone.log)


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


def test_parallel_notetaker_checkbox_runs_a_task(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    page.locator("#mae-advanced").get_by_text("Per-agent models").click()  # type: ignore[attr-defined]
    box = page.locator("#mae-parallel-notetaker input")  # type: ignore[attr-defined]
    expect(box).not_to_be_checked()  # the paper's order by default
    box.check()
    expect(page.locator("#mae-parallel-notetaker")).to_contain_text("not the paper's order")
    shot(page, "parallel-notetaker")
    script = maps_search_script()
    with FakeModelServer() as server:
        script.load(server)
        page.locator("#mae-evolve input").uncheck()  # type: ignore[attr-defined]
        start_run(page, server, TASK)
        status = page.locator("#mae-status")
        expect(status).to_contain_text("Finished", timeout=TIMEOUT_MS)
        roles = [request.role for request in server.requests]
    assert roles.count("notetaker") == roles.count("reflector") >= 1
