"""OCR backends: RapidOCR on rendered text, its line cache and workers; PaddleOCR's result formats."""

from __future__ import annotations

import sys
import types
from typing import Any, ClassVar

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from mae.errors import ConfigError
from mae.perception import ocr as ocr_module
from mae.perception.line_text import LineCache, Reading, line_key
from mae.perception.ocr import PaddleOcrBackend, RapidOcrBackend, make_ocr, use_cuda

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
LINES = {"Settings": (80, 200), "Battery saver": (80, 420), "Display and brightness": (80, 640)}


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype(FONT, size)
    except OSError:
        return ImageFont.load_default(size)


@pytest.fixture(scope="module")
def screen() -> np.ndarray:
    image = Image.new("RGB", (1080, 1200), "white")
    draw = ImageDraw.Draw(image)
    for text, xy in LINES.items():
        draw.text(xy, text, fill=(20, 20, 20), font=_font(48))
    return np.asarray(image)


def test_rapidocr_reads_lines_with_screen_coordinates(screen: np.ndarray) -> None:
    found = RapidOcrBackend().read(screen)
    assert [e.text.replace(" ", "") for e in found] == [t.replace(" ", "") for t in LINES]
    for element, (x, y) in zip(found, LINES.values(), strict=True):
        assert element.kind == "text" and element.source == "rapidocr" and 0.5 <= element.score <= 1
        left, top, right, bottom = element.box
        assert abs(left - x) <= 12 and top <= y + 30 <= bottom  # boxes are in full-resolution pixels
        assert right <= 1080 and bottom <= 1200


