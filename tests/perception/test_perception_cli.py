"""``python -m mae perceive``, the Perceptor's assembly, and the caption cache under concurrency."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from PIL import Image

from mae.cli import main
from mae.config import PerceptionSettings
from mae.device.virtual import VirtualPhone
from mae.errors import ConfigError
from mae.perception import Perceptor
from mae.perception.captions import CaptionCache


@pytest.fixture(scope="module")
def home_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shots") / "home.png"
    VirtualPhone().screenshot().save(path)
    return path


def test_perceive_json_prints_one_object_per_image(
    home_png: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["perceive", str(home_png), str(home_png), "--json", "--icons", "none"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    result = json.loads(lines[0])
    assert result["image"] == str(home_png)
    assert (result["width"], result["height"]) == (1080, 2340)
    assert {"ocr", "total"} <= set(result["timings"]) and "icons" not in result["timings"]
    assert result["elements"] and all(e["kind"] == "text" for e in result["elements"])
    assert any(e["text"] == "Notes" for e in result["elements"])


def test_perceive_text_lists_elements_and_timings(home_png: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perceive", str(home_png)]) == 0
    out = capsys.readouterr().out
    assert "1080x2340" in out and "timings: " in out
    assert "icon [" in out and "text [" in out
    assert main(["perceive", str(home_png), "--icons", "none", "--no-merge"]) == 0
    assert "0 icons" in capsys.readouterr().out


def test_perceive_unreadable_image_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.png"
    broken.write_text("not an image")
    assert main(["perceive", str(broken), "--icons", "none"]) == 2
    assert "cannot read image" in capsys.readouterr().err
    assert main(["perceive", str(tmp_path / "nosuch.png"), "--icons", "none"]) == 2
    err = capsys.readouterr().err
    assert "there is no file" in err and "nosuch.png" in err and "Errno" not in err
    assert main(["perceive", str(tmp_path), "--icons", "none"]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_perceptor_passes_the_keyboard_state(home_png: Path) -> None:
    image = Image.open(home_png)
    perceptor = Perceptor.from_settings(PerceptionSettings(icons="none"))
    shown = perceptor.perceive(image, keyboard_active=True)
    assert shown.keyboard_active is True and shown.icons == []
    assert perceptor.perceive(image).keyboard_active is False


def test_captions_without_a_detector_or_client_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="icon detector"):
        Perceptor.from_settings(PerceptionSettings(icons="none", captions="backbone", cache_dir=tmp_path))
    with pytest.raises(ConfigError, match="model client"):
        Perceptor.from_settings(PerceptionSettings(captions="backbone", cache_dir=tmp_path))


def test_caption_cache_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "icon-captions.json"
    cache = CaptionCache(path)
    other_process = CaptionCache(path)  # a second cache object on the same file

    def write(worker: int) -> None:
        for i in range(25):
            cache.update({f"{worker}-{i}": f"caption {worker} {i}"})

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    other_process.update({"other": "kept"})
    cache.update({"last": "entry"})
    on_disk = json.loads(path.read_text())
    assert len(on_disk) == 102 and on_disk["3-24"] == "caption 3 24" and on_disk["other"] == "kept"
    assert [p.name for p in path.parent.iterdir()] == ["icon-captions.json"]  # no temp files left
    assert CaptionCache(path).get("0-0") == "caption 0 0"
