"""The coordinate doctor's reply reader, fed what real models write when asked where to tap."""

from __future__ import annotations

import time

import pytest

from mae.serving.doctor_replies import read_point


@pytest.mark.parametrize(
    ("text", "point"),
    [
        ('### Action ###\n{"name": "Tap", "arguments": {"x": 540, "y": 1200}}', (540, 1200)),
        ("Tap(540, 1200)", (540, 1200)),
        ("click(x=540, y=1200)", (540, 1200)),
        ('{"action_type": "click", "coordinate": [540, 1200]}', (540, 1200)),
        ('```json\n[{"point_2d": [321, 654], "label": "Settings"}]\n```', (321, 654)),
        ('{"bbox_2d": [10, 20, 30, 40], "label": "icon"}', (20, 30)),
        ("<point>512 733</point>", (512, 733)),
        ("<point>(512,733)</point>", (512, 733)),
        ("<|box_start|>(100,200),(300,400)<|box_end|>", (200, 300)),
        ("<bbox>100 200 300 400</bbox>", (200, 300)),
        ("The icon is at [100, 200, 300, 400].", (200, 300)),
        ("I would tap at (0.42, 0.77).", (0.42, 0.77)),
        ("x=540, y=1200", (540, 1200)),
        ("{'x': 5, 'y': 6}", (5, 6)),
        ("Action: click(start_box='(235,512)')", (235, 512)),
        (
            "### Thought ###\r\nThe screen's (0, 0) is the top left.\r\n### Action ###\r\n"
            '{"name": "Tap", "arguments": {"x": 0.42, "y": 0.77}}\r\n### Description ###\r\nOpens it.',
            (0.42, 0.77),
        ),
        ("**Action:** Tap(880, 176)\n\nThis opens the cart.", (880, 176)),
        ("Thought: open it\nAction: click(start_box='<|box_start|>(235,512)<|box_end|>')", (235, 512)),
        ('do(action="Tap", element=[500, 300])', (500, 300)),
        ("CLICK(box=[[100,200,300,400]])", (200, 300)),
        (
            '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [54, 12]}}'
            "\n</tool_call>",
            (54, 12),
        ),
    ],
)
def test_points_in_the_forms_models_write(text: str, point: tuple[float, float]) -> None:
    assert read_point(text) == pytest.approx(point)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I'm sorry, I can't help with that.",
        "The Settings icon is in the bottom right corner of the screen.",
        "Swipe(540, 1500, 540, 500)",
        '{"name": "Back", "arguments": {}}',
        "Tap at 540",
    ],
)
def test_replies_without_a_point(text: str) -> None:
    assert read_point(text) is None


def test_a_huge_reply_is_read_in_linear_time() -> None:
    text = "(" * 200_000 + "1, " * 100_000 + "<point>" * 50_000
    started = time.perf_counter()
    assert read_point(text) is None or isinstance(read_point(text), tuple)
    assert time.perf_counter() - started < 5
