"""Health check against real HTTP servers on 127.0.0.1: ready, wrong model, unreachable, broken."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

import pytest
from fake_gpu_tools import free_port

from mae.serving.health import ServeError, ServerNotReadyError, list_models, log_tail, wait_for_model
from mae.testing.fake_model_server import FakeModelServer


def test_ready_when_the_model_is_listed(fake_server: FakeModelServer) -> None:
    report = wait_for_model(fake_server.base_url, "fake", timeout_s=5)
    assert report.models == ["fake"]
    assert report.base_url == fake_server.base_url
    assert report.elapsed_s < 5
    assert list_models(fake_server.base_url) == ["fake"]


def test_any_model_is_enough_without_an_expected_name(fake_server: FakeModelServer) -> None:
    assert wait_for_model(fake_server.base_url, None, timeout_s=0).models == ["fake"]


def test_wrong_model_fails_at_once_and_names_both(fake_server: FakeModelServer) -> None:
    started = time.monotonic()
    with pytest.raises(ServerNotReadyError) as caught:
        wait_for_model(fake_server.base_url, "Qwen/Qwen2.5-VL-7B-Instruct", timeout_s=30)
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert "serves fake, not Qwen/Qwen2.5-VL-7B-Instruct" in message
    assert "--served-model-name" in message and "MAE_MODEL=fake" in message


def test_unreachable_fails_within_the_timeout(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "server.log"
    log.write_text("INFO loading weights\nINFO still loading\n", encoding="utf-8")
    progress: list[str] = []
    started = time.monotonic()
    with pytest.raises(ServerNotReadyError) as caught:
        wait_for_model(
            f"http://127.0.0.1:{port}/v1",
            "m",
            timeout_s=1.0,
            interval_s=0.2,
            progress=progress.append,
            progress_every_s=0.3,
            log_path=log,
        )
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 10.0  # the 1 s deadline, with room for a loaded machine
    message = str(caught.value)
    assert f"no server answers at http://127.0.0.1:{port}/v1/models" in message
    assert "after 1 s" in message
    assert "still loading" in message  # the log tail
    assert progress and "INFO still loading" in progress[-1]


def test_one_attempt_with_zero_timeout() -> None:
    started = time.monotonic()
    with pytest.raises(ServerNotReadyError, match="no server answers"):
        wait_for_model(f"http://127.0.0.1:{free_port()}/v1", timeout_s=0)
    assert time.monotonic() - started < 2


class _ExitedProcess:
    def poll(self) -> int | None:
        return 1


def test_exited_process_ends_the_wait_with_its_log(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("torch.OutOfMemoryError: CUDA out of memory\n", encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(ServerNotReadyError) as caught:
        wait_for_model(
            f"http://127.0.0.1:{free_port()}/v1", "m", timeout_s=30, process=_ExitedProcess(), log_path=log
        )
    assert time.monotonic() - started < 5
    assert "exited with code 1" in str(caught.value)
    assert "CUDA out of memory" in str(caught.value)


@pytest.fixture
def odd_server() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A server whose /v1/models answer depends on the path: 401 without a key, 404, or non-JSON."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def do_GET(self) -> None:
            seen.append({k.lower(): v for k, v in self.headers.items()})
            if self.path.startswith("/keyed/"):
                ok = self.headers.get("Authorization") == "Bearer s3cret"
                status, body = (200, json.dumps({"data": [{"id": "m"}]})) if ok else (401, "{}")
            elif self.path.startswith("/html/"):
                status, body = 200, "<html>hello</html>"
            else:
                status, body = 404, "{}"
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_api_key_is_sent_and_its_absence_explained(odd_server: tuple[str, list[dict[str, str]]]) -> None:
    root, seen = odd_server
    with pytest.raises(ServeError, match=r"HTTP 401.*needs an API key"):
        list_models(f"{root}/keyed/v1")
    assert list_models(f"{root}/keyed/v1", api_key="s3cret") == ["m"]
    assert seen[-1]["authorization"] == "Bearer s3cret"


def test_not_an_openai_server(odd_server: tuple[str, list[dict[str, str]]]) -> None:
    root, _seen = odd_server
    with pytest.raises(ServeError, match=r"HTTP 404.*base URL ends in /v1"):
        list_models(f"{root}/other")
    with pytest.raises(ServerNotReadyError, match="did not answer a model list"):
        wait_for_model(f"{root}/html/v1", timeout_s=0)


def test_log_tail(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)), encoding="utf-8")
    assert log_tail(log, lines=2) == "line 98\nline 99"
    assert log_tail(tmp_path / "missing.log") == ""
    assert log_tail(None) == ""
