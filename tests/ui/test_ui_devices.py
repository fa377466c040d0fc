"""Device picker, shared device pool, click-to-tap mapping and manual control."""

from __future__ import annotations

import pytest

from mae.device.lock import DeviceLock
from mae.device.virtual import VirtualPhone
from mae.errors import ActionError, DeviceBusyError
from mae.ui.devices import (
    DevicePool,
    attached,
    default_device,
    device_choices,
    display_image,
    display_size,
    manual_action,
    to_screen,
)


def test_picker_lists_attached_phones_and_the_virtual_one() -> None:
    assert device_choices([]) == [("Virtual phone (built in)", "virtual")]
    assert device_choices(["R58M"])[0] == ("ADB phone R58M", "R58M")
    assert default_device([]) == "virtual"
    assert default_device(["R58M", "emulator-5554"]) == "R58M"
    assert default_device(["R58M"], preferred="virtual") == "virtual"

    def broken() -> list[str]:
        raise OSError("no adb")

    assert attached(broken) == []
    assert attached(lambda: ["a"]) == ["a"]


def test_clicks_on_the_scaled_view_map_to_screen_pixels() -> None:
    shown = display_image(VirtualPhone().screenshot()).size
    assert shown == display_size((1080, 2340)) == (540, 1170)
    assert display_size((480, 800)) == (480, 800)  # never enlarged
    assert to_screen([270, 585], shown, (1080, 2340)) == (540, 1170)
    assert to_screen((0, 0), shown, (1080, 2340)) == (0, 0)
    assert to_screen([539, 1169], shown, (1080, 2340)) == (1078, 2338)
    with pytest.raises(ValueError):
        to_screen([600, 10], shown, (1080, 2340))
    with pytest.raises(ValueError):
        to_screen(None, shown, (1080, 2340))


def test_pool_opens_each_device_once() -> None:
    opened: list[str] = []

    def opener(name: str) -> VirtualPhone:
        opened.append(name)
        return VirtualPhone()

    pool = DevicePool(opener)
    assert pool.get("virtual") is pool.get("virtual")
    assert opened == ["virtual"]
    assert not pool.busy("virtual") and not pool.busy("other")
    with DeviceLock(pool.get("virtual")):
        assert pool.busy("virtual")
    pool.forget("virtual")
    pool.get("virtual")
    assert opened == ["virtual", "virtual"]
    pool.close()


def test_manual_control_operates_the_phone_unless_a_run_holds_it() -> None:
    phone = VirtualPhone()
    center = next(e.center for e in phone.ground_truth() if e.text == "Notes")
    screen = manual_action(phone, "Tap", {"x": center[0], "y": center[1]})
    assert phone.current_app is not None and phone.current_app.label == "Notes"
    assert screen.size == (1080, 2340)
    manual_action(phone, "Home")
    assert phone.screen_name == "home"
    with DeviceLock(phone, owner="a run"), pytest.raises(DeviceBusyError, match="press Stop"):
        manual_action(phone, "Back")
    with pytest.raises(ActionError):
        manual_action(phone, "Tap", {"x": 5000, "y": 1})
