"""``python -m mae``: one subcommand per module of this package.

Each subcommand module defines ``register(subparsers)``, which adds its parser and sets
``func=<callable(args) -> int>`` as the parser default. Only the module of the subcommand being run is
imported (``COMMANDS`` holds what the top-level help shows of the others), so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

from mae import __version__
from mae.cli.parsing import MaeParser, leaf_parser, suggest_unknown
from mae.errors import MaeError

COMMANDS: dict[str, tuple[str, str]] = {
    "config": ("mae.cli.config_cmd", "show the effective settings and the backbone presets"),
    "device": ("mae.cli.device_cmd", "list, screenshot and operate phones (ADB or virtual)"),
    "eval": (
        "mae.cli.eval_cmd",
        "evaluate an agent on the virtual suite or Mobile-Eval-E tasks (SS, AA, RA, TE)",
    ),
    "mcp": ("mae.cli.mcp_cmd", "serve the phone, the Perceptor and the agent as MCP tools"),
    "memory": ("mae.cli.memory_cmd", "show, import, export and roll back the Tips and Shortcuts"),
    "models": (
        "mae.cli.models_cmd",
        "local models: catalog, vLLM serving, health check, coordinate doctor, download",
    ),
    "perceive": ("mae.cli.perceive_cmd", "list the texts and icons the Perceptor finds in screenshots"),
    "run": ("mae.cli.run_cmd", "carry out a task on a phone (real or virtual)"),
}
"""Subcommand -> (its module, the one-line help the top-level ``--help`` lists)."""


def build_parser(load: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``load``, only those subcommands are built in full (the others are
    listed by name and help, enough for the top-level help and for choosing one)."""
    parser = MaeParser(
        prog="mae" if Path(sys.argv[0]).name == "mae" else "python -m mae",
        description="mae: Mobile-Agent-E, a self-evolving assistant that operates an Android phone.",
    )
    parser.add_argument("--version", action="version", version=f"mae {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        if load is None or name in load:
            importlib.import_module(module_name).register(subparsers)
        else:
            subparsers.add_parser(name, help=help_text)
    return parser


def command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option (the top level takes no
    option with a value)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; its exit status."""
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except ModuleNotFoundError as exc:  # a broken install: one sentence on stderr, not a traceback
        print(
            f"error: mae cannot run: the Python package {exc.name!r} is missing from the environment of "
            f"{sys.executable}; install mae there with `pip install .` from its checkout",
            file=sys.stderr,
        )
        return 2


def _main(argv: list[str]) -> int:
    command = command_in(argv)
    parser = build_parser({command} if command in COMMANDS else ())
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        leaf = leaf_parser(args, parser)
        leaf.error(suggest_unknown(leaf, unknown))
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    try:
        from mae.llm.keys import set_key_place

        set_key_place("cli")
        return int(func(args) or 0)
    except MaeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (RecursionError, MemoryError):  # an input file nested too deeply or too large to read
        print(
            "error: an input is nested too deeply or is too large to read; check the files given",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:  # output piped into `head` and the like
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
