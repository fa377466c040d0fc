"""What ``python app.py`` checks before it imports Gradio and builds the page (seconds): the command
line (so ``--help`` and a mistyped flag answer at once) and whether the port is free.

Only the standard library and ``mae.ui.launch`` are imported here.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence

from mae.errors import ConfigError
from mae.ui.launch import parse_args, server_options


def port_free(host: str, port: int) -> bool:
    """Whether the demo's server could bind ``host:port`` now (checked the way the server binds)."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        return True  # an unknown host is the server's to report
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError:
            return False
    return True


def port_in_use(host: str, port: int) -> str:
    """The one line shown when the port is taken."""
    return (
        f"error: port {port} on {host} is already in use (another demo running?): start with "
        f"`python app.py --port {port + 1}` or another free port."
    )


def refuse_a_taken_port(argv: Sequence[str] | None = None) -> None:
    """Exit with one line when the command line is wrong or the demo's port is taken; else return
    (``app.main`` checks again, later, for a port taken meanwhile)."""
    args = parse_args(argv)
    try:
        server = server_options(args)
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}") from None
    if not port_free(server.host, server.port):
        raise SystemExit(port_in_use(server.host, server.port))
