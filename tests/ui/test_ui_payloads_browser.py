"""Model- and screen-written text is shown as text: payloads in every field a model writes, in chromium.

The fake model server answers with HTML, Markdown images and links, scripts and bare URLs in the
Manager's thought, plan and subgoal, the Operator's thought and action description (which opens the
approval box), the Reflector's progress and error, the Notetaker's notes, and the Experience
Reflectors' Tips and Shortcut (name, description, precondition). Every URL points at a recording
server on 127.0.0.1. The test proves that no element from a payload appears in the page, that no
script from one ran, and that the page sent no request anywhere but the demo itself.
Screenshots: ``artifacts/ui/payloads-approval.png``, ``artifacts/ui/payloads-done.png``.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_testkit import MODEL, SEND_TAP, free_port, make_backend, notetaker, settings_for

from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "ui"
TIMEOUT_MS = 120_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


class LeakServer:
    """An HTTP server on 127.0.0.1 that records every path asked for (a payload's URL calling home)."""

    def __init__(self) -> None:
        hits: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self.hits = hits
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def payload(leak: str, field: str) -> str:
    """Everything a hostile model could write into ``field`` to make the page fetch or run something."""
    return (
        f'<img src="{leak}/{field}-img" id="pwn-{field}-img"> ![m]({leak}/{field}-md.png) '
        f'<h1 id="pwn-{field}-h1">BIG</h1> <script>window.pwned = "{field}"</script> '
        f'[link]({leak}/{field}-link) <iframe id="pwn-{field}-frame" src="{leak}/{field}-frame"></iframe> '
        f'<a id="pwn-{field}-a" href="{leak}/{field}-a">a</a> **bold-{field}** {leak}/{field}-bare '
        f"<svg onload=\"window.pwned='{field}-svg'\"></svg> www.pwn-{field}.example"
    )


def manager_reply(leak: str, subgoal: str) -> str:
    return (
        f"### Thought ###\n{payload(leak, 'thought')}\n### Plan ###\n1. Open Notes {payload(leak, 'plan')}\n"
        f"### Current Subgoal ###\n{subgoal}\n"
    )


def operator_reply(leak: str, action: dict[str, object], description: str) -> str:
    return (
        f"### Thought ###\n{payload(leak, 'opthought')}\n### Action ###\n{json.dumps(action)}\n"
        f"### Description ###\n{description}\n"
    )


def reflector_reply(leak: str, outcome: str) -> str:
    return (
        f"### Outcome ###\n{outcome}\n### Error Description ###\n{payload(leak, 'error')}\n"
        f"### Progress Status ###\n{payload(leak, 'progress')}\n"
    )


def experience_replies(leak: str) -> tuple[str, str]:
    tips = (
        "### Thought ###\nx\n### Updated Tips ###\n0. Do not add any payment information.\n"
        "1. By default, no apps are opened in the background.\n2. Partial text is not an error.\n"
        f"3. New Notes need no title.\n4. {payload(leak, 'tip')}\n"
    )
    shortcut = {
        "name": "Open_Notes_<img_src=x>",
        "arguments": [],
        "description": payload(leak, "scdesc"),
        "precondition": payload(leak, "scpre"),
        "atomic_action_sequence": [{"name": "Open_App", "arguments_map": {"app_name": "Notes"}}],
    }
    return tips, "### New Shortcuts ###\n" + json.dumps([shortcut])


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    import app

    tmp = tmp_path_factory.mktemp("payloads")
    backend = make_backend(settings_for(tmp, "http://127.0.0.1:9/v1"), VirtualPhone(), approval_timeout_s=120)
    demo = app.build_demo(backend, lister=lambda: [])
    port = free_port()
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        demo.close()


def no_payload_in_page(page: object, leak: str) -> None:
    found = page.evaluate(  # type: ignore[attr-defined]
        """(leak) => {
            const bad = [];
            const all = (selector) => document.querySelectorAll(selector);
            for (const el of all('[id^="pwn-"], iframe, svg[onload]')) bad.push(el.outerHTML);
            for (const el of all('img, a, source, video, audio, link, object, embed')) {
                const url = el.getAttribute('src') || el.getAttribute('href') || el.getAttribute('data')
                    || '';
                if (url.includes(leak) || url.includes('pwn-')) bad.push(el.outerHTML);
            }
            for (const el of document.querySelectorAll('strong, b')) {
                if (el.textContent.includes('bold-')) bad.push(el.outerHTML);
            }
            if (window.pwned !== undefined) bad.push('script ran: ' + window.pwned);
            return bad;
        }""",
        leak,
    )
    assert found == [], found


def test_model_written_text_is_shown_as_text_everywhere(demo_url: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    leak = LeakServer()
    outside: list[str] = []
    try:
        with FakeModelServer() as server, sync_playwright() as playwright:
            server.add(
                manager_reply(leak.url, f"Open the Notes app {payload(leak.url, 'subgoal')}"),
                manager_reply(leak.url, "Send the note"),
                manager_reply(leak.url, "Finished"),
                role="manager",
            )
            open_notes = {"name": "Open_App", "arguments": {"app_name": "Notes"}}
            server.add(
                operator_reply(leak.url, open_notes, f"Open Notes {payload(leak.url, 'opdesc')}"),
                operator_reply(leak.url, SEND_TAP, f"Send the note {payload(leak.url, 'approval')}"),
                role="operator",
            )
            server.add(reflector_reply(leak.url, "A"), reflector_reply(leak.url, "A"), role="reflector")
            notes = [notetaker(payload(leak.url, "notes")), notetaker(payload(leak.url, "notes2"))]
            server.add(*notes, role="notetaker")
            server.add(*experience_replies(leak.url), role="experience")

            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1600, "height": 1100})
            page.set_default_timeout(TIMEOUT_MS)
            page.on(
                "request",
                lambda request: (
                    outside.append(request.url)
                    if not request.url.startswith((demo_url, "data:", "blob:"))
                    else None
                ),
            )
            page.goto(demo_url + "/")
            page.locator("#mae-phone img").wait_for()
            page.locator("#mae-base-url").locator("input, textarea").fill(server.base_url)
            page.locator("#mae-model").locator("input, textarea").fill(MODEL)
            page.locator("#mae-evolve input").check()
            page.get_by_text("Working memory (plan, progress, notes)").click()
            page.locator("#mae-task textarea").fill("Write a note and send it")
            page.locator("#mae-run").click()

            approval = page.locator("#mae-approval-text")
            expect(approval).to_contain_text("Approve this action?", timeout=TIMEOUT_MS)
            expect(approval).to_contain_text('<img src="')  # the payload, as letters
            expect(page.locator("#mae-working")).to_contain_text("![m](")
            no_payload_in_page(page, leak.url)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "payloads-approval.png"), full_page=True)
            page.locator("#mae-approve").click()

            status = page.locator("#mae-status")
            expect(status).to_contain_text("Finished", timeout=TIMEOUT_MS)
            expect(status).to_contain_text("Self-evolution", timeout=TIMEOUT_MS)
            timeline = page.locator("#mae-timeline")
            for field in ("thought", "plan", "subgoal", "opthought", "opdesc", "progress", "notes"):
                expect(timeline).to_contain_text(f"bold-{field}")  # shown, as text
            expect(page.locator("#mae-working")).to_contain_text("bold-notes2")
            no_payload_in_page(page, leak.url)
            page.wait_for_timeout(1500)  # give a late image load the time to show up
            page.screenshot(path=str(ARTIFACTS / "payloads-done.png"), full_page=True)
            browser.close()
    finally:
        leak.close()
    assert leak.hits == []
    assert outside == []
