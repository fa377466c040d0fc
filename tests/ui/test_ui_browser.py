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
from PIL import Image
from ui_testkit import (
    MODEL,
    SEND_TAP,
    Script,
    free_port,
    held,
    make_backend,
    manager,
    notetaker,
    operator,
    reflector,
    settings_for,
    two_step_script,
)

from mae.device.virtual import VirtualPhone
from mae.llm.coordinates import mapper_for
from mae.testing.fake_model_server import FakeModelServer, FakeReply
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
    deadline = time.monotonic() + 60
    while not demo_server.backend.runs.forget("virtual"):  # a fresh page shows no earlier run
        assert time.monotonic() < deadline, "the previous test's run never ended"
        time.sleep(0.2)
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
    # the model answers in the frame of the image it is sent (1080x2340 goes out as 768x1664)
    x, y = mapper_for("screen", scratch.screen_size(), (768, 1664)).to_model(x, y)
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

    with FakeModelServer() as server, held() as busy:
        two_step_script(hold=busy).load(server)  # step 2 waits for the model until Stop is pressed
        start_run(page, server, "Open Notes, then go home")
        expect(page.locator("#mae-timeline")).to_contain_text('Open_App("Notes")', timeout=TIMEOUT_MS)
        page.locator("#mae-stop").click()  # type: ignore[attr-defined]
        busy.set()
        status = page.locator("#mae-status")
        expect(status).to_contain_text("stopped", timeout=TIMEOUT_MS)
        shot(page, "stopped-run")
    # the Operator may have proposed Home() while Stop was pressed, but it never ran
    expect(page.locator("#mae-timeline .mae-step-head").filter(has_text="Home()")).to_have_count(0)
    expect(page.locator("#mae-run")).to_be_enabled()
    assert demo_server.phone.current_app is not None and demo_server.phone.current_app.label == "Notes"


def test_run_stays_disabled_until_the_memory_update_after_stop_ends(
    page: object, demo_server: DemoServer
) -> None:
    from playwright.sync_api import expect

    with FakeModelServer() as server, held() as busy:
        two_step_script(hold=busy).load(server)  # step 2 waits for the model until Stop is pressed
        server.add(FakeReply(text=TIPS_REPLY, delay_s=4.0), SHORTCUTS_REPLY, role="experience")
        page.locator("#mae-evolve input").check()  # type: ignore[attr-defined]
        start_run(page, server, "Open Notes, then go home")
        expect(page.locator("#mae-timeline")).to_contain_text('Open_App("Notes")', timeout=TIMEOUT_MS)
        page.locator("#mae-stop").click()  # type: ignore[attr-defined]
        busy.set()
        status = page.locator("#mae-status")
        expect(status).to_contain_text("Updating the long-term memory", timeout=TIMEOUT_MS)
        # a click now would be lost (the run's stream is still open): Run waits for the update
        expect(page.locator("#mae-run")).to_be_disabled()
        expect(page.locator("#mae-stop")).to_be_disabled()  # the steps are over: nothing left to stop
        shot(page, "memory-update-after-stop")
        expect(status).not_to_contain_text("Updating the long-term memory", timeout=TIMEOUT_MS)
        expect(page.locator("#mae-run")).to_be_enabled()
        assert [request.role for request in server.requests].count("experience") == 2
    with FakeModelServer() as server:  # the next click starts the next run at once
        two_step_script().load(server)
        page.locator("#mae-evolve input").uncheck()  # type: ignore[attr-defined]
        start_run(page, server, "Open Notes again, then go home")
        expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
        server.assert_done()


