"""Backbones of today against a fake server: parameters a reasoning model refuses, retired models,
cached and reasoning tokens, shutdown dates, and a corpus of real providers' error bodies."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mae.eval.prices import PriceTable
from mae.llm import adapt, served
from mae.llm.client import CallRecord, ChatClient, Message
from mae.llm.errors import ModelNotFoundError, ModelRequestError
from mae.llm.providers import PRESETS, ModelProfile
from mae.testing.fake_model_server import FakeModelServer, FakeReply

CORPUS = json.loads((Path(__file__).parent / "data" / "provider_errors.json").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _fresh_memory() -> Iterator[None]:
    adapt.forget_all()
    served.forget_warnings()
    yield
    adapt.forget_all()
    served.forget_warnings()


def _client(server: FakeModelServer, **profile: Any) -> ChatClient:
    settings: dict[str, Any] = {
        "provider": "test",
        "base_url": server.base_url,
        "model": "fake-vlm",
        "api_key_env": None,
        "max_retries": 0,
    }
    settings.update(profile)
    return ChatClient(ModelProfile.model_validate(settings), sleep=lambda _s: None)


def test_a_reasoning_model_refusing_max_tokens_and_temperature_is_adapted_once_and_remembered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with FakeModelServer(["first", "second"], reasoning=True) as server:
        client = _client(server)
        with caplog.at_level(logging.WARNING, logger="mae.llm"):
            reply = client.complete("operator", [Message("user", "x")])
        assert reply.text == "first" and reply.record.reasoning_tokens > 0
        assert [sorted(k for k in r.body if k in adapt.ADJUSTABLE) for r in server.requests] == [
            ["max_tokens", "temperature"],
            ["max_completion_tokens", "temperature"],
            ["max_completion_tokens"],
        ]
        logged = [r.getMessage() for r in caplog.records]
        assert any("refused max_tokens: sending max_completion_tokens instead" in line for line in logged)
        assert any("refused temperature: leaving temperature out" in line for line in logged)
        # remembered for the endpoint: a new client (a new run) sends what is accepted at once
        assert _client(server).complete("manager", [Message("user", "y")]).text == "second"
        assert len(server.requests) == 4 and len(server.refused) == 2
        server.assert_done()


def test_the_openai_preset_sends_what_reasoning_models_accept_from_the_first_call() -> None:
    with FakeModelServer(["ok"], reasoning=True) as server:
        profile = (
            PRESETS["openai"].profile().model_copy(update={"base_url": server.base_url, "api_key_env": None})
        )
        reply = ChatClient(profile).complete("operator", [Message("user", "x")])
        body = server.requests[0].body
    assert reply.text == "ok" and server.refused == []
    assert body["max_completion_tokens"] == 2048 + 6144 and body["reasoning_effort"] == "low"
    assert "temperature" not in body and "max_tokens" not in body


def test_a_model_refusing_reasoning_effort_gets_it_left_out() -> None:
    refusal = CORPUS["errors"][4]
    with FakeModelServer([FakeReply(status=400, body=json.dumps(refusal["body"])), "ok"]) as server:
        client = _client(server, reasoning_effort="low")
        assert client.complete("operator", [Message("user", "x")]).text == "ok"
        assert "reasoning_effort" in server.requests[0].body
        assert "reasoning_effort" not in server.requests[1].body


def test_the_same_refusal_twice_is_not_adapted_again() -> None:
    body = json.dumps(CORPUS["errors"][2]["body"])
    with FakeModelServer([FakeReply(status=400, body=body), FakeReply(status=400, body=body)]) as server:
        with pytest.raises(ModelRequestError, match="HTTP 400"):
            _client(server).complete("operator", [Message("user", "x")])
        assert len(server.requests) == 2


@pytest.mark.parametrize("entry", CORPUS["errors"], ids=lambda e: e["source"][:60])
def test_real_error_bodies_name_the_parameter_to_change_or_none(entry: dict[str, Any]) -> None:
    sent = {"max_tokens": 2048, "temperature": 0.0, "reasoning_effort": "low", "messages": []}
    message = json.dumps(entry["body"])
    assert adapt.refused_param(entry["status"], entry["body"], message, sent) == entry["refused"]


def test_a_retired_model_is_explained_with_the_closest_vision_models_served() -> None:
    retired = CORPUS["errors"][5]["body"]
    with FakeModelServer([FakeReply(status=404, body=json.dumps(retired))]) as server:
        server.served_models = [
            {"id": name, "object": "model"}
            for name in (
                "text-embedding-3-large",
                "gpt-6.1-sol",
                "gpt-6-luna",
                "whisper-1",
                "gpt-image-2",
                "gpt-6.1-terra",
            )
        ]
        with pytest.raises(ModelNotFoundError) as caught:
            _client(server, model="gpt-4-0314").complete("operator", [Message("user", "x")])
    text = str(caught.value)
    assert "does not serve 'gpt-4-0314'" in text and "gpt-6.1-sol" in text and "gpt-6-luna" in text
    assert "embedding" not in text and "whisper" not in text and "gpt-image" not in text
    assert "--model" in text and "MAE_MODEL" in text and "Model field" in text
    assert "\n" not in text and "Traceback" not in text


def test_closest_ranks_the_same_family_first() -> None:
    listing = ["gemini-3.5-flash", "gemini-3.1-flash-lite", "gemini-embedding-001", "imagen-4.0-generate-001"]
    assert served.closest("gemini-1.5-pro", listing)[:2] == ["gemini-3.5-flash", "gemini-3.1-flash-lite"]
    assert "gemini-embedding-001" not in served.closest("gemini-1.5-pro", listing)


def test_cached_and_reasoning_tokens_are_read_recorded_and_priced() -> None:
    usage = {
        "prompt_tokens": 3000,
        "completion_tokens": 500,
        "prompt_tokens_details": {"cached_tokens": 2048},
        "completion_tokens_details": {"reasoning_tokens": 384},
    }
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": usage,
    }
    with FakeModelServer([FakeReply(body=json.dumps(body))]) as server:
        client = _client(server)
        record = client.complete("operator", [Message("user", "x")]).record
    assert (record.input_tokens, record.cached_tokens, record.reasoning_tokens) == (3000, 2048, 384)
    assert client.totals()["cached_tokens"] == 2048
    table = PriceTable(
        as_of="t", per_million={"test:fake-vlm": (2.0, 10.0)}, cached_per_million={"test:fake-vlm": 0.1}
    )
    cost = table.call_cost(record)
    assert cost == pytest.approx((952 * 2.0 + 2048 * 0.1 + 500 * 10.0) / 1e6)


@pytest.mark.parametrize(
    ("usage", "cached"),
    [
        ({"prompt_tokens": 100, "cache_read_input_tokens": 64}, 64),  # Anthropic
        ({"prompt_tokens": 100, "prompt_cache_hit_tokens": 32}, 32),  # DeepSeek
        ({"prompt_tokens": 100, "cached_content_token_count": 16}, 16),  # Gemini
        ({"prompt_tokens": 100, "prompt_tokens_details": None}, 0),
        ({"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": "lots"}}, 0),
    ],
)
def test_cached_tokens_are_read_from_each_providers_usage(usage: dict[str, Any], cached: int) -> None:
    assert adapt.read_usage(usage).cached_tokens == cached


def test_a_fake_with_a_prompt_cache_reports_the_repeated_prefix() -> None:
    prefix = "stable " * 1000
    with FakeModelServer(["a", "b"], prompt_cache=True) as server:
        client = _client(server)
        first = client.complete("operator", [Message("user", prefix + "step 1")]).record
        second = client.complete("operator", [Message("user", prefix + "step 2")]).record
    assert first.cached_tokens == 0 and 1024 <= second.cached_tokens <= len(prefix) // 4


def test_a_model_near_its_shutdown_date_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    today = dt.date(2026, 12, 20)
    with caplog.at_level(logging.WARNING, logger="mae.llm"):
        assert served.warn_if_retiring("u", "gpt-4o", "2027-01-14", today)
        assert not served.warn_if_retiring("u", "gpt-4o", "2027-01-14", today)
        assert not served.warn_if_retiring("u", "gpt-6.1-sol", None, today)
        assert not served.warn_if_retiring("v", "gpt-4o", "2027-01-14", dt.date(2026, 11, 28))
    assert [r.getMessage() for r in caplog.records] == [
        "gpt-4o shuts down on 2027-01-14 (25 days from now): choose a current model before then "
        "(see docs/configuration.md)"
    ]


def test_the_paper_profile_carries_its_shutdown_date() -> None:
    profile = PRESETS["openai-gpt4o"].profile()
    assert (profile.provider, profile.model, profile.shutdown_date) == ("openai", "gpt-4o", "2027-01-14")
    assert profile.temperature == 0.0 and profile.token_param == "max_tokens"
    assert "2027-01-14" in PRESETS["openai-gpt4o"].label


def test_records_without_usage_details_keep_zero() -> None:
    record = CallRecord(role="r", provider="p", model="m", started_at=0, latency_s=0, input_tokens=10)
    assert record.cached_tokens == 0 and record.reasoning_tokens == 0


def test_eval_costs_price_cached_input_at_the_cached_rate_of_the_dated_table() -> None:
    from mae.eval.prices import estimate_cost, price_table

    table = price_table()
    assert table.as_of == "2026-11-28"
    for name, preset in PRESETS.items():  # every hosted preset's agent model has a dated price
        if preset.provider != "vllm" and name != "vllm":
            assert table.price(preset.provider or name, preset.model), name
    fresh = CallRecord(
        role="operator",
        provider="openai",
        model="gpt-6.1-sol",
        started_at=0,
        latency_s=1,
        input_tokens=10_000,
    )
    cached = fresh.model_copy(update={"cached_tokens": 8_000})
    full, note = estimate_cost([fresh])
    cheaper, _ = estimate_cost([cached])
    assert full == pytest.approx(0.02) and cheaper == pytest.approx((2_000 * 2.0 + 8_000 * 0.1) / 1e6)
    assert "prices as of 2026-11-28" in note