def _cart(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    """A line-art shopping cart, as buttons draw it before their label."""
    points = [(-0.9, -0.7), (-0.6, -0.7), (-0.35, 0.35), (0.6, 0.35), (0.8, -0.4), (-0.5, -0.4)]
    draw.line([(cx + r * x, cy + r * y) for x, y in points], fill=(11, 87, 208), width=round(r * 0.13))
    for px in (cx - r * 0.25, cx + r * 0.5):
        draw.ellipse((px - r * 0.15, cy + r * 0.55, px + r * 0.15, cy + r * 0.85), fill=(11, 87, 208))


def test_an_icon_before_the_text_does_not_shift_its_box() -> None:
    image = Image.new("RGB", (800, 200), (211, 227, 253))
    draw = ImageDraw.Draw(image)
    _cart(draw, 118, 96, 24)  # the detector takes the cart into the line's box
    draw.text((150, 74), "Add to cart", fill=(11, 40, 100), font=_font(40))
    found = RapidOcrBackend(rec_cache=0).read(np.asarray(image))
    assert [e.text for e in found] == ["Add to cart"]
    assert abs(found[0].box[0] - 150) <= 12  # trimmed to the characters


def test_fields_side_by_side_become_separate_elements() -> None:
    image = Image.new("RGB", (1080, 200), "white")
    draw = ImageDraw.Draw(image)
    draw.text((40, 70), "$229.00", fill="black", font=_font(44))
    draw.text((255, 76), "Was $329.00", fill=(90, 90, 90), font=_font(36))  # the detector joins them
    found = RapidOcrBackend(rec_cache=0).read(np.asarray(image))
    assert [e.text.replace(" ", "") for e in found] == ["$229.00", "Was$329.00"]
    assert found[0].box[2] < found[1].box[0]


def test_line_cache_skips_recognition_of_lines_seen_before(screen: np.ndarray) -> None:
    backend = RapidOcrBackend(rec_cache=100)
    calls: list[int] = []
    original = backend._recognize_strips

    def counting(crops: Any) -> Any:
        calls.append(len(crops))
        return original(crops)

    backend._recognize_strips = counting  # type: ignore[method-assign]
    first = backend.read(screen)
    assert sum(calls) == len(first) == 3
    again = backend.read(screen)
    assert sum(calls) == 3  # every line came from the cache
    assert again == first


def test_one_and_two_recognition_workers_agree(screen: np.ndarray) -> None:
    one = RapidOcrBackend(rec_workers=1, rec_cache=0).read(screen)
    two = RapidOcrBackend(rec_workers=2, rec_cache=0).read(screen)
    # The lines are packed into the same strips whichever worker reads them
    assert [(e.text, e.box, e.score) for e in one] == [(e.text, e.box, e.score) for e in two]
    assert len(one) == 3


def test_blank_screen_has_no_text() -> None:
    assert RapidOcrBackend().read(np.full((800, 400, 3), 255, np.uint8)) == []


def test_line_key_ignores_where_the_box_edges_fall() -> None:
    image = Image.new("RGB", (600, 300), "white")
    ImageDraw.Draw(image).text((100, 100), "Battery saver", fill=(20, 20, 20), font=_font(40))
    pixels = np.asarray(image)
    tight = line_key(pixels, (98, 100, 380, 150))
    loose = line_key(pixels, (90, 95, 390, 158))
    moved = np.zeros_like(pixels) + 255
    moved[37:] = pixels[:-37]  # the same line after a 37 px scroll
    scrolled = line_key(moved, (96, 137, 384, 188))
    assert tight.digest == loose.digest == scrolled.digest
    assert loose.left - tight.left == 98 - 90  # the ink's place relative to each box
    other = Image.new("RGB", (600, 300), "white")
    ImageDraw.Draw(other).text((100, 100), "Battery savor", fill=(20, 20, 20), font=_font(40))
    assert line_key(np.asarray(other), (98, 100, 380, 150)).digest != tight.digest


def test_lines_scrolled_into_a_new_place_are_not_recognised_again() -> None:
    tall = Image.new("RGB", (1080, 2400), "white")
    draw = ImageDraw.Draw(tall)
    for i in range(20):
        draw.text((60, 40 + i * 110), f"Result {i}: air fryer {i * 7} qt", fill=(30, 30, 30), font=_font(40))
    pixels = np.asarray(tall)
    backend = RapidOcrBackend(rec_cache=1000)
    first = backend.read(np.ascontiguousarray(pixels[0:1200]))
    seen = backend.lines_seen
    second = backend.read(np.ascontiguousarray(pixels[333:1533]))  # scrolled by 333 px
    assert len(first) >= 9 and len(second) >= 9
    new_lines = backend.lines_seen - seen
    assert backend.lines_cached >= new_lines - 4  # only the lines that scrolled in were read
    cold = RapidOcrBackend(rec_cache=0).read(np.ascontiguousarray(pixels[333:1533]))
    for cached, fresh in zip(second, cold, strict=True):  # the cached readings land on the new boxes
        assert max(abs(p - q) for p, q in zip(cached.box, fresh.box, strict=True)) <= 8


def test_ocr_device_choice() -> None:
    assert use_cuda("cpu", ["CUDAExecutionProvider"]) is False
    assert use_cuda("auto", ["CUDAExecutionProvider", "CPUExecutionProvider"]) is True
    assert use_cuda("auto", ["CPUExecutionProvider"]) is False
    with pytest.raises(ConfigError, match="onnxruntime-gpu"):
        use_cuda("cuda", ["CPUExecutionProvider"])
    assert RapidOcrBackend(device="cpu").providers == ["CPUExecutionProvider"]


def test_line_cache_is_bounded_lru() -> None:
    cache = LineCache(2)
    crops = [np.full((10, 20, 3), value, np.uint8) for value in (1, 2, 3)]
    keys = [cache.key(c) for c in crops]
    assert len(set(keys)) == 3
    cache.put(keys[0], Reading("a", 0.9))
    cache.put(keys[1], Reading("b", 0.9))
    assert cache.get(keys[0]) == Reading("a", 0.9)  # touch: keys[1] is now the oldest
    cache.put(keys[2], Reading("c", 0.9))
    assert cache.get(keys[1]) is None and len(cache) == 2
    off = LineCache(0)
    off.put(off.key(crops[0]), Reading("a", 1.0))
    assert off.get(off.key(crops[0])) is None


def test_unknown_backend_and_bad_options() -> None:
    with pytest.raises(ConfigError, match="rapidocr or paddleocr"):
        make_ocr("tesseract")
    with pytest.raises(ConfigError, match="det_max_side"):
        RapidOcrBackend(det_max_side=10)


def test_missing_paddleocr_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "paddleocr", None)  # import fails
    with pytest.raises(ConfigError, match="pip install paddlepaddle paddleocr"):
        make_ocr("paddleocr")


QUAD = [[10, 20], [210, 20], [210, 60], [10, 60]]


