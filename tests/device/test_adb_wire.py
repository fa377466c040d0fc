"""The real ``_exec`` and ``AdbDevice`` over a socket, against a fake adb server speaking the wire
protocol: nothing is monkeypatched except where the adb server lives."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_adb_server import FakeAdb, start
from PIL import Image

from mae.device import adb_exec
from mae.device.adb import AdbDevice, list_devices
from mae.device.adb_screen import encode_raw
from mae.errors import DeviceError


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAdb]:
    fake = FakeAdb()
    server, port = start(fake)
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    monkeypatch.setenv("MAE_ADB_AUTOSTART", "0")
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    adb_exec._devices.clear()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        adb_exec._devices.clear()


def test_devices_shell_and_exec_out_over_the_wire(fake: FakeAdb) -> None:
    image = Image.new("RGB", (64, 128), (12, 34, 56))
    fake.shell["wm size"] = b"Physical size: 64x128\n"
    fake.shell["input text 'a%sb'"] = b""
    fake.exec["screencap"] = encode_raw(image)
    [info] = list_devices()
    assert (info.serial, info.state, info.model) == ("FAKE123", "device", "Fake Phone")
    device = AdbDevice(screenshot_method="raw")
    assert device.screen_size() == (64, 128)
    device.type_text("a b")
    shot = device.screenshot()
    assert shot.size == (64, 128) and shot.getpixel((3, 3)) == (12, 34, 56)
    assert "shell,v2:input text 'a%sb'" in fake.received
    assert "exec:screencap" in fake.received


def test_binary_output_is_not_mangled(fake: FakeAdb) -> None:
    payload = bytes(range(256)) * 64 + b"\r\n\n\r"
    fake.exec["screencap -p"] = payload
    data = adb_exec.run_adb(["-s", "FAKE123", "exec-out", "screencap -p"], binary=True)
    assert data == payload


def test_connection_dropped_mid_shell_command_is_a_device_error(fake: FakeAdb) -> None:
    fake.shell["dumpsys input_method"] = b"x" * 5000
    fake.drop_after["dumpsys input_method"] = 2000
    device = AdbDevice("FAKE123")
    with pytest.raises(DeviceError, match="lost the connection to FAKE123 in the middle of"):
        device.keyboard_active()


def test_truncated_screencap_then_phone_gone_is_a_device_error(fake: FakeAdb) -> None:
    full = encode_raw(Image.new("RGB", (64, 128)))
    fake.exec["screencap"] = full
    fake.drop_after["screencap"] = len(full) // 3
    device = AdbDevice("FAKE123", screenshot_method="raw")
    fake.serial = "GONE"  # the phone vanishes: get-state now fails like a real server
    with pytest.raises(DeviceError, match="not attached any more"):
        device.screenshot()


def test_wifi_connect_over_the_wire(fake: FakeAdb) -> None:
    fake.devices = ""
    with pytest.raises(DeviceError, match=r"no phone with serial '10\.0\.0\.7:5555'"):
        AdbDevice("10.0.0.7:5555")  # the fake says "connected" but never lists it
    assert "host:connect:10.0.0.7:5555" in fake.received


def test_connection_reset_mid_screencap_is_a_device_error(fake: FakeAdb) -> None:
    full = encode_raw(Image.new("RGB", (64, 128)))
    fake.exec["screencap"] = full
    fake.reset_after["screencap"] = len(full) // 3
    device = AdbDevice("FAKE123", screenshot_method="raw")
    with pytest.raises(DeviceError, match="FAKE123"):
        device.screenshot()


def test_connection_reset_mid_shell_command_is_a_device_error(fake: FakeAdb) -> None:
    fake.shell["dumpsys input_method"] = b"x" * 5000
    fake.reset_after["dumpsys input_method"] = 100
    with pytest.raises(DeviceError, match="FAKE123"):
        AdbDevice("FAKE123").keyboard_active()


def _png(width: int, height: int) -> bytes:
    import io

    buffer = io.BytesIO()
    Image.new("L", (width, height)).save(buffer, "PNG", optimize=True)
    return buffer.getvalue()


@pytest.mark.parametrize("side", [9000, 20000])
def test_a_huge_screenshot_is_a_device_error_before_it_is_decoded(fake: FakeAdb, side: int) -> None:
    fake.exec["screencap -p"] = _png(side, side)
    device = AdbDevice("FAKE123", screenshot_method="png")
    with pytest.raises(DeviceError, match=f"{side}x{side}.*million pixels"):
        device.screenshot()


def test_a_huge_raw_screenshot_is_a_device_error(fake: FakeAdb) -> None:
    import struct

    fake.exec["screencap"] = struct.pack("<IIII", 9000, 9000, 1, 0) + b"\0" * 64
    device = AdbDevice("FAKE123", screenshot_method="raw")
    with pytest.raises(DeviceError, match=r"9000x9000.*million pixels"):
        device.screenshot()
