"""Coordinate conventions: every adapter round-trips on real phone sizes, and the 28-vs-32 trap."""

from __future__ import annotations

import math

import pytest

from mae.config import Settings
from mae.errors import ConfigError
from mae.llm.coordinates import (
    CONVENTIONS,
    CoordinateMapper,
    ModelResize,
    convention,
    describe_swipe_example,
    family_convention,
    mapper_for,
)
from mae.llm.images import ImagePolicy, smart_resize, target_size

SCREENS = [(1080, 2340), (1440, 3200), (720, 1600)]


def _points(size: tuple[int, int]) -> list[tuple[int, int]]:
    width, height = size
    return [(0, 0), (width - 1, height - 1), (width // 2, height // 2), (37, height - 120), (width - 5, 61)]


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_every_convention_round_trips_on_real_screens(name: str, screen: tuple[int, int]) -> None:
    chosen = convention(name)
    sent = target_size(screen, chosen.image)
    mapper = chosen.mapper(screen, sent)
    # one model unit covers at most this many screen pixels: the rounding error allowed
    tolerance = max(math.ceil(screen[0] / mapper.model_size[0]), math.ceil(screen[1] / mapper.model_size[1]))
    for point in _points(screen):
        model = mapper.to_model(*point)
        assert 0 <= model[0] <= mapper.model_size[0] and 0 <= model[1] <= mapper.model_size[1]
        back = mapper.to_screen(*model)
        assert abs(back[0] - point[0]) <= tolerance and abs(back[1] - point[1]) <= tolerance, (point, back)


def test_each_convention_has_the_model_space_its_family_documents() -> None:
    screen = (1080, 2340)
    sizes = {
        name: c.mapper(screen, target_size(screen, c.image)).model_size for name, c in CONVENTIONS.items()
    }
    assert sizes["screen"] == target_size(screen, CONVENTIONS["screen"].image) == (768, 1664)  # as sent
    assert sizes["qwen3-vl"] == sizes["gui-owl-1.5"] == (1000, 1000)
    # Qwen2.5-VL at 1280x28x28: 1080x2340 becomes 672x1456 (both multiples of 28)
    assert sizes["qwen2.5-vl"] == sizes["gui-owl"] == (672, 1456)
    width, height = sizes["ui-tars-1.5"]
    assert width % 28 == 0 and height % 28 == 0


def test_smart_resize_matches_hand_computed_values() -> None:
    # 2340x1080 = 2,527,200 px > 1280*28*28 = 1,003,520: beta = sqrt(2527200/1003520) = 1.5869...
    # floor(2340/1.5869/28)*28 = 1456, floor(1080/1.5869/28)*28 = 672
    assert smart_resize(2340, 1080, 28, 4 * 28 * 28, 1280 * 28 * 28) == (1456, 672)
    # same budget in factor-32 tiles: floor(2340/beta'/32)*32 with beta' = sqrt(2527200/1310720)
    assert smart_resize(2340, 1080, 32, 64 * 32 * 32, 1280 * 32 * 32) == (1664, 768)
    # small enough to fit: only rounded to the factor
    assert smart_resize(1600, 720, 28, 4 * 28 * 28, 16384 * 28 * 28) == (1596, 728)


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_factor_28_versus_32_trap(screen: tuple[int, int]) -> None:
    """A budget of 1280 visual tokens is 1280 tiles of 28x28 for Qwen2.5-VL but of 32x32 for Qwen3-VL:
    reading a point of one frame as the other misses the element; the right adapter does not. And a
    Qwen3-VL point (0-1000 grid) read as pixels of a factor-28 image lands somewhere else entirely."""
    frame28 = ModelResize(factor=28, max_pixels=1280 * 28 * 28).apply(screen)
    frame32 = ModelResize(factor=32, min_pixels=64 * 32 * 32, max_pixels=1280 * 32 * 32).apply(screen)
    assert frame28 != frame32 and all(side % 28 == 0 for side in frame28)
    assert all(side % 32 == 0 for side in frame32)
    target = (screen[0] - 60, screen[1] - 200)  # a button near the bottom right corner
    for said_in, read_as in ((frame32, frame28), (frame28, frame32)):
        said = CoordinateMapper(screen, said_in).to_model(*target)
        assert math.dist(CoordinateMapper(screen, said_in).to_screen(*said), target) <= 3
        assert math.dist(CoordinateMapper(screen, read_as).to_screen(*said), target) > 100
    relative = convention("qwen3-vl").mapper(screen, frame32)
    said = relative.to_model(*target)
    assert math.dist(relative.to_screen(*said), target) <= 3
    assert math.dist(CoordinateMapper(screen, frame28).to_screen(*said), target) > 100


def test_server_side_resize_is_repeated_on_the_image_mae_sent() -> None:
    """mae sends 768x1664 (a factor-32 resize); a factor-28 server resizes it again before the model
    answers: the adapter maps through that second resize, so the tap still lands."""
    screen = (1080, 2340)
    sent = target_size(screen, ImagePolicy(resize="qwen", factor=32, max_pixels=1280 * 32 * 32))
    server = ModelResize(factor=28, max_pixels=1280 * 28 * 28)
    mapper = mapper_for("image", screen, sent, server)
    assert mapper.model_size == server.apply(sent) != sent
    target = (980, 2100)
    assert math.dist(mapper.to_screen(*mapper.to_model(*target)), target) <= 3
    naive = CoordinateMapper(screen, sent)
    assert math.dist(naive.to_screen(*mapper.to_model(*target)), target) > 40


def test_relative_grid_is_not_pixels() -> None:
    mapper = mapper_for("relative", (1440, 3200), (1440, 3200))
    assert mapper.to_model(720, 1600) == (500, 500)
    assert mapper.to_screen(1000, 1000) == (1440, 3200)
    assert mapper.to_screen(250, 900) == (360, 2880)


def test_swipe_example_follows_the_convention() -> None:
    assert describe_swipe_example(CoordinateMapper.identity((1080, 2340))) == (540, 1500, 500, 500)
    assert describe_swipe_example(mapper_for("relative", (1080, 2340), (1080, 2340))) == (500, 641, 214, 463)
    x, y1, y2, _ = describe_swipe_example(CoordinateMapper((1440, 3200), (756, 1680)))
    assert (x, y1, y2) == (378, round(2051 * 1680 / 3200), round(684 * 1680 / 3200))


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl"),
        ("Qwen/Qwen3-VL-8B-Instruct", "qwen3-vl"),
        ("mPLUG/GUI-Owl-7B", "gui-owl"),
        ("mPLUG/GUI-Owl-1.5-8B-Instruct", "gui-owl-1.5"),
        ("ByteDance-Seed/UI-TARS-1.5-7B", "ui-tars-1.5"),
        ("gpt-4o", None),
        ("my-finetune", None),
    ],
)
def test_family_of_a_model_name(model: str, expected: str | None) -> None:
    assert family_convention(model) == expected


