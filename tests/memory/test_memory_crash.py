"""A writer killed with SIGKILL at random moments never leaves the store unreadable or inconsistent."""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from mae.memory.edits import Change
from mae.memory.longterm import MemoryState, MemoryStore

ROUNDS = 60
PAYLOAD = 200_000


def payload(version: int) -> str:
    """The Tips a writer stores as ``version``: large, so kills often land mid-write."""
    return f"1. version {version} " + ("abcdefghij" * (PAYLOAD // 10)) + f" end {version}\n"


def _write_forever(directory: Path) -> None:
    store = MemoryStore(directory)

    def mutate(state: MemoryState) -> Change:
        state.tips = payload(state.version + 1)
        usage = state.usage_of("Tap_Type_and_Enter")
        usage.record(state.version % 2 == 0)
        return Change(f"write {state.version + 1}", ["tips rewritten"])

    while True:
        store.update(mutate, author=f"writer {os.getpid()}")


def write_seconds(directory: Path) -> float:
    """How long one write takes here and now (the slowest of three), so kills land during writes."""
    store = MemoryStore(directory)

    def mutate(state: MemoryState) -> Change:
        state.tips = payload(state.version + 1)
        return Change("timing")

    timings = []
    for _ in range(3):
        begun = time.monotonic()
        store.update(mutate, author="timing")
        timings.append(time.monotonic() - begun)
    return max(timings)


@pytest.mark.skipif(sys.platform.startswith("win"), reason="needs fork and SIGKILL")
def test_memory_store_survives_writers_killed_mid_write(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    rng = random.Random(7)
    store = MemoryStore(directory)
    last_version = 0
    left_temp_files = 0
    window = max(0.06, 3 * write_seconds(tmp_path / "timing"))  # a busy machine writes more slowly
    started = time.monotonic()
    for _ in range(ROUNDS):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            try:
                _write_forever(directory)
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0.002, window))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, "the writer died on its own"
        left_temp_files += any(directory.rglob(".tmp-*"))  # versions/ or objects/

        state = store.load()
        assert store.warnings == [], store.warnings
        assert state.version >= last_version
        if state.version:
            assert state.tips == payload(state.version), (
                f"version {state.version} holds another version's data"
            )
            assert state.summary == f"write {state.version}"
        last_version = state.version
        history = store.history()
        assert [h.version for h in history if h.version is not None] == list(range(1, state.version + 1))

    assert last_version > 0, "no write ever completed"
    assert left_temp_files > 0, "no kill landed during a write: the test did not exercise the risky window"
    # a writer after the crashes cleans up and continues from the newest version
    result = store.set_tips("1. Back to normal.\n")
    assert result.version == last_version + 1
    assert not list((directory / "versions").glob(".tmp-*"))
    # no lock left waiting (a stuck one costs its 30 s timeout); the sleeps themselves scale with the machine
    assert time.monotonic() - started < 30 + ROUNDS * window
