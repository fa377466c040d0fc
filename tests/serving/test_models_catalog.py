"""The model catalog: lookup by name/alias/hub id, clear errors, memory estimates, tensor-parallel checks."""

from __future__ import annotations

import pytest

from mae.errors import ConfigError
from mae.llm.coordinates import family_convention
from mae.llm.providers import PRESETS
from mae.serving.catalog import CATALOG, CatalogError, find, names, servable


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("qwen2.5-vl-7b", "qwen2.5-vl-7b"),
        ("7B", "qwen2.5-vl-7b"),
        ("default", "qwen2.5-vl-7b"),
        ("Qwen/Qwen2.5-VL-72B-Instruct", "qwen2.5-vl-72b"),
        ("qwen2.5-vl-32b-instruct", "qwen2.5-vl-32b"),
        ("  3b ", "qwen2.5-vl-3b"),
        ("groundingdino", "grounding-dino-tiny"),
        ("IDEA-Research/grounding-dino-base", "grounding-dino-base"),
        ("ocr", "rapidocr"),
    ],
)
def test_find_by_name_alias_or_hub_id(query: str, expected: str) -> None:
    assert find(query).name == expected


def test_unknown_model_lists_every_choice() -> None:
    with pytest.raises(CatalogError) as caught:
        find("llava-13b")
    message = str(caught.value)
    assert "llava-13b" in message
    for name in names():
        assert name in message
    assert isinstance(caught.value, ConfigError)


def test_catalog_names_and_aliases_are_unique() -> None:
    keys: list[str] = []
    for entry in CATALOG:
        keys += [entry.name, *entry.aliases]
    assert len(keys) == len({key.lower() for key in keys})


def test_catalog_covers_the_product() -> None:
    vlms = {entry.hub_id: entry.coordinates for entry in servable()}
    qwen25 = {f"Qwen/Qwen2.5-VL-{size}-Instruct": "qwen2.5-vl" for size in ("3B", "7B", "32B", "72B")}
    assert vlms == {
        **qwen25,
        "Qwen/Qwen3-VL-8B-Instruct": "qwen3-vl",
        "Qwen/Qwen3-VL-32B-Instruct": "qwen3-vl",
        "mPLUG/GUI-Owl-7B": "gui-owl",
        "mPLUG/GUI-Owl-32B": "gui-owl",
        "mPLUG/GUI-Owl-1.5-8B-Instruct": "gui-owl-1.5",
        "ByteDance-Seed/UI-TARS-1.5-7B": "ui-tars-1.5",
        None: "screen",  # the generic OpenAI-compatible VLM: any hub id, given with --weights
    }
    assert PRESETS["vllm"].model in vlms
    for entry in servable():
        assert entry.coordinates is not None
        if entry.hub_id:
            # the family read from the served name is the convention the catalog documents
            assert family_convention(entry.hub_id) == entry.coordinates
    detectors = [entry for entry in CATALOG if entry.kind == "detector"]
    assert {entry.hub_id for entry in detectors} == {
        "IDEA-Research/grounding-dino-tiny",
        "IDEA-Research/grounding-dino-base",
    }
    ocr = find("rapidocr")
    assert ocr.hub_id is None and not ocr.downloadable and "nothing to download" in ocr.notes


def test_every_vlm_has_serving_defaults_and_grows_with_size() -> None:
    sizes = [find(name) for name in ("3b", "7b", "32b", "72b")]
    assert all(entry.vllm is not None for entry in sizes)
    weights = [entry.weights_gb for entry in sizes]
    assert weights == sorted(weights)
    for entry in sizes:
        # bf16: two bytes a parameter, in GiB
        assert entry.weights_gb == pytest.approx(entry.params_b * 2e9 / 2**30, rel=0.02)
        assert entry.vllm is not None and entry.vllm.images_per_prompt >= 2  # the reflector's before/after


def test_memory_estimate_splits_over_gpus_and_grows_with_context() -> None:
    seven = find("7b")
    single = seven.estimate_gpu_gb()
    assert seven.weights_gb < single < seven.recommended_gpu_gb
    assert seven.estimate_gpu_gb(tensor_parallel_size=2) < single
    assert seven.estimate_gpu_gb(max_model_len=131072) > single
    big = find("72b")
    assert big.vllm is not None
    assert big.estimate_gpu_gb(tensor_parallel_size=big.vllm.tensor_parallel_size) < big.recommended_gpu_gb


def test_tensor_parallel_must_divide_attention_heads() -> None:
    seven = find("7b")
    for ok in (1, 2, 4):
        seven.check_tensor_parallel(ok)
    with pytest.raises(CatalogError, match=r"cannot be split over 3 GPUs.*1, 2, 4"):
        seven.check_tensor_parallel(3)
    with pytest.raises(CatalogError):
        find("32b").check_tensor_parallel(5)  # divides 40 LM heads but not the 16 vision heads
    find("72b").check_tensor_parallel(8)
    with pytest.raises(CatalogError):
        seven.check_tensor_parallel(0)
