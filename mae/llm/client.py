"""The one place that talks to models: the ``openai`` SDK pointed at a base URL + model per role.

Retries (429, 5xx, timeouts, connection errors) are bounded with exponential backoff and jitter;
failures become typed errors chosen by exception type and HTTP status. Every call is recorded
(latency, tokens, images) so runs can report speed and cost. API keys are read from the environment
(or given for the session) and never logged or stored.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2 as httpx  # the HTTP client the openai SDK is built on
import openai
from PIL import Image
from pydantic import BaseModel

from mae import public_mode
from mae.llm import adapt, served
from mae.llm.base_urls import BaseUrlRefused, guarded_transport
from mae.llm.errors import (
    ModelAuthError,
    ModelCutOffError,
    ModelError,
    ModelNotFoundError,
    ModelProviderError,
    ModelRateLimitError,
    ModelRequestError,
    ModelResponseError,
    ModelTimeoutError,
)
from mae.llm.images import EncodedImage, encode_image
from mae.llm.keys import redact_url, resolve_key
from mae.llm.providers import ModelProfile

ROLE_HEADER = "X-Mae-Role"
"""Header naming the agent role of a request (lets local servers and tests route by role)."""


@dataclass
class Message:
    """One chat turn; images are PIL images (encoded per the role's policy) or pre-encoded."""

    role: Literal["system", "user", "assistant"]
    text: str
    images: Sequence[Image.Image | EncodedImage] = ()


class CallRecord(BaseModel):
    """What one model call cost."""

    role: str
    provider: str
    model: str
    started_at: float
    latency_s: float
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    """Input tokens the provider served from its prompt cache (part of ``input_tokens``)."""
    reasoning_tokens: int = 0
    """Output tokens spent on hidden reasoning (part of ``output_tokens``)."""
    images: int = 0
    attempts: int = 1
    ok: bool = True
    error: str | None = None


@dataclass
class ChatReply:
    """A model's text reply, the record of the call, and the sizes the images were sent at."""

    text: str
    record: CallRecord
    image_sizes: list[tuple[int, int]] = field(default_factory=list)
    cut_off: bool = False
    """The reply stopped at the length limit (``finish_reason`` ``length``): it may be incomplete."""


ProfileSource = ModelProfile | Callable[[str], ModelProfile]


class ChatClient:
    """Chat completions for every agent role.

    ``profiles`` is one ``ModelProfile`` for all roles or a function role -> profile (usually
    ``Settings.profile_for``). ``api_keys`` maps environment-variable names to keys entered for this
    session only (the UI's password fields); the process environment is used otherwise.
    """

    def __init__(
        self,
        profiles: ProfileSource,
        *,
        api_keys: Mapping[str, str] | None = None,
        on_call: Callable[[CallRecord], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._profiles = profiles
        self._api_keys = dict(api_keys or {})
        self._on_call = on_call
        self._sleep = sleep
        self._clients: dict[tuple[str, str, float], openai.OpenAI] = {}
        self._lock = threading.Lock()
        self.records: list[CallRecord] = []
        self.gate: AbstractContextManager[Any] | None = None
        """Held around every request (parallel evals bound the requests in flight with it)."""

    def with_model(self, role: str, model: str) -> ChatClient:
        """A client whose ``role`` uses ``model`` on the same endpoint; keys and records are shared."""
        base = self.profile(role).model_copy(update={"model": model})
        derived = ChatClient(
            lambda r: base if r == role else self.profile(r),
            api_keys=self._api_keys,
            on_call=self._on_call,
            sleep=self._sleep,
        )
        derived.records = self.records
        derived.gate = self.gate
        return derived

    def profile(self, role: str) -> ModelProfile:
        return self._profiles if isinstance(self._profiles, ModelProfile) else self._profiles(role)

    def check_key(self, role: str) -> None:
        """Raise ``ModelAuthError`` now if ``role``'s model needs a key that is not set."""
        self._api_key(self.profile(role))

    def _api_key(self, profile: ModelProfile) -> str:
        return resolve_key(profile, self._api_keys)

    def _sdk(self, profile: ModelProfile) -> openai.OpenAI:
        key = self._api_key(profile)
        cache_key = (profile.base_url, key, profile.timeout_s)
        with self._lock:
            client = self._clients.get(cache_key)
            if client is None:
                client = openai.OpenAI(
                    base_url=profile.base_url,
                    api_key=key,
                    timeout=profile.timeout_s,
                    max_retries=0,
                    http_client=http_client(profile.timeout_s),
                )
                self._clients[cache_key] = client
        return client

    def encode(self, role: str, image: Image.Image) -> EncodedImage:
        """Encode an image the way ``role``'s model receives it (to know its size beforehand)."""
        return encode_image(image, self.profile(role).image)

    def complete(self, role: str, messages: Sequence[Message], *, max_tokens: int | None = None) -> ChatReply:
        """Send ``messages`` to ``role``'s model and return its reply; raise a ``ModelError`` subclass.

        A parameter the endpoint refuses (HTTP 400 naming ``max_tokens``, ``temperature`` ...) is renamed
        or left out once and remembered for the endpoint; a reply cut off before any text (the budget
        spent on reasoning) is asked again once with twice the budget."""
        profile = self.profile(role)
        payload, sizes = self._payload(profile, messages)
        image_count = len(sizes)
        started = time.time()
        budget = adapt.reply_budget(profile, max_tokens)
        attempt, adjusted, enlarged = 0, set[str](), False
        while True:
            attempt += 1
            params = adapt.request_params(profile, budget)
            try:
                with self.gate or nullcontext():
                    response = self._sdk(profile).chat.completions.create(
                        model=profile.model,
                        messages=payload,  # type: ignore[arg-type]
                        extra_headers={ROLE_HEADER: role},
                        **params,
                    )
                text, cut_off, usage = _read_response(response, budget)
            except ModelAuthError as exc:
                self._record(role, profile, started, attempt, image_count, error=exc)
                raise
            except ModelCutOffError as exc:
                if not enlarged:
                    enlarged, budget = True, budget * 2
                    adapt.log.warning("%s: %s; asking once more with %d tokens", role, exc, budget)
                    continue
                self._record(role, profile, started, attempt, image_count, error=exc)
                raise
            except Exception as exc:  # classified by type and status; a refused parameter by its name
                refused = _refused(exc, params)
                if refused and refused not in adjusted:
                    adjusted.add(refused)
                    adapt.remember(profile, refused)
                    adapt.log.warning(
                        "%s at %s refused %s: %s for this endpoint from now on",
                        profile.model,
                        redact_url(profile.base_url),
                        refused,
                        adapt.describe_fix(refused),
                    )
                    continue
                error = classify(exc, profile)
                if isinstance(exc, openai.NotFoundError):
                    error = ModelNotFoundError(
                        served.not_found_message(_where(profile), profile.model, self._served(profile))
                    )
                if isinstance(error, ModelProviderError) and attempt <= profile.max_retries:
                    self._sleep(self._delay(profile, attempt, exc))
                    continue
                self._record(role, profile, started, attempt, image_count, error=error)
                raise error from exc
            record = self._record(role, profile, started, attempt, image_count, usage=usage)
            served.warn_if_retiring(profile.base_url, profile.model, profile.shutdown_date)
            return ChatReply(text=text, record=record, image_sizes=sizes, cut_off=cut_off)

    def _served(self, profile: ModelProfile) -> list[str] | None:
        """The model ids ``profile``'s endpoint lists at ``GET /models``; None when it does not answer."""
        try:
            return [str(item.id) for item in self._sdk(profile).models.list(timeout=10.0)]
        except Exception:  # a listing is a hint only: any failure leaves the plain 404 message
            return None

    def _payload(
        self, profile: ModelProfile, messages: Sequence[Message]
    ) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
        payload: list[dict[str, Any]] = []
        sizes: list[tuple[int, int]] = []
        for message in messages:
            if not message.images:
                payload.append({"role": message.role, "content": message.text})
                continue
            parts: list[dict[str, Any]] = [{"type": "text", "text": message.text}]
            for image in message.images:
                encoded = image if isinstance(image, EncodedImage) else encode_image(image, profile.image)
                sizes.append(encoded.size)
                parts.append({"type": "image_url", "image_url": {"url": encoded.data_url}})
            payload.append({"role": message.role, "content": parts})
        return payload, sizes

    def _delay(self, profile: ModelProfile, attempt: int, exc: Exception) -> float:
        retry_after = _retry_after(exc)
        if retry_after is not None:  # a server's wish, kept within [0, max_retry_wait_s]
            return min(max(retry_after, 0.0), profile.max_retry_wait_s)
        base = profile.retry_backoff_s * (2 ** (attempt - 1))
        return min(base, 30.0) * (0.5 + random.random() / 2)

    def _record(
        self,
        role: str,
        profile: ModelProfile,
        started: float,
        attempts: int,
        images: int,
        *,
        usage: adapt.Usage | None = None,
        error: ModelError | None = None,
    ) -> CallRecord:
        usage = usage or adapt.Usage()
        record = CallRecord(
            role=role,
            provider=profile.provider,
            model=profile.model,
            started_at=started,
            latency_s=time.time() - started,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            images=images,
            attempts=attempts,
            ok=error is None,
            error=type(error).__name__ if error else None,
        )
        with self._lock:
            self.records.append(record)
        if self._on_call is not None:
            self._on_call(record)
        return record

    def totals(self) -> dict[str, float]:
        """Calls, tokens, images and model seconds over every call so far."""
        with self._lock:
            records = list(self.records)
        return {
            "calls": len(records),
            "failed_calls": sum(not r.ok for r in records),
            "input_tokens": sum(r.input_tokens for r in records),
            "cached_tokens": sum(r.cached_tokens for r in records),
            "output_tokens": sum(r.output_tokens for r in records),
            "reasoning_tokens": sum(r.reasoning_tokens for r in records),
            "images": sum(r.images for r in records),
            "model_seconds": round(sum(r.latency_s for r in records), 3),
        }


def _refused(exc: Exception, sent: dict[str, Any]) -> str | None:
    """The request field an HTTP 400 refused that mae can rename or leave out (``mae.llm.adapt``)."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    return adapt.refused_param(exc.status_code, exc.body, str(exc.message), sent)


def _where(profile: ModelProfile) -> str:
    return f"{profile.provider} ({redact_url(profile.base_url)})"


def _read_response(response: Any, max_tokens: int) -> tuple[str, bool, adapt.Usage]:
    """Text, whether it stopped at the length limit, and token counts of a chat completion.

    A reply with no text raises: ``ModelRequestError`` (not retried, the same request would get the same
    answer) when the model used its whole length budget before writing text, refused, or called a tool;
    ``ModelResponseError`` (retried) otherwise. Token counts are informative only: a missing or
    malformed ``usage`` counts as 0, never an error.
    """
    choices = getattr(response, "choices", None)
    if not choices or not isinstance(choices, list):
        raise ModelResponseError("the model's reply has no choices (not a chat completion)")
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        raise ModelResponseError("the model's reply has a choice without a message")
    cut_off = getattr(choice, "finish_reason", None) in ("length", "max_tokens")
    content = getattr(message, "content", None)
    if isinstance(content, list):  # content parts: keep the text ones, each on its own line
        content = "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(getattr(part, "text", "") or "")
            for part in content
        )
    if content is None or not isinstance(content, str) or (not content.strip() and cut_off):
        raise _no_text(message, cut_off, max_tokens)
    return content, cut_off, adapt.read_usage(getattr(response, "usage", None))


def _no_text(message: Any, cut_off: bool, max_tokens: int) -> ModelError:
    """Why a reply has no text, as the error to raise."""
    if cut_off:
        return ModelCutOffError(
            f"the model used its whole reply length ({max_tokens} tokens) before writing an answer, most "
            "likely on its reasoning: raise it with --max-tokens or MAE_MAX_TOKENS, or lower the reasoning "
            "effort with MAE_REASONING_EFFORT=low"
        )
    refusal = getattr(message, "refusal", None)
    if isinstance(refusal, str) and refusal.strip():
        return ModelRequestError(f"the model refused to answer: {' '.join(refusal.split())[:200]!r}")
    if getattr(message, "tool_calls", None):
        return ModelRequestError(
            "the model answered with a tool call instead of text; mae sends no tools, so turn off forced "
            "tool use (tool_choice) on the server"
        )
    return ModelResponseError("the model's reply has no text content")


def _retry_after(exc: Exception) -> float | None:
    """Seconds a ``Retry-After`` header asks for; None when absent or not a finite number."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
    return seconds if seconds is not None and math.isfinite(seconds) else None


class _DeadlineStream(httpx.SyncByteStream):
    """A response body that stops with a timeout once the call's total deadline has passed."""

    def __init__(self, inner: httpx.SyncByteStream, deadline: float, request: httpx.Request) -> None:
        self._inner = inner
        self._deadline = deadline
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if time.monotonic() > self._deadline:
                raise httpx.ReadTimeout(
                    "the reply took longer than the call's deadline", request=self._request
                )
            yield chunk

    def close(self) -> None:
        self._inner.close()


def http_client(total_s: float) -> httpx.Client:
    """The HTTP client under the SDK: a total deadline per call; on a public demo every connection also
    passes the base-URL policy at connect time (``mae.llm.base_urls``) and proxies from the
    environment are not used."""
    if public_mode.is_public():
        return httpx.Client(transport=DeadlineTransport(total_s, guarded_transport()), trust_env=False)
    return httpx.Client(transport=DeadlineTransport(total_s))


class DeadlineTransport(httpx.BaseTransport):
    """HTTP transport with a total deadline per request (connect + headers + body), not per read: a
    server trickling bytes cannot hold a call past ``total_s`` (plus at most one read)."""

    def __init__(self, total_s: float, inner: httpx.BaseTransport | None = None) -> None:
        self._inner = inner or httpx.HTTPTransport()
        self._total_s = total_s

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self._total_s
        response = self._inner.handle_request(request)
        if time.monotonic() > deadline:
            response.close()
            raise httpx.ReadTimeout("the reply took longer than the call's deadline", request=request)
        stream = response.stream
        if isinstance(stream, httpx.SyncByteStream):
            response.stream = _DeadlineStream(stream, deadline, request)
        return response

    def close(self) -> None:
        self._inner.close()


def classify(exc: Exception, profile: ModelProfile) -> ModelError:
    """Map an exception from the SDK (or from reading its response) to a typed ``ModelError``."""
    where = f"{profile.provider} ({profile.model} at {redact_url(profile.base_url)})"
    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return ModelTimeoutError(f"{where} did not answer within {profile.timeout_s:g} s")
    if isinstance(exc, openai.APIConnectionError) and isinstance(exc.__cause__, BaseUrlRefused):
        return ModelRequestError(str(exc.__cause__))
    if isinstance(exc, openai.APIConnectionError):
        return ModelProviderError(f"cannot reach {where}: check the base URL and that the server is running")
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        env = profile.api_key_env or "the API key variable"
        return ModelAuthError(f"{where} refused the API key (HTTP {exc.status_code}): check {env}")
    if isinstance(exc, openai.RateLimitError):
        return ModelRateLimitError(
            f"{where} is rate limiting (HTTP 429); retry later or lower the request rate"
        )
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code >= 500:
            return ModelProviderError(f"{where} failed with HTTP {exc.status_code}")
        if exc.status_code == 404:
            return ModelRequestError(f"{where} answered 404: check the model name and base URL")
        return ModelRequestError(f"{where} rejected the request (HTTP {exc.status_code})")
    if isinstance(exc, openai.APIResponseValidationError | ValueError):
        return ModelResponseError(f"{where} sent a reply that is not a chat completion")
    if isinstance(exc, openai.APIError):
        return ModelProviderError(f"{where} failed: {type(exc).__name__}")
    raise exc
