"""Screenshots (PNG and raw framebuffer, choosing the faster once) and settling on a still screen."""

from __future__ import annotations

import numpy as np
import pytest
from adb_replay import SERIAL, FakeClock, png_bytes, usb_phone
from adbutils.errors import AdbError
from PIL import Image, ImageDraw

from mae.device import adb_exec
from mae.device.adb import AdbDevice
from mae.device.adb_screen import (
    BGRA_8888,
    RGB_565,
    RGB_888,
    RGBA_8888,
    RGBX_8888,
    ScreencapError,
    decode_png,
    decode_raw,
    encode_raw,
    raw_thumbnail,
)
from mae.device.settle import frames_match, thumbnail, wait_until_stable
from mae.errors import DeviceError


def screen(variant: int = 0, size: tuple[int, int] = (216, 480)) -> Image.Image:
    """A phone-like test screen: status bar, a list of rows, and a variant-dependent banner."""
    image = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, size[0], 20), fill=(20, 20, 20))
    for row in range(8):
        draw.rectangle((10, 40 + row * 50, size[0] - 10, 70 + row * 50), fill=(40 * row % 255, 120, 200))
    draw.rectangle((0, 300 - variant * 40, size[0], 360 - variant * 40), fill=(200, 30 + variant * 50, 30))
    return image


def assert_same(a: Image.Image, b: Image.Image, tolerance: int = 0) -> None:
    assert a.size == b.size
    diff = np.abs(np.asarray(a, dtype=np.int16) - np.asarray(b, dtype=np.int16))
    assert int(diff.max()) <= tolerance


@pytest.mark.parametrize("fmt", [RGBA_8888, RGBX_8888, BGRA_8888, RGB_888])
@pytest.mark.parametrize("header", [16, 12])
def test_raw_framebuffer_decodes_exactly(fmt: int, header: int) -> None:
    image = screen(1)
    assert_same(decode_raw(encode_raw(image, fmt=fmt, header=header)), image)


def test_raw_rgb565_decodes_within_its_precision() -> None:
    image = screen(2)
    assert_same(decode_raw(encode_raw(image, fmt=RGB_565)), image, tolerance=8)


def test_raw_rows_padded_to_the_stride_are_cropped() -> None:
    image = screen(0)
    assert_same(decode_raw(encode_raw(image, header=12, stride=image.width + 24)), image)


