"""GroundingDINO icons and in-process Qwen2.5-VL captions, on tiny random checkpoints built here.

The checkpoints are written in the layout of the real hub repositories (config.json, model.safetensors,
preprocessor_config.json naming its processor class, tokenizer files, chat template) and loaded back
through the same code that loads IDEA-Research/grounding-dino-tiny or Qwen/Qwen2.5-VL-3B-Instruct.
Random weights give random boxes and gibberish text, so the tests check the plumbing, not the quality.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

torch = pytest.importorskip("torch", reason="the local-model tests need torch (requirements-dev.txt)")
transformers = pytest.importorskip("transformers", reason="the local-model tests need transformers")

from mae.config import PerceptionSettings  # noqa: E402
from mae.device.virtual import VirtualPhone  # noqa: E402
from mae.errors import ConfigError  # noqa: E402
from mae.llm.weights import WeightsError  # noqa: E402
from mae.perception.captions import ICON_PROMPT, CaptionCache, crop_key, icon_tile  # noqa: E402
from mae.perception.elements import Element  # noqa: E402
from mae.perception.geometry import (  # noqa: E402
    box_area,
    filter_detections,
    iou,
)
from mae.perception.groundingdino import GroundingDinoDetector, boxes_to_elements, normalize_prompt  # noqa: E402
from mae.perception.icons import make_icon_detector  # noqa: E402
from mae.perception.local_models import inference, pick_device, pick_dtype  # noqa: E402
from mae.perception.perceptor import Perceptor, make_captioner  # noqa: E402
from mae.perception.qwen_local import BATCH_SIZE, LocalQwenCaptioner, _greedy  # noqa: E402
from mae.testing.tiny_models import (  # noqa: E402
    DINO_QUERIES,
    build_tiny_groundingdino,
    build_tiny_qwen,
)

HAS_TORCHVISION = importlib.util.find_spec("torchvision") is not None
NO_TORCHVISION = (
    "transformers' Qwen2.5-VL processor loads Qwen2VLVideoProcessor, which needs torchvision; this "
    "machine has CPU torch without torchvision (only CUDA torchvision wheels exist), so the image-only "
    "input path runs instead"
)


@pytest.fixture(scope="module")
def dino_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_groundingdino(tmp_path_factory.mktemp("grounding-dino-tiny-random"))


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen(tmp_path_factory.mktemp("qwen2.5-vl-tiny-random"))


@pytest.fixture(scope="module")
def screenshot() -> Image.Image:
    return VirtualPhone().screenshot().convert("RGB")


# --------------------------------------------------------------------------------------- GroundingDINO


def _check_icons(icons: list[Element], width: int, height: int) -> None:
    for icon in icons:
        left, top, right, bottom = icon.box
        assert icon.kind == "icon" and icon.source == "groundingdino" and icon.text == ""
        assert 0 <= left < right <= width and 0 <= top < bottom <= height
        assert 0.0 < icon.score <= 1.0
        assert box_area(icon.box) <= 0.05 * width * height
    for i, a in enumerate(icons):
        assert all(iou(a.box, b.box) < 0.5 for b in icons[i + 1 :])


@pytest.mark.slow
def test_groundingdino_loads_a_checkpoint_directory_and_detects(
    dino_dir: Path, screenshot: Image.Image
) -> None:
    detector = GroundingDinoDetector(str(dino_dir), box_threshold=0.0, text_threshold=0.0)
    on_gpu = torch.cuda.is_available()
    assert detector.device == ("cuda" if on_gpu else "cpu")
    assert detector.loaded.dtype == (torch.float16 if on_gpu else torch.float32)
    rgb = np.asarray(screenshot)
    height, width = rgb.shape[:2]
    raw = detector.raw_detections(rgb)
    assert 0 < len(raw) <= DINO_QUERIES
    assert [e.score for e in raw] == sorted((e.score for e in raw), reverse=True)
    icons = detector.detect(rgb)
    assert icons, "threshold 0 keeps every query; some must survive the filters"
    assert icons == filter_detections(raw, width, height)
    _check_icons(icons, width, height)
    median_area = sorted(box_area(e.box) for e in raw)[len(raw) // 2]
    smaller = GroundingDinoDetector(
        str(dino_dir), box_threshold=0.0, max_area_fraction=median_area / (width * height)
    ).detect(rgb)
    assert 0 < len(smaller) < len(icons) and all(box_area(e.box) <= median_area for e in smaller)
    assert icons == sorted(icons, key=lambda e: (e.box[1], e.box[0]))


def test_groundingdino_thresholds_and_model_reuse(dino_dir: Path, screenshot: Image.Image) -> None:
    rgb = np.asarray(screenshot)
    everything = GroundingDinoDetector(str(dino_dir), box_threshold=0.0)
    scores = [e.score for e in everything.raw_detections(rgb)]
    cut = float(np.median(scores))
    strict = GroundingDinoDetector(str(dino_dir), box_threshold=cut, prompt="Icon")
    assert strict.loaded is everything.loaded, "the same weights are loaded once per process"
    assert strict.prompt == "icon."
    kept = strict.raw_detections(rgb)
    assert kept and len(kept) < len(scores) and all(e.score > cut for e in kept)
    detector = make_icon_detector("groundingdino", model=str(dino_dir))
    assert isinstance(detector, GroundingDinoDetector) and detector.box_threshold == 0.05


def test_boxes_to_elements_clips_sorts_and_drops_empty_boxes() -> None:
    boxes = [
        [10.2, 20.7, 50.1, 60.0],
        [-5.0, -5.0, 30.0, 40.0],
        [90.0, 90.0, 120.0, 130.0],
        [70.0, 5.0, 70.4, 9.0],
    ]
    elements = boxes_to_elements(boxes, [0.3, 0.9, 0.5, 0.8], 100, 100, source="groundingdino")
    assert [e.box for e in elements] == [(0, 0, 30, 40), (70, 5, 71, 9), (90, 90, 100, 100), (10, 20, 51, 60)]
    assert [e.score for e in elements] == [0.9, 0.8, 0.5, 0.3]
    assert {(e.kind, e.source, e.text) for e in elements} == {("icon", "groundingdino", "")}
    flat = boxes_to_elements([[40.0, 40.0, 40.0, 80.0]], [0.9], 100, 100, source="groundingdino")
    assert flat == []


def test_groundingdino_prompt_and_weight_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert normalize_prompt("  App  Icon ") == "app icon."
    with pytest.raises(ValueError):
        normalize_prompt(" ")
    with pytest.raises(WeightsError, match="does not exist"):
        GroundingDinoDetector(str(tmp_path / "missing"))
    (tmp_path / "half").mkdir()
    with pytest.raises(WeightsError, match=r"config\.json"):
        GroundingDinoDetector(str(tmp_path / "half"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("MAE_MODELS_DIR", str(tmp_path / "models"))
    with pytest.raises(WeightsError, match="models download IDEA-Research/grounding-dino-tiny"):
        GroundingDinoDetector()


def test_a_broken_checkpoint_is_a_weights_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "grounding-dino"}))
    with pytest.raises(WeightsError, match="could not load GroundingDINO"):
        GroundingDinoDetector(str(tmp_path))


# ------------------------------------------------------------------------------------ Qwen2.5-VL captions


def _two_icons(image: Image.Image) -> list[Element]:
    icons = [
        Element(kind="icon", box=(60, 300, 220, 460)),
        Element(kind="icon", box=(300, 300, 460, 460)),
        Element(kind="icon", box=(60, 300, 220, 460)),  # the same icon twice: captioned once
    ]
    assert crop_key(image.crop(icons[0].box)) != crop_key(image.crop(icons[1].box))
    return icons


class GenerateSpy:
    """Wraps the model's real ``generate``; optionally replaces each row's generated tokens with
    ``reply(call, row)``. Records every call's prompts (one per row)."""

    def __init__(self, captioner: LocalQwenCaptioner, reply: Callable[[int, int], str] | None = None) -> None:
        self.captioner = captioner
        self.real = captioner.loaded.model.generate
        self.reply = reply
        self.calls: list[list[str]] = []

    @property
    def prompts(self) -> list[str]:
        return [prompt for call in self.calls for prompt in call]

    def __call__(self, **inputs: Any) -> Any:
        tokenizer = self.captioner.inputs.tokenizer
        prompt_ids = inputs["input_ids"]
        self.calls.append([tokenizer.decode(row) for row in prompt_ids])
        output = self.real(**inputs)
        if self.reply is None:
            return output
        call = len(self.calls)
        eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
        rows = [tokenizer(self.reply(call, row))["input_ids"] + [eos] for row in range(prompt_ids.shape[0])]
        width = max(len(row) for row in rows)
        scripted = torch.tensor([row + [eos] * (width - len(row)) for row in rows], device=prompt_ids.device)
        return torch.cat([prompt_ids, scripted], dim=1)


