"""``python -m mae memory {show,import,export,history,rollback,reset,reinstate,prune}``: the long-term memory.

The memory directory is ``--memory-dir``, else ``$MAE_MEMORY_DIR``, else the user data folder
(``Settings.memory_dir``). See docs/memory.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from mae.config import Settings, load_settings
from mae.errors import MemoryStoreError
from mae.memory.longterm import HistoryEntry, MemoryStore, UpdateResult, policy_from, status_table
from mae.memory.tips import split_tips

if TYPE_CHECKING:
    from mae.run.loop import RunRequest
    from mae.run.results import TaskResult
    from mae.run.runtime import Runtime

    OneRun = Callable[[RunRequest, Runtime, argparse.Namespace], TaskResult]
    """Runs one task from the command line (``run_cmd.run_one``)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``memory`` subcommand and its actions."""
    parser = subparsers.add_parser("memory", help="show, import, export and roll back the Tips and Shortcuts")

    def show_help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    parser.set_defaults(func=show_help)
    actions = parser.add_subparsers(dest="memory_command", metavar="ACTION")

    show = actions.add_parser("show", help="the current Tips and Shortcuts, with each Shortcut's usage")
    show.add_argument(
        "--version", type=int, default=None, help="show this version instead of the current one"
    )
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(func=cmd_show)

    imp = actions.add_parser("import", help="import a Tips text file and/or a Shortcuts JSON file")
    imp.add_argument("--tips", type=Path, default=None, metavar="FILE", help="Tips file (replaces the Tips)")
    imp.add_argument(
        "--shortcuts", type=Path, default=None, metavar="FILE", help="Shortcuts JSON keyed by name (merged)"
    )
    imp.add_argument("files", nargs="*", type=Path, help=argparse.SUPPRESS)
    imp.set_defaults(func=cmd_import, parser=imp)

    exp = actions.add_parser("export", help="write tips.txt and shortcuts.json (the paper's formats)")
    exp.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder to write into")
    exp.add_argument("--version", type=int, default=None, help="export this version instead of the current")
    exp.set_defaults(func=cmd_export)

    hist = actions.add_parser("history", help="every version and event: who changed what, refused Shortcuts")
    hist.add_argument("--limit", type=int, default=None, help="only the last N entries")
    hist.add_argument("--json", action="store_true", help="print JSON lines")
    hist.set_defaults(func=cmd_history)

    back = actions.add_parser("rollback", help="make an earlier version current again (as a new version)")
    back.add_argument("version", type=int, help="the version to restore (0 = the initial memory)")
    back.set_defaults(func=cmd_rollback)

    reset = actions.add_parser("reset", help="start again from the initial Tips and Shortcuts (history kept)")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    reset.set_defaults(func=cmd_reset)

    again = actions.add_parser("reinstate", help="let a flagged or withheld Shortcut be used again")
    again.add_argument("name", help="the Shortcut's name")
    again.set_defaults(func=cmd_reinstate)

    prune = actions.add_parser(
        "prune", help="delete old versions now (keeps the newest N and every version a run started from)"
    )
    prune.add_argument("--keep", type=int, default=None, metavar="N", help="versions to keep (default 50)")
    prune.set_defaults(func=cmd_prune)

    for sub in (show, imp, exp, hist, back, reset, again, prune):
        sub.add_argument(
            "--memory-dir",
            type=Path,
            default=None,
            metavar="DIR",
            help="memory folder (default: $MAE_MEMORY_DIR)",
        )
        sub.add_argument("--profile", type=Path, default=None, metavar="FILE", help="TOML settings profile")


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(profile=args.profile, overrides={"memory_dir": args.memory_dir})


def _store(settings: Settings) -> MemoryStore:
    return MemoryStore(settings.memory_dir)


def _warn(store: MemoryStore) -> None:
    for warning in store.warnings:
        print(f"warning: {warning}", file=sys.stderr)


def _when(timestamp: float) -> str:
    return "built-in" if timestamp == 0 else datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def cmd_show(args: argparse.Namespace) -> int:
    """Print the Tips, the Shortcuts with status and usage, and where the memory lives."""
    settings = _settings(args)
    store = _store(settings)
    state = store.load() if args.version is None else store.load_version(args.version)
    _warn(store)
    policy = policy_from(settings.evolution)
    rows = status_table(state, policy)
    if args.json:
        data = state.to_json()
        data["status"] = rows
        data["directory"] = str(store.directory)
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(
        f"memory: {store.directory} (version {state.version}, {_when(state.created_at)}, by {state.author})"
    )
    tips = split_tips(state.tips)
    print(f"\nTips ({len(tips)}):")
    print(state.tips.rstrip() or "  (none)")
    print(f"\nShortcuts ({len(state.shortcuts)}):")
    for row in rows:
        shortcut = state.shortcuts[row["name"]]
        usage = (
            f"{row['calls']} calls, {row['successes']} ok, {row['failures']} failed"
            + (f", {row['refused']} refused" if row["refused"] else "")
            if row["calls"] or row["refused"]
            else "not used yet"
        )
        status = "" if row["status"] == "ok" else f" [{row['status'].upper()}]"
        print(f"- {shortcut.signature()}{status}: {usage}")
        if shortcut.description:
            print(f"    {shortcut.description}")
        if shortcut.precondition:
            print(f"    precondition: {shortcut.precondition}")
        steps = ", ".join(
            f"{step.name}({', '.join(f'{k}={v}' for k, v in step.arguments_map.items())})"
            for step in shortcut.atomic_action_sequence
        )
        print(f"    steps: {steps}")
    return 0


def _report(result: UpdateResult) -> None:
    if result.version is not None:
        print(f"memory version {result.version}: {result.change.summary}")
    else:
        print("nothing changed")
    for line in result.change.changes:
        print(f"  {line}")
    for rejection in result.change.rejected:
        print(f"refused Shortcut {rejection.name}: {rejection.reason}", file=sys.stderr)


def cmd_import(args: argparse.Namespace) -> int:
    """Import the paper's files; exit 1 when some Shortcut was refused (the rest is imported)."""
    if args.files:
        name = args.files[0]
        args.parser.error(
            f"say what {name} holds: --tips {name} (a numbered Tips list; replaces the Tips) or "
            f"--shortcuts {name} (Shortcuts JSON; merged)"
        )
    if args.tips is None and args.shortcuts is None:
        raise MemoryStoreError("give --tips FILE, --shortcuts FILE, or both")
    store = _store(_settings(args))
    before = store.load().version if args.tips is not None else None
    result = store.import_files(tips=args.tips, shortcuts=args.shortcuts, author="user (memory import)")
    _warn(store)
    _report(result)
    if before is not None and result.changed:
        print(
            f"  the Tips before the import are version {before}: `python -m mae memory rollback {before}` "
            "brings them back"
        )
    return 1 if result.change.rejected else 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write ``tips.txt`` and ``shortcuts.json``."""
    store = _store(_settings(args))
    paths = store.export(args.out, version=args.version)
    _warn(store)
    for path in paths:
        print(f"wrote {path}")
    return 0


def _history_line(entry: HistoryEntry) -> str:
    version = f"v{entry.version}" if entry.version is not None else "  - "
    task = f" [task: {entry.task[:60]}]" if entry.task else ""
    return f"{version:>6}  {_when(entry.time)}  {entry.author}: {entry.summary}{task}"


def cmd_history(args: argparse.Namespace) -> int:
    """Print the history, oldest first."""
    store = _store(_settings(args))
    entries = store.history(limit=args.limit)
    _warn(store)
    if args.json:
        for entry in entries:
            print(entry.model_dump_json())
        return 0
    if not entries:
        print(f"no history yet in {store.directory}: the memory is the built-in initial one (version 0)")
    for entry in entries:
        print(_history_line(entry))
        for line in entry.changes:
            print(f"          {line}")
        for rejection in entry.rejected:
            print(f"          refused {rejection.name}: {rejection.reason}")
        for problem in entry.problems:
            print(f"          problem: {problem}")
    return 0


def cmd_rollback(args: argparse.Namespace) -> int:
    """Restore a version as a new version."""
    store = _store(_settings(args))
    current = store.load().version
    if args.version == current:
        print(f"version {current} is the current memory already: there is nothing to roll back")
        return 0
    result = store.rollback(args.version, author="user (memory rollback)")
    if result.version is None:
        print(
            f"version {args.version} holds the same Tips and Shortcuts as the current version {current}: "
            "nothing changed"
        )
        return 0
    _report(result)
    return 0


def cmd_reset(args: argparse.Namespace) -> int:
    """Restore the initial memory as a new version, after confirmation."""
    store = _store(_settings(args))
    if not args.yes:
        if not sys.stdin.isatty():
            print("refusing to reset without confirmation: add --yes", file=sys.stderr)
            return 1
        answer = input(f"Reset the memory in {store.directory} to the initial Tips and Shortcuts? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing changed")
            return 1
    _report(store.reset(author="user (memory reset)"))
    return 0


def cmd_reinstate(args: argparse.Namespace) -> int:
    """Clear a Shortcut's failure streak."""
    store = _store(_settings(args))
    _report(store.reinstate_shortcut(args.name, author="user (memory reinstate)"))
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    """Delete old versions by the pruning policy."""
    if args.keep is not None and args.keep < 1:
        print("--keep must be at least 1 (the current version is always kept)", file=sys.stderr)
        return 2
    store = _store(_settings(args))
    report = store.prune(args.keep)
    kept = store.versions()
    print(
        f"deleted {len(report.versions)} old version(s) and {report.objects} unused chunk(s), "
        f"{report.bytes_freed / 1024:,.0f} KiB; {len(kept)} version(s) kept"
    )
    return 0


