"""Icon captions: only a screen's new icons are asked, cached by crop content.

The paper captioned every icon crop with its own Qwen-VL-Plus call on every step. Here captions are
cached by a hash of the crop's pixels, so icons seen before (most of them, across steps) cost nothing,
and the new ones are asked in one of two ways:

- a hosted API (paid per request and per image): the new crops tiled into one numbered sheet, one
  request per screen, a JSON reply;
- a model on this machine (a vLLM server, or in process: ``qwen_local``): each new icon as its own short
  request, all at once, so the wall time follows the longest caption rather than the sum of them.

A failed request leaves the captions empty and reports a warning; it never invents a caption.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from PIL import Image, ImageDraw, ImageFont

from mae.llm.client import ChatClient, Message
from mae.llm.errors import ModelError
from mae.perception.caption_cache import CaptionCache
from mae.perception.elements import Element

TILE = 112
"""Side of one crop's cell on the caption sheet, in pixels."""

CAPTION_PROMPT = (
    "The image is a sheet of {count} icons cropped from a phone screen, each in a cell numbered in its "
    "top-left corner. For each number, describe the icon's appearance and likely function in a few "
    'words (e.g. "magnifying glass: search", "gear: settings"). Reply with only a JSON object mapping '
    'each number to its description, e.g. {{"1": "...", "2": "..."}}.'
)


ICON_PROMPT = (
    "The image is one icon cropped from a phone screen. In a few words, say what it shows and what it "
    'likely does, like "magnifying glass: search" or "gear: settings". Reply with only that.'
)
"""The question for one icon (the per-icon way)."""

ICON_TILE = 112
"""Side of the square each icon is drawn on for the per-icon way: every request has the same shape
(16 image tokens for Qwen2.5-VL), which lets a compiled model reuse one graph for every screen."""

CAPTION_TOKENS = 16
"""Longest caption asked for, in tokens (a few words; 12 on average for Qwen2.5-VL)."""

MAX_CAPTION_CHARS = 80
"""Longest caption kept, in characters: a longer reply is cut at a word."""

_REFUSALS = re.compile(
    r"\b(sorry|i can(?:no|')t|i am unable|i'm unable|unable to (?:see|identify|determine))\b", re.I
)
_LABEL = re.compile(r"^(?:caption|description|answer|icon)\s*[:\-]\s*", re.I)


class Captioner(Protocol):
    """Captions icon crops of a screenshot."""

    def caption(self, image: Image.Image, icons: Sequence[Element]) -> tuple[list[str], list[str]]:
        """Captions in the order of ``icons`` ('' where unknown), and warnings."""
        ...


def crop_key(crop: Image.Image) -> str:
    """Content hash of a crop (size and pixels), the cache key."""
    digest = hashlib.sha1(f"{crop.size}".encode())
    digest.update(crop.convert("RGB").tobytes())
    return digest.hexdigest()


