"""Image policies and coordinate mapping."""

from __future__ import annotations

import pytest
from PIL import Image

from mae.llm.coordinates import CoordinateMapper
from mae.llm.images import ImagePolicy, encode_image, smart_resize, target_size


def test_smart_resize_keeps_budget_and_factor() -> None:
    height, width = smart_resize(2340, 1080, max_pixels=1280 * 28 * 28)
    assert height % 28 == 0 and width % 28 == 0
    assert height * width <= 1280 * 28 * 28
    assert abs(height / width - 2340 / 1080) < 0.05
    assert smart_resize(56, 56) == (56, 56)
    assert smart_resize(10, 10, min_pixels=4 * 28 * 28) == (56, 56)
    with pytest.raises(ValueError):
        smart_resize(1, 500)


def test_max_side_policy() -> None:
    assert target_size((1080, 2340), ImagePolicy(max_side=1170)) == (540, 1170)
    assert target_size((500, 400), ImagePolicy(max_side=1170)) == (500, 400)
    assert target_size((1080, 2340), ImagePolicy(resize="none")) == (1080, 2340)


def test_encode_reports_scale() -> None:
    encoded = encode_image(Image.new("RGB", (1080, 2340)), ImagePolicy(max_side=1170))
    assert encoded.size == (540, 1170)
    assert encoded.scale == (2.0, 2.0)
    assert encoded.data_url.startswith("data:image/jpeg;base64,")


def test_coordinate_mapping_round_trip() -> None:
    mapper = CoordinateMapper((1080, 2340), (532, 1148))
    x, y = mapper.to_model(540, 1200)
    assert mapper.to_screen(x, y) == pytest.approx((540, 1200), abs=3)
    assert CoordinateMapper.identity((1080, 2340)).is_identity