def test_settings_pick_the_family_convention_for_local_servers() -> None:
    local = Settings(backbone="vllm", model="ByteDance-Seed/UI-TARS-1.5-7B").profile_for("operator")
    assert local.coordinate_space == "image" and local.model_resize is not None
    assert local.model_resize.min_pixels == 100 * 28 * 28
    qwen3 = Settings(backbone="custom", base_url="http://127.0.0.1:9/v1", model="Qwen/Qwen3-VL-8B-Instruct")
    profile = qwen3.profile_for("operator")
    assert profile.coordinate_space == "relative" and profile.image.factor == 32
    hosted = Settings(backbone="openai").profile_for("operator")
    assert hosted.coordinate_space == "screen"
    forced = Settings(backbone="vllm", coordinates="screen").profile_for("operator")
    assert forced.coordinate_space == "screen"
    with pytest.raises(ConfigError, match="coordinate convention"):
        Settings(backbone="vllm", coordinates="pixels").profile_for("operator")


def test_people_are_told_the_models_frame_only_when_it_is_not_screen_pixels() -> None:
    from mae.llm.coordinates import describe_model_frame, shown_action

    screen = (1080, 2340)
    assert (
        describe_model_frame("screen", mapper_for("screen", screen, (768, 1664))) == "in its 768×1664 image"
    )
    assert describe_model_frame("screen", mapper_for("screen", screen, screen)) == ""  # sent unresized
    qwen = CONVENTIONS["qwen2.5-vl"]
    sent = (756, 1624)
    seen = qwen.model_resize.apply(sent) if qwen.model_resize else sent
    words = describe_model_frame("image", qwen.mapper(screen, sent))
    assert words == f"in its {seen[0]}×{seen[1]} image"
    assert describe_model_frame("relative", mapper_for("relative", screen, sent)) == "on its 0-1000 grid"
    full = "Tap(900, 399) · model wrote Tap(640, 284) in its 768×1664 image"
    assert shown_action("Tap(900, 399)", "Tap(640, 284)", "in its 768×1664 image") == full
    assert shown_action("Back()", "Back()", "in its 768×1664 image") == "Back()"
    assert shown_action("Tap(9, 9)", None, "") == "Tap(9, 9)"
