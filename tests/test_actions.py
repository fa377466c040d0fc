"""The action space: parsing, validation, Shortcut expansion and checks."""

from __future__ import annotations

import pytest

from mae.actions.reading import parse_action_text
from mae.actions.registry import (
    ATOMIC_ACTIONS,
    INITIAL_SHORTCUTS,
    ActionCall,
    Shortcut,
    ShortcutStep,
    Tap,
    Type,
    describe_atomic_actions,
    make_atomic,
    resolve_call,
)
from mae.errors import ActionError


def test_registry_has_the_nine_paper_operations() -> None:
    assert list(ATOMIC_ACTIONS) == [
        "Open_App", "Tap", "Swipe", "Type", "Enter", "Switch_App", "Back", "Home", "Wait",
    ]  # fmt: skip
    text = describe_atomic_actions()
    assert all(f"- {cls.signature}:" in text for cls in ATOMIC_ACTIONS.values())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"name": "Tap", "arguments": {"x": 10, "y": 20}}',
            ActionCall(name="Tap", arguments={"x": 10, "y": 20}),
        ),
        ('```json\n{"name": "Back", "arguments": {}}\n```', ActionCall(name="Back")),
        ('{"name": "Home"}', ActionCall(name="Home")),
        ("Tap(540, 1200)", ActionCall(name="Tap", arguments={"x": 540, "y": 1200})),
        ('Type("a, b (c)")', ActionCall(name="Type", arguments={"text": "a, b (c)"})),
        ("Open_App(app_name='Notes')", ActionCall(name="Open_App", arguments={"app_name": "Notes"})),
        ("Enter()", ActionCall(name="Enter")),
        (
            '{"name": "Tap", "arguments": [540, 1200]}',
            ActionCall(name="Tap", arguments={"x": 540, "y": 1200}),
        ),
        ("Type(hello world)", ActionCall(name="Type", arguments={"text": "hello world"})),
        (
            '{"name": "Tap", "arguments": {"x": "540px", "y": "1200 px"}}',
            ActionCall(name="Tap", arguments={"x": 540, "y": 1200}),
        ),
        ('{"name":\u00a0"Back",\u00a0"arguments":\u00a0{}}', ActionCall(name="Back")),
    ],
)
def test_parse_action_text(text: str, expected: ActionCall) -> None:
    assert parse_action_text(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"name": "Tap", "arguments": {"x": 1,}', "not valid JSON"),
        ('{"arguments": {}}', '"name"'),
        ('{"name": "Tap", "arguments": [{"x": 1, "y": 2}]}', '"arguments" must be'),
        ('{"name": "Tap", "arguments": [1, 2, 3]}', "takes 2 arguments"),
        ("Type(text)", "cannot read the arguments"),
        ("tap the button", "write the action as JSON"),
        ("Tap(540, y=)", "cannot read the arguments"),
        ("Tap(1, 2, 3)", "takes 2 arguments"),
    ],
)
def test_parse_errors_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ActionError, match=message):
        parse_action_text(text)


def test_make_atomic_validates_arguments() -> None:
    assert make_atomic("Tap", {"x": 1, "y": 2}) == Tap(x=1, y=2)
    with pytest.raises(ActionError, match="y: Field required"):
        make_atomic("Tap", {"x": 1})
    with pytest.raises(ActionError, match="unknown action 'Click'"):
        make_atomic("Click", {})
    with pytest.raises(ActionError, match="Extra inputs"):
        make_atomic("Back", {"x": 1})


def test_resolve_call_checks_the_screen_bounds() -> None:
    call = ActionCall(name="Tap", arguments={"x": 1080, "y": 100})
    with pytest.raises(ActionError, match="off screen"):
        resolve_call(call, {}, screen=(1080, 2340))
    assert resolve_call(ActionCall(name="Tap", arguments={"x": 1079, "y": 0}), {}, (1080, 2340)) == [
        Tap(x=1079, y=0)
    ]


def test_initial_shortcut_expands_to_tap_type_enter() -> None:
    shortcut = INITIAL_SHORTCUTS["Tap_Type_and_Enter"]
    assert shortcut.problems() == []
    steps = resolve_call(
        ActionCall(name="Tap_Type_and_Enter", arguments={"x": 5, "y": 6, "text": "air fryer"}),
        INITIAL_SHORTCUTS,
        (1080, 2340),
    )
    assert [str(s) for s in steps] == ["Tap(5, 6)", 'Type("air fryer")', "Enter()"]
    positional = parse_action_text('Tap_Type_and_Enter(5, 6, "x")')
    assert resolve_call(positional, INITIAL_SHORTCUTS)[1] == Type(text="x")


def test_shortcut_call_with_missing_arguments_is_refused() -> None:
    with pytest.raises(ActionError, match="missing text"):
        resolve_call(ActionCall(name="Tap_Type_and_Enter", arguments={"x": 1, "y": 2}), INITIAL_SHORTCUTS)


def test_shortcut_problems_are_listed() -> None:
    bad = Shortcut(
        name="Broken",
        arguments=["x", "unused"],
        atomic_action_sequence=[
            ShortcutStep(name="Tap", arguments_map={"x": "x"}),
            ShortcutStep(name="Fly", arguments_map={}),
            ShortcutStep(name="Type", arguments_map={"text": 5}),
            ShortcutStep(name="Swipe", arguments_map={"x1": 1, "y1": 2, "x2": 3, "y2": "down"}),
        ],
    )
    problems = "\n".join(bad.problems())
    assert "Tap argument 'y' is not mapped" in problems
    assert "unknown operation 'Fly'" in problems
    assert "Type.text = 5" in problems
    assert "Swipe.y2 = 'down'" in problems
    assert "argument 'unused' is never used" in problems
    with pytest.raises(ActionError):
        bad.validate_usable()


def test_shortcut_name_rules() -> None:
    with pytest.raises(ValueError):
        Shortcut(name="Tap", atomic_action_sequence=[ShortcutStep(name="Back")])
    with pytest.raises(ValueError):
        Shortcut(name="has space", atomic_action_sequence=[ShortcutStep(name="Back")])


def test_the_action_layer_reads_without_the_agents() -> None:
    """The action layer sits below the agents: reading an action imports nothing from ``mae.agents``."""
    import subprocess
    import sys

    code = (
        "import sys, mae.actions.registry, mae.actions.reading, mae.actions.reply_text; "
        "print(sorted(m for m in sys.modules if m.startswith('mae.agents')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
