"""Snapshots that do not grow with history: content-addressed chunks shared between versions.

A version file (``versions/000042.json``, format 3) holds the version's metadata (author, summary,
changes...) and, for its Tips, Shortcuts and usage, a list of chunk names. A chunk holds a few dozen
items (a JSON list of lines of the Tips text or of ``[name, usage]`` pairs; for Shortcuts, a table of
rows and the distinct steps they use, see ``_shortcut_table``; format 2 stored ``[name, Shortcut]``
pairs, still read) and is stored once as ``objects/<2 hex>/<sha-256 of its bytes>.json``. Chunk
boundaries depend on the items themselves (content-defined: an item whose hash ends in six zero bits
closes a chunk), so adding, editing or removing one item rewrites one chunk, not the chunks after it:
a new version costs its metadata plus the chunks it changed, whatever the size of the memory.

Objects are written atomically and durably before the version file that names them, so a process
killed mid-write leaves the previous version whole (a few unreferenced objects at most, removed by the
next prune). Reading checks every chunk's hash: a damaged or missing object makes its version unreadable
(the store then falls back to an older one, as for a damaged version file). Chunks were validated when
written and are verified by hash when read, so Shortcuts are rebuilt from them without re-validating,
and a process keeps recently decoded chunks and reuses them without reading their files again (a
chunk's name is the hash of its content, so a cached chunk can never be stale; a damaged file is
found by the next process that reads it). A first load in a new process builds tens of thousands of
objects at 10,000 Shortcuts; the garbage collector is paused meanwhile. The Shortcuts of a loaded
state are shared with the cache: treat them as read-only (every edit goes through
``MemoryStore.update``, which works on a deep copy).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from mae.actions.registry import Shortcut, ShortcutStep
from mae.errors import MemoryStoreError
from mae.memory.atomic import atomic_write_bytes
from mae.memory.models import FORMAT, MemoryState
from mae.memory.shortcuts import shortcut_to_json

CHUNK_MASK = 0x3F
"""An item whose CRC-32 has these bits clear ends a chunk: 64 items per chunk on average."""
CHUNK_MAX = 256
"""A chunk never holds more items than this (a run of items that never ends one)."""
OBJECTS_DIR = "objects"
_CONTENT = ("tips", "shortcuts", "usage")


def _chunks(items: Sequence[Any], key: Callable[[Any], str]) -> list[list[Any]]:
    chunks: list[list[Any]] = []
    current: list[Any] = []
    for item in items:
        current.append(item)
        if zlib.crc32(key(item).encode("utf-8")) & CHUNK_MASK == 0 or len(current) >= CHUNK_MAX:
            chunks.append(current)
            current = []
    if current:
        chunks.append(current)
    return chunks


def _encode(chunk: list[Any] | dict[str, Any]) -> bytes:
    return json.dumps(chunk, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def object_path(objects_dir: Path, name: str) -> Path:
    return objects_dir / name[:2] / f"{name}.json"


def _shortcut_table(pairs: list[Any]) -> dict[str, Any]:
    """A chunk of ``[name, Shortcut JSON]`` pairs as format 3 stores it: one row per Shortcut and a table
    of the distinct steps its rows point to (most Shortcuts spell the same few steps), so that a fresh
    process parses a third of the bytes and builds each distinct step once.

    A row is ``[name, arguments, description, precondition, [step indices]]``, plus the key it is filed
    under when that is not its name; a step is ``[operation, arguments_map]``. ``null`` stands for a
    field absent from the Shortcut's source, so the paper's JSON comes back exactly as it was."""
    steps: list[list[Any]] = []
    index: dict[str, int] = {}
    rows: list[list[Any]] = []
    for key, data in pairs:
        ids = []
        for step in data["atomic_action_sequence"]:
            spelled = json.dumps(step)
            if spelled not in index:
                index[spelled] = len(steps)
                steps.append([step["name"], step.get("arguments_map")])
            ids.append(index[spelled])
        row = [data["name"], data.get("arguments"), data.get("description"), data.get("precondition"), ids]
        rows.append(row if key == data["name"] else [*row, key])
    return {"steps": steps, "shortcuts": rows}


def _content_chunks(state: MemoryState) -> dict[str, list[bytes]]:
    lines = state.tips.split("\n")
    shortcuts = [[name, shortcut_to_json(s)] for name, s in state.shortcuts.items()]
    usage = [[name, u.model_dump(mode="json")] for name, u in state.usage.items()]
    return {
        "tips": [_encode(c) for c in _chunks(lines, lambda line: line)],
        "shortcuts": [
            _encode(_shortcut_table(c))
            for c in _chunks(shortcuts, lambda pair: json.dumps(pair, sort_keys=True))
        ],
        "usage": [_encode(c) for c in _chunks(usage, lambda pair: json.dumps(pair, sort_keys=True))],
    }


def write_version(path: Path, objects_dir: Path, state: MemoryState) -> int:
    """Write ``state`` as a format-3 version file at ``path``, after the chunks it needs that are not
    stored yet; returns the bytes written (new chunks and the version file)."""
    written = 0
    names: dict[str, list[str]] = {}
    for part, chunks in _content_chunks(state).items():
        names[part] = []
        for data in chunks:
            name = hashlib.sha256(data).hexdigest()
            names[part].append(name)
            target = object_path(objects_dir, name)
            if target.is_file():
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise MemoryStoreError(
                    f"cannot create {target.parent}: {exc.strerror}; check free space and permissions"
                ) from None
            atomic_write_bytes(target, data)
            written += len(data)
    meta = state.model_dump(mode="json", exclude=set(_CONTENT))
    meta["format"] = FORMAT
    meta["chunks"] = names
    text = (json.dumps(meta, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    atomic_write_bytes(path, text)
    return written + len(text)


def _read_chunk(objects_dir: Path, name: str, where: Path, part: str) -> list[Any]:
    path = os.path.join(objects_dir, name[:2], f"{name}.json")  # as object_path, without pathlib's cost
    if part != "usage":  # usage records are mutable: always read afresh
        with _cache_lock:
            cached = _CACHE.get(name)
        if cached is not None:
            return cached  # a chunk's name is its content's hash: what is cached is what the file holds
    try:
        with open(path, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        raise MemoryStoreError(f"{where} needs {path}, which is missing") from None
    except OSError as exc:
        raise MemoryStoreError(f"{path} cannot be read: {exc.strerror}") from None
    if hashlib.sha256(data).hexdigest() != name:
        raise MemoryStoreError(f"{path} is damaged (its content does not match its name)")
    try:
        chunk = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MemoryStoreError(f"{path} is not valid JSON ({exc})") from None
    if isinstance(chunk, list) and part == "usage":
        return chunk
    if not isinstance(chunk, list) and not (part == "shortcuts" and isinstance(chunk, dict)):
        raise MemoryStoreError(f"{path} is not a memory chunk")
    try:
        return _decoded(name, part, chunk)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise MemoryStoreError(f"{path} is not a valid memory chunk ({exc})") from None


def chunk_names(data: dict[str, Any]) -> dict[str, list[str]]:
    """The chunk names a format-2 version file lists, by part (``MemoryStoreError`` if malformed)."""
    chunks = data.get("chunks")
    if not isinstance(chunks, dict) or not all(
        isinstance(chunks.get(part), list) and all(isinstance(n, str) for n in chunks[part])
        for part in _CONTENT
    ):
        raise MemoryStoreError("the version file does not list its chunks")
    return {part: list(chunks[part]) for part in _CONTENT}


_STEP_FIELDS = frozenset({"name", "arguments_map"})
_STEP_NAME = frozenset({"name"})
_CACHE: OrderedDict[str, list[Any]] = OrderedDict()
_cached_items = 0
_CACHE_ITEMS = 60_000
"""Most items kept decoded in this process (chunks are immutable: a name always means the same content)."""
_cache_lock = threading.Lock()


def _built(model: type[BaseModel], values: dict[str, Any], fields_set: set[str] | frozenset[str]) -> Any:
    """A pydantic model instance from values already known valid (what ``model_construct`` does, for
    these two small models, without its per-call overhead: 10,000 Shortcuts load in milliseconds)."""
    obj = model.__new__(model)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(fields_set))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


_STEPS: dict[tuple[Any, ...], ShortcutStep] = {}
"""Steps are shared between the Shortcuts that spell them the same way (most are Tap x y, Type, Enter)."""


def _step(step: Any) -> ShortcutStep:
    arguments = step.get("arguments_map")
    key: tuple[Any, ...] = (step["name"], arguments is None, *(arguments.items() if arguments else ()))
    try:
        shared = _STEPS.get(key)
    except TypeError:  # an unhashable literal: build this one alone
        key, shared = (), None
    if shared is not None:
        return shared
    built: ShortcutStep = _built(
        ShortcutStep,
        {"name": str(step["name"]), "arguments_map": dict(arguments or {})},
        _STEP_FIELDS & set(step),
    )
    if key and len(_STEPS) < 10_000:
        _STEPS[key] = built
    return built


def _shortcut(data: Any) -> Shortcut:
    """A Shortcut from a verified chunk, built without re-validating (it was validated when written)."""
    if not isinstance(data, dict) or not isinstance(data.get("atomic_action_sequence"), list):
        raise ValueError("not a Shortcut")
    steps = [_step(step) for step in data["atomic_action_sequence"]]
    values = {
        "name": str(data["name"]),
        "arguments": [str(a) for a in data.get("arguments") or []],
        "description": str(data.get("description", "")),
        "precondition": str(data.get("precondition", "")),
        "atomic_action_sequence": steps,
    }
    shortcut: Shortcut = _built(Shortcut, values, set(data) & set(values))
    return shortcut


def _table_step(step: Any) -> ShortcutStep:
    operation, arguments = step
    if type(operation) is not str or not (arguments is None or type(arguments) is dict):
        raise ValueError("not a Shortcut step")
    if arguments is None:
        built: ShortcutStep = _built(ShortcutStep, {"name": operation, "arguments_map": {}}, _STEP_NAME)
    else:
        built = _built(ShortcutStep, {"name": operation, "arguments_map": arguments}, _STEP_FIELDS)
    return built


_SHORTCUT_FIELDS = frozenset({"name", "arguments", "description", "precondition", "atomic_action_sequence"})


def _defaults(row: list[Any]) -> tuple[list[Any], set[str]]:
    """A row whose optional fields are absent (``null``): their defaults filled in, and the fields set."""
    filled = list(row)
    fields = set(_SHORTCUT_FIELDS)
    for index, field, default in ((1, "arguments", []), (2, "description", ""), (3, "precondition", "")):
        if filled[index] is None:
            filled[index] = default
            fields.discard(field)
    return filled, fields


def _table_shortcuts(chunk: dict[str, Any]) -> list[list[Any]]:
    """The ``[name, Shortcut]`` pairs of a format-3 chunk (see ``_shortcut_table``), built without
    re-validating (what ``model_construct`` does, without its per-call cost); the steps of its table
    are shared by the Shortcuts that use them."""
    steps = [_table_step(step) for step in chunk["steps"]]
    items: list[list[Any]] = []
    new, set_attribute = Shortcut.__new__, object.__setattr__
    for row in chunk["shortcuts"]:
        if None in row:
            row, fields = _defaults(row)
        else:
            fields = set(_SHORTCUT_FIELDS)
        if len(row) == 5:
            name, arguments, description, precondition, ids = row
            key = name
        else:
            name, arguments, description, precondition, ids, key = row
        if not (type(name) is type(key) is type(description) is type(precondition) is str) or not ids:
            raise ValueError("not a Shortcut")
        if type(arguments) is not list:
            raise ValueError("a Shortcut's arguments are not a list of names")
        "".join(arguments)  # a TypeError unless every argument is a name
        shortcut = new(Shortcut)
        set_attribute(
            shortcut,
            "__dict__",
            {
                "name": name,
                "arguments": arguments,
                "description": description,
                "precondition": precondition,
                "atomic_action_sequence": [steps[i] for i in ids],
            },
        )
        set_attribute(shortcut, "__pydantic_fields_set__", fields)
        set_attribute(shortcut, "__pydantic_extra__", None)
        set_attribute(shortcut, "__pydantic_private__", None)
        items.append([key, shortcut])
    return items


def _decoded(name: str, part: str, chunk: list[Any] | dict[str, Any]) -> list[Any]:
    """A chunk's items as the state holds them (Shortcuts built), cached by chunk name."""
    global _cached_items
    with _cache_lock:
        cached = _CACHE.get(name)
        if cached is not None:
            _CACHE.move_to_end(name)
            return cached
    if isinstance(chunk, dict):
        items = _table_shortcuts(chunk)
    elif part == "shortcuts":  # format 2: [name, Shortcut JSON] pairs
        items = [[pair[0], _shortcut(pair[1])] for pair in _pairs(chunk)]
    else:
        items = chunk
    with _cache_lock:
        if not _CACHE:
            _cached_items = 0  # emptied from outside (tests)
        if name not in _CACHE:
            _CACHE[name] = items
            _cached_items += len(items)
        while _cached_items > _CACHE_ITEMS and len(_CACHE) > 1:
            _cached_items -= len(_CACHE.popitem(last=False)[1])
    return items


