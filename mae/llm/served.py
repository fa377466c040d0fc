"""What an endpoint serves: the closest vision-capable models to a name it does not know, and shutdown
dates it reports (OpenAI's ``GET /models`` carries ``shutdown_date``)."""

from __future__ import annotations

import datetime as dt
import difflib
import logging
import re
import threading
from collections.abc import Iterable

from pydantic import BaseModel

log = logging.getLogger("mae.llm")

WARN_DAYS = 30
"""A run on a model this many days or fewer before its shutdown date warns (once per process)."""

_NOT_VISION = re.compile(
    r"embed|tts|whisper|transcribe|audio|realtime|speech|moderation|dall-e|gpt-image|image-gen|imagen|"
    r"veo|sora|search|rerank|babbage|davinci|codex|omni-moderation|live|-translate|nano-banana|"
    r"flash-image|pro-image|lite-image",
    re.IGNORECASE,
)


class ListedModel(BaseModel):
    """One entry of an endpoint's ``GET /models``."""

    id: str
    shutdown_date: str | None = None


def vision_candidates(models: Iterable[str]) -> list[str]:
    """The models of a listing that can plausibly read a screenshot and answer in text (names of
    embedding, speech, image-generation and search models are left out)."""
    return [name for name in models if not _NOT_VISION.search(name)]


def closest(requested: str, models: Iterable[str], limit: int = 3) -> list[str]:
    """Up to ``limit`` vision-capable models named most like ``requested``, best first."""
    candidates = vision_candidates(models)
    wanted = requested.lower()

    def score(name: str) -> float:
        lowered = name.lower()
        ratio = difflib.SequenceMatcher(None, wanted, lowered).ratio()
        family = wanted.split("-")[0]
        return ratio + (0.2 if family and lowered.startswith(family) else 0.0)

    return sorted(candidates, key=lambda name: (-score(name), name))[:limit]


def not_found_message(where: str, model: str, served: list[str] | None) -> str:
    """One sentence: the endpoint does not serve ``model``, the closest ones it does, and how to choose."""
    choose = "choose one with --model, MAE_MODEL or the Model field of the demo's settings"
    if served is None:
        return f"{where} does not know the model {model!r} (HTTP 404): check the model name and base URL"
    suggestions = closest(model, served)
    if not suggestions:
        return f"{where} does not serve {model!r} and lists no vision model: check the base URL"
    names = ", ".join(suggestions)
    return f"{where} does not serve {model!r}; the closest models it serves are {names}: {choose}"


def days_left(shutdown_date: str | None, today: dt.date | None = None) -> int | None:
    """Days from ``today`` to ``shutdown_date`` (negative once past); None when unknown or malformed."""
    if not shutdown_date:
        return None
    try:
        when = dt.date.fromisoformat(shutdown_date[:10])
    except ValueError:
        return None
    return (when - (today or dt.date.today())).days


def shutdown_note(model: str, shutdown_date: str | None, today: dt.date | None = None) -> str | None:
    """A sentence on ``model``'s shutdown date, or None when it has none."""
    left = days_left(shutdown_date, today)
    if left is None:
        return None
    if left < 0:
        return f"{model} was shut down on {shutdown_date}: choose a current model (see docs/configuration.md)"
    return (
        f"{model} shuts down on {shutdown_date} ({left} days from now): choose a current model before then "
        "(see docs/configuration.md)"
    )


_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


def warn_if_retiring(
    endpoint: str, model: str, shutdown_date: str | None, today: dt.date | None = None
) -> bool:
    """Log a warning once per process when ``model`` is within ``WARN_DAYS`` of its shutdown date;
    True when this call warned."""
    left = days_left(shutdown_date, today)
    if left is None or left > WARN_DAYS:
        return False
    with _warned_lock:
        if (endpoint, model) in _warned:
            return False
        _warned.add((endpoint, model))
    log.warning("%s", shutdown_note(model, shutdown_date, today))
    return True


def forget_warnings() -> None:
    """Warn again (tests)."""
    with _warned_lock:
        _warned.clear()
