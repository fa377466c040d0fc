"""``uiautomator dump`` through the real ``AdbDevice`` code: captured-style dumps (normal, failing,
empty, huge) replayed for ``adb_exec._exec``, and once over the wire against the fake adb server."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from adb_replay import SERIAL, FakeClock, Replay, fixture, usb_phone
from fake_adb_server import FakeAdb, start
from PIL import Image

from mae.device import adb_exec
from mae.device.adb import AdbDevice
from mae.errors import DeviceError
from mae.perception import Element, Perceptor
from mae.perception.a11y import MAX_NODES, A11yError, parse_uiautomator

TTY = "exec-out uiautomator dump /dev/tty"
TO_FILE = "shell uiautomator dump /sdcard/mae_window_dump.xml"
COMPRESSED = "shell uiautomator dump --compressed /sdcard/mae_window_dump.xml"
CAT = "exec-out cat /sdcard/mae_window_dump.xml"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> Replay:
    phone = usb_phone(clock)
    monkeypatch.setattr(adb_exec, "_exec", phone)
    return phone


def open_phone(clock: FakeClock) -> AdbDevice:
    return AdbDevice(SERIAL, clock=clock, sleep=clock.sleep)


def huge_dump(rows: int) -> str:
    """A long list as a real dump writes it: every row a clickable layout with two texts."""
    items = "".join(
        f'<node index="{i}" text="" resource-id="com.example:id/row" class="android.widget.LinearLayout" '
        f'package="com.example" content-desc="" clickable="true" scrollable="false" '
        f'bounds="[0,{300 + 10 * i}][1080,{310 + 10 * i}]"><node index="0" text="Item {i}" '
        f'class="android.widget.TextView" package="com.example" content-desc="" clickable="false" '
        f'bounds="[40,{300 + 10 * i}][600,{310 + 10 * i}]" /></node>'
        for i in range(rows)
    )
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        '<node index="0" text="" class="androidx.recyclerview.widget.RecyclerView" package="com.example" '
        f'content-desc="" clickable="false" scrollable="true" bounds="[0,0][1080,2400]">{items}</node>'
        "</hierarchy>UI hierchary dumped to: /dev/tty\n"
    )


def test_dump_to_stdout_is_parsed_into_nodes(replay: Replay, clock: FakeClock) -> None:
    replay.on(TTY, fixture("uiautomator_dump_maps_a14.txt"), cost_s=0.35)
    tree = open_phone(clock).ui_tree()
    assert tree.source == "uiautomator" and tree.strategy == "tty" and tree.seconds == pytest.approx(0.35)
    by_label = {node.label: node for node in tree.nodes if node.label}
    search = by_label["Search here"]
    assert search.editable and search.clickable and search.class_name == "android.widget.EditText"
    assert search.bounds == (168, 150, 780, 276)
    assert by_label["Voice search"].clickable and by_label["Voice search"].resource_id.endswith(
        "voice_button"
    )
    assert by_label["Restaurants"].clickable and not by_label["Restaurants"].editable
    assert any(node.scrollable for node in tree.nodes)
    unlabelled = [n for n in tree.nodes if n.resource_id.endswith("directions_button")]
    assert unlabelled and unlabelled[0].clickable and not unlabelled[0].label
    assert replay.lines[-1] == f"-s {SERIAL} {TTY}"


def test_failing_dump_falls_back_to_the_file_strategies(replay: Replay, clock: FakeClock) -> None:
    replay.on(TTY, fixture("uiautomator_dump_idle_error.txt"))
    replay.on(TO_FILE, fixture("uiautomator_dump_idle_error.txt"))
    replay.on(COMPRESSED, fixture("uiautomator_dump_to_file.txt"))
    replay.on(CAT, fixture("uiautomator_dump_maps_a14.txt").replace("UI hierchary dumped to: /dev/tty", ""))
    device = open_phone(clock)
    tree = device.ui_tree()
    assert tree.strategy == "compressed" and any(n.label == "Search here" for n in tree.nodes)
    assert [name for name, _ in device.ui_dumper.attempts] == ["tty", "sdcard", "compressed"]
    assert "could not get idle state" in device.ui_dumper.attempts[0][1]
    replay.calls.clear()
    device.ui_tree()  # the strategy that worked is tried first next time
    assert replay.lines[0].endswith(COMPRESSED)


@pytest.mark.parametrize(
    "output",
    [
        fixture("uiautomator_dump_idle_error.txt"),
        fixture("uiautomator_dump_null_root.txt"),
        "",
        '<?xml version=\'1.0\' ?><hierarchy rotation="0"><node bounds="[0,0][10,10]"',  # cut off
    ],
)
def test_dump_that_never_works_is_an_a11y_error(replay: Replay, clock: FakeClock, output: str) -> None:
    for command in (TTY, TO_FILE, COMPRESSED):
        replay.on(command, output)
    replay.on(CAT, output)
    with pytest.raises(A11yError, match="uiautomator dump failed") as caught:
        open_phone(clock).ui_tree()
    assert "tty:" in str(caught.value) and "compressed:" in str(caught.value)


def test_dump_timeout_stops_at_once(replay: Replay, clock: FakeClock) -> None:
    replay.on(TTY, DeviceError(f"{SERIAL} did not answer within 8 s while running `adb ...`"))
    device = open_phone(clock)
    with pytest.raises(A11yError, match="did not answer"):
        device.ui_tree()
    assert [name for name, _ in device.ui_dumper.attempts] == ["tty"]


def test_huge_dump_is_capped(replay: Replay, clock: FakeClock) -> None:
    replay.on(TTY, huge_dump(4000))
    tree = open_phone(clock).ui_tree()
    assert len(tree.nodes) == MAX_NODES
    assert tree.nodes[2].text == "Item 0" and tree.nodes[1].clickable


def test_dump_with_entities_is_refused() -> None:
    bomb = '<?xml version="1.0"?><!DOCTYPE h [<!ENTITY a "aaaa">]><hierarchy>&a;</hierarchy>'
    with pytest.raises(A11yError, match="entities"):
        parse_uiautomator(bomb)


class BlankOcr:
    """OCR that reads nothing (the tests here are about the tree)."""

    def read(self, rgb: np.ndarray) -> list[Element]:
        return []


class FixedIcons:
    def __init__(self, icons: list[Element]) -> None:
        self.icons = icons

    def detect(self, rgb: np.ndarray) -> list[Element]:
        return list(self.icons)


def test_perceptor_fuses_the_dump_and_warns_once_when_it_fails(replay: Replay, clock: FakeClock) -> None:
    replay.on(TTY, fixture("uiautomator_dump_maps_a14.txt"))
    device = open_phone(clock)
    mic = Element(kind="icon", box=(800, 190, 845, 236), source="contour")
    crossing = Element(kind="icon", box=(300, 900, 340, 940), source="contour")  # map texture
    perceptor = Perceptor(BlankOcr(), FixedIcons([mic, crossing]))  # type: ignore[arg-type]
    image = Image.new("RGB", (1080, 2400), "white")
    seen = perceptor.perceive(image, False, tree=device.ui_tree)
    lines = seen.describe().splitlines()
    assert seen.a11y == "uiautomator" and not seen.warnings
    assert any(line.startswith('button "Voice search"; coordinates: [822, 213]') for line in lines)
    assert not any("[320, 920]" in line for line in lines)  # the unnamed, non-clickable icon is gone
    assert any(line.startswith('field "Search here"') for line in lines)  # a control nothing else saw
    assert any(line.startswith('button "Show your location"') for line in lines)
    replay.on(TTY, fixture("uiautomator_dump_idle_error.txt"))
    replay.on(TO_FILE, fixture("uiautomator_dump_idle_error.txt"))
    replay.on(COMPRESSED, fixture("uiautomator_dump_idle_error.txt"))
    failed = perceptor.perceive(image, False, tree=device.ui_tree)
    assert failed.a11y == "" and len(failed.warnings) == 1
    assert (
        "could not get idle state" in failed.warnings[0]
        and "OCR and icon detection alone" in failed.warnings[0]
    )
    again = perceptor.perceive(image, False, tree=device.ui_tree)
    assert again.warnings == [] and perceptor.tree_failures == 2


def test_webview_dump_counts_as_no_tree(replay: Replay, clock: FakeClock) -> None:
    replay.on(TTY, fixture("uiautomator_dump_webview_empty.txt"))
    device = open_phone(clock)
    assert device.ui_tree().useful is False
    perceptor = Perceptor(BlankOcr(), FixedIcons([]))  # type: ignore[arg-type]
    seen = perceptor.perceive(Image.new("RGB", (1080, 2400)), False, tree=device.ui_tree)
    assert seen.a11y == "" and seen.warnings == [
        "the accessibility tree of this screen is empty; using OCR and icon detection alone"
    ]


def test_a11y_off_never_dumps(replay: Replay, clock: FakeClock) -> None:
    device = open_phone(clock)
    perceptor = Perceptor(BlankOcr(), None, a11y="off")  # type: ignore[arg-type]
    perceptor.perceive(Image.new("RGB", (1080, 2400)), False, tree=device.ui_tree)
    assert not any("uiautomator" in line for line in replay.lines)


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAdb]:
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


def test_dump_over_the_wire(wire: FakeAdb) -> None:
    wire.exec["uiautomator dump /dev/tty"] = fixture("uiautomator_dump_idle_error.txt").encode()
    wire.shell["uiautomator dump /sdcard/mae_window_dump.xml"] = fixture(
        "uiautomator_dump_to_file.txt"
    ).encode()
    wire.exec["cat /sdcard/mae_window_dump.xml; rm -f /sdcard/mae_window_dump.xml"] = huge_dump(300).encode()
    tree = AdbDevice("FAKE123").ui_tree()
    assert tree.strategy == "sdcard" and len(tree.nodes) == 601
    assert "exec:uiautomator dump /dev/tty" in wire.received