@pytest.fixture
def captioner(qwen_dir: Path, tmp_path: Path) -> Iterator[LocalQwenCaptioner]:
    yield LocalQwenCaptioner(str(qwen_dir), CaptionCache(tmp_path / "icon-captions.json"))


@pytest.mark.slow
def test_random_qwen_runs_once_per_screen_and_gibberish_gives_no_captions(
    captioner: LocalQwenCaptioner, screenshot: Image.Image, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert captioner.device == ("cuda" if torch.cuda.is_available() else "cpu")
    expected_path = "processor" if HAS_TORCHVISION else "image-only"
    assert captioner.inputs.kind == expected_path
    spy = GenerateSpy(captioner)
    monkeypatch.setattr(captioner.loaded.model, "generate", spy)
    captions, warnings = captioner.caption(screenshot, _two_icons(screenshot))
    assert len(spy.calls) == 1 and len(spy.calls[0]) == (BATCH_SIZE if captioner.static_cache else 2)
    assert all(ICON_PROMPT in prompt and "<|image_pad|>" in prompt for prompt in spy.calls[0])
    assert len({len(prompt) for prompt in spy.calls[0]}) == 1  # every icon: the same sequence length
    assert captions == ["", "", ""]
    assert len(warnings) == 1 and "not short descriptions" in warnings[0]
    assert "icon" not in " ".join(captions).lower()
    assert len(captioner.cache) == 0
    captioner.caption(screenshot, _two_icons(screenshot))
    assert len(spy.calls) == 2, "nothing was cached, so the next screen asks again (once)"


def test_qwen_replies_are_read_cached_and_only_new_crops_are_asked(
    captioner: LocalQwenCaptioner, screenshot: Image.Image, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    replies = {
        (1, 0): "gear: settings",
        (1, 1): "Caption: magnifier: search.\r\nIt opens the search page.",
        (2, 0): "bell: notifications",
    }
    spy = GenerateSpy(captioner, reply=lambda call, row: replies.get((call, row), "I'm sorry, I can't tell."))
    monkeypatch.setattr(captioner.loaded.model, "generate", spy)
    icons = _two_icons(screenshot)
    captions, warnings = captioner.caption(screenshot, icons)
    assert (captions, warnings) == (["gear: settings", "magnifier: search", "gear: settings"], [])
    assert json.loads((tmp_path / "icon-captions.json").read_text())  # persisted

    again, warnings = captioner.caption(screenshot, icons)
    assert (again, warnings) == (captions, [])
    assert len(spy.calls) == 1, "a cached screen does not call generate"

    new = Element(kind="icon", box=(540, 300, 700, 460))
    mixed, warnings = captioner.caption(screenshot, [icons[1], new])
    assert (mixed, warnings) == (["magnifier: search", "bell: notifications"], [])
    assert len(spy.calls) == 2 and len(spy.calls[1]) == (BATCH_SIZE if captioner.static_cache else 1)


def test_batched_captions_are_the_ones_each_icon_gets_alone(
    captioner: LocalQwenCaptioner, screenshot: Image.Image
) -> None:
    tiles = [icon_tile(screenshot.crop(icon.box)) for icon in _two_icons(screenshot)[:2]]
    together = captioner.generate_batch([ICON_PROMPT] * 2, tiles, 6, min_new_tokens=6)
    alone = [captioner.generate_batch([ICON_PROMPT], [tile], 6, min_new_tokens=6)[0] for tile in tiles]
    assert together == alone and len(together) == 2


@pytest.mark.slow
def test_static_cache_pads_every_call_to_one_shape_and_warms_up_once(
    qwen_dir: Path, screenshot: Image.Image, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GPU path (static cache; transformers compiles it on CUDA only), run here on the CPU."""
    captioner = LocalQwenCaptioner(
        str(qwen_dir), CaptionCache(None), device="cpu", static_cache=True, batch_size=4, max_new_tokens=5
    )
    assert captioner.warm_up() == 0.0  # warmed at load already: not again
    spy = GenerateSpy(captioner)
    monkeypatch.setattr(captioner.loaded.model, "generate", spy)
    icons = [Element(kind="icon", box=(40 + 110 * i, 300, 140 + 110 * i, 400)) for i in range(6)]
    captions, _ = captioner.caption(screenshot, icons)
    assert [len(call) for call in spy.calls] == [4, 4] and len(captions) == 6  # 6 icons: 4 + (2 padded to 4)
    dynamic = LocalQwenCaptioner(str(qwen_dir), CaptionCache(None), device="cpu", max_new_tokens=5)
    tiles = [icon_tile(screenshot.crop(icon.box)) for icon in icons[:4]]
    static_replies = captioner.generate_batch([ICON_PROMPT] * 4, tiles, 5, min_new_tokens=5)
    assert static_replies == dynamic.generate_batch([ICON_PROMPT] * 4, tiles, 5, min_new_tokens=5)
    config = _greedy(captioner.loaded.model, 5, static=True)
    assert config.cache_implementation == "static" and config.max_new_tokens == 5 and not config.do_sample


def test_qwen_generation_failure_is_a_warning(
    captioner: LocalQwenCaptioner, screenshot: Image.Image, monkeypatch: pytest.MonkeyPatch
) -> None:
    def out_of_memory(**_: Any) -> Any:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(captioner.loaded.model, "generate", out_of_memory)
    captions, warnings = captioner.caption(screenshot, _two_icons(screenshot))
    assert captions == ["", "", ""]
    assert warnings == [
        "icon captions unavailable: the local caption model failed (RuntimeError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB)"
    ]


def test_captions_local_setting_builds_the_in_process_captioner(
    qwen_dir: Path, dino_dir: Path, tmp_path: Path
) -> None:
    settings = PerceptionSettings(icons="groundingdino", captions=f"local:{qwen_dir}", cache_dir=tmp_path)
    built = make_captioner(settings, None)
    assert isinstance(built, LocalQwenCaptioner) and built.cache.path == tmp_path / "icon-captions.json"
    with pytest.raises(ConfigError, match="'grounding-dino' model"):
        LocalQwenCaptioner(str(dino_dir), CaptionCache(None))


@pytest.mark.slow
def test_perceptor_with_groundingdino_and_local_captions(
    qwen_dir: Path, dino_dir: Path, tmp_path: Path, screenshot: Image.Image
) -> None:
    settings = PerceptionSettings(
        icons="groundingdino",
        groundingdino_model=str(dino_dir),
        captions=f"local:{qwen_dir}",
        cache_dir=tmp_path,
    )
    perceptor = Perceptor.from_settings(settings)
    try:
        result = perceptor.perceive(screenshot)
    finally:
        perceptor.close()
    assert result.texts, "OCR still reads the virtual phone"
    assert {icon.source for icon in result.icons} <= {"groundingdino"}
    assert result.icons, "the random detector's boxes are not all over text on this screen"
    assert {"icons", "ocr", "captions"} <= set(result.timings)
    assert all(icon.text == "" for icon in result.icons)
    assert len(result.warnings) == 1 and "not short descriptions" in result.warnings[0]


@pytest.mark.skipif(not HAS_TORCHVISION, reason=NO_TORCHVISION)
def test_processor_and_image_only_inputs_agree(captioner: LocalQwenCaptioner, qwen_dir: Path) -> None:
    from transformers import AutoImageProcessor, AutoTokenizer

    from mae.perception.qwen_local import ImageOnlyInputs

    assert captioner.inputs.kind == "processor"
    sheet = Image.new("RGB", (224, 112), "white")
    by_processor = captioner.inputs(["sheet of 2 icons"], [sheet])
    manual = ImageOnlyInputs(
        AutoTokenizer.from_pretrained(qwen_dir),
        AutoImageProcessor.from_pretrained(qwen_dir, backend="pil"),
        captioner.loaded.model.config.image_token_id,
        with_types=True,
    )(["sheet of 2 icons"], [sheet])
    for name in ("input_ids", "attention_mask", "image_grid_thw", "mm_token_type_ids"):
        assert torch.equal(by_processor[name].long(), manual[name].long()), name


def test_device_and_dtype_choice() -> None:
    assert pick_dtype(None, "cpu", prefer_bf16=True) == torch.float32
    assert pick_dtype("bf16", "cpu", prefer_bf16=False) == torch.bfloat16
    assert pick_dtype(torch.float16, "cuda", prefer_bf16=True) == torch.float16
    with pytest.raises(ConfigError, match="unknown dtype"):
        pick_dtype("int3", "cpu", prefer_bf16=False)
    assert pick_device("cpu") == "cpu"
    if not torch.cuda.is_available():
        assert pick_device(None) == "cpu"
        with pytest.raises(ConfigError, match="no CUDA GPU"):
            pick_device("cuda")


@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)"
)
def test_models_go_to_the_gpu_in_half_precision(
    dino_dir: Path, qwen_dir: Path, screenshot: Image.Image
) -> None:
    detector = GroundingDinoDetector(str(dino_dir), box_threshold=0.0)
    assert detector.device == "cuda" and next(detector.loaded.model.parameters()).dtype == torch.float16
    _check_icons(detector.detect(np.asarray(screenshot)), screenshot.width, screenshot.height)
    captioner = LocalQwenCaptioner(str(qwen_dir), CaptionCache(None))
    expected = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    assert next(captioner.loaded.model.parameters()).dtype == expected
    captions, warnings = captioner.caption(screenshot, _two_icons(screenshot))
    assert captions == ["", "", ""] and warnings


def test_gpu_inference_avoids_cudnn_attention() -> None:
    # cuDNN attention re-plans for every sequence length: half-precision decoding was 12-20x slower
    before = torch.backends.cuda.cudnn_sdp_enabled()
    with inference("cuda"):
        assert not torch.backends.cuda.cudnn_sdp_enabled()
        assert torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.mem_efficient_sdp_enabled()
        assert torch.is_inference_mode_enabled()
    assert torch.backends.cuda.cudnn_sdp_enabled() == before
    with inference("cpu"):
        assert torch.backends.cuda.cudnn_sdp_enabled() == before and torch.is_inference_mode_enabled()


def test_generation_runs_without_cudnn_attention(
    captioner: LocalQwenCaptioner, screenshot: Image.Image, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    real = captioner.loaded.model.generate

    def spy(**inputs: Any) -> Any:
        seen.append(torch.backends.cuda.cudnn_sdp_enabled())
        return real(**inputs)

    monkeypatch.setattr(captioner.loaded.model, "generate", spy)
    captioner.generate("describe", screenshot.crop((0, 0, 112, 112)), 2)
    assert seen == [not captioner.device.startswith("cuda") and torch.backends.cuda.cudnn_sdp_enabled()]
