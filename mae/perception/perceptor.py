"""The Perceptor: a screenshot in, the texts and icons on it with screen coordinates out (paper §2.1).

OCR and icon detection run concurrently on a small thread pool, and so does reading the phone's
accessibility tree when the caller offers one (``tree``). Icon boxes that are really text are dropped,
wrapped text lines are merged, the tree names icons and adds controls nothing else saw
(``mae.perception.fusion``), icons still without a name are captioned (optionally, one request per
screen, cached), and the list is tidied (``mae.perception.tidy``). Each stage is timed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
from PIL import Image

from mae.config import PerceptionSettings
from mae.errors import ConfigError
from mae.llm.client import ChatClient
from mae.llm.errors import ModelError
from mae.llm.providers import PRESETS
from mae.perception.a11y import A11yError, A11yMode, A11yTree, TreeSource
from mae.perception.captions import ApiCaptioner, CaptionCache, Captioner
from mae.perception.elements import Element, Perception
from mae.perception.fusion import fuse
from mae.perception.icons import IconDetector, drop_text_regions, make_icon_detector
from mae.perception.merge import merge_lines
from mae.perception.ocr import OcrBackend, make_ocr
from mae.perception.selection import mark_selected
from mae.perception.tidy import clean_texts, tidy

CHEAP_CAPTION_MODELS = tuple(
    sorted(
        {p.caption_model for p in PRESETS.values() if p.caption_model != p.model}
        | {"gpt-4o-mini", "qwen-vl-plus", "gemini-1.5-flash", "claude-3-5-haiku"}
    )
)
"""Caption models cheap enough that ``captions = auto`` turns captions on (prefix match): the presets'
caption models and their predecessors."""

T = TypeVar("T")


def _timed(func: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = func()
    return result, time.perf_counter() - started


class Perceptor:
    """Combines an OCR backend, an optional icon detector, the accessibility tree and a captioner."""

    accepts_tree = True
    """``perceive`` takes a ``tree`` source (the loop checks this before offering one)."""

    def __init__(
        self,
        ocr: OcrBackend,
        icons: IconDetector | None = None,
        captioner: Captioner | None = None,
        *,
        merge: bool = True,
        a11y: A11yMode = "auto",
        tidy: bool = True,
        keep_keys: bool = False,
    ) -> None:
        self.ocr = ocr
        self.icons = icons
        self.captioner = captioner
        self.merge = merge
        self.a11y = a11y
        self.tidy = tidy
        self.keep_keys = keep_keys
        self.tree_failures = 0
        self._warned_tree = False
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="perceptor")

    @property
    def caption_requests(self) -> int:
        """Caption requests sent by this Perceptor's captioner (0 without one)."""
        return int(getattr(self.captioner, "requests", 0))

    @classmethod
    def from_settings(cls, settings: PerceptionSettings, client: ChatClient | None = None) -> Perceptor:
        """Build the Perceptor ``settings`` describe; captions need ``client`` unless they are off."""
        icon_options: dict[str, Any] = {}
        if settings.icons == "groundingdino":
            icon_options["model"] = settings.groundingdino_model
        detector = make_icon_detector(settings.icons, **icon_options)
        captioner: Captioner | None = None
        captions = settings.captions
        if captions == "auto":
            captions = resolve_captions("auto", client) if detector is not None else "none"
        if captions != "none":
            if detector is None:
                raise ConfigError(
                    "icon captions need an icon detector: set icons to contour or groundingdino"
                )
            captioner = make_captioner(settings.model_copy(update={"captions": captions}), client)
        return cls(
            make_ocr(settings.ocr, device=settings.ocr_device, mem_arena=settings.ocr_mem_arena),
            detector,
            captioner,
            a11y=settings.a11y,
            keep_keys=settings.keyboard_keys,
        )

    def perceive(
        self, image: Image.Image, keyboard_active: bool | None = None, tree: TreeSource | None = None
    ) -> Perception:
        """Texts and icons of ``image`` with boxes in its pixels, plus per-stage timings (seconds).

        ``tree`` reads the phone's accessibility tree for this screen; it runs while OCR does.
        """
        started = time.perf_counter()
        rgb = np.asarray(image if image.mode == "RGB" else image.convert("RGB"))  # RGB: not copied first
        ocr_future = self._pool.submit(_timed, lambda: self.ocr.read(rgb))
        tree_future = self._pool.submit(tree) if tree is not None and self.a11y != "off" else None
        icons: list[Element] = []
        timings: dict[str, float] = {}
        if self.icons is not None:
            detector = self.icons
            icons, timings["icons"] = _timed(lambda: detector.detect(rgb))
        texts, timings["ocr"] = ocr_future.result()
        if self.tidy:
            texts, icons = clean_texts(texts, icons)
        icons = drop_text_regions(icons, texts)
        if self.merge:
            texts = merge_lines(texts, width=image.width)
        warnings: list[str] = []
        elements: list[Element] = [*texts, *icons]
        read = self._read_tree(tree_future, warnings) if tree_future is not None else None
        if read is not None:
            timings["a11y"] = read.seconds
            elements = mark_selected(fuse(elements, read), rgb)
        unnamed = [e for e in elements if e.kind == "icon" and not e.text]
        if self.captioner is not None and unnamed:
            captioner = self.captioner
            (captions, caption_warnings), timings["captions"] = _timed(
                lambda: captioner.caption(image, unnamed)
            )
            warnings += caption_warnings
            named = {
                id(icon): icon.model_copy(update={"text": text, "named_by": "caption" if text else ""})
                for icon, text in zip(unnamed, captions, strict=True)
            }
            elements = [named.get(id(e), e) for e in elements]
        collapsed = False
        if self.tidy:
            tidied = tidy(
                elements,
                image.height,
                keyboard_active=bool(keyboard_active),
                keep_keys=self.keep_keys,
                has_tree=read is not None,
                width=image.width,
            )
            elements, collapsed = tidied.elements, tidied.keyboard_collapsed
        timings["total"] = time.perf_counter() - started
        return Perception(
            width=image.width,
            height=image.height,
            elements=elements,
            keyboard_active=bool(keyboard_active),
            keyboard_collapsed=collapsed,
            a11y=read.source if read is not None else "",
            timings={k: round(v, 4) for k, v in timings.items()},
            warnings=warnings,
        )

    def _read_tree(self, future: Future[A11yTree | None], warnings: list[str]) -> A11yTree | None:
        """The tree if it is there and says something; else a warning (once per run in ``auto``)."""
        problem = ""
        try:
            read = future.result()
        except A11yError as exc:
            read, problem = None, str(exc)
        if read is not None and read.useful:
            return read
        self.tree_failures += 1
        if read is not None:
            problem = problem or "the accessibility tree of this screen is empty"
        elif not problem and self.a11y == "on":
            problem = "this phone gives no accessibility tree"
        if problem and (self.a11y == "on" or not self._warned_tree):
            self._warned_tree = True
            warnings.append(f"{problem}; using OCR and icon detection alone")
        return None

    def close(self) -> None:
        self._pool.shutdown(wait=False)


def resolve_captions(captions: str, client: ChatClient | None) -> str:
    """``auto`` -> ``backbone`` when the captioner role's model is a cheap preset model, else ``none``."""
    if captions != "auto":
        return captions
    if client is None:
        return "none"
    try:
        profile = client.profile("captioner")
        client.check_key("captioner")
    except (ConfigError, ModelError):
        return "none"  # no caption model or no key for it: captions stay off rather than fail each step
    cheap = profile.provider != "custom" and profile.model.startswith(CHEAP_CAPTION_MODELS)
    return "backbone" if cheap else "none"


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
