"""Text detection's input: the size of the downscaled copy, padding and normalisation, boxes mapped back."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from mae.device.virtual import VirtualPhone
from mae.perception.line_detection import (
    MULTIPLE,
    _grown,
    _interpolation,
    _plain_db,
    db_boxes,
    detect_lines,
    detection_size,
    detector_input,
    drawn_map,
)
from mae.perception.ocr import RapidOcrBackend


def test_the_copy_is_scaled_once_to_a_width_the_detector_takes() -> None:
    assert detection_size(1080, 2340, 1600) == (736, 1600)  # 738.5 wide: down to a multiple of 32
    assert detection_size(2340, 1080, 1600) == (1600, 738)  # landscape: the rows are padded later
    assert detection_size(720, 1280, 1600) == (720, 1280)  # small enough: read as it is
    assert detection_size(20, 4000, 64) == (MULTIPLE, 64)


def test_input_is_padded_by_repeating_the_edge_and_normalised() -> None:
    image = np.zeros((50, 70, 3), np.uint8)
    image[:, :, 0] = 255  # blue in BGR
    image[-1, :, 1] = 255  # the last row has green too
    data = detector_input(image, None, None)
    assert data.shape == (1, 3, 64, 96) and data.dtype == np.float32 and data.flags.c_contiguous
    assert np.all(data[0, 0] == 1.0)  # 255 -> 1 everywhere, padding included
    assert np.all(data[0, 2] == -1.0)
    assert np.all(data[0, 1, 49:] == 1.0) and np.all(data[0, 1, :49] == -1.0)  # the last row repeated
    scaled = detector_input(image, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    assert scaled[0, 0, 0, 0] == pytest.approx((1 - 0.485) / 0.229, rel=1e-5)


@pytest.mark.parametrize(
    ("mean", "std"), [(None, None), ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]), (0.5, 0.25)]
)
def test_the_lookup_table_gives_the_arithmetic_float32_values(mean: Any, std: Any) -> None:
    levels = np.arange(256, dtype=np.uint8)
    image = np.stack([levels, levels[::-1], np.roll(levels, 77)], axis=1)[np.newaxis].repeat(32, axis=0)
    assert image.shape == (32, 256, 3)  # every level in every channel
    shift = np.broadcast_to(np.asarray(0.5 if mean is None else mean, np.float32) * 255, 3)
    spread = np.broadcast_to(np.asarray(0.5 if std is None else std, np.float32) * 255, 3)
    expected = ((image.astype(np.float32) - shift) / spread).transpose(2, 0, 1)[np.newaxis]
    assert np.array_equal(detector_input(image, mean, std), expected)  # bit for bit


def test_the_detector_input_must_be_a_colour_image() -> None:
    with pytest.raises(ValueError, match="3-channel uint8"):
        detector_input(np.zeros((32, 32), np.uint8), None, None)
    with pytest.raises(ValueError, match="3-channel uint8"):
        detector_input(np.zeros((32, 32, 3), np.float32), None, None)


def test_bilinear_scaling_down_to_half_size_area_averaging_below() -> None:
    screen = np.zeros((2340, 1080, 3), np.uint8)
    assert _interpolation(screen, detection_size(1080, 2340, 1600)) == cv2.INTER_LINEAR
    assert _interpolation(screen, (540, 1170)) == cv2.INTER_LINEAR
    assert _interpolation(screen, detection_size(1080, 2340, 1000)) == cv2.INTER_AREA


class _Detector:
    """RapidOCR's detector interface, answering one box in the middle of whatever it is given."""

    mean = std = None

    def __init__(self) -> None:
        self.inputs: list[tuple[int, ...]] = []

    def infer(self, data: np.ndarray) -> list[np.ndarray]:
        self.inputs.append(data.shape)
        return [np.zeros((1, 1, *data.shape[2:]), np.float32)]

    def postprocess_op(self, probabilities: np.ndarray, shape: tuple[int, int]) -> tuple[Any, list[float]]:
        height, width = shape
        assert probabilities.shape[2:] == shape  # the padding is cut off before boxes are read
        box = np.array(
            [
                [10, height / 2 - 5],
                [width - 10, height / 2 - 5],
                [width - 10, height / 2 + 5],
                [10, height / 2 + 5],
            ]
        )
        return np.array([box], np.float32), [0.9]

    def filter_tag_det_res(self, boxes: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
        return boxes


def test_boxes_are_mapped_back_to_screen_pixels() -> None:
    screen = np.full((2340, 1080, 3), 255, np.uint8)
    screen[1100:1240, 100:900] = 0  # one band of ink; the rest is blank
    detector = _Detector()
    (quad,) = detect_lines(detector, screen, 1600, 0)  # every row: the box is in the middle of the copy
    assert detector.inputs == [(1, 3, 1600, 736)]
    assert quad[:, 0].min() == pytest.approx(10 * 1080 / 736, abs=0.01)  # x and y scale apart
    assert quad[:, 1].min() == pytest.approx(795 * 2340 / 1600, abs=0.01)
    assert quad[:, 1].max() == pytest.approx(805 * 2340 / 1600, abs=0.01)
    shortened = _Detector()
    (quad,) = detect_lines(shortened, screen, 1600, 6)
    (shape,) = shortened.inputs
    assert shape[3] == 736 and shape[2] % MULTIPLE == 0 and shape[2] < 400  # blank bands shortened
    assert 1100 < quad[:, 1].min() < quad[:, 1].max() < 1240  # the ink band, in screen rows
    assert detect_lines(_Detector(), np.full((200, 300, 3), 255, np.uint8), 1600, 6) == []  # no ink


def test_a_screen_with_ink_but_no_text_reads_nothing() -> None:
    ramp = np.tile(np.linspace(0, 255, 1080, dtype=np.uint8)[None, :, None], (2340, 1, 3))
    assert RapidOcrBackend(rec_cache=0, det_blank_keep=0).read(ramp) == []  # the detector runs, finds none


@pytest.fixture(scope="module")
def probability_maps() -> list[np.ndarray]:
    """The detector's output on three virtual screens (one in dark mode) and two drawn maps."""
    backend = RapidOcrBackend(rec_cache=0)
    detector = backend._engine.text_det
    phone = VirtualPhone()
    maps = []
    for app, dark in (("Walmart", False), ("Settings", False), ("Walmart", True)):
        phone.open_app(app)
        bgr = cv2.cvtColor(np.asarray(phone.screenshot().convert("RGB")), cv2.COLOR_RGB2BGR)
        small = cv2.resize(bgr, (736, 1600))
        small = 255 - small if dark else small
        maps.append(detector.infer(detector_input(small, None, None))[0][0, 0])
    return [*maps, drawn_map(400, 300, seed=1), drawn_map(300, 500, seed=2)]


def _rapidocr_post(**settings: Any) -> Any:
    return type(RapidOcrBackend(rec_cache=0)._engine.text_det.postprocess_op)(**settings)


@pytest.mark.parametrize(
    "settings",
    [
        {},  # what the OCR uses
        {"max_candidates": 3, "unclip_ratio": 0.5},  # few contours read
        {"unclip_ratio": 0.1},  # boxes barely grown: some too thin once grown (min_size + 2)
        {"thresh": 0.5, "box_thresh": 0.9, "unclip_ratio": 3.0},
        {"thresh": 0.2, "box_thresh": 0.4},
    ],
)
def test_boxes_are_read_from_the_probability_map_as_rapidocr_reads_them(
    settings: dict[str, Any], probability_maps: list[np.ndarray]
) -> None:
    total = 0
    for min_size in (3, 1, 7):
        post = _rapidocr_post(**settings)
        post.min_size = min_size
        assert _plain_db(post)
        for probabilities in probability_maps:
            window = probabilities[np.newaxis, np.newaxis, :, : probabilities.shape[1] - 3]  # a strided view
            expected, _ = post(window, window.shape[2:])
            found = db_boxes(post, window[0, 0])
            assert found.dtype == np.int32 and np.array_equal(found, np.asarray(expected, np.int32))
            total += len(found)
    assert total > 15  # boxes were compared (max_candidates=3 reads three contours a map)


def test_boxes_grow_as_rapidocr_grows_them() -> None:
    post = _rapidocr_post()
    rng = np.random.default_rng(8)
    for _ in range(2000):
        centre, size = rng.uniform(0, 800, 2), rng.uniform(3, 300, 2)
        corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * size / 2
        angle = rng.uniform(-0.3, 0.3)
        turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        quad = (corners @ turn.T + centre).astype(np.float32)
        ratio = float(rng.uniform(0.5, 3.0))
        assert np.array_equal(_grown(quad, ratio), _unclip(post, quad, ratio))


def _unclip(post: Any, quad: np.ndarray, ratio: float) -> np.ndarray:
    post.unclip_ratio = ratio
    return np.asarray(post.unclip(quad))


def test_other_post_processors_read_their_own_boxes() -> None:
    post = _rapidocr_post()
    assert _plain_db(post)
    assert not _plain_db(_rapidocr_post(score_mode="slow"))
    assert not _plain_db(_rapidocr_post(use_dilation=True))
    assert not _plain_db(_Detector().postprocess_op)  # the fake above: called as it is

    class Tuned(type(post)):  # type: ignore[misc]
        """A subclass may read boxes its own way."""

    assert not _plain_db(Tuned())
    grown_less = _rapidocr_post()
    grown_less.unclip = lambda box: post.unclip(box) * 0.9  # RapidOCR reading boxes differently
    assert not _plain_db(grown_less)  # found on the drawn map: its own reading is kept
