"""OCR backends: text lines with boxes in screen pixels.

``rapidocr`` (default) runs PP-OCR ONNX models bundled in the ``rapidocr-onnxruntime`` wheel. For speed
it detects lines on a downscaled copy of the screenshot, then recognises each line from the full
resolution image, without the angle classifier (phone screens are upright). ``paddleocr`` is an
optional backend that downloads its models on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import cv2
import numpy as np

from mae.errors import ConfigError
from mae.perception.elements import Element
from mae.perception.geometry import box_area, quad_to_box, reading_order


class OcrBackend(Protocol):
    """Reads the text lines of a screenshot."""

    name: str

    def read(self, image: np.ndarray) -> list[Element]:
        """Text elements of an RGB ``uint8`` image of shape ``(height, width, 3)``."""
        ...


_ENGINES: dict[tuple[Any, ...], Any] = {}
_ENGINES_LOCK = threading.Lock()


def _rapidocr_engine(threads: int | None, rec_batch: int) -> Any:
    """One RapidOCR engine per option set, loaded once per process (loading takes ~0.5 s)."""
    key = ("rapidocr", threads, rec_batch)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:
                raise ConfigError(
                    "the rapidocr OCR backend needs rapidocr-onnxruntime: pip install rapidocr-onnxruntime"
                ) from exc
            options: dict[str, Any] = {
                # No upscaling inside the detector: we choose the detection size ourselves.
                "det_limit_side_len": 32,
                "det_limit_type": "min",
                "rec_batch_num": rec_batch,
                "use_cls": False,
            }
            if threads:
                options["intra_op_num_threads"] = threads
            engine = RapidOCR(**options)
            for attribute in ("text_det", "text_rec", "sorted_boxes"):
                if not hasattr(engine, attribute):
                    raise ConfigError(
                        "this rapidocr-onnxruntime version is not supported (no "
                        f"{attribute}); install rapidocr-onnxruntime>=1.3.24,<2"
                    )
            _ENGINES[key] = engine
    return engine


class RapidOcrBackend:
    """PP-OCR through ``rapidocr_onnxruntime``, tuned for phone screenshots.

    ``det_max_side``: longest side (pixels) of the copy text detection runs on; 1600 keeps 20 px text
    detectable on a 2340 px tall screen at half the cost, and keeps neighbouring fields (a price and a
    struck-out price) apart. ``min_score`` drops unsure lines.
    """

    name = "rapidocr"

    def __init__(
        self,
        *,
        det_max_side: int = 1600,
        min_score: float = 0.5,
        threads: int | None = None,
        rec_batch: int = 6,
    ) -> None:
        if det_max_side < 64:
            raise ConfigError("det_max_side must be at least 64 pixels")
        self.det_max_side = det_max_side
        self.min_score = min_score
        self._engine = _rapidocr_engine(threads, rec_batch)
        self._lock = threading.Lock()

    def read(self, image: np.ndarray) -> list[Element]:
        """Text lines of an RGB screenshot, in reading order."""
        height, width = image.shape[:2]
        bgr = np.ascontiguousarray(image[:, :, ::-1])
        scale = min(1.0, self.det_max_side / max(height, width))
        small = (
            bgr if scale == 1.0 else cv2.resize(bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        )
        with self._lock:  # the detector keeps per-call state on the engine
            quads, _ = self._engine.text_det(small)
            if quads is None or len(quads) == 0:
                return []
            quads = self._engine.sorted_boxes(quads)
        boxes = [quad_to_box(np.asarray(q, dtype=np.float32) / scale, width, height) for q in quads]
        boxes = [b for b in boxes if box_area(b) > 0]
        crops = [bgr[top:bottom, left:right] for left, top, right, bottom in boxes]
        if not crops:
            return []
        results, _ = self._engine.text_rec(crops)
        elements = []
        for box, result in zip(boxes, results, strict=True):
            text, score = str(result[0]).strip(), float(result[1])
            if text and score >= self.min_score:
                elements.append(Element(kind="text", text=text, box=box, source=self.name, score=score))
        return reading_order(elements)


class PaddleOcrBackend:
    """PaddleOCR (2.x ``ocr()`` or 3.x ``predict()``); downloads its models on first use."""

    name = "paddleocr"

    def __init__(self, *, lang: str = "en", min_score: float = 0.5, **options: Any) -> None:
        try:
            from paddleocr import PaddleOCR
        except ImportError as exc:
            raise ConfigError(
                "the paddleocr OCR backend needs PaddleOCR: pip install paddlepaddle paddleocr "
                "(it downloads its models on first use), or use --ocr rapidocr"
            ) from exc
        self.min_score = min_score
        self._v3 = hasattr(PaddleOCR, "predict")
        if self._v3:
            defaults: dict[str, Any] = {
                "use_textline_orientation": False,
                "use_doc_orientation_classify": False,
            }
        else:
            defaults = {"use_angle_cls": False, "show_log": False}
        self._engine = PaddleOCR(lang=lang, **{**defaults, **options})
        self._lock = threading.Lock()

    def read(self, image: np.ndarray) -> list[Element]:
        height, width = image.shape[:2]
        bgr = np.ascontiguousarray(image[:, :, ::-1])
        with self._lock:
            if self._v3:
                lines = _paddle_v3_lines(self._engine.predict(bgr))
            else:
                lines = _paddle_v2_lines(self._engine.ocr(bgr, cls=False))
        elements = []
        for quad, text, score in lines:
            box = quad_to_box(quad, width, height)
            if text.strip() and score >= self.min_score and box_area(box) > 0:
                elements.append(
                    Element(kind="text", text=text.strip(), box=box, source=self.name, score=score)
                )
        return reading_order(elements)


Line = tuple[Sequence[Sequence[float]], str, float]


def _paddle_v2_lines(result: Any) -> list[Line]:
    """``[[ [quad, (text, score)], ... ]]`` (one list per page; ``None`` when nothing was found)."""
    lines: list[Line] = []
    for page in result or []:
        for item in page or []:
            quad, (text, score) = item[0], item[1]
            lines.append((quad, str(text), float(score)))
    return lines


def _paddle_v3_lines(result: Any) -> list[Line]:
    """A list of page results, each a mapping with ``rec_texts``, ``rec_scores`` and ``rec_polys``."""
    lines: list[Line] = []
    for page in result or []:
        data = page if isinstance(page, Mapping) else page.json.get("res", {})
        polys = data.get("rec_polys")
        if polys is None:
            polys = data.get("dt_polys", [])
        for quad, text, score in zip(
            polys, data.get("rec_texts", []), data.get("rec_scores", []), strict=False
        ):
            lines.append((np.asarray(quad).tolist(), str(text), float(score)))
    return lines


def make_ocr(name: str, **options: Any) -> OcrBackend:
    """The OCR backend called ``name`` (``rapidocr`` or ``paddleocr``)."""
    if name == "rapidocr":
        return RapidOcrBackend(**options)
    if name == "paddleocr":
        return PaddleOcrBackend(**options)
    raise ConfigError(f"unknown OCR backend {name!r}; choose rapidocr or paddleocr")
