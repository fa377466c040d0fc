"""OCR backends: text lines with boxes in screen pixels.

``rapidocr`` (default) runs PP-OCR ONNX models bundled in the ``rapidocr-onnxruntime`` wheel. For speed
it detects lines on a downscaled copy of the screenshot, then recognises them from the full resolution
image, short lines side by side in shared calls (``mae.perception.line_strips``), without the angle
classifier (phone screens are upright), with the models' elementwise layers folded into their
convolutions (``mae.perception.onnx_fold``). ``paddleocr`` is an optional backend that downloads its
models on first use.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, Protocol

import cv2
import numpy as np

from mae.errors import ConfigError
from mae.perception.caret import without_caret
from mae.perception.elements import Element
from mae.perception.geometry import box_area, quad_to_box, reading_order
from mae.perception.line_detection import detect_lines
from mae.perception.line_split import split_line
from mae.perception.line_strips import pack, read_strip, scaled_width, strip_input
from mae.perception.line_text import LineCache, LineKey, Reading

log = logging.getLogger(__name__)


class OcrBackend(Protocol):
    """Reads the text lines of a screenshot."""

    name: str

    def read(self, image: np.ndarray) -> list[Element]:
        """Text elements of an RGB ``uint8`` image of shape ``(height, width, 3)``."""
        ...


_ENGINES: dict[tuple[Any, ...], Any] = {}
_ENGINES_LOCK = threading.Lock()

OcrDevice = Literal["auto", "cpu", "cuda"]
CUDA_PROVIDER = "CUDAExecutionProvider"


def use_cuda(device: OcrDevice, providers: Sequence[str] | None = None) -> bool:
    """Whether the OCR models run on the GPU: ``cuda`` requires onnxruntime's CUDA provider (install
    ``onnxruntime-gpu``), ``auto`` uses it when present, ``cpu`` never does. ``providers`` defaults to
    ``onnxruntime.get_available_providers()``."""
    if device == "cpu":
        return False
    if providers is None:
        import onnxruntime

        providers = onnxruntime.get_available_providers()
    if CUDA_PROVIDER in providers:
        return True
    if device == "cuda":
        raise ConfigError(
            "OCR on the GPU needs onnxruntime's CUDA provider: pip uninstall -y onnxruntime && "
            "pip install onnxruntime-gpu (matching your CUDA version), or set the OCR device to auto or cpu"
        )
    return False


def engine_providers(engine: Any) -> list[str]:
    """The onnxruntime providers a RapidOCR engine's detector runs on (``[]`` when unknown)."""
    session = getattr(getattr(getattr(engine, "text_det", None), "infer", None), "session", None)
    return list(session.get_providers()) if session is not None else []


def _rapidocr_engine(
    threads: int | None, cuda: bool = False, fold: bool = True, mem_arena: bool = True
) -> Any:
    """One RapidOCR engine per option set, loaded once per process (loading takes ~0.5 s, folding the
    models ~0.5 s more). Its detector's session and post-processing serve ``line_detection``, its
    recogniser's session and character list ``line_strips``."""
    key = ("rapidocr", threads, cuda, fold, mem_arena)
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
                # Dilating the detector's text mask joins neighbouring fields into one line.
                "det_donot_use_dilation": True,
                "use_cls": False,
            }
            if cuda:
                options.update(det_use_cuda=True, rec_use_cuda=True)
            if threads:
                options["intra_op_num_threads"] = threads
            engine = RapidOCR(**options)
            detector, recogniser = getattr(engine, "text_det", None), getattr(engine, "text_rec", None)
            for found, attribute in (
                (detector, "infer"),
                (detector, "postprocess_op"),
                (detector, "filter_tag_det_res"),
                (recogniser, "session"),
                (getattr(recogniser, "postprocess_op", None), "character"),
            ):
                if not hasattr(found, attribute):
                    raise ConfigError(
                        "this rapidocr-onnxruntime version is not supported (no "
                        f"{attribute}); install rapidocr-onnxruntime>=1.3.24,<2"
                    )
            if not cuda:
                _reopen_sessions(engine, fold, mem_arena)
            _ENGINES[key] = engine
    return engine


