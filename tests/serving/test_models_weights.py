"""Where weights live: local directories, MAE_MODELS_DIR, the Hugging Face cache, offline errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from mae.llm.weights import (
    WeightsError,
    download,
    in_hf_cache,
    is_offline,
    local_dir_for,
    models_dir,
    presence,
    resolve,
)

HUB_ID = "Qwen/Qwen2.5-VL-3B-Instruct"


def _model_dir(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text('{"model_type": "qwen2_5_vl"}', encoding="utf-8")
    return path


def _fake_hf_cache(cache: Path, model_id: str) -> None:
    """The layout huggingface_hub writes: models--owner--name/{refs/main, snapshots/<commit>/...}."""
    repo = cache / f"models--{model_id.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    _model_dir(repo / "snapshots" / commit)


def test_models_dir_default_and_override(tmp_path: Path) -> None:
    assert models_dir({}).parts[-2:] == ("mae", "models")
    assert models_dir({"MAE_MODELS_DIR": str(tmp_path)}) == tmp_path
    assert (
        local_dir_for(HUB_ID, {"MAE_MODELS_DIR": str(tmp_path)})
        == tmp_path / "Qwen" / "Qwen2.5-VL-3B-Instruct"
    )


def test_local_directory_with_config_is_returned_as_path(tmp_path: Path) -> None:
    folder = _model_dir(tmp_path / "my-qwen")
    assert resolve(str(folder), {}) == folder
    assert resolve(folder, {}) == folder


def test_relative_directory_named_like_a_hub_id_is_local(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _model_dir(tmp_path / "Qwen" / "Qwen2.5-VL-3B-Instruct")
    assert resolve(HUB_ID, {"HF_HUB_OFFLINE": "1"}) == Path(HUB_ID)


def test_directory_without_config_json_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "half-downloaded"
    folder.mkdir()
    (folder / "model-00001-of-00002.safetensors").write_bytes(b"\0")
    with pytest.raises(WeightsError, match=r"no config\.json"):
        resolve(str(folder), {})


def test_missing_directory_and_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(WeightsError, match="does not exist"):
        resolve(str(tmp_path / "nowhere"), {})
    weights_file = tmp_path / "model.safetensors"
    weights_file.write_bytes(b"\0")
    with pytest.raises(WeightsError, match="is a file"):
        resolve(str(weights_file), {})
    with pytest.raises(WeightsError, match="neither an existing directory nor a Hugging Face id"):
        resolve("no-such-model", {})
    with pytest.raises(WeightsError, match="no model given"):
        resolve("  ", {})


def test_offline_hub_id_not_cached_says_how_to_download(tmp_path: Path) -> None:
    environ = {
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(tmp_path / "hf"),
        "MAE_MODELS_DIR": str(tmp_path / "m"),
    }
    with pytest.raises(WeightsError) as caught:
        resolve(HUB_ID, environ)
    message = str(caught.value)
    assert "HF_HUB_OFFLINE=1" in message
    assert f"hf download {HUB_ID} --local-dir {tmp_path / 'm' / 'Qwen' / 'Qwen2.5-VL-3B-Instruct'}" in message
    assert f"huggingface-cli download {HUB_ID}" in message


def test_online_hub_id_not_cached_is_left_to_the_loader(tmp_path: Path) -> None:
    environ = {"HF_HUB_CACHE": str(tmp_path / "hf"), "MAE_MODELS_DIR": str(tmp_path / "m")}
    assert not is_offline(environ)
    assert resolve(HUB_ID, environ) == HUB_ID


def test_offline_hub_id_in_hf_cache_is_returned_as_id(tmp_path: Path) -> None:
    cache = tmp_path / "hf"
    _fake_hf_cache(cache, HUB_ID)
    environ = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "MAE_MODELS_DIR": str(tmp_path / "m")}
    assert in_hf_cache(HUB_ID, environ)
    assert presence(HUB_ID, environ).where == "hf_cache"
    assert resolve(HUB_ID, environ) == HUB_ID


def test_hub_id_downloaded_into_models_dir_is_returned_as_path(tmp_path: Path) -> None:
    environ = {
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(tmp_path / "hf"),
        "MAE_MODELS_DIR": str(tmp_path / "m"),
    }
    folder = _model_dir(tmp_path / "m" / "Qwen" / "Qwen2.5-VL-3B-Instruct")
    found = presence(HUB_ID, environ)
    assert found.where == "models_dir" and found.path == folder
    assert resolve(HUB_ID, environ) == folder


def test_download_refuses_offline_and_bad_ids(tmp_path: Path) -> None:
    environ = {"TRANSFORMERS_OFFLINE": "true", "MAE_MODELS_DIR": str(tmp_path)}
    with pytest.raises(WeightsError, match=r"downloads are disabled.*hf download"):
        download(HUB_ID, environ=environ)
    assert not any(tmp_path.iterdir())
    with pytest.raises(WeightsError, match="not a Hugging Face id"):
        download("../etc", environ={})
