"""Icon captions: one request per screen of new icons, none for a screen seen before."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from mae.config import PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.llm import ChatClient, ModelProfile
from mae.perception import Perceptor
from mae.perception.captions import ApiCaptioner, CaptionCache, caption_sheet, parse_captions
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest


def numbered_captions(request: RecordedRequest) -> str:
    count = int(request.text.split("sheet of ")[1].split()[0])
    return json.dumps({str(i + 1): f"icon number {i + 1}" for i in range(count)})


def make_perceptor(server: FakeModelServer, cache_dir: Path) -> tuple[Perceptor, ChatClient]:
    client = ChatClient(ModelProfile(base_url=server.base_url, model="fake-captioner", api_key_env=None))
    settings = PerceptionSettings(captions="backbone", cache_dir=cache_dir)
    return Perceptor.from_settings(settings, client), client


def test_one_request_for_new_icons_none_for_a_repeat(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.responder = numbered_captions
    perceptor, _ = make_perceptor(fake_server, tmp_path)
    phone = VirtualPhone()
    home = phone.screenshot()
    first = perceptor.perceive(home)
    assert len(fake_server.requests) == 1
    assert fake_server.requests[0].role == "captioner"
    assert fake_server.requests[0].image_count == 1  # all crops on one sheet
    assert first.icons and all(icon.text.startswith("icon number") for icon in first.icons)
    assert "captions" in first.timings and first.warnings == []

    again = perceptor.perceive(home)
    assert len(fake_server.requests) == 1  # every crop is cached
    assert [i.text for i in again.icons] == [i.text for i in first.icons]

    # a new process (new cache object) reads the persisted cache: still no request
    fresh, _ = make_perceptor(fake_server, tmp_path)
    fresh.perceive(home)
    assert len(fake_server.requests) == 1

    # another screen: at most one request, for its new icons only
    phone.open_app("Amazon")
    perceptor.perceive(phone.screenshot())
    assert len(fake_server.requests) == 2


def test_failed_caption_request_leaves_captions_empty_and_warns(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.add(FakeReply(status=400, body='{"error": {"message": "bad"}}'))
    perceptor, _ = make_perceptor(fake_server, tmp_path)
    result = perceptor.perceive(VirtualPhone().screenshot())
    # no caption came back: every icon is unnamed but the navigation bar's (named by its place)
    assert result.icons and all(icon.text == "" for icon in result.icons if icon.named_by != "layout")
    assert result.warnings and "icon captions unavailable" in result.warnings[0]
    assert "This is an icon" not in result.describe()


def test_unusable_caption_reply_is_reported(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.add("I see some icons.")
    client = ChatClient(ModelProfile(base_url=fake_server.base_url, model="m", api_key_env=None))
    captioner = ApiCaptioner(client, CaptionCache(None))
    perception = Perceptor.from_settings(PerceptionSettings()).perceive(VirtualPhone().screenshot())
    captions, warnings = captioner.caption(VirtualPhone().screenshot(), perception.icons[:3])
    assert captions == ["", "", ""]
    assert "unusable" in warnings[0]


def test_sheet_and_reply_parsing() -> None:
    crops = [Image.new("RGB", (40, 40), c) for c in ("red", "green", "blue")]
    sheet = caption_sheet(crops)
    assert sheet.size == (3 * 112, 112)
    assert parse_captions('Sure: {"1": "a", "3": "c"}', 3) == ["a", "", "c"]


def test_unreadable_cache_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "icon-captions.json"
    path.write_text("{not json")
    cache = CaptionCache(path)
    assert len(cache) == 0
    cache.update({"k": "v"})
    assert json.loads(path.read_text()) == {"k": "v"}
