"""A virtual-phone task through a fake model posing as each coordinate convention: the fake answers
in its own space (computed here from the phone's ground truth and the image it received), and every
tap must land on the element it aimed at."""

from __future__ import annotations

import base64
import io
import json
import re
from typing import Any

import pytest
from loop_scripting import GroundTruthPerceptor, Script, Step, make_client, section
from PIL import Image

from mae.config import LoopSettings, Settings
from mae.device.virtual import VirtualPhone
from mae.llm import ChatClient
from mae.llm.coordinates import CONVENTIONS
from mae.llm.images import smart_resize
from mae.run.loop import run_task
from mae.testing.fake_model_server import FakeModelServer, RecordedRequest

SCREENS = [(1080, 2340), (1440, 3200), (720, 1600)]
# (space, server-side factor, min pixels, max pixels), as each family documents them
POSES: dict[str, tuple[str, int, int, int]] = {
    "screen": ("screen", 0, 0, 0),
    "qwen2.5-vl": ("image", 28, 4 * 28 * 28, 1280 * 28 * 28),
    "gui-owl": ("image", 28, 4 * 28 * 28, 1280 * 28 * 28),
    "ui-tars-1.5": ("image", 28, 100 * 28 * 28, 16384 * 28 * 28),
    "qwen3-vl": ("relative", 32, 0, 0),
    "gui-owl-1.5": ("relative", 32, 0, 0),
}


def _sent_size(request: RecordedRequest) -> tuple[int, int]:
    for message in request.body["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                return Image.open(io.BytesIO(base64.b64decode(data))).size
    raise AssertionError("no image in the request")


class PosingModel:
    """Where a model of one convention would put a point, from the screen point it means."""

    def __init__(self, pose: str, phone: VirtualPhone) -> None:
        self.space, self.factor, self.min_pixels, self.max_pixels = POSES[pose]
        self.phone = phone
        self.prompt_checks = 0

    def frame(self, request: RecordedRequest) -> tuple[float, float]:
        screen_w, screen_h = self.phone.screen_size()
        if self.space == "relative":
            return 1000 / screen_w, 1000 / screen_h
        sent_w, sent_h = _sent_size(request)
        if self.space == "screen":  # pixels of the image as received, whatever the screen's size
            return sent_w / screen_w, sent_h / screen_h
        seen_h, seen_w = smart_resize(sent_h, sent_w, self.factor, self.min_pixels, self.max_pixels)
        return seen_w / screen_w, seen_h / screen_h

    def tap(self, text: str) -> Any:
        def answer(request: RecordedRequest) -> dict[str, Any] | str:
            sx, sy = self.frame(request)
            element = next(e for e in self.phone.ground_truth() if e.text == text)
            x, y = round(element.center[0] * sx), round(element.center[1] * sy)
            quoted = re.escape(json.dumps(text))  # lines read: kind "name"; coordinates: [x, y]
            pattern = rf"^[a-z ]+ {quoted}; coordinates: \[(\d+), (\d+)\]"
            listed = re.search(pattern, section(request.text, "Screen"), re.M)
            assert listed, f"{text!r} is not in the element list"
            shown = int(listed.group(1)), int(listed.group(2))
            assert abs(shown[0] - x) <= 1 and abs(shown[1] - y) <= 1, (shown, x, y)
            self.prompt_checks += 1
            # what real models write around the action: a code fence, a call with quoted numbers, CRLF
            if self.space == "relative":
                return f'```json\r\n{{"name": "Tap", "arguments": {{"x": "{x}", "y": "{y}"}}}}\r\n```'
            if self.space == "image":
                return f"Tap({x}, {y})"
            return {"name": "Tap", "arguments": {"x": x, "y": y}}

        return answer


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("pose", list(POSES))
def test_taps_land_on_the_intended_elements_in_every_convention(
    pose: str, screen: tuple[int, int], fake_server: FakeModelServer, tmp_path: Any
) -> None:
    assert set(POSES) == set(CONVENTIONS)
    phone = VirtualPhone(*screen)
    model = PosingModel(pose, phone)
    fake_server.responder = Script(
        [
            Step("Open Notes", {"name": "Open_App", "arguments": {"app_name": "Notes"}}),
            Step("Open the Groceries note", model.tap("Groceries")),
            Step("Go back", {"name": "Back", "arguments": {}}),
            Step("Start a new note", model.tap("new note")),
        ]
    )
    base = make_client(fake_server)
    settings = Settings(backbone="custom", base_url=fake_server.base_url, model="fake-vlm", coordinates=pose)
    profile = settings.profile_for("operator").model_copy(update={"max_retries": 0, "api_key_env": None})
    client = ChatClient(profile)
    assert base.profile("operator").coordinate_space == "screen"
    screens: list[tuple[str, bool]] = []  # (screen, shows the Groceries note's items)
    result = run_task(
        "Look at the groceries, then start a new note",
        device=phone,
        client=client,
        perceptor=GroundTruthPerceptor(phone),
        settings=LoopSettings(),
        listener=lambda event: screens.append(
            (phone.screen_name, any(e.text == "Milk" for e in phone.ground_truth()))
        ),
        log_dir=tmp_path / "runs",
    )
    assert result.finished, result
    assert model.prompt_checks == 2
    assert ("Notes/edit", True) in screens  # the Groceries tap opened that note
    assert screens[-1] == ("Notes/edit", False)  # the new-note tap opened an empty one
    request = fake_server.requests_for("operator")[0]
    operator, sent = request.text, _sent_size(request)
    # the size the prompt states is the size of the image attached, in every convention
    assert f"current screen, {sent[0]} pixels wide and {sent[1]} pixels high" in operator
    if pose in ("qwen3-vl", "gui-owl-1.5"):
        assert "relative 0-1000 grid" in operator
        assert "x1 = x2 = 500" in operator
        assert '{"x": 500, "y": 513}' in operator  # the format example's tap, on the 0-1000 grid
    elif pose == "screen":
        assert "in pixels of this image" in operator
        if screen == (1080, 2340):  # sent at 768x1664: the examples scaled by 768/1080
            assert sent == (768, 1664)
            assert '{"x": 384, "y": 853}' in operator and "x1 = x2 = 384, y1 = 1067, y2 = 356" in operator