_collector_lock = threading.Lock()
_collector_pauses = 0


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a version is decoded: it would otherwise walk every
    object of the process several times while tens of thousands of new ones (none of them garbage) are
    made, which was a third of a first load. Nested and concurrent pauses are counted; the collector
    is resumed by the last one out, and only if it was running before the first."""
    global _collector_pauses, _collector_was_enabled
    with _collector_lock:
        if _collector_pauses == 0:
            _collector_was_enabled = gc.isenabled()
            gc.disable()
        _collector_pauses += 1
    try:
        yield
    finally:
        with _collector_lock:
            _collector_pauses -= 1
            if _collector_pauses == 0 and _collector_was_enabled:
                gc.enable()


_collector_was_enabled = True


def read_version(path: Path, objects_dir: Path, data: dict[str, Any]) -> MemoryState:
    """The state a format-2 or format-3 version file (already parsed as ``data``) describes."""
    try:
        if any(part in data for part in _CONTENT):
            raise MemoryStoreError("it holds content that formats 2 and 3 keep in chunks (edited by hand?)")
        names = chunk_names(data)
    except MemoryStoreError as exc:
        raise MemoryStoreError(f"{path} is not a valid memory snapshot: {exc}") from None
    with _collector_paused():
        parts = {
            part: [item for name in names[part] for item in _read_chunk(objects_dir, name, path, part)]
            for part in _CONTENT
        }
    meta = {k: v for k, v in data.items() if k not in ("chunks", *_CONTENT)}
    try:
        if not all(isinstance(line, str) for line in parts["tips"]):
            raise ValueError("a Tips line is not text")
        state = MemoryState.model_validate(
            {**meta, "tips": "\n".join(parts["tips"]), "usage": dict(_pairs(parts["usage"]))}
        )
        state.shortcuts = {str(name): shortcut for name, shortcut in parts["shortcuts"]}
    except (ValidationError, ValueError, KeyError, TypeError) as exc:
        raise MemoryStoreError(f"{path} is not a valid memory snapshot ({exc})") from None
    return state


def _pairs(items: Iterable[Any]) -> Iterable[tuple[Any, Any]]:
    for item in items:
        if not isinstance(item, list) or len(item) != 2:
            raise ValueError("a chunk item is not a [name, value] pair")
        yield item[0], item[1]


def referenced(versions: Iterable[dict[str, Any]]) -> set[str]:
    """Every chunk name the given version files list."""
    found: set[str] = set()
    for data in versions:
        try:
            for names in chunk_names(data).values():
                found.update(names)
        except MemoryStoreError:
            continue
    return found
