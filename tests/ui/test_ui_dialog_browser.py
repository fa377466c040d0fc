"""The demo's phone view with a dialog up: the app shows dimmed behind it, as on a real phone.

The demo runs in-process on a virtual phone with realism on; the phone opens Amazon with nobody
clicking, the live view follows, and the picture the browser receives shows Amazon's header darker but
still drawn (not a flat grey) around a bright dialog. Tapping the dialog's dismiss button in the page
brings the app back to full brightness. Screenshots: ``artifacts/ui/dialog-over-dimmed-app*.png``.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image, ImageStat
from ui_testkit import free_port, make_backend, settings_for

from mae.device.virtual import VirtualPhone
from mae.device.virtual.realism import DISMISS_LABELS, Realism

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "ui"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
TIMEOUT_MS = 120_000
HEADER = (0, 100, 1080, 400)
"""Amazon's title bar and search box, in phone pixels: above a centred dialog."""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def _card_seed() -> int:
    """A seed whose first dialog on Amazon is a centred card that is not the permission prompt."""
    for seed in range(60):
        phone = VirtualPhone(realism_settings=Realism(enabled=True, seed=seed, slow_open=False))
        phone.open_app("Amazon")
        shown = phone.realism.dialog("Amazon")
        if shown is not None and shown.style == "card" and shown.kind != "permission":
            return seed
    raise AssertionError("no seed opens Amazon with a card")


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[str, VirtualPhone]]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    import app

    phone = VirtualPhone(realism_settings=Realism(enabled=True, seed=_card_seed(), slow_open=False))
    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), phone)
    blocks = app.build_demo(backend, lister=lambda: [])
    port = free_port()
    app.launch(blocks, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/", phone
    finally:
        blocks.close()


def _shown(page: object) -> Image.Image:
    src = page.locator("#mae-phone img").get_attribute("src")  # type: ignore[attr-defined]
    body = page.request.get(src).body()  # type: ignore[attr-defined]
    return Image.open(io.BytesIO(body)).convert("RGB")


def _header(image: Image.Image) -> ImageStat.Stat:
    scale = image.width / 1080
    box = tuple(round(v * scale) for v in HEADER)
    return ImageStat.Stat(image.crop(box).convert("L"))


def _wait_for(page: object, check: object, what: str) -> Image.Image:
    deadline = time.monotonic() + 120
    while True:
        image = _shown(page)
        if check(image):  # type: ignore[operator]
            return image
        assert time.monotonic() < deadline, f"the phone view never showed {what}"
        page.wait_for_timeout(300)  # type: ignore[attr-defined]


def test_a_dialog_shows_the_app_dimmed_behind_it_in_the_demo(demo: tuple[str, VirtualPhone]) -> None:
    from playwright.sync_api import sync_playwright

    url, phone = demo
    reference = VirtualPhone()
    reference.open_app("Amazon")
    bright = _header(reference.screenshot()).mean[0]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(url)
            page.locator("#mae-phone img").wait_for()
            phone.open_app("Amazon")  # the live view follows the phone by itself
            dimmed = _wait_for(page, lambda im: _header(im).mean[0] < 0.6 * bright, "a dimmed app")
            header = _header(dimmed)
            assert header.mean[0] > 0.25 * bright  # dimmed, not blacked out
            assert header.stddev[0] > 10  # the app's title and search box are drawn, not a flat scrim
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            dimmed.save(ARTIFACTS / "dialog-over-dimmed-app.png")
            page.screenshot(path=str(ARTIFACTS / "dialog-over-dimmed-app-page.png"), full_page=True)

            shown = phone.realism.dialog("Amazon")
            assert shown is not None
            targets = dict(reversed(phone.tap_targets()))
            label = next(name for name in DISMISS_LABELS if name in targets)
            left, top, right, bottom = targets[label]
            image = page.locator("#mae-phone img")
            box = image.bounding_box()
            assert box is not None
            scale = box["width"] / 1080
            image.click(position={"x": (left + right) / 2 * scale, "y": (top + bottom) / 2 * scale})
            _wait_for(page, lambda im: phone.realism.dialog("Amazon") is not shown, "the tap")
            while phone.realism.dialog("Amazon") is not None:
                phone.back()
            _wait_for(page, lambda im: _header(im).mean[0] > 0.9 * bright, "the app at full brightness")
        finally:
            browser.close()