# --------------------------------------------------------------------------------------------------
# Long-term memory in `python -m mae run` (flags added by mae.cli.run_cmd)


def add_memory_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``run`` flags for long-term memory, evolution and task lists."""
    group = parser.add_argument_group("long-term memory and evolution (docs/memory.md)")
    group.add_argument("--memory-dir", type=Path, default=None, metavar="DIR", help="memory folder")
    group.add_argument(
        "--no-evolve", action="store_true", help="use the memory but do not update it after the task"
    )
    group.add_argument(
        "--precondition",
        choices=("operator", "verify", "off"),
        default=None,
        help="how a Shortcut's precondition is checked before it runs (default: operator)",
    )
    group.add_argument(
        "--tasks", type=Path, default=None, metavar="FILE", help="run a task list (Mobile-Eval-E JSON)"
    )
    group.add_argument(
        "--setting",
        choices=("evolution", "individual"),
        default="evolution",
        help="task lists: share and evolve the memory (evolution) or start each from the initial memory",
    )
    group.add_argument(
        "--between",
        choices=("reset", "command", "enter", "none"),
        default=None,
        help="between tasks: reset the virtual phone, run --reset-command, wait for Enter, or nothing",
    )
    group.add_argument(
        "--reset-command",
        default=None,
        metavar="CMD",
        help="shell command that restores the phone between tasks",
    )


def memory_overrides(args: argparse.Namespace) -> dict[str, object]:
    """Settings overrides from the memory flags (None = not given)."""
    return {
        "memory_dir": getattr(args, "memory_dir", None),
        "evolution.precondition": getattr(args, "precondition", None),
        "evolution.evolve": False if getattr(args, "no_evolve", False) else None,
    }


def _progress(args: argparse.Namespace) -> Callable[[str], None] | None:
    """Progress lines on stdout; None with --quiet (problems then reach the log, on stderr)."""
    if getattr(args, "quiet", False):
        return None

    def say(message: str) -> None:
        print(f"memory: {message}", flush=True)

    return say


def run_single_with_memory(args: argparse.Namespace, runtime: Runtime, run_one: OneRun) -> TaskResult:
    """One task with the store's Tips and Shortcuts, then the reflectors (unless --no-evolve)."""
    from mae.run.evolution import MemorySession

    settings = runtime.settings
    session = MemorySession(
        settings, runtime.client, evolve=settings.evolution.evolve, progress=_progress(args)
    )

    prepared = session.prepare(args.task)
    result = run_one(prepared.request(args.task), runtime, args)
    try:
        session.finish(result, prepared)
    except MemoryStoreError as exc:  # the task's own exit code still tells how it went
        print(f"warning: the long-term memory was not updated: {exc}", file=sys.stderr)
    return result


