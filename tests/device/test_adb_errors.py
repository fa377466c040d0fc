"""Every way a phone can be unusable raises a ``DeviceError`` whose message says what to do."""

from __future__ import annotations

import pytest
from adb_replay import SERIAL, FakeClock, Replay, fixture, usb_phone
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from mae.device import adb_exec
from mae.device.adb import AdbDevice, attached_serials, list_devices
from mae.device.adb_devices import is_network_serial, parse_devices
from mae.errors import DeviceError

WIFI = "192.168.1.57:5555"


def install(monkeypatch: pytest.MonkeyPatch, replay: Replay) -> Replay:
    monkeypatch.setattr(adb_exec, "_exec", replay)
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    return replay


def devices(monkeypatch: pytest.MonkeyPatch, *outputs: str) -> Replay:
    return install(monkeypatch, Replay().on("devices -l", *outputs))


def test_parse_devices_reads_every_state() -> None:
    listed = parse_devices(
        fixture("devices_two.txt")
        + fixture("devices_unauthorized.txt")
        + fixture("devices_no_permissions.txt")
    )
    assert [(d.serial, d.state) for d in listed] == [
        ("2B161FDH2002X4", "device"),
        (WIFI, "device"),
        ("R5CW30ABCDE", "unauthorized"),
        ("R5CW30ABCDE", "no permissions"),
    ]
    assert listed[0].model == "Pixel 7" and listed[0].transport == "usb"
    assert listed[1].transport == "wifi"


def test_network_serials() -> None:
    assert is_network_serial(WIFI) and is_network_serial("localhost:5037")
    assert not is_network_serial("emulator-5554") and not is_network_serial(SERIAL)


def test_no_device(monkeypatch: pytest.MonkeyPatch) -> None:
    devices(monkeypatch, fixture("devices_none.txt"))
    with pytest.raises(DeviceError) as info:
        AdbDevice()
    message = str(info.value)
    assert "no Android phone is attached" in message
    assert "USB debugging" in message and "--device virtual" in message


def test_several_devices_and_no_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    devices(monkeypatch, fixture("devices_two.txt"))
    with pytest.raises(
        DeviceError, match=rf"several phones are attached \({SERIAL}, {WIFI}\).*--device SERIAL"
    ):
        AdbDevice()


def test_several_devices_with_a_serial_picks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    devices(monkeypatch, fixture("devices_two.txt"))
    assert AdbDevice(WIFI).serial == WIFI


def test_android_serial_environment_variable_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    devices(monkeypatch, fixture("devices_two.txt"))
    monkeypatch.setenv("ANDROID_SERIAL", SERIAL)
    assert AdbDevice().serial == SERIAL


def test_unauthorized(monkeypatch: pytest.MonkeyPatch) -> None:
    devices(monkeypatch, fixture("devices_unauthorized.txt"))
    for serial in (None, "R5CW30ABCDE"):
        with pytest.raises(DeviceError) as info:
            AdbDevice(serial)
        assert "Allow USB debugging" in str(info.value) and "RSA" in str(info.value)


def test_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    devices(monkeypatch, fixture("devices_offline.txt"))
    with pytest.raises(DeviceError, match="offline: unplug and replug"):
        AdbDevice()


def test_no_usb_permissions(monkeypatch: pytest.MonkeyPatch) -> None:
    devices(monkeypatch, fixture("devices_no_permissions.txt"))
    with pytest.raises(DeviceError, match="udev"):
        AdbDevice()


def test_unknown_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    devices(monkeypatch, fixture("devices_one_usb.txt"))
    with pytest.raises(DeviceError, match=rf"no phone with serial 'ZX1' is attached \(attached: {SERIAL}\)"):
        AdbDevice("ZX1")


def test_wifi_serial_connects_first(monkeypatch: pytest.MonkeyPatch) -> None:
    replay = install(
        monkeypatch,
        Replay()
        .on("devices -l", fixture("devices_none.txt"), fixture("devices_wifi.txt"))
        .on(f"connect {WIFI}", fixture("connect_ok.txt")),
    )
    assert AdbDevice(WIFI).serial == WIFI
    assert replay.lines == ["devices -l", f"connect {WIFI}", "devices -l"]


def test_offline_wifi_serial_is_reconnected_and_a_refusal_explains_wireless_debugging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    install(
        monkeypatch,
        Replay()
        .on("devices -l", fixture("devices_offline.txt"))
        .on("connect", fixture("connect_refused.txt")),
    )
    with pytest.raises(DeviceError) as info:
        AdbDevice(WIFI)
    message = str(info.value)
    assert "Connection refused" in message and "Wireless debugging" in message and "adb pair" in message


def test_wifi_authentication_failure_is_unauthorized(monkeypatch: pytest.MonkeyPatch) -> None:
    install(
        monkeypatch,
        Replay()
        .on("devices -l", fixture("devices_none.txt"))
        .on("connect", fixture("connect_unauthenticated.txt")),
    )
    with pytest.raises(DeviceError, match="Allow USB debugging"):
        AdbDevice(WIFI)


def test_adb_server_not_reachable(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = AdbConnectionError("connect to adb server failed: [Errno 111] Connection refused")
    devices(monkeypatch, refused)
    with pytest.raises(DeviceError) as info:
        AdbDevice()
    assert "cannot reach the adb server at" in str(info.value) and "adb start-server" in str(info.value)
    with pytest.raises(DeviceError, match="adb server"):
        list_devices()
    assert attached_serials() == []


def test_attached_serials_lists_only_ready_phones(monkeypatch: pytest.MonkeyPatch) -> None:
    devices(monkeypatch, fixture("devices_two.txt") + fixture("devices_unauthorized.txt"))
    assert attached_serials() == [SERIAL, WIFI]


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (EOFError("Expected 5 bytes, got 0"), "lost the connection to 2B161FDH2002X4 in the middle of"),
        (ConnectionResetError(104, "Connection reset by peer"), "lost the connection"),
        (BrokenPipeError(32, "Broken pipe"), "lost the connection"),
        (AdbError(f"device '{SERIAL}' not found"), "is not attached any more"),
        (AdbTimeout("adb read timeout"), "did not answer within 20 s"),
        (TimeoutError("timed out"), "did not answer"),
        (AdbError("device offline"), "offline: unplug and replug"),
        (
            AdbError(
                "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\n"
                "Try 'adb kill-server' if that seems wrong.\n"
                "Otherwise check for a confirmation dialog on your device."
            ),
            "Allow USB debugging",
        ),
        (
            AdbConnectionError("connect to adb server failed: [Errno 111] Connection refused"),
            "adb start-server",
        ),
        (AdbError("closed"), "lost the connection"),
    ],
)
def test_failures_in_the_middle_of_a_command(
    monkeypatch: pytest.MonkeyPatch, raised: BaseException, expected: str
) -> None:
    clock = FakeClock()
    replay = install(monkeypatch, usb_phone(clock))
    device = AdbDevice(SERIAL, clock=clock, sleep=clock.sleep)
    replay.on("shell input tap", raised)
    with pytest.raises(DeviceError) as info:
        device.tap(540, 1200)
    assert expected in str(info.value)
    assert isinstance(info.value.__cause__, type(raised))


def test_the_failing_command_is_named_as_a_user_could_type_it(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    replay = install(monkeypatch, usb_phone(clock))
    device = AdbDevice(SERIAL, clock=clock, sleep=clock.sleep)
    replay.on("shell input text", EOFError())
    with pytest.raises(DeviceError) as info:
        device.type_text("a b")
    assert f"adb -s {SERIAL} shell 'input text '\"'\"'a%sb'\"'\"''" in str(info.value)
