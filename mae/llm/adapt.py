"""Request parameters that follow what an endpoint accepts, and token counts read from its usage.

Reasoning models reject parameters older models need: OpenAI's answer ``400 Unsupported parameter:
'max_tokens' ... Use 'max_completion_tokens' instead`` or ``Unsupported value: 'temperature' ... Only
the default (1) value is supported``. A profile starts from what its preset knows (``token_param``,
``temperature``, ``reasoning_effort``); when the endpoint still rejects one of them, the client renames
or drops that parameter once, retries, and remembers the change for that endpoint (base URL + model)
for the rest of the process, saying so in the log. The rejected parameter is read from the error's
``param`` field, or, for providers that leave it out, from its message naming the parameter.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from dataclasses import dataclass
from typing import Any

from mae.llm.providers import ModelProfile

log = logging.getLogger("mae.llm")

ADJUSTABLE = ("max_tokens", "max_completion_tokens", "temperature", "reasoning_effort")
"""Request fields mae sends that an endpoint may refuse, and that can be renamed or left out."""

_REFUSAL_WORDS = re.compile(
    r"unsupported|not supported|does not support|isn't supported|only the default|not allowed|"
    r"unrecognized|unknown (?:field|parameter)|extra inputs are not permitted|not permitted",
    re.IGNORECASE,
)

_lock = threading.Lock()
_learned: dict[tuple[str, str], set[str]] = {}
"""(base URL, model) -> the parameters that endpoint refused (process-wide)."""


def learned(profile: ModelProfile) -> frozenset[str]:
    """The parameters ``profile``'s endpoint has refused so far in this process."""
    with _lock:
        return frozenset(_learned.get(_endpoint(profile), ()))


def remember(profile: ModelProfile, param: str) -> None:
    with _lock:
        _learned.setdefault(_endpoint(profile), set()).add(param)


def forget_all() -> None:
    """Forget every endpoint's refusals (tests)."""
    with _lock:
        _learned.clear()


def _endpoint(profile: ModelProfile) -> tuple[str, str]:
    return profile.base_url.rstrip("/"), profile.model


def request_params(profile: ModelProfile, budget: int) -> dict[str, Any]:
    """The optional request fields for ``profile`` with a reply budget of ``budget`` tokens, after what
    the endpoint has refused before."""
    refused = learned(profile)
    token_param = profile.token_param
    if token_param in refused:
        token_param = "max_tokens" if token_param == "max_completion_tokens" else "max_completion_tokens"
    params: dict[str, Any] = {}
    if token_param not in refused:
        params[token_param] = budget
    if profile.temperature is not None and "temperature" not in refused:
        params["temperature"] = profile.temperature
    if profile.reasoning_effort and "reasoning_effort" not in refused:
        params["reasoning_effort"] = profile.reasoning_effort
    return params


def reply_budget(profile: ModelProfile, max_tokens: int | None = None) -> int:
    """Tokens the reply may use: the visible reply plus, for a reasoning model, its hidden reasoning
    (OpenAI counts both against ``max_completion_tokens``)."""
    visible = max_tokens or profile.max_tokens
    return visible + (profile.reasoning_tokens if profile.reasoning_effort else 0)


def refused_param(status: int | None, body: Any, message: str, sent: dict[str, Any]) -> str | None:
    """The request field an HTTP 400/422 refused, when it is one mae can rename or leave out and it was
    sent; None otherwise (the error stands)."""
    if status not in (400, 422):
        return None
    error = body.get("error", body) if isinstance(body, dict) else None
    param = error.get("param") if isinstance(error, dict) else None
    if isinstance(param, str) and param in sent and param in ADJUSTABLE:
        return param
    text = message
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        text = f"{error['message']} {message}"
    if not _REFUSAL_WORDS.search(text):
        return None
    for name in ADJUSTABLE:
        if name in sent and re.search(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])", text):
            return name
    return None


def describe_fix(param: str) -> str:
    """What mae does about a refused parameter, for the log."""
    if param == "max_tokens":
        return "sending max_completion_tokens instead"
    if param == "max_completion_tokens":
        return "sending max_tokens instead"
    return f"leaving {param} out"


@dataclass(frozen=True)
class Usage:
    """Token counts of one reply, read tolerantly (missing or malformed fields count as 0)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    """Input tokens served from the provider's prompt cache (billed at the cached rate)."""
    reasoning_tokens: int = 0
    """Output tokens spent on hidden reasoning (part of ``output_tokens``)."""


def read_usage(usage: Any) -> Usage:
    """Token counts from a chat completion's ``usage``: OpenAI's ``prompt_tokens_details.cached_tokens``
    and ``completion_tokens_details.reasoning_tokens``, and the equivalents other OpenAI-compatible
    servers send (Anthropic's ``cache_read_input_tokens``, DeepSeek's ``prompt_cache_hit_tokens``,
    Gemini's ``cached_content_token_count``, a flat ``cached_tokens``)."""
    if usage is None:
        return Usage()
    input_tokens = _count(_field(usage, "prompt_tokens"))
    output_tokens = _count(_field(usage, "completion_tokens"))
    cached = _count(_field(_field(usage, "prompt_tokens_details"), "cached_tokens"))
    for name in ("cache_read_input_tokens", "prompt_cache_hit_tokens", "cached_content_token_count"):
        cached = cached or _count(_field(usage, name))
    cached = cached or _count(_field(usage, "cached_tokens"))
    reasoning = _count(_field(_field(usage, "completion_tokens_details"), "reasoning_tokens"))
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_tokens=min(cached, input_tokens) if input_tokens else cached,
        reasoning_tokens=reasoning,
    )


def _field(value: Any, name: str) -> Any:
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get(name)
    found = getattr(value, name, None)
    if found is None:
        extra = getattr(value, "model_extra", None)
        if isinstance(extra, dict):
            return extra.get(name)
    return found


def _count(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    try:
        number = float(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0
    return int(number) if math.isfinite(number) and 0 <= number < 1e12 else 0