class _PaddleV2:
    """PaddleOCR 2.x: ``ocr(img, cls=...)`` -> one list of ``[quad, (text, score)]`` per page."""

    options: ClassVar[dict[str, Any]] = {}

    def __init__(self, **options: Any) -> None:
        type(self).options = options

    def ocr(self, image: np.ndarray, cls: bool = True) -> list[Any]:
        assert image.shape == (100, 300, 3) and cls is False
        return [[[QUAD, ("Wi-Fi", 0.98)], [[[0, 70], [40, 70], [40, 90], [0, 90]], ("x", 0.2)]]]


class _Result(dict):  # PaddleOCR 3.x results are dict-like
    pass


class _PaddleV3:
    """PaddleOCR 3.x: ``predict(img)`` -> dict-like results (``rec_texts``, ``rec_scores``, ``rec_polys``)."""

    options: ClassVar[dict[str, Any]] = {}

    def __init__(self, **options: Any) -> None:
        type(self).options = options

    def predict(self, image: np.ndarray) -> list[Any]:
        polys = [np.array(QUAD), np.array(QUAD)]
        return [_Result(rec_texts=["Wi-Fi", ""], rec_scores=[0.97, 0.99], rec_polys=polys)]


@pytest.mark.parametrize("engine", [_PaddleV2, _PaddleV3])
def test_paddleocr_results_become_elements(
    monkeypatch: pytest.MonkeyPatch, engine: type[_PaddleV2] | type[_PaddleV3]
) -> None:
    monkeypatch.setitem(sys.modules, "paddleocr", types.SimpleNamespace(PaddleOCR=engine))
    backend = make_ocr("paddleocr")
    assert isinstance(backend, PaddleOcrBackend)
    found = backend.read(np.zeros((100, 300, 3), np.uint8))
    assert [(e.text, e.box, e.source) for e in found] == [("Wi-Fi", (10, 20, 210, 60), "paddleocr")]
    assert engine.options["lang"] == "en"
    assert engine.options.get("use_angle_cls", engine.options.get("use_textline_orientation")) is False


def test_onnx_sessions_reuse_their_buffers() -> None:
    backend = RapidOcrBackend(rec_workers=2)
    for session in (backend._engine.text_det.infer.session, backend._recogniser.session):
        assert session.get_session_options().enable_cpu_mem_arena


@pytest.mark.parametrize("fold", [True, False])
def test_the_memory_arena_can_be_turned_off(fold: bool, screen: np.ndarray) -> None:
    from mae.config import PerceptionSettings
    from mae.perception import Perceptor

    perceptor = Perceptor.from_settings(
        PerceptionSettings(icons="none", captions="none", ocr_device="cpu", ocr_mem_arena=False)
    )
    assert isinstance(perceptor.ocr, RapidOcrBackend)
    backend = RapidOcrBackend(rec_workers=2, fold=fold, mem_arena=False, device="cpu")
    for ocr in (perceptor.ocr, backend):
        for session in (ocr._engine.text_det.infer.session, ocr._recogniser.session):
            assert not session.get_session_options().enable_cpu_mem_arena
    kept = RapidOcrBackend(rec_workers=2, fold=fold, device="cpu")
    assert kept._engine is not backend._engine  # each setting has its own sessions
    assert kept._recogniser.session.get_session_options().enable_cpu_mem_arena
    assert [e.text for e in backend.read(screen)] == [e.text for e in kept.read(screen)]


def test_arena_memory_is_handed_back_and_reading_goes_on(screen: np.ndarray) -> None:
    backend = RapidOcrBackend(rec_workers=2, rec_cache=0, device="cpu")
    RapidOcrBackend(rec_workers=2, mem_arena=False, device="cpu")  # nothing to shrink there
    before = [e.text for e in backend.read(screen)]
    sessions = [
        session
        for key, engine in ocr_module._ENGINES.items()
        if not key[2]
        for session in (engine.text_det.infer.session, engine.text_rec.session.session)
    ]
    with_arena = [s for s in sessions if s.get_session_options().enable_cpu_mem_arena]
    assert 0 < len(with_arena) < len(sessions)
    assert ocr_module.release_arena_memory() == len(with_arena)
    assert [e.text for e in backend.read(screen)] == before and len(before) == len(LINES)
