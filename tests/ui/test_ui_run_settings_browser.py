"""The run form's settings in a real browser: a preset without its key, the phone check shown only for
ADB phones, the parallel Notetaker, and a reasoning model that refuses ``max_tokens`` and ``temperature``."""

from __future__ import annotations

import re

import pytest
from test_ui_browser import (  # noqa: F401  (module fixtures reused: browser, demo_server, page)
    CHROMIUM,
    TASK,
    TIMEOUT_MS,
    browser,
    demo_server,
    maps_search_script,
    page,
    shot,
    start_run,
)
from ui_testkit import two_step_script

from mae.testing.fake_model_server import FakeModelServer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def test_a_preset_without_its_key_says_where_to_put_it(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import expect

    tab = request.getfixturevalue("page")

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    tab.locator("#mae-backbone input").click()  # type: ignore[attr-defined]
    tab.get_by_role("option", name=re.compile("Anthropic")).click()  # type: ignore[attr-defined]
    tab.locator("#mae-task textarea").fill("Open Notes")  # type: ignore[attr-defined]
    tab.locator("#mae-run").click()  # type: ignore[attr-defined]
    status = tab.locator("#mae-status")
    expect(status).to_contain_text(
        "Cannot start: No API key: enter it under “Per-agent models, API keys and safety”, or set "
        "ANTHROPIC_API_KEY on the server."
    )
    expect(tab.locator("#mae-run")).to_be_enabled()  # nothing started
    shot(tab, "missing-key")


def test_the_phone_check_is_hidden_while_the_virtual_phone_is_picked(request: pytest.FixtureRequest) -> None:
    from playwright.sync_api import expect

    tab = request.getfixturevalue("page")

    expect(tab.locator("#mae-phone-doctor")).to_be_hidden()  # type: ignore[attr-defined]
    expect(tab.locator("#mae-phone-doctor-report")).to_be_hidden()  # type: ignore[attr-defined]
    expect(tab.locator("#mae-doctor")).to_be_visible()  # type: ignore[attr-defined]
    shot(tab, "no-phone-check-on-virtual")


def test_parallel_notetaker_checkbox_runs_a_task(request: pytest.FixtureRequest) -> None:
    from playwright.sync_api import expect

    tab = request.getfixturevalue("page")

    tab.locator("#mae-advanced").get_by_text("Per-agent models").click()  # type: ignore[attr-defined]
    box = tab.locator("#mae-parallel-notetaker input")  # type: ignore[attr-defined]
    expect(box).not_to_be_checked()  # the paper's order by default
    box.check()
    expect(tab.locator("#mae-parallel-notetaker")).to_contain_text("not the paper's order")
    shot(tab, "parallel-notetaker")
    script = maps_search_script()
    with FakeModelServer() as server:
        script.load(server)
        tab.locator("#mae-evolve input").uncheck()  # type: ignore[attr-defined]
        start_run(tab, server, TASK)
        status = tab.locator("#mae-status")
        expect(status).to_contain_text("Finished", timeout=TIMEOUT_MS)
        roles = [request.role for request in server.requests]
    assert roles.count("notetaker") == roles.count("reflector") >= 1


def test_a_task_runs_through_the_demo_on_a_reasoning_model(request: pytest.FixtureRequest) -> None:
    """A model that refuses ``max_tokens`` and ``temperature`` (OpenAI's reasoning models, issue 44):
    the first call adapts, the run finishes, and no later request repeats the refused parameters."""
    from playwright.sync_api import expect

    tab = request.getfixturevalue("page")

    with FakeModelServer(reasoning=True) as server:
        two_step_script().load(server)
        start_run(tab, server, "Open Notes, then go back to the home screen")
        expect(tab.locator("#mae-status")).to_contain_text("Finished", timeout=TIMEOUT_MS)
        server.assert_done()
    assert len(server.refused) == 2
    answered = [r for r in server.requests if r not in server.refused]
    assert answered and all("max_tokens" not in r.body and "temperature" not in r.body for r in answered)
