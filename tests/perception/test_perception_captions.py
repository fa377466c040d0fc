"""Icon captions: one request per screen of new icons, none for a screen seen before."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from PIL import Image

from mae.config import PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.llm import ChatClient, ModelProfile
from mae.perception import Perceptor
from mae.perception.captions import (
    CAPTION_TOKENS,
    ICON_PROMPT,
    ICON_TILE,
    MAX_CAPTION_CHARS,
    ApiCaptioner,
    CaptionCache,
    caption_sheet,
    icon_tile,
    parse_captions,
    read_caption,
)
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


# ---------------------------------------------------------------- one request per icon (a local server)


@pytest.mark.parametrize(
    ("reply", "caption"),
    [
        ("gear: settings", "gear: settings"),
        ("Magnifying glass: search.", "Magnifying glass: search"),
        ("Caption: bell: notifications\r\nThe bell opens the notification list.", "bell: notifications"),
        ('"shopping cart: view the cart"', "shopping cart: view the cart"),
        ("```\nheart: favourites\n```", "heart: favourites"),
        ("  \n\n  back arrow: go back  ", "back arrow: go back"),
        ("**plus sign**: add a new item", "plus sign**: add a new item"),
        ("I'm sorry, I can't identify this icon.", ""),
        ("Sorry, the image is too small.", ""),
        ("", ""),
        ("   ", ""),
        ("{}", ""),
        ("12345", ""),
        ("�����t�t", ""),
        ("\x00\x01gear", ""),
        ("ĠĊĠĊ::;;##", ""),
        ("tap " * 400, ("tap " * 20).strip()),
    ],
)
def test_a_reply_becomes_one_short_caption_or_none(reply: str, caption: str) -> None:
    assert read_caption(reply) == caption
    assert len(read_caption(reply)) <= MAX_CAPTION_CHARS


def test_a_long_caption_is_cut_at_a_word() -> None:
    reply = "blue rounded square with a white paper plane inside it: send the message you typed to everyone"
    cut = read_caption(reply)
    assert len(cut) <= MAX_CAPTION_CHARS and reply.startswith(cut) and reply[len(cut)] == " "


def test_icon_tiles_have_one_size_whatever_the_crop() -> None:
    for size in ((10, 200), (400, 90), (30, 30), (1, 1)):
        assert icon_tile(Image.new("RGB", size, "red")).size == (ICON_TILE, ICON_TILE)


def _vllm_client(server: FakeModelServer) -> ChatClient:
    return ChatClient(ModelProfile(provider="vllm", base_url=server.base_url, model="qwen", api_key_env=None))


def test_a_vllm_captioner_asks_each_new_icon_at_once_and_caches_them(fake_server: FakeModelServer) -> None:
    def answer(request: RecordedRequest) -> FakeReply:
        return FakeReply(text=f"icon {len(fake_server.requests)}: open it", delay_s=1.0)

    fake_server.responder = answer
    captioner = ApiCaptioner(_vllm_client(fake_server), CaptionCache(None))
    assert captioner.per_icon
    screen = VirtualPhone().screenshot()
    icons = Perceptor.from_settings(PerceptionSettings()).perceive(screen).icons[:6]
    assert len(icons) == 6
    started = time.perf_counter()
    captions, warnings = captioner.caption(screen, icons)
    elapsed = time.perf_counter() - started
    assert warnings == [] and all(re.fullmatch(r"icon \d: open it", c) for c in captions)
    assert len(fake_server.requests) == 6 and captioner.requests == 6
    assert all(r.image_count == 1 and ICON_PROMPT in r.text for r in fake_server.requests)
    assert all(r.body["max_tokens"] == CAPTION_TOKENS for r in fake_server.requests)
    # one after another they take at least 6 s whatever the load; at once about 1 s
    assert elapsed < 6 * 1.0, "the requests were sent one after another"
    again, _ = captioner.caption(screen, icons)
    assert again == captions and len(fake_server.requests) == 6  # cached


def test_a_failed_or_unusable_icon_request_leaves_only_that_caption_empty(
    fake_server: FakeModelServer,
) -> None:
    replies = iter(
        [
            "gear: settings",
            FakeReply(status=400, body='{"error": {"message": "bad image"}}'),
            "I cannot see an icon.",
        ]
    )
    fake_server.responder = lambda request: next(replies)
    captioner = ApiCaptioner(_vllm_client(fake_server), CaptionCache(None), parallel=1)
    screen = VirtualPhone().screenshot()
    icons = Perceptor.from_settings(PerceptionSettings()).perceive(screen).icons[:3]
    captions, warnings = captioner.caption(screen, icons)
    assert captions == ["gear: settings", "", ""]
    assert len(warnings) == 1 and "icon captions unavailable for 1 of 3 new icons" in warnings[0]


def test_a_hosted_captioner_still_sends_one_sheet_per_screen(fake_server: FakeModelServer) -> None:
    client = ChatClient(
        ModelProfile(provider="openai", base_url=fake_server.base_url, model="m", api_key_env=None)
    )
    assert not ApiCaptioner(client, CaptionCache(None)).per_icon
    assert ApiCaptioner(client, CaptionCache(None), per_icon=True).per_icon
