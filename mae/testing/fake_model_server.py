"""A real chat-completions HTTP server on 127.0.0.1 that answers from a script and records requests.

Used by the tests, the benchmarks and offline demos (``python -m mae.testing.fake_model_server``).
Replies come from, in order of precedence: a per-role queue (the ``X-Mae-Role`` header the client
sends), the shared queue, or a ``responder`` function. A request nothing answers gets HTTP 500 and is
recorded in ``unexpected``; ``assert_done()`` fails on it and on script entries never used.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image

ROLE_HEADER = "X-Mae-Role"
HOLD_CEILING_S = 300.0
"""The longest a held reply waits for its test (a test that failed before releasing it)."""


@dataclass
class FakeReply:
    """One scripted answer: a text reply (status 200) or a raw status/body, after an optional delay."""

    text: str | None = None
    status: int = 200
    body: str | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    trickle_s: float = 0.0
    """Seconds between body bytes (a server that keeps a connection alive without finishing)."""
    hold: threading.Event | None = None
    """The reply waits until this is set (at most ``HOLD_CEILING_S``): a test keeps a run busy for
    exactly as long as it needs, whatever the machine's load."""

    @classmethod
    def message(cls, message: dict[str, Any], finish_reason: str = "stop") -> FakeReply:
        """A completion whose assistant message is ``message`` as given (``content`` None or a list of
        parts, ``refusal``, ``tool_calls``, ``reasoning_content``), ending for ``finish_reason``."""
        choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish_reason}
        body = {
            "id": "chatcmpl-fake-raw",
            "object": "chat.completion",
            "model": "fake",
            "choices": [choice],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2048, "total_tokens": 2058},
        }
        return cls(body=json.dumps(body))


@dataclass
class RecordedRequest:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def role(self) -> str | None:
        return self.headers.get(ROLE_HEADER.lower())

    @property
    def text(self) -> str:
        """All text parts of all messages, joined."""
        parts: list[str] = []
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(p.get("text", "") for p in content if p.get("type") == "text")
        return "\n".join(parts)

    @property
    def image_sizes(self) -> list[tuple[int, int]]:
        """``(width, height)`` of every image sent as a base64 data URL, in order (unreadable: left out)."""
        sizes = []
        for message in self.body.get("messages", []):
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                url = (part.get("image_url") or {}).get("url", "") if part.get("type") == "image_url" else ""
                _, _, data = url.partition("base64,")
                try:
                    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
                        sizes.append(image.size)
                except (ValueError, OSError):
                    continue
        return sizes

    @property
    def image_count(self) -> int:
        count = 0
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                count += sum(1 for p in content if p.get("type") == "image_url")
        return count


Responder = Callable[[RecordedRequest], "FakeReply | str | None"]
ScriptItem = FakeReply | str


REASONING_TOKENS = 64
"""Hidden reasoning tokens a ``reasoning`` fake reports per reply."""

UNSUPPORTED_MAX_TOKENS = {
    "error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
        "'max_completion_tokens' instead.",
        "type": "invalid_request_error",
        "param": "max_tokens",
        "code": "unsupported_parameter",
    }
}
UNSUPPORTED_TEMPERATURE = {
    "error": {
        "message": "Unsupported value: 'temperature' does not support 0 with this model. Only the default "
        "(1) value is supported.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "unsupported_value",
    }
}
"""What OpenAI's reasoning models answer (HTTP 400) to the parameters older models take."""


def reasoning_refusal(body: dict[str, Any]) -> FakeReply | None:
    """The 400 a reasoning model sends for ``body``, or None when it would accept it."""
    if "max_tokens" in body:
        return FakeReply(status=400, body=json.dumps(UNSUPPORTED_MAX_TOKENS))
    if body.get("temperature", 1) != 1:
        return FakeReply(status=400, body=json.dumps(UNSUPPORTED_TEMPERATURE))
    return None


def cached_prefix_tokens(text: str, earlier: Iterable[str], minimum: int = 1024, block: int = 128) -> int:
    """Tokens of ``text`` a provider's prompt cache would serve after ``earlier`` prompts: the longest
    common prefix with one of them, counted as characters / 4, in ``block``-token steps from ``minimum``
    (OpenAI's automatic caching rule)."""
    best = 0
    for previous in earlier:
        low, high = best, min(len(previous), len(text))
        if previous[:low] != text[:low]:
            continue
        while low < high:  # the longest common prefix, by halving (slice comparisons run in C)
            middle = (low + high + 1) // 2
            if previous[:middle] == text[:middle]:
                low = middle
            else:
                high = middle - 1
        best = low
    tokens = best // 4
    return 0 if tokens < minimum else tokens - tokens % block


def completion_body(
    text: str, request: RecordedRequest, *, cached_tokens: int = 0, reasoning_tokens: int = 0
) -> dict[str, Any]:
    """A chat-completion JSON body for ``text``, with plausible token counts."""
    prompt_tokens = max(1, len(request.text) // 4) + 85 * request.image_count
    completion_tokens = max(1, len(text) // 4) + reasoning_tokens
    return {
        "id": f"chatcmpl-fake-{int(time.time() * 1000)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.body.get("model", "fake"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": min(cached_tokens, prompt_tokens)},
            "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
        },
    }


