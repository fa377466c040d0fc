"""The Perceptor: a screenshot in, the texts and icons on it with screen coordinates out (paper §2.1).

OCR and icon detection run concurrently on a small thread pool; icon boxes that are really text are
dropped, wrapped text lines are merged, and icons are captioned (optionally, one request per screen,
cached). Each stage is timed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
from PIL import Image

from mae.config import PerceptionSettings
from mae.errors import ConfigError
from mae.llm.client import ChatClient
from mae.perception.captions import ApiCaptioner, CaptionCache, Captioner
from mae.perception.elements import Element, Perception
from mae.perception.icons import IconDetector, drop_text_regions, make_icon_detector
from mae.perception.merge import merge_lines
from mae.perception.ocr import OcrBackend, make_ocr

T = TypeVar("T")


def _timed(func: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = func()
    return result, time.perf_counter() - started


class Perceptor:
    """Combines an OCR backend, an optional icon detector and an optional captioner."""

    def __init__(
        self,
        ocr: OcrBackend,
        icons: IconDetector | None = None,
        captioner: Captioner | None = None,
        *,
        merge: bool = True,
    ) -> None:
        self.ocr = ocr
        self.icons = icons
        self.captioner = captioner
        self.merge = merge
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="perceptor")

    @classmethod
    def from_settings(cls, settings: PerceptionSettings, client: ChatClient | None = None) -> Perceptor:
        """Build the Perceptor ``settings`` describe; captions need ``client`` unless they are off."""
        icon_options: dict[str, Any] = {}
        if settings.icons == "groundingdino":
            icon_options["model"] = settings.groundingdino_model
        detector = make_icon_detector(settings.icons, **icon_options)
        captioner: Captioner | None = None
        if settings.captions != "none":
            if detector is None:
                raise ConfigError(
                    "icon captions need an icon detector: set icons to contour or groundingdino"
                )
            captioner = make_captioner(settings, client)
        return cls(make_ocr(settings.ocr, device=settings.ocr_device), detector, captioner)

    def perceive(self, image: Image.Image, keyboard_active: bool | None = None) -> Perception:
        """Texts and icons of ``image`` with boxes in its pixels, plus per-stage timings (seconds)."""
        started = time.perf_counter()
        rgb = np.asarray(image.convert("RGB"))
        ocr_future = self._pool.submit(_timed, lambda: self.ocr.read(rgb))
        icons: list[Element] = []
        timings: dict[str, float] = {}
        if self.icons is not None:
            detector = self.icons
            icons, timings["icons"] = _timed(lambda: detector.detect(rgb))
        texts, timings["ocr"] = ocr_future.result()
        icons = drop_text_regions(icons, texts)
        if self.merge:
            texts = merge_lines(texts)
        warnings: list[str] = []
        if self.captioner is not None and icons:
            captioner = self.captioner
            (captions, warnings), timings["captions"] = _timed(lambda: captioner.caption(image, icons))
            icons = [
                icon.model_copy(update={"text": text}) for icon, text in zip(icons, captions, strict=True)
            ]
        timings["total"] = time.perf_counter() - started
        return Perception(
            width=image.width,
            height=image.height,
            elements=[*texts, *icons],
            keyboard_active=bool(keyboard_active),
            timings={k: round(v, 4) for k, v in timings.items()},
            warnings=warnings,
        )

    def close(self) -> None:
        self._pool.shutdown(wait=False)


def make_captioner(settings: PerceptionSettings, client: ChatClient | None) -> Captioner:
    """``captions``: ``backbone`` (the captioner role's model), ``local:<dir or hub id>`` (in-process
    Qwen2.5-VL on this machine's GPU) or a model name on the captioner role's endpoint."""
    cache = CaptionCache(settings.cache_dir / "icon-captions.json")
    if settings.captions.startswith("local:"):
        from mae.perception.qwen_local import LocalQwenCaptioner

        return LocalQwenCaptioner(settings.captions.removeprefix("local:"), cache)
    if client is None:
        raise ConfigError("icon captions through a model endpoint need a model client")
    if settings.captions == "backbone":
        return ApiCaptioner(client, cache)
    return ApiCaptioner(client.with_model("captioner", settings.captions), cache)
