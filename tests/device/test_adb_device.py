"""``AdbDevice`` operations, typing, keyboard, focus and app resolution, driven through its real code
with only ``adb_exec._exec`` replaced by a replay of captured outputs."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from adb_replay import SERIAL, FakeClock, Replay, fixture, png_bytes, usb_phone
from PIL import Image

from mae.actions.reading import parse_action_text
from mae.actions.registry import resolve_call, run_steps
from mae.device import adb_exec
from mae.device.adb import AdbDevice, best_label
from mae.device.adb_apps import build_app_list, find_app, parse_launcher_activities
from mae.device.adb_parse import current_ime, focused_package, keyboard_shown, screen_size
from mae.device.base import Device
from mae.errors import ActionError
from mae.perception.elements import Element

ADB_IME = "com.android.adbkeyboard/.AdbIME"
LATIN_IME = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> Replay:
    phone = usb_phone(clock)
    monkeypatch.setattr(adb_exec, "_exec", phone)
    return phone


def open_phone(clock: FakeClock, **kwargs: Any) -> AdbDevice:
    return AdbDevice(SERIAL, clock=clock, sleep=clock.sleep, **kwargs)


def test_adb_device_is_a_device(replay: Replay, clock: FakeClock) -> None:
    device = open_phone(clock)
    assert isinstance(device, Device)
    assert device.name == SERIAL
    assert replay.lines == ["devices -l"]


@pytest.mark.parametrize(
    ("operation", "command"),
    [
        (lambda d: d.tap(540, 1200), "input tap 540 1200"),
        (lambda d: d.swipe(540, 1500, 540, 500), "input swipe 540 1500 540 500 400"),
        (lambda d: d.enter(), "input keyevent 66"),
        (lambda d: d.back(), "input keyevent 4"),
        (lambda d: d.home(), "input keyevent 3"),
        (lambda d: d.switch_app(), "input keyevent 187"),
    ],
)
def test_each_operation_is_one_shell_command(
    replay: Replay, clock: FakeClock, operation, command: str
) -> None:
    device = open_phone(clock)
    operation(device)
    assert replay.calls[-1] == ["-s", SERIAL, "shell", command]
    assert len(replay.calls) == 2


def test_wait_sleeps_on_the_host_without_adb(replay: Replay, clock: FakeClock) -> None:
    device = open_phone(clock)
    device.wait(10)
    assert clock.slept == [10]
    assert replay.lines == ["devices -l"]


def test_screen_size_from_wm_size_prefers_override() -> None:
    assert screen_size(fixture("wm_size.txt")) == (1080, 2400)
    assert screen_size(fixture("wm_size_override.txt")) == (1080, 2316)


def test_type_ascii_is_a_single_adb_call(replay: Replay, clock: FakeClock) -> None:
    device = open_phone(clock)
    device.type_text('Bose QC45 review\'s "best" & $5')
    assert replay.shell == ["input text 'Bose%sQC45%sreview'\\''s%s\"best\"%s&%s$5'"]


def test_type_reports_a_failure_printed_by_input(replay: Replay, clock: FakeClock) -> None:
    replay.on("shell input text", fixture("input_text_exception.txt"))
    device = open_phone(clock)
    with pytest.raises(ActionError, match="NullPointerException"):
        device.type_text("abc")


def ime_phone(replay: Replay, ime_fixture: str, dumpsys: str) -> Replay:
    return (
        replay.on("shell ime list -a -s", fixture(ime_fixture))
        .on("shell ime enable", fixture("ime_enable_set.txt"))
        .on("shell dumpsys input_method", fixture(dumpsys))
        .on("shell am broadcast", fixture("am_broadcast.txt"))
        .on("shell ime set com.google", "")
    )


def test_type_non_ascii_switches_to_adb_keyboard_and_restores(replay: Replay, clock: FakeClock) -> None:
    ime_phone(replay, "ime_state_adbkeyboard_installed.txt", "dumpsys_input_method_adbkeyboard_shown.txt")
    device = open_phone(clock)
    device.type_text("你好 café")
    shell = replay.shell
    assert shell[0].startswith("ime list -a -s")
    assert shell[1] == f"ime enable {ADB_IME} && ime set {ADB_IME}"
    assert shell[2] == "dumpsys input_method"
    assert shell[3].startswith("am broadcast -a ADB_INPUT_B64 --es msg ")
    assert base64.b64decode(shell[3].split()[-1]).decode() == "你好 café"
    assert shell[4] == f"ime set {LATIN_IME}; ime disable {ADB_IME}"
    assert len(shell) == 5


def test_type_non_ascii_without_adb_keyboard_says_how_to_install(replay: Replay, clock: FakeClock) -> None:
    ime_phone(replay, "ime_state_no_adbkeyboard.txt", "dumpsys_input_method_a14_shown.txt")
    device = open_phone(clock)
    with pytest.raises(ActionError) as info:
        device.type_text("Crème brûlée")
    message = str(info.value)
    assert "ADB Keyboard" in message and f"adb -s {SERIAL} install ADBKeyboard.apk" in message
    assert not any(cmd.startswith(("ime enable", "ime set", "am broadcast")) for cmd in replay.shell)


def test_adb_keyboard_without_a_focused_field_fails_and_restores_the_ime(
    replay: Replay, clock: FakeClock
) -> None:
    ime_phone(replay, "ime_state_adbkeyboard_installed.txt", "dumpsys_input_method_adbkeyboard_hidden.txt")
    device = open_phone(clock)
    with pytest.raises(ActionError, match="Tap the text field first"):
        device.type_text("😸")
    assert replay.shell[-1] == f"ime set {LATIN_IME}; ime disable {ADB_IME}"
    assert not any(cmd.startswith("am broadcast") for cmd in replay.shell)
    assert sum(clock.slept) >= 3.0


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("dumpsys_input_method_a14_shown.txt", True),
        ("dumpsys_input_method_a14_hidden.txt", False),
        ("dumpsys_input_method_a9_shown.txt", True),
        ("dumpsys_input_method_a9_hidden.txt", False),
        ("dumpsys_input_method_service_only.txt", True),
    ],
)
def test_keyboard_state_from_dumpsys(name: str, shown: bool) -> None:
    assert keyboard_shown(fixture(name)) is shown


def test_manager_state_wins_over_a_stale_ime_view_flag() -> None:
    assert keyboard_shown("  mInputShown=false\n  mIsInputViewShown=true mStatusIcon=0\n") is False
    assert keyboard_shown("nothing relevant") is False


def test_current_ime_from_dumpsys() -> None:
    assert current_ime(fixture("dumpsys_input_method_adbkeyboard_shown.txt")) == ADB_IME
    assert current_ime("mCurMethodId=null") is None


def test_keyboard_active_asks_the_phone(replay: Replay, clock: FakeClock) -> None:
    replay.on("shell dumpsys input_method", fixture("dumpsys_input_method_a14_shown.txt"))
    device = open_phone(clock)
    assert device.keyboard_active() is True
    assert replay.shell == ["dumpsys input_method"]


@pytest.mark.parametrize(
    ("name", "package"),
    [
        ("dumpsys_window_focus_chrome.txt", "com.android.chrome"),
        ("dumpsys_window_focus_popup.txt", "com.amazon.mShop.android.shopping"),
        ("dumpsys_window_focus_keyguard.txt", ""),
        ("dumpsys_window_focus_a9.txt", "com.sec.android.app.launcher"),
    ],
)
def test_focused_package(name: str, package: str) -> None:
    assert focused_package(fixture(name)) == package


def test_foreground_app_query(replay: Replay, clock: FakeClock) -> None:
    replay.on("shell dumpsys window", fixture("dumpsys_window_focus_chrome.txt"))
    assert open_phone(clock).foreground_app() == "com.android.chrome"
    assert replay.shell == ["dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'"]


# -- apps ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "component"),
    [
        ("Maps", "com.google.android.apps.maps/com.google.android.maps.MapsActivity"),
        ("google maps", "com.google.android.apps.maps/com.google.android.maps.MapsActivity"),
        ("Amazon", "com.amazon.mShop.android.shopping/com.amazon.mShop.home.HomeActivity"),
        ("Amazon Shopping", "com.amazon.mShop.android.shopping/com.amazon.mShop.home.HomeActivity"),
        ("MacDonald's", "com.mcdonalds.app/com.mcdonalds.mcdcoreapp.common.activity.SplashActivity"),
        ("X", "com.twitter.android/.StartActivity"),
        ("Twitter", "com.twitter.android/.StartActivity"),
        ("Booking", "com.booking/.startup.HomeActivity"),
        ("Tripadvisor", "com.tripadvisor.tripadvisor/com.tripadvisor.android.ui.launcher.LauncherActivity"),
        ("Notes", "com.google.android.keep/.activities.BrowseActivity"),
        ("Lemon8", "com.bd.nproject/com.bytedance.nproject.app.MainActivity"),
        ("Wikipedia", "org.wikipedia/.main.MainActivity"),
        ("com.walmart.android", "com.walmart.android/.app.main.MainActivity"),
        ("Walmart app", "com.walmart.android/.app.main.MainActivity"),
        ("YouTube", "com.google.android.youtube/com.google.android.youtube.app.honeycomb.Shell$HomeActivity"),
        (
            "Music",
            "com.google.android.apps.youtube.music/com.google.android.apps.youtube.music.activities.MusicActivity",
        ),
        (
            "Google",
            "com.google.android.googlequicksearchbox/com.google.android.googlequicksearchbox.SearchActivity",
        ),
        ("Best Buy", "com.bestbuy.android/.activities.home.HomeActivity"),
    ],
)
def test_open_app_resolves_label_to_launcher_activity(
    replay: Replay, clock: FakeClock, name: str, component: str
) -> None:
    replay.on("shell am start", fixture("am_start_ok.txt"))
    open_phone(clock).open_app(name)
    assert replay.shell[0].startswith("cmd package query-activities --brief -a android.intent.action.MAIN")
    assert replay.shell[-1] == (
        "am start -a android.intent.action.MAIN -c android.intent.category.LAUNCHER -f 0x10200000 "
        f"-n '{component}'"
    )


def test_app_list_is_queried_once(replay: Replay, clock: FakeClock) -> None:
    replay.on("shell am start", fixture("am_start_ok.txt"))
    device = open_phone(clock)
    device.open_app("Maps")
    device.open_app("Chrome")
    assert sum(cmd.startswith("cmd package") for cmd in replay.shell) == 1


def test_installed_apps_maps_labels_to_packages(replay: Replay, clock: FakeClock) -> None:
    apps = open_phone(clock).installed_apps()
    assert apps["Maps"] == "com.google.android.apps.maps"
    assert apps["Keep Notes"] == "com.google.android.keep"
    assert apps["Duolingo"] == "com.duolingo"
    assert len(apps) == 31


def test_am_start_failure_falls_back_to_monkey(replay: Replay, clock: FakeClock) -> None:
    replay.on("shell am start", fixture("am_start_missing_activity.txt"))
    replay.on("shell monkey", fixture("monkey_ok.txt"))
    open_phone(clock).open_app("Walmart")
    assert replay.shell[-1] == "monkey -p com.walmart.android -c android.intent.category.LAUNCHER 1"


def test_old_android_without_cmd_uses_pm_list_and_monkey(replay: Replay, clock: FakeClock) -> None:
    replay.on("shell cmd package query-activities", fixture("cmd_not_found.txt"))
    replay.on("shell pm list packages", fixture("pm_list_packages_a6.txt"))
    replay.on("shell monkey", fixture("monkey_ok.txt"))
    open_phone(clock).open_app("Maps")
    assert replay.shell[-2:] == [
        "pm list packages",
        "monkey -p com.google.android.apps.maps -c android.intent.category.LAUNCHER 1",
    ]


def test_monkey_without_launcher_activity_is_an_action_error(replay: Replay, clock: FakeClock) -> None:
    replay.on("shell cmd package query-activities", fixture("cmd_not_found.txt"))
    replay.on("shell pm list packages", fixture("pm_list_packages_a6.txt"))
    replay.on("shell monkey", fixture("monkey_no_activities.txt"))
    with pytest.raises(ActionError, match="could not start"):
        open_phone(clock).open_app("com.android.providers.telephony")


def test_full_query_activities_format_is_understood() -> None:
    found = parse_launcher_activities(fixture("query_activities_full_a10.txt"))
    assert found == {
        "com.android.settings": "com.android.settings.Settings",
        "com.android.chrome": "org.chromium.chrome.browser.ChromeTabbedActivity",
        "com.fandango": "com.fandango.activities.SplashActivity",
    }


def test_several_matching_apps_is_an_error_naming_them() -> None:
    apps = build_app_list({"com.sec.android.app.sbrowser": None, "com.samsung.android.app.notes": None})
    with pytest.raises(ActionError, match="Samsung Internet, Samsung Notes"):
        find_app(apps, "Samsung")


def screen_png() -> bytes:
    return png_bytes(Image.new("RGB", (108, 240), (30, 60, 90)))


def test_unknown_app_tries_the_home_screen_then_lists_close_matches(replay: Replay, clock: FakeClock) -> None:
    replay.on("exec-out screencap", screen_png())
    seen: list[tuple[int, int]] = []

    def finder(image: Image.Image) -> list[Element]:
        seen.append(image.size)
        return [Element(kind="text", text="Walmart", box=(10, 10, 50, 20))]

    device = open_phone(clock, text_finder=finder, screenshot_method="png")
    with pytest.raises(ActionError) as info:
        device.open_app("Walmrt Grocery")
    assert "did you mean: Walmart" in str(info.value)
    assert len(seen) == 2  # home screen, then app drawer
    assert "input keyevent 3" in replay.shell
    assert "input swipe 540 2040 540 600 400" in replay.shell
    assert replay.shell[-1] == "input keyevent 3"


def test_app_unknown_to_the_package_table_is_tapped_on_the_home_screen(
    replay: Replay, clock: FakeClock
) -> None:
    replay.on("exec-out screencap", screen_png())

    def finder(image: Image.Image) -> list[Element]:
        return [
            Element(kind="text", text="Search", box=(100, 2000, 300, 2050)),
            Element(kind="text", text="Shazam", box=(800, 1500, 900, 1540)),
        ]

    device = open_phone(clock, text_finder=finder, screenshot_method="png")
    device.open_app("Shazam")
    assert replay.shell[-1] == "input tap 850 1520"


def test_best_label_accepts_truncated_and_near_labels() -> None:
    elements = [
        Element(kind="text", text="Amazon Sho…", box=(0, 0, 10, 10)),
        Element(kind="icon", text="Amazon Shopping", box=(0, 0, 10, 10)),
    ]
    assert best_label(elements, "Amazon Shopping") is elements[0]
    assert best_label([Element(kind="text", text="Fandang0", box=(0, 0, 1, 1))], "Fandango") is not None
    assert best_label([Element(kind="text", text="Settings", box=(0, 0, 1, 1))], "Fandango") is None


def test_one_operation_through_the_action_layer(replay: Replay, clock: FakeClock) -> None:
    frame = screen_png()
    replay.on("exec-out screencap -p", frame)
    device = open_phone(clock, screenshot_method="png")
    steps = resolve_call(parse_action_text("Tap(540, 1200)"), {}, screen=device.screen_size())
    run_steps(device, steps)
    assert replay.shell == ["wm size", "input tap 540 1200"]
    assert [line for line in replay.lines if "screencap" in line] == [
        f"-s {SERIAL} exec-out screencap -p"
    ] * 2
    assert device.last_settle_s > 0