def test_truncated_raw_and_broken_png_are_screencap_errors() -> None:
    data = encode_raw(screen())
    with pytest.raises(ScreencapError, match="truncated"):
        decode_raw(data[: len(data) // 2])
    with pytest.raises(ScreencapError, match="did not return a PNG"):
        decode_png(b"/system/bin/sh: screencap: inaccessible or not found\n")
    png = png_bytes(screen())
    with pytest.raises(ScreencapError, match="truncated PNG"):
        decode_png(png[:400])
    with pytest.raises(ScreencapError, match="broken PNG"):
        decode_png(png[:60] + bytes(len(png) - 72) + png[-12:])


def test_raw_thumbnail_samples_the_grey_screen() -> None:
    image = screen(1, size=(1080, 2400))
    fast = raw_thumbnail(encode_raw(image), 96)
    assert fast.shape == (200, 90)  # every 12th pixel: about 96 wide, without decoding the frame
    expected = np.asarray(image.convert("L"), dtype=np.int16)[::12, ::12]
    assert int(np.abs(fast.astype(np.int16) - expected).max()) <= 2


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def test_raw_is_kept_when_it_is_faster(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    # Most recent rule wins, so register raw first and PNG last for the -p form.
    replay = usb_phone(clock)
    replay.on("exec-out screencap", encode_raw(screen()), cost_s=0.25)
    replay.on("exec-out screencap -p", png_bytes(screen()), cost_s=0.9)
    monkeypatch.setattr(adb_exec, "_exec", replay)
    device = AdbDevice(SERIAL, clock=clock, sleep=clock.sleep)
    image = device.screenshot()
    assert_same(image, screen())
    assert device.screenshot_method == "raw"
    assert device.screenshot_timings == {"png": pytest.approx(0.9), "raw": pytest.approx(0.25)}
    device.screenshot()
    shots = [line for line in replay.lines if "screencap" in line]
    assert shots[-1] == f"-s {SERIAL} exec-out screencap"
    assert len(shots) == 5  # png, raw, png, raw to decide (the last one is the first screenshot), raw


def test_png_is_kept_when_raw_is_slower(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    replay = usb_phone(clock)
    replay.on("exec-out screencap", encode_raw(screen()), cost_s=2.5)
    replay.on("exec-out screencap -p", png_bytes(screen()), cost_s=0.6)
    monkeypatch.setattr(adb_exec, "_exec", replay)
    device = AdbDevice(SERIAL, clock=clock, sleep=clock.sleep)
    device.screenshot()
    assert device.screenshot_method == "png"


def test_a_broken_method_is_skipped(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    replay = usb_phone(clock)
    replay.on("exec-out screencap", b"\x00\x01")
    replay.on("exec-out screencap -p", png_bytes(screen()), cost_s=0.6)
    monkeypatch.setattr(adb_exec, "_exec", replay)
    device = AdbDevice(SERIAL, clock=clock, sleep=clock.sleep)
    device.screenshot()
    assert device.screenshot_method == "png"
    assert list(device.screenshot_timings) == ["png"]


def test_truncated_capture_from_a_vanished_phone_is_a_device_error(
    monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    replay = usb_phone(clock)
    full = encode_raw(screen())
    replay.on("exec-out screencap", full[: len(full) - 5000])
    replay.on("get-state", AdbError(f"device '{SERIAL}' not found"))
    monkeypatch.setattr(adb_exec, "_exec", replay)
    device = AdbDevice(SERIAL, screenshot_method="raw", clock=clock, sleep=clock.sleep)
    with pytest.raises(DeviceError, match="not attached any more"):
        device.screenshot()


def test_truncated_png_with_the_phone_still_there_is_a_screencap_error(
    monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    replay = usb_phone(clock)
    replay.on("exec-out screencap -p", png_bytes(screen())[:300])
    monkeypatch.setattr(adb_exec, "_exec", replay)
    device = AdbDevice(SERIAL, screenshot_method="png", clock=clock, sleep=clock.sleep)
    with pytest.raises(ScreencapError, match="truncated PNG"):
        device.screenshot()
    assert replay.lines[-1] == f"-s {SERIAL} get-state"


# -- settling ----------------------------------------------------------------------------------------


def sequence_capture(frames: list[Image.Image], clock: FakeClock, cost_s: float = 0.3):
    thumbs = [thumbnail(frame) for frame in frames]
    calls = {"n": 0}

    def capture() -> np.ndarray:
        clock.now += cost_s
        index = min(calls["n"], len(thumbs) - 1)
        calls["n"] += 1
        return thumbs[index]

    return capture, calls


def test_settle_returns_once_two_frames_in_a_row_match(clock: FakeClock) -> None:
    capture, calls = sequence_capture([screen(0), screen(1), screen(2), screen(3), screen(3)], clock)
    result = wait_until_stable(capture, 5.0, clock=clock, sleep=clock.sleep)
    assert result.stable and result.frames == 5 and calls["n"] == 5
    assert result.seconds == pytest.approx(0.1 + 5 * 0.3 + 4 * 0.05)


def test_settle_gives_up_at_the_cap_on_a_screen_that_keeps_changing(clock: FakeClock) -> None:
    frames = [screen(i % 4) for i in range(200)]
    capture, _ = sequence_capture(frames, clock)
    result = wait_until_stable(capture, 2.0, clock=clock, sleep=clock.sleep)
    assert not result.stable
    assert 2.0 <= result.seconds < 2.0 + 0.4


def test_a_blinking_cursor_does_not_count_as_a_change() -> None:
    base = screen(0, size=(1080, 2400))
    blink = base.copy()
    ImageDraw.Draw(blink).rectangle((500, 600, 504, 660), fill=(0, 0, 0))
    assert frames_match(thumbnail(base), thumbnail(blink))
    assert not frames_match(thumbnail(base), thumbnail(screen(2, size=(1080, 2400))))
    assert not frames_match(thumbnail(base), thumbnail(base.resize((1080, 2300))))


def test_device_settle_polls_screencaps_and_records_the_time(
    monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    replay = usb_phone(clock)
    replay.on("exec-out screencap", *(encode_raw(screen(v)) for v in (0, 1, 2, 2)), cost_s=0.3)
    monkeypatch.setattr(adb_exec, "_exec", replay)
    device = AdbDevice(SERIAL, screenshot_method="raw", clock=clock, sleep=clock.sleep)
    waited = device.settle()
    assert device.last_settle_s == waited == pytest.approx(0.1 + 4 * 0.3 + 3 * 0.05)
    assert device.last_settle is not None and device.last_settle.stable
    # The settled frame is reused by the next screenshot: no fifth capture.
    assert_same(device.screenshot(), screen(2))
    assert sum("screencap" in line for line in replay.lines) == 4
    device.tap(1, 1)  # an action invalidates it
    device.screenshot()
    assert sum("screencap" in line for line in replay.lines) == 5


def test_device_settle_is_capped(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    replay = usb_phone(clock)
    replay.on("exec-out screencap", *(encode_raw(screen(v % 4)) for v in range(100)), cost_s=0.3)
    monkeypatch.setattr(adb_exec, "_exec", replay)
    device = AdbDevice(SERIAL, screenshot_method="raw", clock=clock, sleep=clock.sleep)
    assert 1.5 <= device.settle(timeout_s=1.5) < 2.0
    assert device.last_settle is not None and not device.last_settle.stable
