"""Snapshots share unchanged chunks, old versions are pruned by the policy, rollback and damage handling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mae.cli import main
from mae.errors import MemoryStoreError
from mae.memory import snapshots
from mae.memory.longterm import Change, MemoryState, MemoryStore


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
