"""Icon captions: one model request per screen for all its new icons, cached by crop content.

The paper captioned every icon crop with its own Qwen-VL-Plus call on every step. Here the new crops
of a screen are tiled into one numbered sheet and captioned in a single request; captions are cached
by a hash of the crop's pixels, so icons seen before (most of them, across steps) cost nothing. A
failed request leaves the captions empty and reports a warning; it never invents a caption.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
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

    def finish(self, reply: str) -> list[str]:
        """Captions for every icon once the model answered ``reply``; ValueError if it is unusable."""
        found = parse_captions(reply, len(self.missing))
        fresh = {key: caption for key, caption in zip(self.missing, found, strict=True) if caption}
        self.cache.update(fresh)
        return [caption or fresh.get(key, "") for key, caption in zip(self.keys, self.captions, strict=True)]


class ApiCaptioner:
    """Captions through the configured caption model on any OpenAI-compatible endpoint."""

    def __init__(self, client: ChatClient, cache: CaptionCache, *, role: str = "captioner") -> None:
        self.client = client
        self.cache = cache
        self.role = role
        self.requests = 0
        """Caption requests sent so far (cache hits cost none)."""

    def caption(self, image: Image.Image, icons: Sequence[Element]) -> tuple[list[str], list[str]]:
        job = CaptionJob(image, icons, self.cache)
        if not job.missing:
            return job.captions, []
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


__all__ = [
    "CAPTION_PROMPT",
    "ApiCaptioner",
    "CaptionCache",
    "CaptionJob",
    "Captioner",
    "caption_sheet",
    "crop_key",
    "parse_captions",
]
