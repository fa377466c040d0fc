"""``mae device doctor`` on fake phones replaying real devices' transcripts (see ``doctor_phones.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from doctor_phones import CORPUS_ADB, PhoneScript, corpus_text, fake_adb_for, fixture
from fake_adb_server import start

from mae.device import adb_exec, adb_parse
from mae.device.adb_doctor import ASCII_PROBE, UNICODE_PROBE, DoctorReport, run_doctor

needs_corpus = pytest.mark.skipif(
    not CORPUS_ADB.is_dir(), reason="the shared real-device corpus (../shared/data/real_devices) is absent"
)


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    servers = []

    def run(script: PhoneScript) -> DoctorReport:
        server, port = start(fake_adb_for(script))
        servers.append(server)
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
        monkeypatch.setenv("MAE_ADB_AUTOSTART", "0")
        monkeypatch.delenv("ANDROID_SERIAL", raising=False)
        adb_exec._devices.clear()
        return run_doctor("FAKE123")

    yield run
    for server in servers:
        server.shutdown()
        server.server_close()
    adb_exec._devices.clear()


def _checks(report: DoctorReport) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}


def _found(report: DoctorReport, name: str) -> str:
    return next(c.found for c in report.checks if c.name == name)


@needs_corpus
def test_motorola_edge_20_with_adb_keyboard_is_ready(serve) -> None:  # type: ignore[no-untyped-def]
    script = PhoneScript(getprop=corpus_text("getprop_motorola_edge20_android13.txt"), size=(1080, 2400))
    report = serve(script)
    assert report.verdict == "ready", report.text()
    assert _found(report, "device") == "motorola motorola edge 20, Android 13 (API 33)"
    assert _found(report, "screen").startswith("1080x2400, 400 dpi")
    assert f"{ASCII_PROBE!r} typed exactly" in _found(report, "typing")
    assert f"{UNICODE_PROBE!r} typed exactly" in _found(report, "typing")
    assert script.field_text == ""  # cleared afterwards
    assert script.screen == "home" and script.ime.endswith("LatinIME")  # left as found


@needs_corpus
def test_samsung_galaxy_without_adb_keyboard_is_limited_and_says_how_to_install_it(serve) -> None:  # type: ignore[no-untyped-def]
    script = PhoneScript(
        getprop=corpus_text("getprop_samsung_SM-S936B_android16_utf16le.txt"),
        size=(1440, 3120),
        adb_keyboard=False,
    )
    report = serve(script)
    assert report.verdict == "limited"
    assert _checks(report) == {
        "adb": "ok",
        "device": "ok",
        "screen": "ok",
        "screenshot": "ok",
        "uiautomator": "ok",
        "keyboard": "warn",
        "tap": "ok",
        "typing": "ok",
    }
    assert "One UI" in _found(report, "device") and "SM-S936B" in _found(report, "device")
    assert "450 dpi" in _found(report, "screen")
    [advice] = report.advice
    assert "ADBKeyboard.apk" in advice and "adb -s FAKE123 install" in advice
    assert script.field_text == ""
    assert not any("am broadcast" in line for line in script.log)


@needs_corpus
def test_car_head_unit_whose_dump_fails_runs_on_ocr_alone(serve) -> None:  # type: ignore[no-untyped-def]
    script = PhoneScript(
        getprop=corpus_text("getprop_qualcomm_gwm_haval_headunit_android9.txt"),
        size=(1920, 720),
        dump_error=fixture("uiautomator_dump_idle_error.txt"),
    )
    report = serve(script)
    assert report.verdict == "limited", report.text()
    checks = _checks(report)
    assert checks["uiautomator"] == "warn" and checks["tap"] == "skip" and checks["typing"] == "skip"
    assert "could not get idle state" in _found(report, "uiautomator")
    assert any("MAE_A11Y=off" in advice for advice in report.advice)
    assert "QUALCOMM msmnile_gvmq for arm64, Android 9 (API 28)" in _found(report, "device")
    assert "160 dpi" in _found(report, "screen")


@needs_corpus
def test_android_4_tablet_is_not_usable(serve) -> None:  # type: ignore[no-untyped-def]
    script = PhoneScript(getprop=corpus_text("getprop_asus_TF201_android4.0.3.txt"), size=(1280, 800))
    report = serve(script)
    assert report.verdict == "not usable"
    assert _checks(report) == {"adb": "ok", "device": "fail"}
    assert "asus TF201, Android 4.0.3 (API 15)" in _found(report, "device")
    assert "Android 5 or newer" in report.advice[0]
    assert not any(line.startswith("screencap") for line in script.log)


@needs_corpus
def test_tablet_asleep_on_its_lock_screen_is_not_usable_until_unlocked(serve) -> None:  # type: ignore[no-untyped-def]
    # getprop of this MediaTek tablet is not in the corpus: these lines repeat its manifest entry.
    props = "[ro.product.manufacturer]: [MediaTek]\n[ro.product.model]: [tb8168p1]\n"
    props += "[ro.build.version.release]: [13]\n[ro.build.version.sdk]: [33]\n"
    script = PhoneScript(
        getprop=props,
        size=(480, 800),
        dumpsys_window=corpus_text("dumpsys_activity_activities_mediatek_tablet.txt"),
    )
    report = serve(script)
    assert report.verdict == "not usable"
    assert "lock screen" in _found(report, "device")
    assert "unlock it" in report.advice[0]
    assert not any(line.startswith("input ") for line in script.log)


@needs_corpus
def test_taps_that_do_not_reach_apps_are_a_failure_with_the_xiaomi_setting_named(serve) -> None:  # type: ignore[no-untyped-def]
    script = PhoneScript(
        getprop=corpus_text("getprop_motorola_edge20_android13.txt"), size=(1080, 2400), taps_land=False
    )
    report = serve(script)
    assert report.verdict == "not usable"
    assert _checks(report)["tap"] == "fail"
    assert "USB debugging (Security settings)" in report.advice[0]


@needs_corpus
def test_screen_facts_from_real_transcripts() -> None:
    top = corpus_text("dumpsys_activity_top_instagram_utf16le.txt")
    assert adb_parse.cutout(top) == (0, 44, 0, 0)
    assert adb_parse.orientation(corpus_text("dumpsys_input_utf16le.txt")) == 0
    assert adb_parse.orientation(corpus_text("dumpsys_input_nvidia_shield_tv.txt")) == 0
    props = adb_parse.getprop(corpus_text("getprop_samsung_SM-S936B_android16_utf16le.txt"))
    assert props["ro.product.model"] == "SM-S936B" and adb_parse.density("", props) == 450
    assert adb_parse.density("Physical density: 420\nOverride density: 360\n", props) == 360


def test_report_text_is_plain_sentences() -> None:
    from mae.device.adb_doctor import Check, verdict_of

    checks = [
        Check(name="device", status="ok", found="Google Pixel 7, Android 14 (API 34)"),
        Check(name="keyboard", status="warn", found="ADB Keyboard not installed", advice="install it"),
    ]
    report = DoctorReport(serial="X", checks=checks, verdict=verdict_of(checks))
    assert report.verdict == "limited"
    assert report.text().splitlines() == [
        "Phone X",
        "  [ok  ] device: Google Pixel 7, Android 14 (API 34)",
        "  [warn] keyboard: ADB Keyboard not installed",
        "Verdict: limited",
        "  - install it",
    ]


@needs_corpus
def test_cli_prints_the_report_and_exits_1_when_the_phone_is_not_usable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mae.cli import main

    script = PhoneScript(getprop=corpus_text("getprop_asus_TF201_android4.0.3.txt"), size=(1280, 800))
    server, port = start(fake_adb_for(script))
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    monkeypatch.setenv("MAE_ADB_AUTOSTART", "0")
    adb_exec._devices.clear()
    try:
        assert main(["device", "doctor", "FAKE123"]) == 1
        out, err = capsys.readouterr()
        assert out.splitlines()[0] == "Phone FAKE123"
        assert "Verdict: not usable" in out and "checking device..." in err
        assert main(["device", "doctor", "--json"]) == 1  # the only phone attached
        assert '"verdict": "not usable"' in capsys.readouterr().out
    finally:
        server.shutdown()
        server.server_close()
        adb_exec._devices.clear()


def test_cli_refuses_the_virtual_phone(capsys: pytest.CaptureFixture[str]) -> None:
    from mae.cli import main

    assert main(["device", "doctor", "virtual"]) == 2
    assert (
        capsys.readouterr().err
        == "error: the doctor checks phones on ADB; the virtual phone needs no check\n"
    )