def _reopen_sessions(engine: Any, fold: bool, mem_arena: bool = True) -> None:
    """Re-open a RapidOCR engine's CPU sessions with onnxruntime's memory arena on when ``mem_arena``
    (RapidOCR turns it off: the recogniser's many small calls then reuse their buffers, about 5 % less
    OCR time here, but the arena keeps the most memory concurrent screens ever needed) and, with
    ``fold``, the models' elementwise layers folded into their convolutions
    (``mae.perception.onnx_fold``); a folded model this onnxruntime cannot load runs unfolded. Sessions
    this cannot reach are left as they are."""
    import onnxruntime

    for holder in (getattr(engine.text_det, "infer", None), getattr(engine.text_rec, "session", None)):
        session = getattr(holder, "session", None)
        path = getattr(session, "_model_path", None)
        if holder is None or session is None or not isinstance(path, str):
            continue
        old = session.get_session_options()
        model: str | bytes = path
        if fold:
            model = _folded(path)
        elif old.enable_cpu_mem_arena == mem_arena:
            continue
        options = onnxruntime.SessionOptions()
        options.enable_cpu_mem_arena = mem_arena
        options.log_severity_level = 4
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = old.intra_op_num_threads
        options.inter_op_num_threads = old.inter_op_num_threads
        try:
            holder.session = onnxruntime.InferenceSession(
                model, sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # e.g. an onnxruntime too old for an operator the fold uses
            if not isinstance(model, bytes):
                raise
            log.warning("OCR models run unfolded: this onnxruntime cannot load them folded (%s)", exc)
            holder.session = onnxruntime.InferenceSession(
                path, sess_options=options, providers=["CPUExecutionProvider"]
            )


def release_arena_memory() -> int:
    """Hand back what onnxruntime's CPU memory arenas of the loaded RapidOCR engines hold beyond their
    first block (the peak of concurrent screens; the arena never shrinks on its own): one tiny call per
    session with arena shrinkage on. Returns how many sessions were shrunk. Call when no OCR runs (a
    screen being read keeps its blocks, so it is safe, only less useful, otherwise)."""
    with _ENGINES_LOCK:
        engines = [engine for key, engine in _ENGINES.items() if not key[2]]  # not the CUDA ones
    if not engines:
        return 0
    import onnxruntime

    options = onnxruntime.RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    shrunk = 0
    for engine in engines:
        for holder, height in ((engine.text_det.infer, 64), (engine.text_rec.session, 48)):
            session = getattr(holder, "session", None)
            if session is None or not session.get_session_options().enable_cpu_mem_arena:
                continue
            feed = {session.get_inputs()[0].name: np.zeros((1, 3, height, 64), np.float32)}
            session.run(None, feed, options)
            shrunk += 1
    return shrunk


@functools.lru_cache(maxsize=8)
def _folded(path: str) -> str | bytes:
    """The model at ``path`` with its elementwise layers folded (once per process: the detector and
    the recognition workers' engines share it); ``path`` itself when the ``onnx`` package is missing
    or the rewrite fails (the model then runs as RapidOCR ships it)."""
    try:
        from mae.perception.onnx_fold import fold_model

        with open(path, "rb") as handle:
            folded, _ = fold_model(handle.read())
    except Exception as exc:  # any failure of the rewrite leaves the model as RapidOCR ships it
        log.warning("OCR models run unfolded: %s", exc)
        return path
    return folded


class RapidOcrBackend:
    """PP-OCR through ``rapidocr_onnxruntime``, tuned for phone screenshots.

    ``det_max_side``: longest side (pixels) of the copy text detection runs on; 1600 keeps 20 px text
    detectable on a 2340 px tall screen at half the cost. ``det_blank_keep``: the detector sees that
    copy with its long blank bands shortened to this many rows beside the ink (``blank_rows``; 0 gives
    it every row), about 30 % fewer pixels on a typical screen. ``min_score`` drops unsure lines.
    ``split_gap``: a detected line is cut where a blank gap is at least this many ink heights wide
    (separate fields, such as a price and the old price beside it; ``mae.perception.line_split``); 0
    turns it off. Each box is then trimmed to its characters (``mae.perception.line_text``).
    ``rec_workers`` threads recognise the lines, each running single-threaded ONNX sessions (on a small
    CPU this beats one session using every core, and it does not spin-wait when other processes need
    the CPU). ``rec_cache`` remembers the reading of that many recently seen line crops (by pixel
    content): consecutive screens of a task share most of their lines; 0 turns it off. Lines narrower
    than ``rec_strip`` columns (at height 48) are recognised together, side by side in strips of at
    most that width (``mae.perception.line_strips``; about 14 % less CPU time per screen, text recall
    within half a point of one line per call). The recogniser attends along the whole strip, so a
    lone glyph's reading (the case of a key's letter) can depend on its strip mates. 0 recognises one
    line per call. A call is padded to at least ``rec_min_width``.
    ``fold``: fold the models' elementwise layers into their convolutions before loading them (exact;
    about 27 % less CPU time per cold screen here; ``mae.perception.onnx_fold``).
    ``mem_arena``: keep onnxruntime's CPU memory arena (reused buffers, about 5 % less OCR time); off,
    memory goes back after each call instead of staying at the peak of concurrent screens (a public
    demo turns it off: ``mae.ui.space.apply_defaults``).
    ``device``: ``auto`` runs the models on the GPU when onnxruntime's CUDA provider is installed
    (``onnxruntime-gpu``), ``cuda`` insists on it, ``cpu`` never uses it; ``providers`` says what runs.
    """

    name = "rapidocr"

    def __init__(
        self,
        *,
        det_max_side: int = 1600,
        min_score: float = 0.5,
        threads: int | None = None,
        rec_strip: int = 320,
        rec_min_width: int = 160,
        rec_workers: int | None = None,
        rec_cache: int = 4096,
        split_gap: float = 0.8,
        det_blank_keep: int = 6,
        fold: bool = True,
        mem_arena: bool = True,
        device: OcrDevice = "auto",
    ) -> None:
        if det_max_side < 64:
            raise ConfigError("det_max_side must be at least 64 pixels")
        self.det_max_side = det_max_side
        self.min_score = min_score
        self.split_gap = split_gap
        self.det_blank_keep = det_blank_keep
        self.cuda = use_cuda(device)
        default_workers = 1 if self.cuda else min(2, os.cpu_count() or 1)  # one GPU stream is enough
        self.rec_workers = max(1, rec_workers if rec_workers is not None else default_workers)
        self.rec_strip = max(0, rec_strip)
        self.rec_min_width = max(1, rec_min_width)
        self._engine = _rapidocr_engine(threads, self.cuda, fold, mem_arena)
        rec_engine = (
            self._engine if self.rec_workers == 1 else _rapidocr_engine(1, self.cuda, fold, mem_arena)
        )
        self._recogniser = rec_engine.text_rec.session
        self._characters: list[str] = list(rec_engine.text_rec.postprocess_op.character)
        classes = self._recogniser.session.get_outputs()[0].shape[-1]
        if isinstance(classes, int) and classes != len(self._characters):
            raise ConfigError(
                f"the OCR recognition model reads {classes} characters but its character list has "
                f"{len(self._characters)}; reinstall rapidocr-onnxruntime (pip install --force-reinstall "
                "rapidocr-onnxruntime)"
            )
        self.providers = engine_providers(self._engine)
        self._pool = (
            ThreadPoolExecutor(self.rec_workers - 1, thread_name_prefix="ocr-rec")
            if self.rec_workers > 1
            else None
        )
        self._cache = LineCache(rec_cache)
        self.lines_seen = 0  # lines passed to recognition so far...
        self.lines_cached = 0  # ...and how many of them the line cache answered

    def read(self, image: np.ndarray) -> list[Element]:
        """Text lines of an RGB screenshot, in reading order."""
        height, width = image.shape[:2]
        bgr = cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2BGR)
        corners = detect_lines(self._engine.text_det, bgr, self.det_max_side, self.det_blank_keep)
        boxes = [quad_to_box(quad.tolist(), width, height) for quad in corners]
        boxes = [b for b in boxes if box_area(b) > 0]
        if self.split_gap:
            gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
            boxes = [
                part
                for left, top, right, bottom in boxes
                for part in split_line(
                    gray[top:bottom, left:right], (left, top, right, bottom), self.split_gap
                )
            ]
        crops = [without_caret(bgr[top:bottom, left:right]) for left, top, right, bottom in boxes]
        if not crops:
            return []
        elements = []
        keys = [self._cache.key(bgr, box) for box in boxes]
        for (left, top, right, bottom), reading in zip(boxes, self.recognize(crops, keys), strict=True):
            if not reading.text or reading.score < self.min_score:
                continue
            span = right - left  # trim the box to the characters (drops an icon or bullet before them)
            box = (left + round(reading.start * span), top, left + round(reading.end * span), bottom)
            elements.append(
                Element(kind="text", text=reading.text, box=box, source=self.name, score=reading.score)
            )
        return reading_order(elements)

    def recognize(self, crops: Sequence[np.ndarray], keys: Sequence[LineKey] | None = None) -> list[Reading]:
        """The reading of each BGR line crop: cached lines first, the rest recognised in strips
        (``line_strips``) that the workers take from one queue, widest first. ``keys`` are the crops'
        cache keys when they were taken from the whole screen (``line_key``)."""
        if keys is None:
            keys = [self._cache.key(crop) for crop in crops]
        results: list[Reading | None] = [self._cache.get(key) for key in keys]
        todo = [i for i, found in enumerate(results) if found is None]
        self.lines_seen += len(crops)
        self.lines_cached += len(crops) - len(todo)
        mine = [i for i in todo if crops[i].size]  # an empty crop reads as nothing
        if mine:
            for index, reading in self._recognize_strips([crops[i] for i in mine]).items():
                results[mine[index]] = reading
        for index in todo:
            self._cache.put(keys[index], results[index] or Reading("", 0.0))
        return [r if r is not None else Reading("", 0.0) for r in results]

    def _recognize_strips(self, crops: Sequence[np.ndarray]) -> dict[int, Reading]:
        """Readings by crop index. The strips go widest first to whichever worker is free (the
        longest-first rule keeps the workers' totals within about one short strip of each other)."""
        strips = pack(
            [scaled_width(crop) for crop in crops], limit=self.rec_strip, min_width=self.rec_min_width
        )
        queue = iter(sorted(strips, key=lambda strip: -strip.width))
        lock = threading.Lock()

        def work() -> dict[int, Reading]:
            readings: dict[int, Reading] = {}
            while True:
                with lock:
                    strip = next(queue, None)
                if strip is None:
                    return readings
                probabilities = self._recogniser(strip_input(crops, strip))[0][0]
                found = read_strip(probabilities, strip, self._characters)
                readings.update(zip(strip.members, found, strict=True))

        helpers = min(len(strips), self.rec_workers) - 1
        futures = [self._pool.submit(work) for _ in range(helpers)] if self._pool else []
        try:
            readings = work()
        except BaseException:
            with lock:
                for _ in queue:  # the helpers stop after the strip they are reading
                    pass
            raise
        for future in futures:
            readings.update(future.result())
        return readings


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


def make_ocr(name: str, *, device: OcrDevice = "auto", mem_arena: bool = True, **options: Any) -> OcrBackend:
    """The OCR backend called ``name`` (``rapidocr`` or ``paddleocr``); ``device`` and ``mem_arena``
    apply to rapidocr (PaddleOCR picks its device and memory use itself)."""
    if name == "rapidocr":
        return RapidOcrBackend(device=device, mem_arena=mem_arena, **options)
    if name == "paddleocr":
        return PaddleOcrBackend(**options)
    raise ConfigError(f"unknown OCR backend {name!r}; choose rapidocr or paddleocr")
