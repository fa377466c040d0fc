"""``python -m mae``: one subcommand per module of this package.

Each subcommand module defines ``register(subparsers)``, which adds its parser and sets
``func=<callable(args) -> int>`` as the parser default.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from mae import __version__
from mae.errors import MaeError

SUBCOMMAND_MODULES: tuple[str, ...] = (
    "mae.cli.config_cmd",
    "mae.cli.device_cmd",
    "mae.cli.eval_cmd",
    "mae.cli.mcp_cmd",
    "mae.cli.memory_cmd",
    "mae.cli.models_cmd",
    "mae.cli.perceive_cmd",
    "mae.cli.run_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mae",
        description="mae: Mobile-Agent-E, a self-evolving assistant that operates an Android phone.",
    )
    parser.add_argument("--version", action="version", version=f"mae {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in SUBCOMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    try:
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
