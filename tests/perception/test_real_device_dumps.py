"""The accessibility-tree parser on real phones' dumps: every file of the shared real-device corpus, and a
few of them copied into ``real_dumps/`` (sources in ``real_dumps/SOURCES.md``) for exact checks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mae.perception.a11y import A11yNode, A11yTree, parse_uiautomator
from mae.perception.elements import Element
from mae.perception.fusion import fuse

HERE = Path(__file__).resolve().parent / "real_dumps"
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real_devices" / "dumps"
CORPUS_DUMPS = sorted(CORPUS.glob("*.xml")) if CORPUS.is_dir() else []


@pytest.mark.skipif(
    not CORPUS_DUMPS, reason="the shared real-device corpus (../shared/data/real_devices) is absent"
)
def test_every_corpus_dump_parses_without_an_exception() -> None:
    lost = []
    for path in CORPUS_DUMPS:
        raw = path.read_bytes()
        tree = parse_uiautomator(raw)
        says_something = b'clickable="true"' in raw or re.search(rb'(text|content-desc)="[^"]', raw)
        if not tree.useful and says_something:  # 183.xml (a game's canvas) has nothing to say
            lost.append(path.name)
        for node in tree.nodes:
            left, top, right, bottom = node.bounds
            assert right > left and bottom > top, path.name
    assert len(CORPUS_DUMPS) >= 200
    assert lost == [], "these real dumps lost every label and control in parsing"


def test_utf16_dump_saved_by_powershell_is_read_with_a_warning() -> None:
    tree = parse_uiautomator((HERE / "048.xml").read_bytes(), (1080, 1677))
    assert tree.warnings == [
        "the dump is in UTF-16 (a file saved through a Windows shell); it was read as such"
    ]
    assert len(tree.nodes) > 50
    assert all(n.bounds != (0, 0, 0, 0) for n in tree.nodes)  # the [0,0][0,0] nodes are left out
    assert any(n.package == "com.instagram.androil" for n in tree.nodes)


def test_trailing_status_line_after_the_dump_is_ignored_and_other_text_is_warned_about() -> None:
    raw = (HERE / "075.xml").read_bytes()
    assert raw.rstrip().endswith(b"UI hierchary dumped to: /dev/tty")
    tree = parse_uiautomator(raw, (1200, 2670))
    assert tree.warnings == []  # what `uiautomator dump /dev/tty` always prints: not a problem
    assert any("\n" in n.text or "\n" in n.content_desc for n in tree.nodes)  # &#10; kept as a line break
    cut = raw[: raw.rindex(b"</hierarchy>") + len(b"</hierarchy>")]
    assert parse_uiautomator(cut + b"\nKilled\n").warnings == ["text after the dump's end was ignored"]


def test_dialog_only_dump_marks_its_window_on_the_real_screen() -> None:
    tree = parse_uiautomator((HERE / "032.xml").read_bytes(), (720, 1280))
    assert tree.window == (18, 498, 702, 894)
    ok = next(e for e in fuse([], tree) if e.text == "OK")
    assert ok.role == "button"


def test_full_screen_windows_are_not_dialogs_and_the_keyboard_window_is_not_the_app() -> None:
    gmail = parse_uiautomator((HERE / "016.xml").read_bytes(), (1080, 2340))
    assert gmail.window is None
    packages = {n.package for n in gmail.nodes}
    assert {
        "com.google.android.gm",
        "com.android.systemui",
        "com.google.android.inputmethod.latin",
    } <= packages


def test_rotation_attribute_over_portrait_bounds_keeps_the_whole_screen() -> None:
    raw = (HERE / "038.xml").read_bytes()
    assert b'rotation="1"' in raw
    for screen in ((1080, 1920), (1920, 1080)):
        tree = parse_uiautomator(raw, screen)
        labels = {n.label for n in tree.nodes}
        assert "Standouts, tab 2 of  5, unselected" in labels  # at y 1830-1920, below a landscape screen
        assert max(n.bounds[3] for n in tree.nodes) == 1920


def test_controls_labelled_by_their_children_are_listed_without_ocr() -> None:
    tree = parse_uiautomator((HERE / "038.xml").read_bytes(), (1080, 1920))
    card = next(n for n in tree.nodes if n.clickable and n.bounds == (30, 1314, 1050, 1654))
    assert card.label == ""
    assert card.inner_label == "My simple pleasures, Half a shot of jalapeño vinegar. Thas all."
    listed = [e for e in fuse([], tree) if e.text.startswith("My simple pleasures")]
    assert len(listed) == 1 and listed[0].role == "button"
    assert listed[0].box == (66, 1419, 295, 1449)  # on its title, where a person reads it
    more = next(e for e in fuse([], tree) if e.text == "More")
    assert more.role == "button"


def test_nodes_are_cut_to_the_screen() -> None:
    xml = (
        '<hierarchy rotation="0"><node text="" class="android.widget.FrameLayout" package="p" '
        'bounds="[0,0][1080,2400]"><node text="Row" clickable="true" class="android.widget.TextView" '
        'package="p" bounds="[0,2300][1080,2600]" /><node text="Gone" class="android.widget.TextView" '
        'package="p" bounds="[0,2500][1080,2700]" /><node text="Hidden" visible-to-user="false" '
        'class="android.widget.TextView" package="p" bounds="[0,100][1080,200]" /></node></hierarchy>'
    )
    tree = parse_uiautomator(xml, (1080, 2400))
    assert [(n.text, n.bounds) for n in tree.nodes] == [
        ("", (0, 0, 1080, 2400)),
        ("Row", (0, 2300, 1080, 2400)),
    ]


def test_shapes_inside_one_labelled_photo_are_listed_once() -> None:
    # Google Photos' grid in the corpus's pair 202: the contour detector finds three shapes in the
    # first photo, and each took the photo's description (three lines for one photo).
    photo = A11yNode(
        content_desc="Photo taken on Mar 16, 2026, 1:18:42 PM",
        class_name="android.widget.FrameLayout",
        clickable=True,
        bounds=(0, 1406, 354, 1761),
    )
    shapes = [
        Element(kind="icon", box=box, source="contour")
        for box in ((42, 1418, 312, 1610), (42, 1482, 300, 1704), (42, 1666, 212, 1760))
    ]
    fused = fuse(shapes, A11yTree(source="uiautomator", nodes=[photo]))
    assert [(e.text, e.box, e.role) for e in fused] == [
        ("Photo taken on Mar 16, 2026, 1:18:42 PM", (42, 1482, 300, 1704), "button")
    ]
