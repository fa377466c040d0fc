"""The agent picker in a real browser: a Mobile-Agent-v2 run shows its own agents in the timeline."""

from __future__ import annotations

import json

import pytest
from test_ui_browser import (  # noqa: F401  (module fixtures reused: browser, demo_server, page)
    CHROMIUM,
    TIMEOUT_MS,
    DemoServer,
    browser,
    demo_server,
    page,
    shot,
    start_run,
)

from mae.testing.fake_model_server import FakeModelServer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

OPEN_NOTES = json.dumps({"name": "Open_App", "arguments": {"app_name": "Notes"}})


def decision(action: str, thought: str, memory: str = "None") -> str:
    return (
        f"### Thought ###\n{thought}\n\n### Action ###\n{action}\n\n### Operation ###\n"
        f"Notes opens on its list of notes.\n\n### Memory ###\n{memory}\n"
    )


def test_picking_v2_runs_its_agents_and_locks_self_evolution(request: pytest.FixtureRequest) -> None:
    from playwright.sync_api import expect

    tab = request.getfixturevalue("page")
    server_info: DemoServer = request.getfixturevalue("demo_server")
    picker = tab.locator("#mae-agent")
    expect(picker).to_contain_text("Mobile-Agent-E")
    evolve = tab.locator("#mae-evolve input")
    picker.get_by_label("Mobile-Agent-v2").check()
    expect(picker).to_contain_text("planning, decision and reflection agents")
    expect(evolve).to_be_disabled()
    expect(evolve).not_to_be_checked()
    with FakeModelServer(
        by_role={
            "operator": [
                decision(OPEN_NOTES, "The home screen shows the apps; open Notes directly."),
                decision('{"name": "Stop", "arguments": {}}', "Notes is open: the task is done."),
            ],
            "reflector": ["### Thought ###\nNotes opened as expected.\n\n### Answer ###\nA\n"],
            "manager": ["### Thought ###\nOne step done.\n\n### Completed Contents ###\nNotes is open.\n"],
        }
    ) as server:
        start_run(tab, server, "Open the Notes app")
        status = tab.locator("#mae-status")
        expect(status).to_contain_text("Finished", timeout=TIMEOUT_MS)
        server.assert_done()
    timeline = tab.locator("#mae-timeline")
    first = timeline.locator("#mae-step-1")
    for text in ("Decision Agent", "Reflection Agent", "open Notes directly", "Open_App", "A — successful"):
        expect(first).to_contain_text(text)
    second = timeline.locator("#mae-step-2")
    for text in ("Planning Agent", "Task progress", "Notes is open.", "Decision Agent", "Stop"):
        expect(second).to_contain_text(text)
    expect(timeline).not_to_contain_text("Manager")
    expect(timeline).not_to_contain_text("Notetaker")
    shot(tab, "agent-picker-v2")
    assert server_info.phone.current_app is not None and server_info.phone.current_app.label == "Notes"
    picker.get_by_label("Mobile-Agent-E").check()
    expect(evolve).to_be_enabled()
