"""Typed model errors, classified by exception type and HTTP status, never by message text."""

from __future__ import annotations

from mae.errors import MaeError


class ModelError(MaeError):
    """Base class of every failure to get a reply from a model."""


class ModelAuthError(ModelError):
    """The API key is missing or was refused. The message names the environment variable to set."""


class ModelRequestError(ModelError):
    """The provider refused the request itself (HTTP 4xx other than 401/403/429): not retried."""


class ModelCutOffError(ModelRequestError):
    """The model spent its whole reply budget (most likely on hidden reasoning) before writing text."""


class ModelNotFoundError(ModelRequestError):
    """The endpoint does not serve the model (HTTP 404): the message names the closest ones it does."""


class ModelProviderError(ModelError):
    """The provider failed (5xx, connection error, unreadable body) after the configured retries."""


class ModelRateLimitError(ModelProviderError):
    """HTTP 429 after the configured retries."""


class ModelTimeoutError(ModelProviderError):
    """No reply within the timeout, after the configured retries."""


class ModelResponseError(ModelProviderError):
    """The provider answered, but the body is not a chat completion (not JSON, no choices)."""
