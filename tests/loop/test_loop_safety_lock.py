"""The sensitive-action policy, the per-device lock (in-process and across processes), annotations."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image

from mae.actions.annotate import annotate
from mae.actions.registry import ActionCall, make_atomic
from mae.actions.safety import SafetyPolicy, SensitiveRule
from mae.device.lock import DeviceLock, device_busy
from mae.errors import DeviceBusyError


def check(policy: SafetyPolicy, name: str, arguments: dict[str, Any], description: str) -> str | None:
    return policy.check(
        ActionCall(name=name, arguments=arguments), [make_atomic(name, arguments)], description
    )


@pytest.mark.parametrize(
    ("name", "arguments", "description", "kind"),
    [
        ("Tap", {"x": 1, "y": 1}, "Tap 'Place your order' to pay", "payment"),
        ("Tap", {"x": 1, "y": 1}, "Tap Buy Now", "purchase"),
        ("Tap", {"x": 1, "y": 1}, "Tap the send button to send the message", "sending a message"),
        ("Tap", {"x": 1, "y": 1}, "Delete the old note", "deleting"),
        ("Tap", {"x": 1, "y": 1}, "Tap Install to get the app", "installing"),
        ("Tap", {"x": 1, "y": 1}, "Tap Sign in with Google", "account change"),
        ("Type", {"text": "4111 1111 1111 1111"}, "Enter the number", "card number"),
    ],
)
def test_loop_safety_flags_sensitive_actions(
    name: str, arguments: dict[str, Any], description: str, kind: str
) -> None:
    reason = check(SafetyPolicy(), name, arguments, description)
    assert reason is not None and reason.startswith(kind)


@pytest.mark.parametrize(
    "description",
    [
        "Open Amazon to search for the air fryer",
        "Tap the search box",
        "Scroll down to see more results",
        "Add the controller to the cart",
        "Type the price into the new note",
    ],
)
def test_loop_safety_leaves_ordinary_actions_alone(description: str) -> None:
    assert check(SafetyPolicy(), "Tap", {"x": 1, "y": 1}, description) is None


def test_loop_safety_is_configurable() -> None:
    assert check(SafetyPolicy(rules=[]), "Tap", {"x": 1, "y": 1}, "Pay now") is None
    custom = SafetyPolicy(rules=[SensitiveRule(name="maps", pattern=r"maps", fields=["app"])])
    assert check(custom, "Open_App", {"app_name": "Maps"}, "Open it") == "maps: 'Maps' in the app name"
    with pytest.raises(ValueError, match="invalid regex"):
        SensitiveRule(name="bad", pattern="(")


def test_loop_lock_in_process() -> None:
    device = SimpleNamespace(name="serial-in-process-test")
    with DeviceLock(device, owner="task one"):
        assert device_busy(device)
        with pytest.raises(DeviceBusyError, match="task one"):
            DeviceLock(device, owner="task two").acquire()
    assert not device_busy(device)
    with DeviceLock(device):
        pass


def test_loop_virtual_phones_are_locked_per_object() -> None:
    first, second = SimpleNamespace(name="virtual"), SimpleNamespace(name="virtual")
    with DeviceLock(first), DeviceLock(second), pytest.raises(DeviceBusyError):
        DeviceLock(first).acquire()


def test_loop_lock_across_processes() -> None:
    holder = textwrap.dedent(
        """
        import sys, time
        from types import SimpleNamespace
        from mae.device.lock import DeviceLock
        with DeviceLock(SimpleNamespace(name="serial-cross-process-test"), owner="other run"):
            print("locked", flush=True)
            sys.stdin.readline()
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "locked"
        with pytest.raises(DeviceBusyError, match=rf"pid {process.pid} \(other run\)"):
            DeviceLock(SimpleNamespace(name="serial-cross-process-test")).acquire()
    finally:
        assert process.stdin is not None
        process.stdin.write("\n")
        process.stdin.close()
        process.wait(timeout=10)
    with DeviceLock(SimpleNamespace(name="serial-cross-process-test")):
        pass


def test_loop_annotate_draws_without_touching_the_input() -> None:
    image = Image.new("RGB", (1080, 2340), "white")
    tap = annotate(image, [make_atomic("Tap", {"x": 540, "y": 1200})], "1: Tap(540, 1200)")
    assert image.getpixel((540, 1200)) == (255, 255, 255)
    assert tap.getpixel((540, 1200)) != (255, 255, 255) and tap.getpixel((5, 5)) != (255, 255, 255)
    swipe = annotate(image, [make_atomic("Swipe", {"x1": 540, "y1": 1500, "x2": 540, "y2": 500})])
    assert swipe.getpixel((540, 1000)) != (255, 255, 255)
    typed = annotate(image, [make_atomic("Type", {"text": "hello"})])
    assert typed.getpixel((5, 2300)) != (255, 255, 255) and typed.size == image.size
