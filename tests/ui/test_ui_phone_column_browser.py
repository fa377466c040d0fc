"""The phone column in a real browser: manual control while idle, the Perceptor's boxes on the screen
they belong to, Reset phone and the live view, the manual answer in view at 1280x720, and a paged list
turned from the phone view."""

from __future__ import annotations

import io
import re
import time

import pytest
from PIL import Image
from test_ui_browser import (  # noqa: F401  (module fixtures reused: browser, demo_server, page)
    ARTIFACTS,
    CHROMIUM,
    TIMEOUT_MS,
    browser,
    demo_server,
    maps_search_script,
    page,
    shot,
    start_run,
    wait_until_changed,
)
from ui_testkit import Script, manager, notetaker, operator, reflector

from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def test_manual_control_when_no_run_is_active(request: pytest.FixtureRequest) -> None:
    tab = request.getfixturevalue("page")
    server_info = request.getfixturevalue("demo_server")
    from playwright.sync_api import expect

    phone = server_info.phone
    x, y = next(e.center for e in phone.ground_truth() if e.text == "Notes")
    image = tab.locator("#mae-phone img")
    box = image.bounding_box()  # type: ignore[attr-defined]
    scale = box["width"] / 1080
    image.click(position={"x": x * scale, "y": y * scale})  # type: ignore[attr-defined]
    expect(tab.locator("#mae-manual-status")).to_contain_text("Tap(", timeout=TIMEOUT_MS)
    assert phone.current_app is not None and phone.current_app.label == "Notes"
    tab.locator("#mae-manual-home").click()  # type: ignore[attr-defined]
    expect(tab.locator("#mae-manual-status")).to_contain_text("Home()")
    assert phone.screen_name == "home"


def shown_phone(tab: object) -> Image.Image:
    """The picture the phone view shows, as the browser received it (full size of the sent image)."""
    src = tab.locator("#mae-phone img").get_attribute("src")  # type: ignore[attr-defined]
    body = tab.request.get(src).body()  # type: ignore[attr-defined]
    return Image.open(io.BytesIO(body)).convert("RGB")


def box_hits(image: Image.Image, boxes: list[tuple[str, tuple[int, int, int, int]]], scale: float) -> float:
    """Share of ``boxes`` whose outline (top edge, middle) is drawn in the box's colour in ``image``."""

    def tinted(pixel: tuple[int, int, int], kind: str) -> bool:  # scaled and compressed: a hue test
        r, g, b = pixel
        return g > r + 40 and g > b + 10 if kind == "text" else b > r + 60 and b > g + 20

    hits = 0
    for kind, (left, top, right, _bottom) in boxes:
        x, y = round((left + right) / 2 * scale), round(top * scale)
        around = [image.getpixel((x, min(image.height - 1, max(0, y + dy)))) for dy in (-2, -1, 0, 1, 2)]
        hits += any(tinted(p, kind) for p in around)  # type: ignore[arg-type]
    return hits / max(1, len(boxes))


