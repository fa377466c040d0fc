"""A tiny adb server on 127.0.0.1 speaking the real host protocol, for testing ``_exec`` end to end.

It answers ``host:version``, ``host:devices-l``, ``host:connect:``, ``host-serial:S:features`` /
``get-state``, ``host:tport:serial:S`` followed by ``shell,v2:CMD`` (framed stdout + exit code) or
``exec:CMD`` (raw bytes until close). Answers come from ``shell`` / ``exec`` dicts keyed by command;
``drop_after`` makes a command send that many bytes and then close the socket, like a phone pulled
out mid-transfer; ``reset_after`` does the same with a TCP reset (``ConnectionResetError`` on the
client), like a USB hub that drops the link.
"""

from __future__ import annotations

import socket
import socketserver
import struct
import threading
from dataclasses import dataclass, field


@dataclass
class FakeAdb:
    serial: str = "FAKE123"
    devices: str = "FAKE123                device usb:1-1 product:fake model:Fake_Phone device:fake\n"
    shell: dict[str, bytes] = field(default_factory=dict)
    exec: dict[str, bytes] = field(default_factory=dict)
    drop_after: dict[str, int] = field(default_factory=dict)
    reset_after: dict[str, int] = field(default_factory=dict)
    received: list[str] = field(default_factory=list)


def _block(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return b"%04x" % len(data) + data


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def _read_command(self) -> str | None:
        head = self._read(4)
        if len(head) < 4:
            return None
        return self._read(int(head, 16)).decode()

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.request.recv(n - len(data))
            if not chunk:
                break
            data += chunk
        return data

    def _fail(self, message: str) -> None:
        self.request.sendall(b"FAIL" + _block(message))

    def handle(self) -> None:
        fake = self.server.fake
        command = self._read_command()
        if command is None:
            return
        fake.received.append(command)
        if command == "host:version":
            self.request.sendall(b"OKAY" + _block("0029"))
        elif command in ("host:devices-l", "host:devices"):
            self.request.sendall(b"OKAY" + _block(fake.devices))
        elif command.startswith("host:connect:"):
            self.request.sendall(b"OKAY" + _block(f"connected to {command.split(':', 2)[2]}"))
        elif command == f"host-serial:{fake.serial}:features":
            self.request.sendall(b"OKAY" + _block("shell_v2,cmd,stat_v2"))
        elif command == f"host-serial:{fake.serial}:get-state":
            self.request.sendall(b"OKAY" + _block("device"))
        elif command.startswith("host-serial:"):
            self._fail(f"device '{command.split(':')[1]}' not found")
        elif command.startswith("host:tport:serial:"):
            if command.split(":", 3)[3] != fake.serial:
                self._fail(f"device '{command.split(':', 3)[3]}' not found")
                return
            self.request.sendall(b"OKAY" + struct.pack("<Q", 1))
            self._service(fake)
        else:
            self._fail(f"unknown host service {command}")

    def _service(self, fake: FakeAdb) -> None:
        command = self._read_command()
        if command is None:
            return
        fake.received.append(command)
        kind, _, cmd = command.partition(":")
        if kind == "shell,v2":
            payload = fake.shell.get(cmd, b"")
            framed = (
                b"\x01" + struct.pack("<I", len(payload)) + payload + b"\x03" + struct.pack("<I", 1) + b"\x00"
            )
        elif kind == "exec":
            framed = fake.exec.get(cmd, b"")
        else:
            self._fail(f"unknown service {kind}")
            return
        self.request.sendall(b"OKAY")
        if cmd in fake.reset_after:
            self.request.sendall(framed[: fake.reset_after[cmd]])
            self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.request.close()
            return
        if cmd in fake.drop_after:
            self.request.sendall(framed[: fake.drop_after[cmd]])
            self.request.shutdown(socket.SHUT_RDWR)
            return
        self.request.sendall(framed)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeAdb


def start(fake: FakeAdb) -> tuple[_Server, int]:
    """Serve ``fake`` on a free loopback port in a background thread; returns the server and port."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = fake
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server, int(server.server_address[1])
