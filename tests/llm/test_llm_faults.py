"""Provider faults: a total deadline per call, clamped Retry-After, malformed choices and usage."""

from __future__ import annotations

import json
import time

import pytest

from mae.llm import ChatClient, Message, ModelProfile, ModelResponseError, ModelTimeoutError
from mae.testing.fake_model_server import FakeModelServer, FakeReply


def make_client(server: FakeModelServer, **profile: object) -> tuple[ChatClient, list[float]]:
    sleeps: list[float] = []
    settings: dict[str, object] = {
        "provider": "test",
        "base_url": server.base_url,
        "model": "fake-vlm",
        "api_key_env": None,
        "retry_backoff_s": 0.01,
        "max_retries": 1,
    }
    settings.update(profile)
    return ChatClient(ModelProfile.model_validate(settings), sleep=sleeps.append), sleeps


def ask(client: ChatClient) -> str:
    return client.complete("operator", [Message("user", "hi")]).text


def test_trickling_server_is_cut_at_the_total_deadline(fake_server: FakeModelServer) -> None:
    fake_server.add(*[FakeReply(text="x" * 200, trickle_s=0.05) for _ in range(2)])
    client, _ = make_client(fake_server, timeout_s=1.0, max_retries=1)
    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match="did not answer within 1 s"):
        ask(client)
    elapsed = time.monotonic() - started
    assert elapsed < 20.0, elapsed  # two attempts of ~1 s each, not 2 x 200 bytes x 0.05 s = 40 s


@pytest.mark.parametrize(("value", "wait"), [("-5", 0.0), ("nan", None), ("1e9", 7.0), ("inf", None)])
def test_retry_after_is_clamped(fake_server: FakeModelServer, value: str, wait: float | None) -> None:
    fake_server.add(FakeReply(status=503, body="{}", headers={"retry-after": value}), "ok")
    client, sleeps = make_client(fake_server, max_retry_wait_s=7.0)
    assert ask(client) == "ok"
    assert len(sleeps) == 1
    if wait is None:  # not a usable number: the ordinary backoff
        assert 0 <= sleeps[0] <= 0.01
    else:
        assert sleeps[0] == wait


def completion(choices: object, usage: object = None) -> str:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": choices,
            "usage": usage,
        }
    )


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ([None], "not a chat completion|without a message|no choices"),
        ([{"index": 0, "finish_reason": "stop"}], "without a message|no text"),
        ([{"index": 0, "message": None, "finish_reason": "stop"}], "without a message"),
        ([], "no choices"),
        (None, "no choices"),
    ],
)
def test_malformed_choices_are_a_clear_response_error(
    fake_server: FakeModelServer, choices: object, message: str
) -> None:
    fake_server.add(*[FakeReply(body=completion(choices)) for _ in range(2)])
    client, _ = make_client(fake_server)
    with pytest.raises(ModelResponseError, match=message):
        ask(client)


GOOD_CHOICE = '[{"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}]'


@pytest.mark.parametrize(
    "usage", ['{"prompt_tokens": "many", "completion_tokens": null}', '"n/a"', '{"prompt_tokens": 1e400}']
)
def test_malformed_usage_never_fails_a_good_reply(fake_server: FakeModelServer, usage: str) -> None:
    body = (
        '{"id": "x", "object": "chat.completion", "created": 0, "model": "m", '
        f'"choices": {GOOD_CHOICE}, "usage": {usage}}}'
    )
    fake_server.add(FakeReply(body=body))
    client, _ = make_client(fake_server)
    reply = client.complete("operator", [Message("user", "hi")])
    assert reply.text == "fine" and reply.record.input_tokens == 0
