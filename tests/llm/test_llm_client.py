"""The chat client against the fake chat-completions server."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from PIL import Image

from mae.llm import (
    ChatClient,
    Message,
    ModelAuthError,
    ModelProfile,
    ModelProviderError,
    ModelRateLimitError,
    ModelRequestError,
    ModelResponseError,
    ModelTimeoutError,
)
from mae.testing.fake_model_server import FakeModelServer, FakeReply


def make_client(server: FakeModelServer, **profile: object) -> tuple[ChatClient, list[float]]:
    sleeps: list[float] = []
    settings: dict[str, object] = {
        "provider": "test",
        "base_url": server.base_url,
        "model": "fake-vlm",
        "api_key_env": None,
        "retry_backoff_s": 0.01,
        "max_retries": 2,
    }
    settings.update(profile)
    client = ChatClient(ModelProfile.model_validate(settings), sleep=sleeps.append)
    return client, sleeps


def test_text_and_image_request_is_sent_and_recorded(fake_server: FakeModelServer) -> None:
    fake_server.add("### Thought ###\nok")
    client, _ = make_client(fake_server)
    screen = Image.new("RGB", (1080, 2340), "white")
    reply = client.complete("operator", [Message("system", "be brief"), Message("user", "look", [screen])])
    assert reply.text == "### Thought ###\nok"
    request = fake_server.requests[0]
    assert request.role == "operator"
    assert request.body["model"] == "fake-vlm"
    parts = request.body["messages"][1]["content"]
    assert parts[0] == {"type": "text", "text": "look"}
    assert parts[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    # default policy caps the longest side at 1664 pixels
    assert reply.image_sizes == [(768, 1664)]
    record = reply.record
    assert record.ok and record.images == 1 and record.attempts == 1
    assert record.input_tokens > 0 and record.output_tokens > 0
    assert client.totals()["calls"] == 1
    fake_server.assert_done()


def test_429_then_success_is_retried_with_retry_after(fake_server: FakeModelServer) -> None:
    fake_server.add(
        FakeReply(status=429, body='{"error": {"message": "slow down"}}', headers={"retry-after": "0.5"})
    )
    fake_server.add("done")
    client, sleeps = make_client(fake_server)
    reply = client.complete("manager", [Message("user", "plan")])
    assert reply.text == "done"
    assert reply.record.attempts == 2
    assert sleeps == [0.5]


def test_repeated_500_ends_in_typed_error_after_retries(fake_server: FakeModelServer) -> None:
    for _ in range(3):
        fake_server.add(FakeReply(status=500, body='{"error": {"message": "boom"}}'))
    client, sleeps = make_client(fake_server, max_retries=2)
    with pytest.raises(ModelProviderError) as info:
        client.complete("manager", [Message("user", "plan")])
    assert "HTTP 500" in str(info.value)
    assert len(fake_server.requests) == 3
    assert len(sleeps) == 2 and sleeps[1] > sleeps[0] * 0.9  # exponential backoff with jitter
    assert client.records[-1].ok is False and client.records[-1].error == "ModelProviderError"
    fake_server.assert_done()


def test_rate_limit_exhausted_is_rate_limit_error(fake_server: FakeModelServer) -> None:
    fake_server.add(*[FakeReply(status=429, body="{}") for _ in range(2)])
    client, _ = make_client(fake_server, max_retries=1)
    with pytest.raises(ModelRateLimitError):
        client.complete("manager", [Message("user", "x")])


def test_timeout_is_typed_and_retried(fake_server: FakeModelServer) -> None:
    fake_server.add(FakeReply(text="late", delay_s=1.0), FakeReply(text="late", delay_s=1.0))
    client, _ = make_client(fake_server, timeout_s=0.2, max_retries=1)
    with pytest.raises(ModelTimeoutError):
        client.complete("manager", [Message("user", "x")])
    assert len(fake_server.requests) == 2


def test_non_json_body_is_a_response_error(fake_server: FakeModelServer) -> None:
    fake_server.add(FakeReply(status=200, body="<html>gateway</html>", headers={"Content-Type": "text/html"}))
    client, _ = make_client(fake_server, max_retries=0)
    with pytest.raises(ModelResponseError):
        client.complete("manager", [Message("user", "x")])


def test_bad_request_is_not_retried(fake_server: FakeModelServer) -> None:
    fake_server.add(FakeReply(status=400, body='{"error": {"message": "bad"}}'))
    client, sleeps = make_client(fake_server)
    with pytest.raises(ModelRequestError):
        client.complete("manager", [Message("user", "x")])
    assert sleeps == []


def test_missing_key_names_the_variable(fake_server: FakeModelServer) -> None:
    client, _ = make_client(fake_server, api_key_env="MAE_TEST_KEY", provider="openai")
    with pytest.raises(ModelAuthError, match="MAE_TEST_KEY"):
        client.complete("manager", [Message("user", "x")])
    assert fake_server.requests == []


def test_refused_key_is_auth_error_and_key_never_in_message(fake_server: FakeModelServer) -> None:
    fake_server.add(FakeReply(status=401, body='{"error": {"message": "invalid key"}}'))
    client = ChatClient(
        ModelProfile(provider="openai", base_url=fake_server.base_url, model="m", api_key_env="MAE_TEST_KEY"),
        api_keys={"MAE_TEST_KEY": "sk-secret-123"},
    )
    with pytest.raises(ModelAuthError) as info:
        client.complete("manager", [Message("user", "x")])
    assert "MAE_TEST_KEY" in str(info.value)
    assert "sk-secret" not in str(info.value)
    assert fake_server.requests[0].headers["authorization"] == "Bearer sk-secret-123"


def test_connection_refused_is_provider_error() -> None:
    server = FakeModelServer()
    url = server.base_url
    server.stop()
    client = ChatClient(
        ModelProfile(base_url=url, model="m", api_key_env=None, max_retries=1, retry_backoff_s=0),
        sleep=lambda _: None,
    )
    with pytest.raises(ModelProviderError, match="cannot reach"):
        client.complete("manager", [Message("user", "x")])


def test_usage_recorded_per_call_with_callback(fake_server: FakeModelServer) -> None:
    fake_server.add("a", "bb")
    seen: list[str] = []
    client = ChatClient(
        ModelProfile(base_url=fake_server.base_url, model="m", api_key_env=None),
        on_call=lambda record: seen.append(record.role),
    )
    client.complete("manager", [Message("user", "one")])
    client.complete("notetaker", [Message("user", "two", [Image.new("RGB", (100, 200))])])
    assert seen == ["manager", "notetaker"]
    totals = client.totals()
    assert totals["calls"] == 2 and totals["images"] == 1
    assert totals["input_tokens"] == sum(r.input_tokens for r in client.records) > 0


def test_error_messages_never_show_credentials_in_the_url() -> None:
    from mae.llm.keys import redact_url

    assert (
        redact_url("https://user:sk-secret@example.com:8443/v1?api-key=sk-secret")
        == "https://example.com:8443/v1"
    )
    url = "http://user:sk-secret@127.0.0.1:9/v1?key=sk-secret"
    client = ChatClient(ModelProfile(base_url=url, model="m", api_key_env=None, max_retries=0))
    with pytest.raises(ModelProviderError) as info:
        client.complete("manager", [Message("user", "x")])
    assert "sk-secret" not in str(info.value)


TOOL_CALL = {"id": "1", "type": "function", "function": {"name": "tap", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("message", "finish_reason", "words"),
    [
        ({"content": None, "refusal": "I can't help with that."}, "stop", "refused to answer: \"I can't"),
        ({"content": None, "tool_calls": [TOOL_CALL]}, "tool_calls", "tool call instead of text"),
    ],
)
def test_a_reply_without_text_says_why_and_is_not_retried(
    fake_server: FakeModelServer, message: dict[str, object], finish_reason: str, words: str
) -> None:
    fake_server.add(FakeReply.message(message, finish_reason))
    client, sleeps = make_client(fake_server)
    with pytest.raises(ModelRequestError) as caught:
        client.complete("operator", [Message("user", "x")])
    assert words in str(caught.value)
    assert sleeps == [] and len(fake_server.requests) == 1  # the same request would get the same answer


@pytest.mark.parametrize(
    "message",
    [
        # Qwen3 on vLLM with a reasoning parser, out of tokens while still reasoning
        {"content": None, "reasoning_content": "Let me think..."},
        {"content": "  \n"},
    ],
)
def test_a_reply_cut_off_before_any_text_is_asked_once_more_with_twice_the_budget(
    fake_server: FakeModelServer, message: dict[str, object]
) -> None:
    fake_server.add(FakeReply.message(message, "length"), FakeReply.message(message, "length"))
    client, sleeps = make_client(fake_server)
    with pytest.raises(ModelRequestError) as caught:
        client.complete("operator", [Message("user", "x")])
    assert "whole reply length (4096 tokens)" in str(caught.value) and "MAE_MAX_TOKENS" in str(caught.value)
    assert [r.body["max_tokens"] for r in fake_server.requests] == [2048, 4096] and sleeps == []
    fake_server.add(FakeReply.message(message, "length"), "### Thought ###\nok")
    assert client.complete("operator", [Message("user", "x")]).text == "### Thought ###\nok"


def test_a_reply_without_text_for_no_known_reason_is_retried(fake_server: FakeModelServer) -> None:
    fake_server.add(FakeReply.message({"content": None}), "### Thought ###\nok")
    client, sleeps = make_client(fake_server)
    assert client.complete("operator", [Message("user", "x")]).text == "### Thought ###\nok"
    assert len(sleeps) == 1


def test_content_parts_are_joined_by_lines_and_a_cut_reply_is_marked(fake_server: FakeModelServer) -> None:
    parts = [{"type": "text", "text": "The screen is visible."}, {"type": "text", "text": "### Action ###"}]
    cut = FakeReply.message({"content": "### Action ###\nTap(5"}, "length")
    fake_server.add(FakeReply.message({"content": parts}), cut)
    client, _ = make_client(fake_server)
    first = client.complete("operator", [Message("user", "x")])
    assert first.text == "The screen is visible.\n### Action ###" and not first.cut_off
    assert client.complete("operator", [Message("user", "x")]).cut_off


def test_fake_server_command_listens_on_the_port_asked(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = tmp_path / "replies.json"
    script.write_text('["### Thought ###\\nok"]', encoding="utf-8")
    command = [sys.executable, "-m", "mae.testing.fake_model_server", str(script), "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == f"serving on http://127.0.0.1:{port}/v1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=10) as response:
            assert response.status == 200
    finally:
        server.terminate()
        server.wait(timeout=10)
