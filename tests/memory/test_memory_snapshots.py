"""Snapshots share unchanged chunks, old versions are pruned by the policy, rollback and damage handling."""

from __future__ import annotations

import gc
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from mae.actions.registry import Shortcut
from mae.cli import main
from mae.errors import MemoryStoreError
from mae.memory import snapshots
from mae.memory.edits import Change
from mae.memory.longterm import MemoryState, MemoryStore
from mae.memory.shortcuts import shortcut_to_json


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def tips(count: int, extra: str = "") -> str:
    return "".join(f"{i}. Lesson {i} about screen {i % 17}.\n" for i in range(1, count + 1)) + extra


def add_tip(store: MemoryStore, text: str) -> None:
    def mutate(state: MemoryState) -> Change:
        state.tips += f"{len(state.tip_items()) + 1}. {text}\n"
        return Change("one more tip", ["added a tip"])

    store.update(mutate, author="test")


def test_memory_versions_store_only_the_chunks_that_changed(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips(tips(3000))
    first = folder_bytes(tmp_path)
    add_tip(store, "A new lesson at the end.")
    second = folder_bytes(tmp_path) - first
    middle = store.load().tips.replace("Lesson 1500 about", "Lesson 1500, corrected, about")
    store.set_tips(middle)
    third = folder_bytes(tmp_path) - first - second
    assert second < first / 10 and third < first / 10, (first, second, third)
    assert store.load().tips == middle and len(store.load().tip_items()) == 3001
    # older versions are still whole, and rollback restores them
    assert store.load_version(1).tips == tips(3000)
    store.rollback(1)
    assert store.load().tips == tips(3000)


def test_memory_damaged_or_missing_chunk_makes_its_version_unreadable(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips(tips(200))
    store.set_tips(tips(200, "201. Only in version 2.\n"))
    data = json.loads((tmp_path / "versions" / "000002.json").read_text(encoding="utf-8"))
    last = data["chunks"]["tips"][-1]
    path = snapshots.object_path(tmp_path / "objects", last)
    snapshots._CACHE.clear()
    path.write_text('["tampered"]', encoding="utf-8")
    state = store.load()
    assert state.version == 1 and "is damaged" in store.warnings[0]
    path.unlink()
    assert store.load().version == 1 and "which is missing" in store.warnings[0]


def test_memory_format_1_snapshots_are_still_read(tmp_path: Path) -> None:
    (tmp_path / "versions").mkdir()
    old = {"format": 1, "version": 1, "author": "old mae", "summary": "x", "tips": "1. Old tip.\n"}
    (tmp_path / "versions" / "000001.json").write_text(json.dumps(old), encoding="utf-8")
    store = MemoryStore(tmp_path)
    assert store.load().tips == "1. Old tip.\n"
    add_tip(store, "New tip.")
    assert store.load().tip_items() == ["Old tip.", "New tip."] and store.load_version(1).author == "old mae"


def test_memory_prune_keeps_the_last_versions_and_those_runs_started_from(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, keep_versions=3)
    store.set_tips(tips(300))
    add_tip(store, "Version 2.")
    store.record_run_start(2, "a task that used version 2")
    for number in range(3, 15):
        add_tip(store, f"Version {number}.")
    # the write that made 14 versions (3 kept + 10 slack passed) pruned in one batch
    assert store.versions() == [2, 12, 13, 14]
    versions = [json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "versions").glob("*.json")]
    on_disk = {p.stem for p in (tmp_path / "objects").rglob("*.json")}
    assert on_disk == snapshots.referenced(versions), "no chunk left that only pruned versions used"
    add_tip(store, "Version 15.")
    report = store.prune(keep_last=1)
    assert report.versions == [12, 13, 14] and store.versions() == [2, 15] and report.bytes_freed > 0
    for version in store.versions():  # every kept version still loads whole
        assert store.load_version(version).tip_items()[-1] == f"Version {version}."
    with pytest.raises(MemoryStoreError, match=r"old versions are pruned.*versions: 2, 15"):
        store.rollback(5)
    store.rollback(2)
    assert store.load().tip_items()[-1] == "Version 2." and store.load().version == 16
    history = [entry.version for entry in store.history() if entry.version is not None]
    assert history == list(range(1, 17)), "the history keeps a line for every version"


def test_memory_prune_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = MemoryStore(tmp_path)
    for number in range(1, 6):
        add_tip(store, f"Version {number}.")
    assert main(["memory", "prune", "--keep", "2", "--memory-dir", str(tmp_path)]) == 0
    assert "deleted 3 old version(s)" in capsys.readouterr().out and store.versions() == [4, 5]
    assert main(["memory", "prune", "--keep", "0", "--memory-dir", str(tmp_path)]) == 2
    assert "--keep must be at least 1" in capsys.readouterr().err


def first_chunk(folder: Path, version: dict[str, Any]) -> bytes:
    return snapshots.object_path(folder / "objects", version["chunks"]["shortcuts"][0]).read_bytes()


def _varied_shortcuts() -> dict[str, Shortcut]:
    """Shortcuts that test the format-3 rows: absent optional fields, literals, a key that is not the name."""
    sparse = Shortcut.model_validate(
        {"name": "Go_Home_Twice", "atomic_action_sequence": [{"name": "Home"}] * 2}
    )
    literal = Shortcut.model_validate(
        {
            "name": "Wait_And_Tap",
            "arguments": ["x", "y"],
            "description": "Wait, then tap.",
            "atomic_action_sequence": [
                {"name": "Wait", "arguments_map": {"seconds": 2}},
                {"name": "Tap", "arguments_map": {"y": "y", "x": "x"}},
                {"name": "Tap", "arguments_map": {"x": "x", "y": "y"}},
            ],
        }
    )
    shortcuts = {s.name: s for s in (sparse, literal)}
    shortcuts["Filed_Elsewhere"] = literal.model_copy(deep=True)
    for index in range(150):  # several chunks
        name = f"Search_Item_{index}"
        shortcuts[name] = Shortcut.model_validate(
            {
                "name": name,
                "arguments": ["x", "y", "text"],
                "description": f"Search for item {index}.",
                "precondition": "A search box is visible.",
                "atomic_action_sequence": [
                    {"name": "Tap", "arguments_map": {"x": "x", "y": "y"}},
                    {"name": "Type", "arguments_map": {"text": "text"}},
                    {"name": "Enter", "arguments_map": {}},
                ],
            }
        )
    return shortcuts


def _store_shortcuts(store: MemoryStore, shortcuts: dict[str, Shortcut]) -> None:
    def mutate(state: MemoryState) -> Change:
        state.shortcuts = {name: s.model_copy(deep=True) for name, s in shortcuts.items()}
        return Change("shortcuts", ["replaced the Shortcuts"])

    store.update(mutate, author="test")


def _as_stored(shortcuts: dict[str, Shortcut]) -> list[tuple[str, str, dict[str, object], list[str]]]:
    return [
        (key, repr(s), shortcut_to_json(s), [repr(step) for step in s.atomic_action_sequence])
        for key, s in shortcuts.items()
    ]


def test_memory_shortcuts_load_exactly_as_written_in_format_3(tmp_path: Path) -> None:
    shortcuts = _varied_shortcuts()
    store = MemoryStore(tmp_path)
    _store_shortcuts(store, shortcuts)
    data = json.loads((tmp_path / "versions" / "000001.json").read_text(encoding="utf-8"))
    assert data["format"] == 3 and len(data["chunks"]["shortcuts"]) > 1
    first = json.loads(
        snapshots.object_path(tmp_path / "objects", data["chunks"]["shortcuts"][0]).read_bytes()
    )
    assert set(first) == {"steps", "shortcuts"} and len(first["steps"]) < len(first["shortcuts"])
    for cached in (False, True):
        if not cached:
            snapshots._CACHE.clear()
        loaded = store.load().shortcuts
        assert _as_stored(loaded) == _as_stored(shortcuts), f"cached={cached}"
        assert "arguments" not in shortcut_to_json(loaded["Go_Home_Twice"]), "absent fields stay absent"
        assert loaded["Filed_Elsewhere"].name == "Wait_And_Tap" and not loaded["Search_Item_7"].problems()
        assert loaded["Wait_And_Tap"] == shortcuts["Wait_And_Tap"]
    # a later version built from the loaded one (update works on a deep copy) keeps everything
    add_tip(store, "One more tip.")
    snapshots._CACHE.clear()
    assert _as_stored(store.load().shortcuts) == _as_stored(shortcuts)


def test_memory_format_2_shortcut_chunks_are_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shortcuts = _varied_shortcuts()
    store = MemoryStore(tmp_path)
    with monkeypatch.context() as patch:  # write the chunks as format 2 did: [name, Shortcut JSON] pairs
        patch.setattr(snapshots, "_shortcut_table", lambda pairs: pairs)
        _store_shortcuts(store, shortcuts)
    path = tmp_path / "versions" / "000001.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, "format": 2}), encoding="utf-8")
    first = json.loads(
        snapshots.object_path(tmp_path / "objects", data["chunks"]["shortcuts"][0]).read_bytes()
    )
    assert isinstance(first, list) and isinstance(first[0][1], dict)
    snapshots._CACHE.clear()
    assert _as_stored(store.load().shortcuts) == _as_stored(shortcuts)
    add_tip(store, "Written by this mae.")
    snapshots._CACHE.clear()
    assert store.load().format == 3 and _as_stored(store.load().shortcuts) == _as_stored(shortcuts)


@pytest.mark.parametrize(
    "row",
    [
        ["Bad_Arguments", [1, 2], "", "", [0]],
        ["No_Steps", [], "", "", []],
        ["Bad_Step", [], "", "", [5]],
        [7, [], "", "", [0]],
        ["Short_Row", [], ""],
    ],
)
def test_memory_a_malformed_format_3_chunk_makes_its_version_unreadable(
    tmp_path: Path, row: list[object]
) -> None:
    store = MemoryStore(tmp_path)
    add_tip(store, "Version 1.")
    _store_shortcuts(store, _varied_shortcuts())
    data = json.loads((tmp_path / "versions" / "000002.json").read_text(encoding="utf-8"))
    content = json.dumps({"steps": [["Home", None]], "shortcuts": [row]}).encode("utf-8")
    name = hashlib.sha256(content).hexdigest()  # a well-formed file whose content matches its name
    target = snapshots.object_path(tmp_path / "objects", name)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    data["chunks"]["shortcuts"][0] = name
    (tmp_path / "versions" / "000002.json").write_text(json.dumps(data), encoding="utf-8")
    snapshots._CACHE.clear()
    assert store.load().version == 1 and "is not a valid memory chunk" in store.warnings[0]


def test_memory_load_leaves_the_garbage_collector_as_it_was(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    _store_shortcuts(store, _varied_shortcuts())
    snapshots._CACHE.clear()
    assert gc.isenabled()
    store.load()
    assert gc.isenabled()
    gc.disable()
    try:
        snapshots._CACHE.clear()
        store.load()
        assert not gc.isenabled()
    finally:
        gc.enable()