def icon_tile(crop: Image.Image) -> Image.Image:
    """``crop`` scaled to fit an ``ICON_TILE`` square on white, centred (never enlarged past 4x)."""
    tile = Image.new("RGB", (ICON_TILE, ICON_TILE), "white")
    icon = crop.convert("RGB")
    scale = min(ICON_TILE / max(icon.width, 1), ICON_TILE / max(icon.height, 1), 4.0)
    size = (max(1, round(icon.width * scale)), max(1, round(icon.height * scale)))
    icon = icon.resize(size, Image.Resampling.BICUBIC)
    tile.paste(icon, ((ICON_TILE - icon.width) // 2, (ICON_TILE - icon.height) // 2))
    return tile


def read_caption(reply: str) -> str:
    """One icon's caption from a model's reply, or '' when the reply is not a short description.

    Real models add labels ("Caption: ..."), quotes, fences, a closing full stop or a second sentence;
    those are trimmed. A refusal, an empty reply or text that is mostly not words (a random or broken
    model) gives ''. Long captions are cut at a word to ``MAX_CAPTION_CHARS``.
    """
    lines = [line.strip() for line in reply.replace("\r", "\n").split("\n")]
    lines = [line for line in lines if line and not line.startswith("```")]
    if not lines:
        return ""
    text = _LABEL.sub("", lines[0]).strip().strip("\"'`*").strip()
    text = re.sub(r"\s+", " ", text).rstrip(".").strip()
    if not text or _REFUSALS.search(text):
        return ""
    if any(unicodedata.category(ch) in ("Cc", "Co", "Cn", "Cs") or ch == "\ufffd" for ch in text):
        return ""
    wordish = sum(ch.isalpha() or ch in " :,-'/&()" for ch in text)
    if wordish < 0.85 * len(text) or not re.search(r"[^\W\d_]{2,}", text):
        return ""
    if len(text) > MAX_CAPTION_CHARS:
        text = text[: MAX_CAPTION_CHARS + 1].rsplit(" ", 1)[0].rstrip(" ,:;-")
    return text


def caption_sheet(crops: Sequence[Image.Image]) -> Image.Image:
    """Tile crops into a numbered grid (numbers start at 1)."""
    columns = min(len(crops), 8)
    rows = math.ceil(len(crops) / columns)
    sheet = Image.new("RGB", (columns * TILE, rows * TILE), "white")
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default(size=18)
    for index, crop in enumerate(crops):
        cell_x, cell_y = (index % columns) * TILE, (index // columns) * TILE
        thumb = crop.convert("RGB")
        thumb.thumbnail((TILE - 24, TILE - 24))
        sheet.paste(thumb, (cell_x + 20, cell_y + 20))
        draw.rectangle((cell_x, cell_y, cell_x + TILE - 1, cell_y + TILE - 1), outline=(200, 200, 200))
        draw.text((cell_x + 3, cell_y + 1), str(index + 1), fill=(220, 0, 0), font=font)
    return sheet


def parse_captions(text: str, count: int) -> list[str]:
    """Read ``{"1": "...", ...}`` from a reply; raise ValueError when it is not there."""
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        raise ValueError("no JSON object in the caption reply")
    data = json.loads(match.group(0))
    if not isinstance(data, dict):
        raise ValueError("the caption reply is not a JSON object")
    return [str(data.get(str(i + 1), "")).strip() for i in range(count)]


class CaptionJob:
    """One screen's icons: the captions the cache already has, and the distinct crops it lacks."""

    def __init__(self, image: Image.Image, icons: Sequence[Element], cache: CaptionCache) -> None:
        self.cache = cache
        crops = [image.crop(icon.box) for icon in icons]
        self.keys = [crop_key(crop) for crop in crops]
        self.captions = [cache.get(key) or "" for key in self.keys]
        self.missing: dict[str, Image.Image] = {}
        for key, crop, caption in zip(self.keys, crops, self.captions, strict=True):
            if not caption and key not in self.missing:
                self.missing[key] = crop

    @property
    def prompt(self) -> str:
        return CAPTION_PROMPT.format(count=len(self.missing))

    def sheet(self) -> Image.Image:
        return caption_sheet(list(self.missing.values()))

    def tiles(self) -> list[Image.Image]:
        """The new crops, each on its own ``icon_tile`` (the per-icon way)."""
        return [icon_tile(crop) for crop in self.missing.values()]

    def finish_each(self, replies: Sequence[str]) -> tuple[list[str], list[str]]:
        """Captions for every icon from one reply per new crop ('' for a failed one), and warnings."""
        found = [read_caption(reply) for reply in replies]
        fresh = {key: caption for key, caption in zip(self.missing, found, strict=True) if caption}
        self.cache.update(fresh)
        captions = [
            caption or fresh.get(key, "") for key, caption in zip(self.keys, self.captions, strict=True)
        ]
        unusable = len(found) - len(fresh)
        warnings = []
        if unusable:
            warnings.append(
                f"icon captions unavailable for {unusable} of {len(found)} new icons: the caption model's "
                "replies were not short descriptions"
            )
        return captions, warnings

    def finish(self, reply: str) -> list[str]:
        """Captions for every icon once the model answered ``reply``; ValueError if it is unusable."""
        found = parse_captions(reply, len(self.missing))
        fresh = {key: caption for key, caption in zip(self.missing, found, strict=True) if caption}
        self.cache.update(fresh)
        return [caption or fresh.get(key, "") for key, caption in zip(self.keys, self.captions, strict=True)]


class ApiCaptioner:
    """Captions through the configured caption model on any OpenAI-compatible endpoint.

    ``per_icon``: each new icon as its own request, ``parallel`` at a time, instead of one sheet per
    screen. Meant for a model server on this machine (vLLM batches concurrent requests), where it is much
    faster; a hosted API is asked one sheet per screen (fewer requests, fewer image tokens). ``None``
    picks per icon when the captioner role runs on the ``vllm`` backbone.
    """

    def __init__(
        self,
        client: ChatClient,
        cache: CaptionCache,
        *,
        role: str = "captioner",
        per_icon: bool | None = None,
        parallel: int = 16,
    ) -> None:
        self.client = client
        self.cache = cache
        self.role = role
        self.per_icon = per_icon if per_icon is not None else client.profile(role).provider == "vllm"
        self.parallel = max(1, parallel)
        self.requests = 0
        """Caption requests sent so far (cache hits cost none)."""

    def caption(self, image: Image.Image, icons: Sequence[Element]) -> tuple[list[str], list[str]]:
        job = CaptionJob(image, icons, self.cache)
        if not job.missing:
            return job.captions, []
        if self.per_icon:
            return self._caption_each(job)
        self.requests += 1
        try:
            reply = self.client.complete(
                self.role, [Message("user", job.prompt, [job.sheet()])], max_tokens=40 * len(job.missing)
            )
            return job.finish(reply.text), []
        except ModelError as exc:
            return job.captions, [f"icon captions unavailable: {exc}"]
        except ValueError as exc:
            return job.captions, [
                f"icon captions unavailable: the caption model's reply was unusable ({exc})"
            ]

    def _caption_each(self, job: CaptionJob) -> tuple[list[str], list[str]]:
        errors: list[str] = []

        def ask(tile: Image.Image) -> str:
            try:
                reply = self.client.complete(
                    self.role, [Message("user", ICON_PROMPT, [tile])], max_tokens=CAPTION_TOKENS
                )
            except ModelError as exc:
                errors.append(str(exc))
                return ""
            return reply.text

        tiles = job.tiles()
        self.requests += len(tiles)
        with ThreadPoolExecutor(max_workers=min(self.parallel, len(tiles))) as pool:
            replies = list(pool.map(ask, tiles))
        if errors:
            captions, _ = job.finish_each(replies)
            return captions, [
                f"icon captions unavailable for {len(errors)} of {len(tiles)} new icons: {errors[0]}"
            ]
        return job.finish_each(replies)


__all__ = [
    "CAPTION_PROMPT",
    "CAPTION_TOKENS",
    "ICON_PROMPT",
    "ICON_TILE",
    "MAX_CAPTION_CHARS",
    "ApiCaptioner",
    "CaptionCache",
    "CaptionJob",
    "Captioner",
    "caption_sheet",
    "crop_key",
    "icon_tile",
    "parse_captions",
    "read_caption",
]
