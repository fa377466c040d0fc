"""Import and export of the paper's formats, and the ``memory`` command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from mae.cli import memory_cmd
from mae.errors import MemoryStoreError
from mae.memory.longterm import MemoryStore
from mae.memory.tips import INITIAL_TIPS

DATA = Path(__file__).parent / "data"


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    memory_cmd.register(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return int(args.func(args))


def test_memory_paper_files_round_trip_through_export_unchanged(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    result = store.import_files(tips=DATA / "paper_tips.txt", shortcuts=DATA / "paper_shortcuts.json")
    assert result.change.rejected == []
    assert result.version == 1
    out = tmp_path / "out"
    tips_path, shortcuts_path = store.export(out)
    assert tips_path.read_text(encoding="utf-8") == (DATA / "paper_tips.txt").read_text(encoding="utf-8")
    original = json.loads((DATA / "paper_shortcuts.json").read_text(encoding="utf-8"))
    exported = json.loads(shortcuts_path.read_text(encoding="utf-8"))
    assert exported == original
    assert list(exported) == list(original)
    assert [list(v) for v in exported.values()] == [list(v) for v in original.values()]
    # and once more: importing the export changes nothing
    again = store.import_files(tips=tips_path, shortcuts=shortcuts_path)
    assert again.version is None


def test_memory_import_refuses_invalid_shortcuts_and_keeps_the_rest(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    result = store.import_files(shortcuts=DATA / "broken_shortcuts.json")
    refused = {r.name: r.reason for r in result.change.rejected}
    assert set(refused) == {"Clear_And_Retype", "Fly_Home", "Other_Name"}
    assert "x_clear" in refused["Clear_And_Retype"] and "never used" in refused["Clear_And_Retype"]
    assert "unknown operation 'Teleport'" in refused["Fly_Home"]
    assert "Mismatched_Key" in refused["Other_Name"]
    state = store.load()
    assert set(state.shortcuts) == {"Tap_Type_and_Enter", "Search_And_Pick_First"}
    assert state.tips == INITIAL_TIPS
    assert [r.name for r in store.history()[-1].rejected] == ["Clear_And_Retype", "Fly_Home", "Other_Name"]


def test_memory_import_of_a_non_json_file_changes_nothing(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"A": {"name": "A",', encoding="utf-8")
    with pytest.raises(MemoryStoreError, match="not valid JSON"):
        store.import_files(tips=DATA / "paper_tips.txt", shortcuts=bad)
    assert store.versions() == []
    with pytest.raises(MemoryStoreError, match="does not exist"):
        store.import_files(tips=tmp_path / "missing.txt")


def test_memory_edit_whole_shortcuts_json_replaces_but_keeps_refused_entries(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.import_files(shortcuts=DATA / "paper_shortcuts.json")
    edited = json.loads((DATA / "paper_shortcuts.json").read_text(encoding="utf-8"))
    del edited["Back_Twice"]
    edited["Scroll_Down_List"]["atomic_action_sequence"][0]["name"] = "Scroll"  # an invalid edit
    result = store.put_shortcuts(edited, mode="replace", source="editor")
    state = store.load()
    assert "Back_Twice" not in state.shortcuts
    assert state.shortcuts["Scroll_Down_List"].atomic_action_sequence[0].name == "Swipe"
    assert [r.name for r in result.change.rejected] == ["Scroll_Down_List"]


def test_memory_cli_show_import_export_history_rollback_reset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = tmp_path / "mem"
    monkeypatch.setenv("MAE_MEMORY_DIR", str(mem))
    assert run_cli("memory", "show") == 0
    assert "version 0" in capsys.readouterr().out

    code = run_cli("memory", "import", "--shortcuts", str(DATA / "broken_shortcuts.json"))
    captured = capsys.readouterr()
    assert code == 1
    assert "memory version 1" in captured.out and "added Search_And_Pick_First" in captured.out
    assert "refused Shortcut Fly_Home" in captured.err

    other = tmp_path / "other"
    assert (
        run_cli("memory", "import", "--tips", str(DATA / "paper_tips.txt"), "--memory-dir", str(other)) == 0
    )
    capsys.readouterr()
    assert MemoryStore(other).load().tips.startswith("0. Do not add")
    assert MemoryStore(mem).load().version == 1, "--memory-dir overrides MAE_MEMORY_DIR"

    assert run_cli("memory", "show", "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["version"] == 1 and "Search_And_Pick_First" in shown["shortcuts"]
    assert {row["name"]: row["status"] for row in shown["status"]}["Search_And_Pick_First"] == "ok"

    assert run_cli("memory", "export", "--out", str(tmp_path / "exp")) == 0
    assert json.loads((tmp_path / "exp" / "shortcuts.json").read_text(encoding="utf-8")).keys() == {
        "Tap_Type_and_Enter",
        "Search_And_Pick_First",
    }

    assert run_cli("memory", "rollback", "1") == 0  # version 1 is the current one
    said = capsys.readouterr().out
    assert "version 1 is the current memory already" in said and "restored" not in said
    assert run_cli("memory", "rollback", "0") == 0
    assert "memory version 2" in capsys.readouterr().out
    assert run_cli("memory", "rollback", "0") == 0  # version 2 holds what version 0 holds
    said = capsys.readouterr().out
    assert "same Tips and Shortcuts as the current version 2: nothing changed" in said
    assert "restored" not in said
    assert run_cli("memory", "history") == 0
    history = capsys.readouterr().out
    assert "v1" in history and "v2" in history and "refused Fly_Home" in history

    assert run_cli("memory", "reset") == 1, "reset needs --yes when not interactive"
    assert run_cli("memory", "reset", "--yes") == 0
    assert "nothing changed" in capsys.readouterr().out  # version 2 already is the initial memory
