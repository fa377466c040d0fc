"""The long-term memory store: versions, history, rollback, corruption handling, locking."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from mae.actions.registry import INITIAL_SHORTCUTS
from mae.errors import MemoryStoreError
from mae.memory.atomic import DirectoryLock
from mae.memory.longterm import MemoryState, MemoryStore, UsagePolicy, initial_state
from mae.memory.tips import INITIAL_TIPS, split_tips

SEARCH = {
    "name": "Search_In_App",
    "arguments": ["x", "y", "text"],
    "description": "Tap the search box, type, press Enter.",
    "precondition": "An empty search box is visible.",
    "atomic_action_sequence": [
        {"name": "Tap", "arguments_map": {"x": "x", "y": "y"}},
        {"name": "Type", "arguments_map": {"text": "text"}},
        {"name": "Enter", "arguments_map": {}},
    ],
}


def test_memory_fresh_store_is_the_initial_memory_and_writes_nothing(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    state = store.load()
    assert state.version == 0
    assert state.tips == INITIAL_TIPS
    assert len(split_tips(state.tips)) == 4
    assert list(state.shortcuts) == list(INITIAL_SHORTCUTS)
    assert not (tmp_path / "mem").exists()
    assert store.history() == []


def test_memory_every_change_is_a_new_version_with_author_and_history(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    first = store.set_tips("1. Close pop-ups.\n2. Prefer search.\n", author="alice")
    second = store.put_shortcuts({"Search_In_App": SEARCH}, author="bob")
    unchanged = store.set_tips("1. Close pop-ups.\n2. Prefer search.\n", author="alice")
    assert (first.version, second.version, unchanged.version) == (1, 2, None)
    assert store.versions() == [1, 2]
    state = store.load()
    assert state.version == 2 and state.author == "bob"
    assert "Search_In_App" in state.shortcuts and state.changes == ["added Search_In_App"]
    assert store.load_version(1).shortcuts.keys() == INITIAL_SHORTCUTS.keys()
    history = store.history()
    assert [(h.version, h.author) for h in history] == [(1, "alice"), (2, "bob")]
    assert history[1].previous == 1


def test_memory_rollback_adds_a_version_and_keeps_everything(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips("1. First tip.\n")
    store.put_shortcuts({"Search_In_App": SEARCH})
    result = store.rollback(1)
    assert result.version == 3
    state = store.load()
    assert state.tips == "1. First tip.\n"
    assert "Search_In_App" not in state.shortcuts
    assert store.load_version(2).shortcuts["Search_In_App"].name == "Search_In_App"
    assert store.rollback(0).state.tips == INITIAL_TIPS
    with pytest.raises(MemoryStoreError, match="does not exist"):
        store.rollback(42)


def test_memory_corrupt_latest_version_falls_back_and_is_kept(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips("1. Good tip.\n")
    store.set_tips("1. Newer tip.\n")
    broken = tmp_path / "versions" / "000002.json"
    broken.write_text('{"format": 1, "version": 2, "tips": "1. Newer', encoding="utf-8")
    state = store.load()
    assert state.version == 1 and state.tips == "1. Good tip.\n"
    assert store.warnings and "000002.json" in store.warnings[0]
    assert f"rollback 1 --memory-dir {tmp_path}`" in store.warnings[0]
    result = store.set_tips("1. After repair.\n")
    assert result.version == 3, "a new version never overwrites the unreadable one"
    assert broken.read_text(encoding="utf-8").endswith("Newer")
    assert store.load().tips == "1. After repair.\n" and store.warnings == []


def test_memory_all_versions_unreadable_is_a_clear_error_and_reset_recovers(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips("1. Only tip.\n")
    (tmp_path / "versions" / "000001.json").write_text("not json", encoding="utf-8")
    with pytest.raises(MemoryStoreError) as caught:
        store.load()
    message = str(caught.value)
    assert "no readable memory version" in message
    assert f"memory reset --memory-dir {tmp_path}`" in message  # the command fixes this folder, not another
    with pytest.raises(MemoryStoreError):
        store.set_tips("1. x\n")
    result = store.reset()
    assert result.version == 2
    assert store.load().tips == INITIAL_TIPS
    assert (tmp_path / "versions" / "000001.json").read_text(encoding="utf-8") == "not json"


def test_memory_snapshot_with_wrong_shape_is_unreadable_not_trusted(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips("1. A.\n")
    store.set_tips("1. B.\n")
    path = tmp_path / "versions" / "000002.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["shortcuts"] = {"bad name!": {"name": "bad name!", "atomic_action_sequence": []}}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert store.load().version == 1
    assert "not a valid memory snapshot" in store.warnings[0]


def test_memory_interrupted_history_line_is_skipped_and_repaired(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips("1. A.\n")
    with (tmp_path / "history.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"time": 1, "version": 9, "auth')  # a writer killed mid-line
    store.set_tips("1. B.\n")
    history = store.history()
    assert [h.version for h in history] == [1, 2]
    assert any("unreadable" in w for w in store.warnings)
    lines = (tmp_path / "history.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[-1])["version"] == 2


def test_memory_history_is_rebuilt_from_snapshots_when_the_log_is_gone(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_tips("1. A.\n", author="carol")
    (tmp_path / "history.jsonl").unlink()
    history = store.history()
    assert [(h.version, h.author, h.summary) for h in history] == [(1, "carol", "Tips edited")]


def test_memory_concurrent_writers_never_lose_an_update(tmp_path: Path) -> None:
    store_dir = tmp_path / "mem"
    errors: list[BaseException] = []

    def writer(index: int) -> None:
        try:
            store = MemoryStore(store_dir)
            for round_ in range(5):

                def mutate(state: MemoryState, tag: str = f"{index}-{round_}") -> object:
                    from mae.memory.edits import Change

                    state.tips += f"{len(split_tips(state.tips)) + 1}. tip {tag}\n"
                    return Change(f"tip {tag}", [f"added tip {tag}"])

                store.update(mutate, author=f"writer {index}")  # type: ignore[arg-type]
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    state = MemoryStore(store_dir).load()
    assert state.version == 20
    assert len(split_tips(state.tips)) == 4 + 20


def test_memory_lock_times_out_with_a_message(tmp_path: Path) -> None:
    holder = DirectoryLock(tmp_path / ".lock")
    holder.acquire()
    try:
        store = MemoryStore(tmp_path, lock_timeout_s=0.2)
        with pytest.raises(MemoryStoreError, match="another mae process"):
            store.set_tips("1. x\n")
    finally:
        holder.release()
    MemoryStore(tmp_path).set_tips("1. x\n")


def test_memory_directory_that_is_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("x", encoding="utf-8")
    with pytest.raises(MemoryStoreError, match="is a file"):
        MemoryStore(path).load()


def test_memory_usage_status_flag_and_withhold() -> None:
    state = initial_state()
    policy = UsagePolicy(flag_after=2, withhold_after=3)
    usage = state.usage_of("Tap_Type_and_Enter")
    usage.record(False)
    assert state.status("Tap_Type_and_Enter", policy) == "ok"
    usage.record(False)
    assert state.status("Tap_Type_and_Enter", policy) == "flagged"
    assert "Tap_Type_and_Enter" in state.usable_shortcuts(policy)
    usage.record(False)
    assert state.status("Tap_Type_and_Enter", policy) == "withheld"
    assert state.usable_shortcuts(policy) == {}
    usage.record(True)
    assert state.status("Tap_Type_and_Enter", policy) == "ok"


def test_memory_reinstate_and_delete(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.put_shortcuts({"Search_In_App": SEARCH})

    def fail_three(state: MemoryState) -> object:
        from mae.memory.edits import Change

        for _ in range(3):
            state.usage_of("Search_In_App").record(False)
        return Change("failures")

    store.update(fail_three, author="test")  # type: ignore[arg-type]
    policy = UsagePolicy()
    assert store.load().status("Search_In_App", policy) == "withheld"
    store.reinstate_shortcut("Search_In_App")
    assert store.load().status("Search_In_App", policy) == "ok"
    store.delete_shortcut("Search_In_App")
    assert "Search_In_App" not in store.load().shortcuts
    with pytest.raises(MemoryStoreError, match="no Shortcut named"):
        store.delete_shortcut("Search_In_App")


def test_a_shortcut_call_the_user_stopped_is_not_counted() -> None:
    from mae.memory.usage import shortcut_calls
    from mae.memory.working import ActionRecord

    done = ActionRecord(step=1, name="S", text="S()", shortcut="S", outcome="A")
    stopped = ActionRecord(step=2, name="S", text="S()", shortcut="S", outcome="B", stopped=True)
    assert shortcut_calls([done, stopped]) == [done]
