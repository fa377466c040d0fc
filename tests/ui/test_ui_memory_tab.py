"""Memory tab: Tips and Shortcuts view/edit with validation, usage table, import/export, rollback."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from mae.memory.longterm import MemoryStore, UsagePolicy
from mae.ui import memory_tab

GOOD = {
    "Open_And_Search": {
        "name": "Open_And_Search",
        "arguments": ["app", "x", "y", "text"],
        "description": "Open an app and search in it.",
        "precondition": "The app is installed.",
        "atomic_action_sequence": [
            {"name": "Open_App", "arguments_map": {"app_name": "app"}},
            {"name": "Tap", "arguments_map": {"x": "x", "y": "y"}},
            {"name": "Type", "arguments_map": {"text": "text"}},
        ],
    }
}


def test_initial_memory_view(tmp_path: Path) -> None:
    view = memory_tab.load_view(MemoryStore(tmp_path / "memory"), UsagePolicy())
    assert view.version == 0 and view.versions == [0]
    assert "Do not add any payment information" in view.tips
    assert view.shortcut_rows[0][:7] == ["Tap_Type_and_Enter", "x, y, text", "ok", 0, 0, 0, 0]
    assert view.shortcut_rows[0][7].startswith("Tap an input box")
    assert json.loads(view.shortcuts_json)["Tap_Type_and_Enter"]["arguments"] == ["x", "y", "text"]
    assert "version 0" in view.header()


def test_edit_tips_and_shortcuts_with_validation(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory")
    assert "saved as version 1" in memory_tab.save_tips(store, "0. Close pop-ups first.\n1. Prefer search.\n")
    assert "nothing changed" in memory_tab.save_tips(store, "0. Close pop-ups first.\n1. Prefer search.\n")
    assert "✖" in memory_tab.save_tips(store, "   ")

    bad_json, saved = memory_tab.save_shortcuts(store, '{"Broken": ')
    assert not saved
    assert "not valid JSON" in bad_json and "line 1" in bad_json and "Nothing was saved" in bad_json

    current = json.loads(memory_tab.load_view(store).shortcuts_json)
    invalid = {
        "Bad_One": {"name": "Bad_One", "arguments": ["q"], "atomic_action_sequence": [{"name": "Fly"}]}
    }
    # one invalid Shortcut refuses the whole save: nothing is added, nothing is removed
    for document in ({**current, **GOOD, **invalid}, invalid):
        message, saved = memory_tab.save_shortcuts(store, json.dumps(document))
        assert not saved and "Nothing was saved" in message
        assert "Bad\\_One" in message and "unknown operation 'Fly'" in message and "removed" not in message
        assert [row[0] for row in memory_tab.load_view(store).shortcut_rows] == ["Tap_Type_and_Enter"]
    assert memory_tab.load_view(store).version == 1

    message, saved = memory_tab.save_shortcuts(store, json.dumps({**current, **GOOD}))
    assert saved and "version 2" in message and "added Open_And_Search" in message
    view = memory_tab.load_view(store)
    assert [row[0] for row in view.shortcut_rows] == ["Tap_Type_and_Enter", "Open_And_Search"]
    assert view.tips.startswith("0. Close pop-ups first.")

    # the editor holds the whole set: a Shortcut left out is removed
    message, saved = memory_tab.save_shortcuts(store, json.dumps(GOOD))
    assert saved and "removed Tap_Type_and_Enter" in message
    assert [row[0] for row in memory_tab.load_view(store).shortcut_rows] == ["Open_And_Search"]


def test_history_and_rollback(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory")
    memory_tab.save_tips(store, "0. First version.\n")
    memory_tab.save_tips(store, "0. Second version.\n")
    view = memory_tab.load_view(store)
    assert view.versions == [0, 1, 2]
    assert [row[0] for row in view.history_rows][:2] == [2, 1]
    assert view.history_rows[0][2] == "user (demo)" and "Tips edited" in view.history_rows[0][3]
    message = memory_tab.rollback(store, "1")
    assert "Rollback to version 1 saved as version 3" in message
    assert memory_tab.load_view(store).tips == "0. First version.\n"
    assert "does not exist" in memory_tab.rollback(store, 42)
    assert "Choose a version" in memory_tab.rollback(store, None)


def test_import_and_export(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory")
    tips_file = tmp_path / "tips.txt"
    tips_file.write_text("0. Imported tip.\n", "utf-8")
    shortcuts_file = tmp_path / "shortcuts.json"
    shortcuts_file.write_text(json.dumps(GOOD), "utf-8")
    assert "Choose a Tips file" in memory_tab.import_memory(store, None, None)
    message = memory_tab.import_memory(store, str(tips_file), str(shortcuts_file))
    assert "saved as version 1" in message and "added Open_And_Search" in message
    broken = tmp_path / "broken.json"
    broken.write_text("not json", "utf-8")
    assert "✖" in memory_tab.import_memory(store, None, str(broken))

    archive = memory_tab.export_memory(store, out_dir=tmp_path / "out")
    assert archive.name == "mae-memory-v1.zip"
    with zipfile.ZipFile(archive) as handle:
        assert sorted(handle.namelist()) == ["shortcuts.json", "tips.txt"]
        assert handle.read("tips.txt").decode() == "0. Imported tip.\n"
        assert "Open_And_Search" in json.loads(handle.read("shortcuts.json"))


def test_history_rows_of_unchanged_memory_say_why(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.log_event(
        "experience from task: Open Notes",
        author="experience reflector",
        problems=["Experience Reflectors skipped: the provider refused the request"],
    )
    store.log_event("experience from task: Go home", author="experience reflector")
    rows = memory_tab.load_view(store).history_rows
    assert [row[0] for row in rows] == ["unchanged", "unchanged"]
    assert rows[0][4] == "nothing changed"
    assert rows[1][4] == "problem: Experience Reflectors skipped: the provider refused the request"