def test_overlay_boxes_belong_to_the_screen_they_are_drawn_on(request: pytest.FixtureRequest) -> None:
    tab = request.getfixturevalue("page")
    server_info = request.getfixturevalue("demo_server")
    from playwright.sync_api import expect

    phone = server_info.phone
    # idle: ticking the box shows the Perceptor's boxes of the home screen at once
    before = tab.locator("#mae-phone img").screenshot()  # type: ignore[attr-defined]
    tab.locator("#mae-overlay input").check()  # type: ignore[attr-defined]
    wait_until_changed(tab, "#mae-phone img", before)
    image = shown_phone(tab)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    image.save(ARTIFACTS / "overlay-idle-picture.png")
    scale = image.width / 1080
    home = [(e.kind, e.box) for e in phone.ground_truth()]
    assert box_hits(image, home, scale) > 0.9
    shot(tab, "overlay-idle")

    # a run: the final picture carries the boxes of the Notes screen, none of the home screen's icons
    with FakeModelServer() as server:
        script = Script(
            manager=[manager("Open the Notes app"), manager("Finished")],
            operator=[operator({"name": "Open_App", "arguments": {"app_name": "Notes"}}, "Notes opens")],
            reflector=[reflector("Notes is open")],
            notetaker=[notetaker("None")],
        )
        script.load(server)
        start_run(tab, server, "Open Notes")
        expect(tab.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
    assert phone.current_app is not None and phone.current_app.label == "Notes"
    notes = [(e.kind, e.box) for e in phone.ground_truth()]
    deadline = time.monotonic() + 120
    while True:
        image = shown_phone(tab)
        if box_hits(image, notes, scale) > 0.9 or time.monotonic() > deadline:
            break
        tab.wait_for_timeout(300)  # type: ignore[attr-defined]
    assert box_hits(image, notes, scale) > 0.9
    stale = [b for b in home if b not in notes and b[1][1] > 300]  # home-screen icons below the status bar
    assert stale and box_hits(image, stale, scale) < 0.2
    shot(tab, "overlay-after-run")


def test_reset_phone_and_the_live_view_while_idle(request: pytest.FixtureRequest) -> None:
    tab = request.getfixturevalue("page")
    server_info = request.getfixturevalue("demo_server")
    from playwright.sync_api import expect

    phone = server_info.phone
    home = tab.locator("#mae-phone img").screenshot()  # type: ignore[attr-defined]
    phone.open_app("Notes")  # the phone changes with nobody clicking: the view follows by itself
    wait_until_changed(tab, "#mae-phone img", home, timeout_s=15)
    shot(tab, "live-view")
    notes = tab.locator("#mae-phone img").screenshot()  # type: ignore[attr-defined]
    tab.locator("#mae-reset-phone").click()  # type: ignore[attr-defined]
    expect(tab.locator("#mae-manual-status")).to_contain_text("first state")
    assert phone.screen_name == "home" and phone.recents == []
    wait_until_changed(tab, "#mae-phone img", notes, timeout_s=15)


def test_at_1280x720_the_manual_answer_is_in_view_and_role_pickers_read_whole(
    request: pytest.FixtureRequest,
) -> None:
    chrome = request.getfixturevalue("browser")
    server_info = request.getfixturevalue("demo_server")
    from playwright.sync_api import expect

    context = chrome.new_context(viewport={"width": 1280, "height": 720})  # type: ignore[attr-defined]
    try:
        tab = context.new_page()
        tab.set_default_timeout(TIMEOUT_MS)
        tab.goto(server_info.url)
        tab.locator("#mae-phone img").wait_for()
        tab.locator("#mae-manual-home").click()
        answer = tab.locator("#mae-manual-status")
        expect(answer).to_contain_text("Did Home()")
        box = answer.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 720, box  # no scrolling needed to read it
        tab.get_by_text("Per-agent models, API keys and safety").click()
        picker = tab.get_by_label("manager backbone")
        expect(picker).to_be_visible()
        fits = picker.evaluate(
            """(el) => {
                const style = getComputedStyle(el);
                const ctx = document.createElement("canvas").getContext("2d");
                ctx.font = style.font;
                const box = el.getBoundingClientRect();
                const textEnd = box.left + parseFloat(style.paddingLeft) + ctx.measureText(el.value).width;
                const arrow = el.parentElement.querySelector(".icon-wrap").getBoundingClientRect();
                return el.value.length > 0 && textEnd <= arrow.left;
            }"""
        )
        assert fits, "the text of a role's backbone picker runs under its arrow"
        shot(tab, "manual-answer-1280x720")
    finally:
        context.close()


def test_the_phone_view_shows_a_paged_list_and_turns_its_page(request: pytest.FixtureRequest) -> None:
    """A shop's result list with realism on comes in pages: the demo shows the pager, and a click on
    Next in the phone view turns the tab. Screenshot: ``artifacts/ui/paged-list.png``."""
    tab = request.getfixturevalue("page")
    server_info = request.getfixturevalue("demo_server")
    from playwright.sync_api import expect

    from mae.device.virtual.apps.paging import NEXT, paging_for
    from mae.device.virtual.realism import Realism

    def realism(seed: int) -> Realism:
        return Realism(
            enabled=True, seed=seed, popups=False, loading=False, slow_open=False, sign_in_nag=False
        )

    seed = next(
        s
        for s in range(100)
        if paging_for(VirtualPhone(realism_settings=realism(s)), "Amazon").style == "pages"
    )
    phone = server_info.phone
    phone.set_realism(realism(seed))
    try:
        phone.open_app("Amazon")
        x, y = next(e.center for e in phone.ground_truth() if e.text == "Search Amazon")
        phone.tap(x, y)
        phone.type_text("laptop")
        phone.enter()
        while NEXT not in [label for label, _ in phone.tap_targets()]:
            phone.swipe(540, 1800, 540, 700)
        left, top, right, bottom = next(box for label, box in phone.tap_targets() if label == NEXT)
        image = tab.locator("#mae-phone img")
        before = image.screenshot()  # type: ignore[attr-defined]
        scale = image.bounding_box()["width"] / 1080  # type: ignore[attr-defined]
        image.click(position={"x": (left + right) / 2 * scale, "y": (top + bottom) / 2 * scale})  # type: ignore[attr-defined]
        expect(tab.locator("#mae-manual-status")).to_contain_text("Tap(", timeout=TIMEOUT_MS)
        wait_until_changed(tab, "#mae-phone img", before)
        shown = [e.text for e in phone.ground_truth()]
        counts = [t for t in shown if re.fullmatch(r"\d+-\d+ of \d+ results", t)]
        assert counts and not counts[0].startswith("1-")  # the second tab, not the first
        assert "Previous" in shown
        shot(tab, "paged-list")
    finally:
        phone.set_realism(Realism())