def run_task_list_from_args(
    args: argparse.Namespace,
    settings: Settings,
    build: Callable[[Settings], Runtime],
    run_one: OneRun,
) -> int:
    """``run --tasks FILE``: every task in order; exit 0 when all finished, else 1."""
    from mae.run.evolution import (
        BetweenTasks,
        MemorySession,
        load_tasks,
        report_path_for,
        run_task_list,
        summary_lines,
    )

    if args.task:
        raise MemoryStoreError("give either a task or --tasks FILE, not both")
    tasks = load_tasks(args.tasks)
    evolution = args.setting == "evolution"
    if evolution and not settings.evolution.evolve:
        raise MemoryStoreError("--setting evolution updates the memory after each task: drop --no-evolve")
    runtime = build(settings)
    try:
        session = MemorySession(settings, runtime.client, use_store=evolution, progress=_progress(args))
        mode = args.between or BetweenTasks.default_mode(runtime.device, args.reset_command)
        between = BetweenTasks(mode, runtime.device, command=args.reset_command, progress=_progress(args))

        def runner(request: RunRequest) -> TaskResult:
            return run_one(request, runtime, args)

        path = report_path_for(settings.log_dir, args.setting)
        report = run_task_list(
            tasks, session, runner, setting=args.setting, between=between, report_path=path
        )
    finally:
        runtime.close()
    for line in summary_lines(report):
        print(line)
    print(f"report: {path}")
    return 0 if report.finished_count == len(tasks) else 1
