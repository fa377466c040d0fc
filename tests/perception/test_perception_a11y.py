"""The element list a model reads: a11y fusion, the tidy-up, stacked lines, kinds, captions only where
nothing else names an icon, and the virtual phone's accessibility tree with its gaps."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mae.config import PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.device.virtual import a11y as virtual_a11y
from mae.device.virtual.a11y import SYSTEM_UI
from mae.llm import ChatClient, ModelProfile
from mae.perception import Element, Perception, Perceptor
from mae.perception.a11y import A11yNode, A11yTree
from mae.perception.fusion import fuse
from mae.perception.merge import merge_lines
from mae.perception.perceptor import resolve_captions
from mae.perception.tidy import clean_texts, tidy
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest


def text(label: str, box: tuple[int, int, int, int]) -> Element:
    return Element(kind="text", text=label, box=box, source="rapidocr")


def icon(box: tuple[int, int, int, int], label: str = "") -> Element:
    return Element(kind="icon", text=label, box=box, source="contour")


def node(box: tuple[int, int, int, int], **fields: object) -> A11yNode:
    return A11yNode(bounds=box, **fields)  # type: ignore[arg-type]


def test_element_lines_say_kind_and_source() -> None:
    assert (
        text("Open until 9 PM", (0, 0, 100, 20)).describe() == 'text "Open until 9 PM"; coordinates: [50, 10]'
    )
    assert icon((0, 0, 40, 40)).describe() == "icon (no name); coordinates: [20, 20]"
    named = icon((0, 0, 40, 40), "Search").model_copy(update={"named_by": "caption"})
    assert named.describe() == 'icon "Search"; coordinates: [20, 20]'
    button = icon((0, 0, 40, 40), "Save").model_copy(update={"role": "button", "named_by": "a11y"})
    assert button.describe() == 'button "Save"; coordinates: [20, 20]'
    assert text('Say "hi"', (0, 0, 10, 10)).describe().startswith('text "Say \\"hi\\""')
    shown = Perception(width=100, height=100, elements=[button], keyboard_collapsed=True)
    assert shown.describe().splitlines()[-1].startswith("on-screen keyboard shown")


def test_fusion_names_icons_adds_unseen_controls_and_drops_decoration() -> None:
    tree = A11yTree(
        source="uiautomator",
        nodes=[
            node((960, 150, 1060, 250), content_desc="Save", clickable=True),
            node((40, 400, 1040, 520), clickable=True),  # a list row
            node((60, 430, 500, 490), text="Korean BBQ House"),
            node((40, 1000, 200, 1100), content_desc="Directions", clickable=True),  # not seen by vision
            node((100, 300, 800, 380), text="Search here", clickable=True, editable=True),
            node((40, 600, 300, 680), text="Coffee", clickable=True),
            node((0, 0, 1080, 2000), content_desc="Google Map"),
        ],
    )
    seen = [
        text("Korean BBQ House", (60, 430, 500, 490)),
        text("Search here", (160, 320, 400, 360)),
        text("Coffee", (80, 620, 260, 660)),
        icon((985, 175, 1035, 225)),  # the save check mark
        icon((990, 440, 1030, 480)),  # a chevron inside the list row
        icon((40, 600, 300, 680)),  # the chip's outline, found as an icon
        icon((500, 1500, 540, 1540)),  # a road crossing on the map
    ]
    lines = [e.describe() for e in fuse(seen, tree)]
    assert 'button "Save"; coordinates: [1010, 200]' in lines
    assert 'field "Search here"; coordinates: [280, 340]' in lines  # OCR keeps its own coordinates
    assert 'button "Coffee"; coordinates: [170, 640]' in lines
    assert 'button "Directions"; coordinates: [120, 1050]' in lines
    assert "icon (no name); coordinates: [1010, 460]" in lines  # inside a clickable row: kept
    assert not any("[520, 1520]" in line for line in lines)  # map texture: dropped
    assert sum("Coffee" in line for line in lines) == 1  # the chip outline does not repeat its text
    assert not any("Google Map" in line for line in lines)


def test_icons_that_are_parts_of_labelled_controls() -> None:
    tree = A11yTree(
        source="uiautomator",
        nodes=[
            node((24, 110, 171, 257), content_desc="Navigate up", clickable=True),  # a 56 dp target
            node((48, 260, 1032, 376), text="ribeye steak", clickable=True, editable=True),
            node(
                (0, 526, 1080, 946), text="Beef Choice Angus Ribeye Steak 4.4 (1,823) $12.98", clickable=True
            ),
            node((600, 1000, 1000, 1120), text="Save", clickable=True),
            node((880, 110, 1080, 250), clickable=True),  # an icon button nothing labels
        ],
    )
    seen = [
        icon((80, 160, 112, 206)),  # a thin back arrow, 1/15 of its button
        text("ribeye steak", (160, 300, 400, 340)),
        icon((84, 296, 132, 346)),  # the magnifier drawn in the search field
        text("Beef Choice Angus Ribeye Steak", (320, 580, 900, 630)),
        icon((318, 834, 512, 900)),  # the star rating
        text("Save", (760, 1075, 840, 1110)),
        icon((780, 1010, 820, 1065)),  # the bookmark glyph above "Save"
        icon((936, 146, 1004, 210)),
    ]
    lines = [e.describe() for e in fuse(seen, tree)]
    assert 'button "Navigate up"; coordinates: [96, 183]' in lines
    assert "button (no name); coordinates: [970, 178]" in lines  # kept: nothing else shows it
    assert not any(c in line for line in lines for c in ("[108, 321]", "[415, 867]", "[800, 1037]"))
    assert 'button "Save"; coordinates: [800, 1092]' in lines


def test_stacked_fields_stay_apart_wrapped_titles_merge() -> None:
    stacked = [
        text("Korean restaurant, $, 0.6 mi", (48, 600, 560, 640)),
        text("Open until 9 PM", (48, 650, 330, 690)),
    ]
    merged = merge_lines(stacked, width=1080)
    assert [e.text for e in merged] == ["Korean restaurant, $, 0.6 mi", "Open until 9 PM"]
    wrapped = [
        text("Ninja DZ201 Foodi 8 Quart 6-in-1 DualZone 2-Basket Air", (48, 600, 1020, 640)),
        text("Fryer with 2 Independent Baskets", (48, 650, 640, 690)),
    ]
    assert len(merge_lines(wrapped, width=1080)) == 1


def test_tidy_drops_status_bar_stars_and_glyphs() -> None:
    height = 2340
    elements = [
        text("9:41", (60, 30, 130, 66)),
        icon((940, 30, 980, 66)),  # battery
        text("★★★★★", (48, 700, 300, 740)),
        text("4.5 ★★★★☆ (1,204)", (48, 760, 500, 800)),
        text(".", (900, 180, 940, 220)),  # a magnifier read as a dot
        text("口", (800, 180, 844, 224)),  # a bookmark read as a character
        text("天 46 min", (48, 900, 300, 940)),
        text("Directions", (48, 1000, 300, 1040)),
    ]
    texts, icons = clean_texts(
        [e for e in elements if e.kind == "text"], [e for e in elements if e.kind == "icon"]
    )
    kept = tidy([*texts, *icons], height, keyboard_active=False).elements
    lines = [e.describe() for e in kept]
    assert not any("9:41" in line for line in lines) and not any("[960, 48]" in line for line in lines)
    assert not any("★" in line or "☆" in line for line in lines)
    assert 'text "4.5 (1,204)"; coordinates: [274, 780]' in lines
    assert "icon (no name); coordinates: [920, 200]" in lines
    assert "icon (no name); coordinates: [822, 202]" in lines
    assert 'text "46 min"; coordinates: [174, 920]' in lines
    assert 'text "Directions"; coordinates: [174, 1020]' in lines


def test_a_glyph_read_inside_a_detected_icon_is_not_a_second_icon() -> None:
    arrow = icon((58, 158, 110, 204))
    texts, icons = clean_texts([text("↑", (62, 159, 90, 201)), text("Maps", (150, 160, 260, 200))], [arrow])
    assert [e.text for e in texts] == ["Maps"]
    assert icons == [arrow]
    lone, icons = clean_texts([text("口", (800, 180, 844, 224))], [arrow])
    assert lone == [] and [e.box for e in icons] == [arrow.box, (800, 180, 844, 224)]


def keyboard_elements() -> list[Element]:
    rows = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
    keys: list[Element] = []
    for r, row in enumerate(rows):
        y = 1600 + r * 160
        for c, ch in enumerate(row):
            x = 20 + c * 106
            keys.append(text(ch, (x + 30, y + 40, x + 60, y + 80)))
            keys.append(icon((x, y, x + 96, y + 140)))
    keys.append(text("?123", (40, 2120, 130, 2160)))
    keys.append(icon((300, 2100, 780, 2180)))  # space bar
    return keys


def test_keyboard_collapses_to_one_line_and_keeps_the_rest() -> None:
    above = [text("Search here", (160, 320, 400, 360)), text("Recent searches", (48, 500, 400, 540))]
    nav = [icon((200, 2250, 240, 2290)), icon((520, 2250, 560, 2290))]
    elements = [*above, *keyboard_elements(), *nav]
    tidied = tidy(elements, 2340, keyboard_active=True)
    assert tidied.keyboard_collapsed
    assert [e.text for e in tidied.elements if e.kind == "text"] == ["Search here", "Recent searches"]
    assert len([e for e in tidied.elements if e.kind == "icon"]) == 2  # the navigation bar stays
    keys = tidy(elements, 2340, keyboard_active=True, keep_keys=True)
    assert not keys.keyboard_collapsed and len(keys.elements) == len(elements)


def test_map_clutter_without_a_tree_but_not_toolbars() -> None:
    grid = [
        icon((200 + 300 * c, 800 + 250 * r, 240 + 300 * c, 840 + 250 * r)) for r in range(3) for c in range(3)
    ]
    toolbar = [icon((600 + 120 * c, 180, 660 + 120 * c, 240)) for c in range(4)]
    app_icons = [icon((100, 1600, 240, 1740)), text("Maps", (120, 1750, 220, 1790))]
    kept = tidy([*grid, *toolbar, *app_icons], 2340, keyboard_active=False).elements
    assert len([e for e in kept if e.kind == "icon"]) == len(toolbar) + 1


class ListOcr:
    def __init__(self, texts: list[Element]) -> None:
        self.texts = texts

    def read(self, rgb: np.ndarray) -> list[Element]:
        return list(self.texts)


class ListIcons:
    def __init__(self, icons: list[Element]) -> None:
        self.icons = icons

    def detect(self, rgb: np.ndarray) -> list[Element]:
        return list(self.icons)


class RecordingCaptioner:
    def __init__(self) -> None:
        self.asked: list[list[tuple[int, int, int, int]]] = []

    def caption(self, image: Image.Image, icons: Sequence[Element]) -> tuple[list[str], list[str]]:
        self.asked.append([i.box for i in icons])
        return ["magnifier: search" for _ in icons], []


def test_captions_only_for_icons_without_an_a11y_name() -> None:
    save, mystery = icon((985, 175, 1035, 225)), icon((600, 175, 650, 225))
    tree = A11yTree(
        source="virtual",
        nodes=[
            node((960, 150, 1060, 250), content_desc="Save", clickable=True),
            node((580, 150, 670, 250), clickable=True),
        ],
    )
    captioner = RecordingCaptioner()
    perceptor = Perceptor(ListOcr([]), ListIcons([save, mystery]), captioner)  # type: ignore[arg-type]
    seen = perceptor.perceive(Image.new("RGB", (1080, 2340)), False, tree=lambda: tree)
    assert captioner.asked == [[mystery.box]]
    lines = seen.describe().splitlines()
    assert 'button "Save"; coordinates: [1010, 200]' in lines
    assert 'button "magnifier: search"; coordinates: [625, 200]' in lines
    assert [e.named_by for e in seen.icons] == ["caption", "a11y"]


def test_captions_auto_follow_the_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mae.config import Settings

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    cheap = ChatClient(Settings(backbone="openai").profile_for)
    assert resolve_captions("auto", cheap) == "backbone"
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-test")
    assert resolve_captions("auto", ChatClient(Settings(backbone="dashscope").profile_for)) == "backbone"
    custom = ChatClient(
        ModelProfile(provider="custom", base_url="http://127.0.0.1:1/v1", model="m", api_key_env=None)
    )
    assert resolve_captions("auto", custom) == "none"
    assert resolve_captions("backbone", custom) == "backbone"  # set explicitly: kept
    assert resolve_captions("auto", None) == "none"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert resolve_captions("auto", cheap) == "none"  # no key: off rather than failing every step
    assert PerceptionSettings().captions == "auto" and PerceptionSettings().a11y == "auto"


def test_virtual_tree_labels_controls_and_has_realistic_gaps(monkeypatch: pytest.MonkeyPatch) -> None:
    # no built-in app leaves its icon buttons unlabelled any more; the gap is still there to switch on
    monkeypatch.setattr(virtual_a11y, "UNLABELLED_ICON_APPS", frozenset({"Walmart"}))
    phone = VirtualPhone()
    phone.open_app("Notes")
    tree = phone.ui_tree()
    assert tree.source == "virtual" and tree.useful
    assert any(n.clickable and n.label == "new note" for n in tree.nodes)
    assert not any(n.bounds[3] <= 90 for n in tree.nodes)  # the status bar is another window
    phone.open_app("Maps")
    maps = phone.ui_tree()
    assert any(n.editable and n.label == "Search here" for n in maps.nodes)
    assert any(n.scrollable for n in maps.nodes) or maps.nodes
    phone.open_app("Walmart")
    walmart = phone.ui_tree()
    icon_buttons = [n for n in walmart.nodes if n.clickable and not n.text and n.package != SYSTEM_UI]
    assert icon_buttons and all(not n.content_desc for n in icon_buttons)  # unlabelled icon buttons
    # The navigation bar is System UI's, labelled whichever app is in front.
    nav = [n for n in walmart.nodes if n.package == SYSTEM_UI]
    assert [n.label for n in nav] == ["back button", "home button", "recent apps button"]
    phone.open_app("Chrome")
    chrome = phone.ui_tree()
    assert [n.class_name for n in chrome.nodes] == ["android.webkit.WebView"] and not chrome.useful


def test_virtual_tree_leaves_out_the_keyboard() -> None:
    phone = VirtualPhone()
    phone.open_app("Maps")
    field = next(n for n in phone.ui_tree().nodes if n.editable)
    phone.tap((field.bounds[0] + field.bounds[2]) // 2, (field.bounds[1] + field.bounds[3]) // 2)
    assert phone.keyboard_active()
    tree = phone.ui_tree()
    assert not any(len(n.label) == 1 for n in tree.nodes)  # no key nodes
    assert any("back" in n.label for n in tree.nodes)  # the navigation bar below the keyboard is there


def test_virtual_run_sends_the_tree_to_the_perceptor(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """The loop offers the device's tree to a Perceptor that accepts one (and fuses it)."""
    from mae.run.loop import run_task

    captured: list[str] = []

    def reply(request: RecordedRequest) -> str:
        if request.role == "operator":
            captured.append(request.text)
            return (
                "### Thought ###\nopen notes\n### Action ###\n"
                + json.dumps({"name": "Open_App", "arguments": {"app_name": "Notes"}})
                + "\n### Description ###\nOpen Notes\n"
            )
        if request.role == "manager":
            done = bool(captured)
            subgoal = "Finished" if done else "Open Notes"
            return f"### Thought ###\nx\n### Plan ###\n1. Open Notes\n### Current Subgoal ###\n{subgoal}\n"
        if request.role == "reflector":
            return (
                "### Outcome ###\nA\n### Error Description ###\nNone\n### Progress Status ###\nOpened Notes\n"
            )
        return "### Important Notes ###\nNone\n"

    fake_server.responder = reply
    phone = VirtualPhone()
    # screenshots sent unresized: the element list is then in screen pixels
    profile = ModelProfile(
        base_url=fake_server.base_url, model="fake", api_key_env=None, image={"resize": "none"}
    )
    client = ChatClient(profile)
    truth = phone.ground_truth()
    perceptor = Perceptor(
        ListOcr([e for e in truth if e.kind == "text"]),
        ListIcons([e.model_copy(update={"text": ""}) for e in truth if e.kind == "icon"]),  # type: ignore[arg-type]
    )
    result = run_task("Open Notes", device=phone, client=client, perceptor=perceptor, log_dir=tmp_path)
    assert result.finished, result.message
    screen = captured[0]
    # icons the detector found unnamed are named by the virtual phone's tree and marked as buttons
    assert 'button "Maps app"; coordinates: [135, 470]' in screen
    assert 'button "back button"; coordinates: [216, 2274]' in screen
    assert 'icon "voice search"' in screen


def test_keyboard_line_only_when_keys_were_left_out() -> None:
    # the keyboard is reported up, but no key row was recognised: nothing is collapsed, nothing claimed
    title = Element(kind="text", text="New note", box=(40, 300, 400, 360))
    tidied = tidy([title], 2340, keyboard_active=True)
    assert tidied.elements == [title] and not tidied.keyboard_collapsed
