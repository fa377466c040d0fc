"""The demo's "Check this phone" button: the doctor on the picked ADB phone (a fake phone replaying a real
device's getprop here), private mode only, and never during a run."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_testkit import make_backend, settings_for

from mae.device import VIRTUAL, adb_exec
from mae.device.adb import AdbDevice
from mae.device.lock import DeviceLock
from mae.device.virtual import VirtualPhone
from mae.ui.devices import DevicePool
from mae.ui.phone_doctor import check_phone, is_adb_phone

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "device"))
from doctor_phones import CORPUS_ADB, PhoneScript, corpus_text, fake_adb_for
from fake_adb_server import start

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def _parts(tmp_path: Path) -> tuple[set[str], list[str]]:
    import app

    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    demo = app.build_demo(backend, lister=lambda: [])
    ids = {
        b.elem_id
        for b in demo.blocks.values()
        if (getattr(b, "elem_id", None) or "").startswith("mae-phone-doctor")
    }
    handlers = [
        d.fn.__qualname__
        for d in demo.fns.values()
        if d.fn is not None and d.fn.__module__ == "mae.ui.phone_doctor"
    ]
    return ids, handlers


def test_private_demo_has_the_button_and_its_handler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPACE_ID", raising=False)
    ids, handlers = _parts(tmp_path)
    assert ids == {"mae-phone-doctor", "mae-phone-doctor-report"}
    assert len(handlers) == 2  # the check, and showing the panel only for ADB phones


def test_public_demo_neither_shows_nor_registers_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPACE_ID", "someone/mae-demo")
    assert _parts(tmp_path) == (set(), [])


def test_the_virtual_phone_is_not_checked() -> None:
    pool = DevicePool(opener=lambda name: pytest.fail("nothing may be opened"))
    assert check_phone(pool, VIRTUAL).startswith("The virtual phone needs no check")


@pytest.fixture
def motorola(monkeypatch: pytest.MonkeyPatch) -> Iterator[PhoneScript]:
    if not CORPUS_ADB.is_dir():
        pytest.skip("the shared real-device corpus (../shared/data/real_devices) is absent")
    script = PhoneScript(getprop=corpus_text("getprop_motorola_edge20_android13.txt"), size=(1080, 2400))
    server, port = start(fake_adb_for(script))
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    monkeypatch.setenv("MAE_ADB_AUTOSTART", "0")
    adb_exec._devices.clear()
    yield script
    server.shutdown()
    server.server_close()
    adb_exec._devices.clear()


def test_an_adb_phone_gets_the_doctors_report(motorola: PhoneScript) -> None:
    pool = DevicePool(opener=lambda name: AdbDevice(name))
    report = check_phone(pool, "FAKE123")
    assert "motorola edge 20, Android 13" in report
    assert report.splitlines()[-1] == "Verdict: ready"


def test_a_phone_in_a_run_is_not_checked(motorola: PhoneScript) -> None:
    pool = DevicePool(opener=lambda name: AdbDevice(name))
    with DeviceLock(pool.get("FAKE123"), owner="a run"):
        message = check_phone(pool, "FAKE123")
    assert message == "A run is operating this phone: press Stop or wait for it to end, then check the phone."
    assert not any(line.startswith("input ") for line in motorola.log)


def test_the_panel_shows_only_for_phones_on_adb() -> None:
    assert not is_adb_phone(VIRTUAL) and not is_adb_phone(f"{VIRTUAL}-2") and not is_adb_phone(None)
    assert is_adb_phone("emulator-5554") and is_adb_phone("192.168.1.20:5555")
