"""``python -m mae device {list,screenshot,do}`` on a replayed phone (in process)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from adb_replay import SERIAL, Replay, fixture, png_bytes, usb_phone
from adbutils.errors import AdbConnectionError
from PIL import Image

from mae.cli import device_cmd
from mae.device import adb_exec
from mae.device.adb_screen import encode_raw
from mae.errors import ActionError


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="mae")
    device_cmd.register(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return int(args.func(args))


def screen() -> Image.Image:
    return Image.new("RGB", (108, 240), (10, 200, 120))


@pytest.fixture
def phone(monkeypatch: pytest.MonkeyPatch) -> Replay:
    replay = usb_phone()
    replay.on("exec-out screencap", encode_raw(screen()))
    replay.on("exec-out screencap -p", png_bytes(screen()))
    monkeypatch.setattr(adb_exec, "_exec", replay)
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    return replay


def test_list_shows_phones_states_advice_and_virtual(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    listing = fixture("devices_two.txt") + fixture("devices_unauthorized.txt")
    monkeypatch.setattr(adb_exec, "_exec", Replay().on("devices -l", listing))
    assert run("device", "list") == 0
    out = capsys.readouterr().out
    assert f"{SERIAL}     device        Pixel 7, usb" in out
    assert "192.168.1.57:5555  device        SM S918B, wifi" in out
    assert "R5CW30ABCDE" in out and "Allow USB debugging" in out
    assert "virtual" in out


def test_list_without_adb_server_is_helpful_and_succeeds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = AdbConnectionError("connect to adb server failed: nothing listens on 127.0.0.1:5037")
    monkeypatch.setattr(adb_exec, "_exec", Replay().on("devices -l", refused))
    assert run("device", "list") == 0
    out = capsys.readouterr().out
    assert "cannot reach the adb server" in out and "virtual" in out


def test_list_with_no_phone_says_how_to_attach_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(adb_exec, "_exec", Replay().on("devices -l", fixture("devices_none.txt")))
    assert run("device", "list") == 0
    assert "none attached" in capsys.readouterr().out


def test_screenshot_writes_the_file(
    phone: Replay, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "shots" / "screen.png"
    assert run("device", "screenshot", "--device", SERIAL, "-o", str(target)) == 0
    with Image.open(target) as saved:
        assert saved.size == (108, 240)
        assert saved.convert("RGB").getpixel((5, 5)) == (10, 200, 120)
    assert "measured: png" in capsys.readouterr().out


def test_do_runs_one_operation_and_settles(phone: Replay, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("device", "do", "--device", SERIAL, "Tap(540, 1200)") == 0
    assert "input tap 540 1200" in phone.shell
    assert "settled in" in capsys.readouterr().out


def test_do_types_text(phone: Replay) -> None:
    assert run("device", "do", "--device", SERIAL, 'Type("late-night Korean food")') == 0
    assert "input text 'late-night%sKorean%sfood'" in phone.shell


def test_do_the_initial_shortcut(phone: Replay) -> None:
    assert run("device", "do", "--device", SERIAL, 'Tap_Type_and_Enter(540, 300, "ninja air fryer")') == 0
    assert [c for c in phone.shell if c.startswith("input")] == [
        "input tap 540 300",
        "input text 'ninja%sair%sfryer'",
        "input keyevent 66",
    ]


def test_do_rejects_off_screen_coordinates(phone: Replay) -> None:
    with pytest.raises(ActionError, match="off screen"):
        run("device", "do", "--device", SERIAL, "Tap(5000, 10)")
    assert not any(c.startswith("input") for c in phone.shell)


def test_do_saves_the_settled_screen(phone: Replay, tmp_path: Path) -> None:
    target = tmp_path / "after.png"
    assert run("device", "do", "--device", SERIAL, "Back()", "--screenshot", str(target)) == 0
    assert target.exists()
    assert "input keyevent 4" in phone.shell