def test_a_sensitive_action_waits_for_approval(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    with FakeModelServer() as server:
        two_step_script(second_description="Send the message to Alice", second_action=SEND_TAP).load(server)
        start_run(page, server, "Open Notes, then send the message")
        approval = page.locator("#mae-approval").first  # Gradio puts the id on two nested divs
        expect(approval).to_be_visible(timeout=TIMEOUT_MS)
        expect(approval).to_contain_text("Tap(900, 399)")
        expect(approval).to_contain_text("sending a message")
        expect(page.locator("#mae-status")).to_contain_text("Waiting for your approval")
        assert demo_server.phone.current_app is not None  # still in Notes: nothing ran yet
        shot(page, "approval")
        # the run is paused: manual control works meanwhile (the run waits for the answer)
        page.locator("#mae-manual-back").click()  # type: ignore[attr-defined]
        expect(page.locator("#mae-manual-status")).to_contain_text("Did Back()")
        page.locator("#mae-approve").click()  # type: ignore[attr-defined]
        expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
        server.assert_done()
    expect(approval).to_be_hidden()
    card = page.locator("#mae-step-2")
    expect(card).to_contain_text("approved by the user")
    assert any(entry.action == "Tap(900, 399)" for entry in demo_server.phone.log)
    # the card reads as the approval box and the phone do: screen pixels, the model's own text labelled
    expect(card.locator(".mae-step-head")).to_contain_text("Step 2 — Tap(900, 399)")
    expect(card.locator(".mae-stage-operator")).to_contain_text(
        "Tap(900, 399) · model wrote Tap(640, 284) in its 768×1664 image"
    )
    card.scroll_into_view_if_needed()
    shot(page, "step_card_frames")


def test_a_reload_reattaches_to_the_run_and_it_finishes(
    browser: object, page: object, demo_server: DemoServer
) -> None:
    from playwright.sync_api import expect

    demo_server.phone.open_app("Notes")  # left open by someone: the run starts from the home screen
    with FakeModelServer() as server, held() as busy:
        two_step_script(hold=busy).load(server)  # the run waits in step 2 until both tabs have seen it
        page.get_by_text("Per-agent models, API keys and safety").click()  # type: ignore[attr-defined]
        page.locator("#mae-key-custom input").fill("sk-never-stored")  # type: ignore[attr-defined]
        start_run(page, server, "Open Notes, then go home")
        expect(page.locator("#mae-timeline")).to_contain_text('Open_App("Notes")', timeout=TIMEOUT_MS)
        page.reload()  # type: ignore[attr-defined]
        timeline = page.locator("#mae-timeline")
        expect(timeline).to_contain_text('Open_App("Notes")', timeout=TIMEOUT_MS)  # the timeline so far
        expect(page.locator("#mae-stop")).to_be_enabled()
        # the settings typed before the reload are back; the key typed before it is not
        expect(page.locator("#mae-base-url input, #mae-base-url textarea")).to_have_value(server.base_url)
        page.get_by_text("Per-agent models, API keys and safety").click()  # type: ignore[attr-defined]
        expect(page.locator("#mae-key-custom input")).to_have_value("")
        second = browser.new_context(viewport={"width": 1280, "height": 720})  # type: ignore[attr-defined]
        other = second.new_page()
        other.goto(demo_server.url)
        expect(other.locator("#mae-timeline")).to_contain_text('Open_App("Notes")', timeout=TIMEOUT_MS)
        other.screenshot(path=str(ARTIFACTS / "second-tab-1280x720.png"))
        second.close()  # closing a tab does not stop the run
        busy.set()
        expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
        server.assert_done()
    expect(page.locator("#mae-step-2")).to_contain_text("Home()")
    shot(page, "reattached-run")
    run_dir = max((demo_server.backend.log_dir).iterdir(), key=lambda p: p.stat().st_mtime)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["exit_reason"] == "finished"
    # the first action was chosen on the home screen (fresh start), not on the Notes left open
    home, notes = VirtualPhone(), VirtualPhone()
    notes.open_app("Notes")
    with Image.open(next(run_dir.glob("step_001_before.*"))) as handle:
        first = handle.convert("RGB").crop((0, 200, 1080, 1800))

    def distance(phone: VirtualPhone) -> float:
        other = phone.screenshot().crop((0, 200, 1080, 1800)).resize(first.size)
        return sum(abs(a - b) for a, b in zip(first.tobytes()[::97], other.tobytes()[::97], strict=False))

    assert distance(home) < distance(notes) / 2


def test_a_refused_shortcut_save_changes_nothing(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Memory").click()  # type: ignore[attr-defined]
    table = page.locator("#mae-shortcut-table")
    expect(table).to_contain_text("Tap_Type_and_Enter")
    version_before = demo_server.backend.memory_store().load().version
    bad = json.dumps(
        {"Bad_One": {"name": "Bad_One", "arguments": ["q"], "atomic_action_sequence": [{"name": "Fly"}]}},
        indent=2,
    )
    editor = page.locator("#mae-shortcuts .cm-content")
    editor.click()  # type: ignore[attr-defined]
    page.keyboard.press("Control+A")  # type: ignore[attr-defined]
    page.keyboard.press("Delete")  # type: ignore[attr-defined]
    page.keyboard.insert_text(bad)  # type: ignore[attr-defined]
    page.locator("#mae-save-shortcuts").click()  # type: ignore[attr-defined]
    status = page.locator("#mae-memory-status")
    expect(status).to_contain_text("Nothing was saved")
    expect(status).to_contain_text("Bad_One")
    expect(status).to_contain_text("unknown operation 'Fly'")
    expect(table).to_contain_text("Tap_Type_and_Enter")
    expect(editor).to_contain_text("Bad_One")  # the editor keeps the text for fixing
    assert demo_server.backend.memory_store().load().version == version_before
    message = status.inner_text()  # type: ignore[attr-defined]
    assert "Error" not in message and "/tmp/" not in message and "###" not in message
    shot(page, "refused-shortcut")


def test_history_shows_the_run_that_just_finished(page: object, demo_server: DemoServer) -> None:
    from playwright.sync_api import expect

    with FakeModelServer() as server:  # a run before the page loads: the picker starts on it
        two_step_script().load(server)
        start_run(page, server, "History first run")
        expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
        first_url = server.base_url
    page.reload()  # type: ignore[attr-defined]
    page.locator("#mae-phone img").wait_for()  # type: ignore[attr-defined]
    # the page load has restored the remembered settings before new ones are typed
    expect(page.locator("#mae-base-url input, #mae-base-url textarea")).to_have_value(first_url)
    summary = page.locator("#mae-run-summary")
    with FakeModelServer() as server:
        two_step_script().load(server)
        start_run(page, server, "History second run")
        expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
    page.get_by_role("tab", name="History").click()  # type: ignore[attr-defined]
    expect(summary).to_contain_text("History second run")
    shot(page, "history-newest-run")
    # A run the user picks stays picked when nothing new has run.
    page.locator("#mae-runs input").click()  # type: ignore[attr-defined]
    page.get_by_role("option", name=re.compile("History first run")).first.click()  # type: ignore[attr-defined]
    expect(summary).to_contain_text("History first run")
    page.locator("#mae-runs-refresh").click()  # type: ignore[attr-defined]
    page.wait_for_timeout(1000)  # type: ignore[attr-defined]
    expect(summary).to_contain_text("History first run")


def test_the_exported_html_opens_offline_and_shows_every_step(
    browser: object, page: object, demo_server: DemoServer
) -> None:
    from playwright.sync_api import expect

    with FakeModelServer() as server:
        two_step_script().load(server)
        start_run(page, server, "Open Notes, then go home")
        expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
    page.get_by_role("tab", name="History").click()  # type: ignore[attr-defined]
    expect(page.locator("#mae-runs-table")).to_contain_text("Open Notes, then go home")
    expect(page.locator("#mae-runs-table")).to_contain_text("the agent finished the task")
    expect(page.locator("#mae-run-summary")).to_contain_text("Open Notes, then go home")
    page.locator("#mae-html").click()  # type: ignore[attr-defined]
    link = page.locator("#mae-download a").first
    expect(link).to_have_attribute("download", re.compile(r"\.html$"))
    href = link.get_attribute("href")  # type: ignore[attr-defined]
    path = Path(re.sub(r"^.*?file=", "", href or "").split("?")[0])
    assert path.is_file(), href
    shot(page, "history-table")
    offline = browser.new_context(offline=True)  # type: ignore[attr-defined]
    try:
        exported = offline.new_page()
        exported.goto(path.as_uri())
        for step, action in ((1, 'Open_App("Notes")'), (2, "Home()")):
            card = exported.locator(f"#mae-step-{step}")
            expect(card).to_contain_text(action)
            for stage in ("Manager", "Operator", "Action Reflector", "Notetaker", "tok"):
                expect(card).to_contain_text(stage)
        expect(exported.locator("#mae-step-3")).to_contain_text("judges the task finished")
        loaded = exported.evaluate(  # every screen is inline and decodes without a network
            "() => [...document.images].map(i => i.complete && i.naturalWidth > 0)"
        )
        assert len(loaded) == 3 and all(loaded)
        exported.screenshot(path=str(ARTIFACTS / "exported-html.png"), full_page=True)
    finally:
        offline.close()


def test_an_executed_step_counts_even_when_the_notetaker_reply_is_unusable(
    page: object, demo_server: DemoServer
) -> None:
    from playwright.sync_api import expect

    unusable = "I am not sure what to note here."
    script = Script(
        manager=[manager("Open the Notes app")],
        operator=[operator({"name": "Open_App", "arguments": {"app_name": "Notes"}}, "Notes opens")],
        reflector=[reflector("Notes is open")],
        notetaker=[unusable, unusable],
    )
    with FakeModelServer() as server:
        script.load(server)
        start_run(page, server, "Open Notes")
        status = page.locator("#mae-status")
        expect(status).to_contain_text("Ended", timeout=TIMEOUT_MS)
        expect(status).to_contain_text("1 step ·")
    message = status.inner_text()  # type: ignore[attr-defined]
    assert "Error:" not in message and "###" not in message and "/tmp/" not in message
    expect(page.locator("#mae-progress")).to_contain_text("Step 1 of")
    shot(page, "unusable-notetaker")


def test_a_refused_start_clears_the_previous_run_from_the_page(
    page: object, demo_server: DemoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import expect

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with FakeModelServer() as server:
        two_step_script().load(server)
        server.add(FakeReply(status=404, body='{"error": {"message": "no such model"}}'), role="experience")
        page.locator("#mae-evolve input").check()  # type: ignore[attr-defined]
        start_run(page, server, "Open Notes, then go home")
        expect(page.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
        expect(page.locator("#mae-timeline")).to_contain_text("Problems", timeout=TIMEOUT_MS)
    page.locator("#mae-backbone input").click()  # type: ignore[attr-defined]
    page.get_by_role("option", name=re.compile("Anthropic")).click()  # type: ignore[attr-defined]
    page.locator("#mae-run").click()  # type: ignore[attr-defined]
    expect(page.locator("#mae-status")).to_contain_text("Cannot start: No API key")
    timeline = page.locator("#mae-timeline")
    expect(timeline).not_to_contain_text("Problems")
    expect(timeline).not_to_contain_text('Open_App("Notes")')
    expect(page.locator("#mae-progress")).not_to_contain_text("Step 2")
    expect(page.locator("#mae-run")).to_be_enabled()
    shot(page, "refused-start-after-a-run")
    page.get_by_role("tab", name="Memory").click()  # type: ignore[attr-defined]
    page.locator("#mae-memory-reload").click()  # type: ignore[attr-defined]
    history = page.locator("#mae-memory-history")
    expect(history).to_contain_text("unchanged")  # a failed reflection's row says so, and why
    expect(history).to_contain_text("problem: Tips reflector failed")
    shot(page, "memory-history-unchanged-row")
