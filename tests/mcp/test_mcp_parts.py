"""The MCP server's parts without a transport: image spaces, the action reader, progress lines, errors."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult
from pydantic import BaseModel, ValidationError

from mae.config import load_settings
from mae.errors import ActionError, ConfigError, DeviceError
from mae.llm.keys import set_key_place
from mae.mcp.jobs import Ended, Progress, RunJob, settings_for_run
from mae.mcp.phones import Phones, image_space, mapper_for
from mae.mcp.server import MaeTools, ServerOptions, build_server, friendly_validation, read_action
from mae.run.events import Event


def test_image_space_scales_the_long_side_and_maps_back() -> None:
    space = image_space((1080, 2340), 1280)
    assert (space.image_width, space.image_height) == (591, 1280)
    assert "591x1280 image" in space.text() and "scaled by 0.547" in space.text()
    mapper = mapper_for(space)
    x, y = mapper.to_screen(*mapper.to_model(540, 1170))
    assert abs(x - 540) <= 1 and abs(y - 1170) <= 1  # one image pixel is about two screen pixels
    assert image_space((1080, 2340), 0).scale == 1.0  # screen pixels
    assert image_space((720, 1280), 4096).scale == 1.0  # never enlarged
    for bad in (-1, 10, 5000):
        with pytest.raises(ConfigError, match="max_side must be between"):
            image_space((1080, 2340), bad)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("Open_App(Notes)", 'Open_App("Notes")'),
        ("```\nTap(10, 20)\n```", "Tap(10, 20)"),
        ("I will go back now: Back()", "Back()"),
        ({"name": "Swipe", "arguments": {"x1": 1, "y1": 2, "x2": 3, "y2": 4}}, "Swipe(1, 2, 3, 4)"),
        ('{"action": "click", "coordinate": [5, 6]}', "Tap(5, 6)"),
    ],
)
def test_act_reads_actions_the_way_agents_write_them(written: str | dict[str, object], expected: str) -> None:
    assert str(read_action(written)) == expected


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("", "give one operation"),
        ("please scroll", "cannot read the action"),
        ("Tap_Type_and_Enter(1, 2, 'hi')", "not an atomic operation"),
        ('Tap(1, 2)\nType("x")', "more than one action"),
    ],
)
def test_act_refuses_unreadable_actions_with_a_sentence(written: str, message: str) -> None:
    with pytest.raises(ActionError, match=message):
        read_action(written)


def test_schema_errors_read_as_a_sentence() -> None:
    class Arguments(BaseModel):
        max_side: int

    with pytest.raises(ValidationError) as caught:
        Arguments.model_validate({"max_side": "big"})
    text = friendly_validation("act", caught.value)
    assert text.startswith("the arguments of act do not fit its input schema (max_side: input should be")
    assert "ValidationError" not in text and "pydantic" not in text


def test_unknown_devices_are_named_and_virtual_phones_are_separate() -> None:
    phones = Phones(None, lister=lambda: [])
    assert phones.default_name() == "virtual"
    with pytest.raises(DeviceError, match=r"no device called 'pixel'.*list_devices"):
        phones.get("pixel")
    first, second = phones.get("virtual"), phones.get("virtual-2")
    assert first is not second and phones.get("") is first
    with pytest.raises(DeviceError):
        phones.get("virtual-9")
    listing = phones.listing()
    assert [d.name for d in listing.devices] == ["virtual"] and "virtual-2" in listing.note
    assert (first.name, second.name) == ("virtual", "virtual-2")
    phones.close()


def test_every_answer_names_the_phone_the_caller_chose_and_descriptions_are_dedented() -> None:
    settings = load_settings(None, overrides={"device": "virtual", "perception.icons": "none"})
    tools = MaeTools(settings, ServerOptions(), lister=lambda: [])

    async def calls() -> tuple[list[str], list[CallToolResult]]:
        async with Client(build_server(tools)) as client:
            described = [tool.description or "" for tool in (await client.list_tools()).tools]
            answers = [
                await client.call_tool("screenshot", {"device": "virtual-2", "max_side": 200}),
                await client.call_tool("act", {"device": "virtual-2", "action": "Open_App(Notes)"}),
                await client.call_tool("act", {"device": "virtual-3", "action": "Home()"}),
            ]
            return described, answers

    described, answers = anyio.run(calls)
    tools.close()
    assert described and all(text and "\n " not in text for text in described)
    for result, name in zip(answers, ("virtual-2", "virtual-2", "virtual-3"), strict=True):
        assert not result.is_error
        text = result.content[0].text  # type: ignore[union-attr]
        assert text.startswith(f"{name}:") or f" on {name} " in text, text
        assert (result.structured_content or {}).get("device", name) == name


def test_progress_lines_per_stage_grow_through_the_run() -> None:
    job = RunJob("task", runtime=None, decide=lambda _a, _r: None, use_memory=False)  # type: ignore[arg-type]
    events = [
        Event("run_started", 0, {"max_steps": 40}),
        Event("stage_finished", 1, {"stage": "manager", "result": {"subgoal": "Open Notes"}}),
        Event("action", 1, {"action": 'Open_App("Notes")', "description": "Open the app"}),
        Event("outcome", 1, {"outcome": "C", "error_description": "nothing changed"}),
        Event("stage_finished", 2, {"stage": "manager", "result": {"subgoal": "Finished"}}),
    ]
    for event in events:
        job._on_event(event)
    items = []
    while (item := job.next_item()) is not None:
        assert isinstance(item, Progress)
        items.append(item)
    assert [i.message for i in items] == [
        "step 1: subgoal: Open Notes",
        'step 1: action: Open_App("Notes") (Open the app)',
        "step 1: outcome: C: nothing changed",
        "step 2: subgoal: Finished",
    ]
    assert [i.value for i in items] == [0.2, 0.5, 0.9, 1.2] and {i.total for i in items} == {40.0}


def test_an_unexpected_failure_ends_the_job_with_a_sentence(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug in a run reaches the MCP client as a sentence; the traceback goes to the server's log."""
    job = RunJob("task", runtime=None, decide=lambda _a, _r: None, use_memory=False)  # type: ignore[arg-type]

    def broken() -> None:
        raise KeyError("steps")

    monkeypatch.setattr(job, "_run", broken)
    job.start()
    job._thread.join(60)
    assert isinstance(job.ended, Ended) and job.ended.result is None
    error = job.ended.error or ""
    assert "unexpected problem" in error and "stderr" in error
    assert "KeyError" not in error and "steps" not in error
    assert "KeyError" in caplog.text  # the log keeps what a bug report needs


def test_a_run_takes_the_callers_agent_and_step_limit() -> None:
    settings = load_settings(None, overrides={"device": "virtual"})
    chosen = settings_for_run(settings, "v2", 7)
    assert (chosen.loop.agent, chosen.loop.max_steps) == ("v2", 7)
    assert settings_for_run(settings, None, None) is settings


def test_run_task_without_a_key_in_the_server_env_says_which(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    set_key_place("mcp")  # what `mae mcp` does when it starts
    settings = load_settings(None, overrides={"backbone": "openai", "device": "virtual"})
    tools = MaeTools(settings, ServerOptions())

    async def call() -> CallToolResult:
        async with Client(build_server(tools)) as client:
            return await client.call_tool("run_task", {"task": "Open Notes"})

    result = anyio.run(call)
    tools.close()
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "no API key for openai" in text and "OPENAI_API_KEY" in text and "Traceback" not in text
    assert "MCP client's configuration" in text and "demo" not in text
