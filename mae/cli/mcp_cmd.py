"""``python -m mae mcp``: serve mae's phone, Perceptor and agent as MCP tools (docs/mcp.md).

stdio by default (what desktop clients start); ``--http`` serves streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mae.cli import run_cmd

DEFAULT_PORT = 8765


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``mcp`` subcommand."""
    parser = subparsers.add_parser("mcp", help="serve the phone, the Perceptor and the agent as MCP tools")
    parser.add_argument(
        "--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 (default stdio)"
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")
    run_cmd.add_run_arguments(parser)
    parser.add_argument(
        "--memory-dir", type=Path, default=None, metavar="DIR", help="long-term memory folder"
    )
    parser.add_argument(
        "--no-evolve", action="store_true", help="run_task uses the memory but does not update it"
    )
    parser.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve until the client disconnects (stdio) or Ctrl-C (HTTP)."""
    from mae.mcp.serve import serve  # the MCP SDK loads only when the server starts

    return serve(args, run_cmd.settings_from_args(args))