class FakeModelServer:
    """Scripted chat-completions server. Use as a context manager; ``base_url`` ends in ``/v1``."""

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        by_role: dict[str, Iterable[ScriptItem]] | None = None,
        responder: Responder | None = None,
        port: int = 0,
        reasoning: bool = False,
        prompt_cache: bool = False,
    ) -> None:
        """``reasoning``: answer like OpenAI's reasoning models (HTTP 400 to ``max_tokens`` and to a
        temperature other than 1; replies report hidden reasoning tokens). ``prompt_cache``: report the
        input tokens an automatic prompt cache would serve (``cached_prefix_tokens``)."""
        self._queue: deque[ScriptItem] = deque(script)
        self._by_role: dict[str, deque[ScriptItem]] = {k: deque(v) for k, v in (by_role or {}).items()}
        self.responder = responder
        self.reasoning = reasoning
        self.prompt_cache = prompt_cache
        self.refused: list[RecordedRequest] = []
        """Requests a ``reasoning`` server refused for their parameters."""
        self._prompts: list[str] = []
        self.served_models: list[dict[str, Any]] = [{"id": "fake", "object": "model"}]
        """What ``GET /v1/models`` lists (vLLM adds ``root``: the weights it loaded)."""
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def add(self, *items: ScriptItem, role: str | None = None) -> None:
        """Append scripted replies (to a role's queue when ``role`` is given)."""
        with self._lock:
            queue = self._by_role.setdefault(role, deque()) if role else self._queue
            queue.extend(items)

    def requests_for(self, role: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.role == role]

    def start(self) -> FakeModelServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def remaining(self) -> int:
        with self._lock:
            return len(self._queue) + sum(len(q) for q in self._by_role.values())

    def assert_done(self) -> None:
        """Fail if a request went unanswered or a scripted reply was never used."""
        if self.unexpected:
            first = self.unexpected[0]
            raise AssertionError(
                f"{len(self.unexpected)} unexpected model request(s); first role={first.role!r}: "
                f"{first.text[:300]!r}"
            )
        if self.remaining():
            raise AssertionError(f"{self.remaining()} scripted reply(ies) were never requested")

    def _next_reply(self, request: RecordedRequest) -> FakeReply | None:
        with self._lock:
            role_queue = self._by_role.get(request.role or "")
            if role_queue:
                item: ScriptItem | None = role_queue.popleft()
            elif self._queue:
                item = self._queue.popleft()
            else:
                item = None
        if item is None and self.responder is not None:
            item = self.responder(request)
        if item is None:
            return None
        return FakeReply(text=item) if isinstance(item, str) else item

    def _completion(self, text: str, request: RecordedRequest) -> dict[str, Any]:
        cached = 0
        if self.prompt_cache:
            with self._lock:
                cached = cached_prefix_tokens(request.text, self._prompts)
                self._prompts.append(request.text)
        reasoning = REASONING_TOKENS if self.reasoning else 0
        return completion_body(text, request, cached_tokens=cached, reasoning_tokens=reasoning)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _send(
                self, status: int, body: str, headers: dict[str, str] | None = None, trickle_s: float = 0.0
            ) -> None:
                data = body.encode()
                self.send_response(status)
                content_type = "application/json"
                for key, value in (headers or {}).items():
                    if key.lower() == "content-type":
                        content_type = value
                    else:
                        self.send_header(key, value)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not trickle_s:
                    self.wfile.write(data)
                    return
                try:
                    for index in range(len(data)):
                        self.wfile.write(data[index : index + 1])
                        self.wfile.flush()
                        time.sleep(trickle_s)
                except OSError:  # the client gave up
                    return

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": server.served_models}))
                else:
                    self._send(404, json.dumps({"error": {"message": "not found"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                request = RecordedRequest(
                    path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, body=body
                )
                with server._lock:
                    server.requests.append(request)
                refusal = reasoning_refusal(body) if server.reasoning else None
                if refusal is not None:
                    with server._lock:
                        server.refused.append(request)
                    self._send(refusal.status, refusal.body or "")
                    return
                reply = server._next_reply(request)
                if reply is None:
                    with server._lock:
                        server.unexpected.append(request)
                    self._send(
                        500, json.dumps({"error": {"message": "unexpected request: script exhausted"}})
                    )
                    return
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.hold is not None:
                    reply.hold.wait(HOLD_CEILING_S)
                if reply.body is not None or reply.text is None:
                    self._send(reply.status, reply.body or "", reply.headers, reply.trickle_s)
                else:
                    body_text = json.dumps(server._completion(reply.text, request))
                    self._send(reply.status, body_text, reply.headers, reply.trickle_s)

        return Handler


def main() -> None:
    """Serve canned replies from a JSON file (a list of strings, or {"by_role": {...}}) for demos."""
    parser = argparse.ArgumentParser(description="Scripted chat-completions server on 127.0.0.1.")
    parser.add_argument("script", help="JSON file: a list of reply texts, or {role: [texts]}")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    with open(args.script, encoding="utf-8") as handle:
        data = json.load(handle)
    server = (
        FakeModelServer(data, port=args.port)
        if isinstance(data, list)
        else FakeModelServer(by_role=data, port=args.port)
    )
    print(f"serving on {server.base_url}", flush=True)
    server._server.serve_forever()


if __name__ == "__main__":
    main()
