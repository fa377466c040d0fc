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


# --- token rules (documented examples) and the Reflector's smaller 'before' image --------------------


def test_image_tokens_follow_the_documented_rules() -> None:
    from mae.llm.images import image_tokens

    assert image_tokens((1024, 1024), "openai_tiles") == 765  # OpenAI's worked example
    assert image_tokens((128, 128), "openai_tiles") == 255
    assert image_tokens((2048, 4096), "openai_tiles") == 1105  # 768x1536: 2x3 tiles
    assert image_tokens((1000, 1000), "anthropic_pixels") == 1334  # Anthropic's table
    assert image_tokens((1092, 1092), "anthropic_pixels") == 1590
    assert image_tokens((384, 384), "gemini_tiles") == 258
    assert image_tokens((709, 1536), "gemini_tiles") == 2 * 258
    assert image_tokens((672, 1456), "qwen_patches") == 24 * 52 + 2
    assert image_tokens((100, 100), "unknown") is None


def test_gpt4o_cap_of_1536_saves_a_row_of_tiles_on_a_phone_screen() -> None:
    from mae.llm.images import image_tokens
    from mae.llm.providers import PRESETS

    policy = PRESETS["openai"].image
    sent = target_size((1080, 2340), policy)
    assert image_tokens(sent, "openai_tiles") == 1105
    assert image_tokens(target_size((1080, 2340), ImagePolicy(max_side=1664)), "openai_tiles") == 1445


def test_before_policy_shrinks_only_the_before_image() -> None:
    from mae.llm.images import before_policy

    plain = ImagePolicy(max_side=1536)
    assert before_policy(plain, (1080, 2340)) is plain
    small = before_policy(ImagePolicy(max_side=1536, before_max_side=1024), (1080, 2340))
    assert target_size((1080, 2340), small) == (473, 1024)
    qwen = ImagePolicy(resize="qwen", max_pixels=1280 * 28 * 28, before_max_side=1024)
    width, height = target_size((1080, 2340), before_policy(qwen, (1080, 2340)))
    assert max(width, height) <= 1064 and width * height < 1280 * 28 * 28 // 2
