"""Start the MCP server on stdio or on streamable HTTP bound to 127.0.0.1 (``python -m mae mcp``)."""

from __future__ import annotations

import argparse
import socket
import sys

import anyio

from mae.config import Settings
from mae.errors import ConfigError
from mae.llm.keys import set_key_place
from mae.mcp.server import MaeTools, ServerOptions, build_server

HOST = "127.0.0.1"
"""The HTTP transport listens on loopback only: the tools operate this machine's phones."""


def check_port(port: int) -> None:
    """``ConfigError`` when ``port`` is out of range or already taken on 127.0.0.1."""
    if not 1 <= port <= 65535:
        raise ConfigError(f"--port must be between 1 and 65535; got {port}")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            raise ConfigError(f"port {port} on {HOST} is in use: choose another with --port") from None


def serve(args: argparse.Namespace, settings: Settings) -> int:
    """Serve the tools until the client goes away (stdio) or Ctrl-C (HTTP)."""
    if args.http:
        check_port(args.port)
    set_key_place("mcp")
    tools = MaeTools(settings, ServerOptions(assume_yes=bool(args.yes)))
    server = build_server(tools)
    try:
        if args.http:
            print(
                f"mae MCP server: http://{HOST}:{args.port}/mcp (Ctrl-C stops it)",
                file=sys.stderr,
                flush=True,
            )
            anyio.run(lambda: server.run_streamable_http_async(host=HOST, port=args.port))
        else:
            anyio.run(server.run_stdio_async)
    finally:
        tools.close()
    return 0
