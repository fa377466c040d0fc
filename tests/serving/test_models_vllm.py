"""``vllm serve`` command building, machine checks, and launching (a fake ``vllm`` executable)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from fake_gpu_tools import free_port, install_fake_nvidia_smi, install_fake_vllm, path_with

from mae.errors import ConfigError
from mae.llm.coordinates import convention
from mae.llm.weights import WeightsError
from mae.serving.catalog import CatalogEntry, CatalogError, find, servable
from mae.serving.health import ServerNotReadyError
from mae.serving.vllm import (
    ServeOptions,
    VllmUnavailableError,
    build_command,
    detect_gpus,
    launch,
    mae_env_lines,
    preflight,
)


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


@pytest.mark.parametrize("entry", [e for e in servable() if e.hub_id], ids=lambda e: e.name)
def test_command_for_each_catalog_vlm(entry: CatalogEntry, tmp_path: Path) -> None:
    command = build_command(entry, environ={"MAE_MODELS_DIR": str(tmp_path)})
    argv = command.argv
    assert entry.vllm is not None and entry.hub_id is not None and entry.coordinates
    assert argv[:3] == ["vllm", "serve", entry.hub_id]
    assert _flag(argv, "--host") == "127.0.0.1"
    assert _flag(argv, "--port") == "8000"
    assert _flag(argv, "--served-model-name") == entry.hub_id
    assert _flag(argv, "--dtype") == "bfloat16"
    assert float(_flag(argv, "--gpu-memory-utilization")) == entry.vllm.gpu_memory_utilization
    assert int(_flag(argv, "--max-model-len")) == entry.vllm.max_model_len
    assert int(_flag(argv, "--tensor-parallel-size")) == entry.vllm.tensor_parallel_size
    assert json.loads(_flag(argv, "--limit-mm-per-prompt")) == {"image": 2, "video": 0}
    # the server's image budget is the one mae resizes to (or, for UI-TARS, its documented own)
    kwargs = json.loads(_flag(argv, "--mm-processor-kwargs"))
    sent = convention(entry.coordinates).image
    resize = convention(entry.coordinates).model_resize
    assert kwargs["max_pixels"] == (resize.max_pixels if resize else sent.max_pixels)
    assert kwargs["max_pixels"] >= sent.max_pixels
    assert command.base_url == "http://127.0.0.1:8000/v1"
    assert command.model_source == entry.hub_id
    assert command.display().startswith("vllm serve ")
    assert '\'{"image": 2, "video": 0}\'' in command.display()  # quoted for the shell


def test_generic_entry_serves_the_weights_it_is_given(tmp_path: Path) -> None:
    generic = find("generic-vlm")
    with pytest.raises(CatalogError, match="--weights"):
        build_command(generic, environ={"MAE_MODELS_DIR": str(tmp_path)})
    command = build_command(generic, ServeOptions(weights="OpenGVLab/InternVL3-8B"), environ={})
    assert command.argv[:3] == ["vllm", "serve", "OpenGVLab/InternVL3-8B"]
    assert _flag(command.argv, "--served-model-name") == "OpenGVLab/InternVL3-8B"
    assert "--mm-processor-kwargs" not in command.argv
    assert "export MAE_COORDINATES=screen" in mae_env_lines(command)


def test_flags_follow_the_vllm_version(tmp_path: Path) -> None:
    env = {"MAE_MODELS_DIR": str(tmp_path)}
    old = build_command(find("72b"), version=(0, 8, 5), environ=env).argv
    new = build_command(find("72b"), version=(0, 11, 2), environ=env).argv
    assert _flag(old, "--limit-mm-per-prompt") == "image=2"
    assert "--mm-encoder-tp-mode" not in old
    assert _flag(new, "--mm-encoder-tp-mode") == "data"
    with pytest.raises(CatalogError, match=r"needs vLLM 0\.11\.0 or newer.*0\.10\.1"):
        build_command(find("qwen3-vl-8b"), version=(0, 10, 1), environ=env)
    assert (
        build_command(find("qwen3-vl-8b"), version=(0, 11, 0), environ=env).argv[2]
        == "Qwen/Qwen3-VL-8B-Instruct"
    )


def test_the_default_model_matches_the_vllm_preset(tmp_path: Path) -> None:
    command = build_command(find("7b"), environ={"MAE_MODELS_DIR": str(tmp_path)})
    assert mae_env_lines(command) == ["export MAE_BACKBONE=vllm"]


def test_options_override_the_catalog(tmp_path: Path) -> None:
    options = ServeOptions(
        host="0.0.0.0",
        port=8123,
        dtype="float16",
        gpu_memory_utilization=0.8,
        max_model_len=8192,
        tensor_parallel_size=2,
        images_per_prompt=3,
        served_model_name="qwen-small",
        extra_args=["--enforce-eager"],
    )
    command = build_command(find("3b"), options, environ={"MAE_MODELS_DIR": str(tmp_path)})
    argv = command.argv
    assert _flag(argv, "--host") == "0.0.0.0"
    assert command.base_url == "http://127.0.0.1:8123/v1"  # clients use loopback
    assert _flag(argv, "--dtype") == "float16"
    assert _flag(argv, "--gpu-memory-utilization") == "0.8"
    assert _flag(argv, "--max-model-len") == "8192"
    assert _flag(argv, "--tensor-parallel-size") == "2"
    assert json.loads(_flag(argv, "--limit-mm-per-prompt"))["image"] == 3
    assert argv[-1] == "--enforce-eager"
    assert mae_env_lines(command) == [
        "export MAE_BACKBONE=vllm",
        "export MAE_BASE_URL=http://127.0.0.1:8123/v1",
        "export MAE_MODEL=qwen-small",
        "export MAE_COORDINATES=qwen2.5-vl",  # "qwen-small" does not name its family
    ]


def test_old_vllm_gets_the_old_multimodal_limit_syntax(tmp_path: Path) -> None:
    environ = {"MAE_MODELS_DIR": str(tmp_path)}
    assert _flag(
        build_command(find("7b"), version=(0, 8, 5), environ=environ).argv, "--limit-mm-per-prompt"
    ) == ("image=2")
    new = build_command(find("7b"), version=(0, 10, 1), environ=environ).argv
    assert json.loads(_flag(new, "--limit-mm-per-prompt")) == {"image": 2, "video": 0}


def test_weights_downloaded_into_models_dir_are_served_under_the_hub_name(tmp_path: Path) -> None:
    folder = tmp_path / "Qwen" / "Qwen2.5-VL-7B-Instruct"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}", encoding="utf-8")
    command = build_command(find("7b"), environ={"MAE_MODELS_DIR": str(tmp_path)})
    assert command.argv[2] == str(folder)
    assert _flag(command.argv, "--served-model-name") == "Qwen/Qwen2.5-VL-7B-Instruct"
    explicit = build_command(find("7b"), ServeOptions(weights="/data/qwen7b"), environ={})
    assert explicit.argv[2] == "/data/qwen7b" and explicit.model_source == "/data/qwen7b"


def test_api_key_is_only_referenced_by_its_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_VLLM_KEY", "sk-very-secret")
    command = build_command(find("7b"), ServeOptions(api_key_env="MY_VLLM_KEY"), environ={})
    assert "sk-very-secret" not in " ".join(command.argv)
    assert "sk-very-secret" not in command.display()
    assert "sk-very-secret" not in command.model_dump_json()
    assert command.display().startswith('VLLM_API_KEY="$MY_VLLM_KEY" vllm serve')
    assert "--api-key" not in command.argv
    assert "export MAE_API_KEY_ENV=MY_VLLM_KEY" in mae_env_lines(command)
    with pytest.raises(ConfigError, match="NAME of an environment variable") as caught:
        build_command(find("7b"), ServeOptions(api_key_env="sk-very-secret"), environ={})
    assert "sk-very-secret" not in str(caught.value)


def test_detectors_and_bad_parallelism_are_refused() -> None:
    with pytest.raises(CatalogError, match=r"not served by vLLM.*Perceptor"):
        build_command(find("grounding-dino-tiny"))
    with pytest.raises(CatalogError, match="not served by vLLM"):
        build_command(find("rapidocr"))
    with pytest.raises(CatalogError, match="cannot be split over 3 GPUs"):
        build_command(find("7b"), ServeOptions(tensor_parallel_size=3))


def test_detect_gpus_reads_nvidia_smi(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    install_fake_nvidia_smi(bin_dir, [("NVIDIA RTX A6000", 49140), ("NVIDIA RTX A6000", 49140)])
    gpus = detect_gpus({"PATH": path_with(bin_dir)})
    assert [(g.index, g.name) for g in gpus] == [(0, "NVIDIA RTX A6000"), (1, "NVIDIA RTX A6000")]
    assert gpus[0].memory_gib == pytest.approx(48, abs=0.1)
    only_second = detect_gpus({"PATH": path_with(bin_dir), "CUDA_VISIBLE_DEVICES": "1"})
    assert [g.index for g in only_second] == [1]
    assert detect_gpus({"PATH": path_with(tmp_path / "empty")}) == []


def _machine(tmp_path: Path, gpus: list[tuple[str, int]], with_vllm: bool = True) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    if gpus:
        install_fake_nvidia_smi(bin_dir, gpus)
    if with_vllm:
        install_fake_vllm(bin_dir)
    return {"PATH": path_with(bin_dir), "MAE_MODELS_DIR": str(tmp_path / "models")}


def test_preflight_without_vllm_says_how_to_install(tmp_path: Path) -> None:
    environ = _machine(tmp_path, [("NVIDIA L4", 23034)], with_vllm=False)
    command = build_command(find("7b"), environ=environ)
    with pytest.raises(
        VllmUnavailableError, match=r"pip install -r requirements-gpu\.txt.*MAE_BACKBONE=openai"
    ):
        preflight(find("7b"), command, environ)


def test_preflight_without_gpu_says_what_to_do(tmp_path: Path) -> None:
    environ = _machine(tmp_path, [])
    command = build_command(find("7b"), environ=environ)
    with pytest.raises(VllmUnavailableError, match=r"no NVIDIA GPU found.*nvidia-smi.*hosted backbone"):
        preflight(find("7b"), command, environ)


def test_preflight_too_few_gpus_for_tensor_parallel(tmp_path: Path) -> None:
    environ = _machine(tmp_path, [("NVIDIA H100 80GB HBM3", 81559)])
    command = build_command(find("72b"), environ=environ)
    with pytest.raises(Exception, match=r"--tensor-parallel-size 4 needs 4 GPUs but 1 is visible"):
        preflight(find("72b"), command, environ)


def test_preflight_offline_without_weights(tmp_path: Path) -> None:
    environ = {
        **_machine(tmp_path, [("NVIDIA L4", 23034)]),
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(tmp_path),
    }
    command = build_command(find("7b"), environ=environ)
    with pytest.raises(WeightsError, match=re.escape("hf download Qwen/Qwen2.5-VL-7B-Instruct")):
        preflight(find("7b"), command, environ)


def test_preflight_warns_about_memory_and_download(tmp_path: Path) -> None:
    environ = {**_machine(tmp_path, [("Tesla T4", 15360)]), "HF_HUB_CACHE": str(tmp_path / "hf")}
    command = build_command(find("7b"), environ=environ)
    warnings = preflight(find("7b"), command, environ)
    assert any("needs about 19 GiB per GPU" in w and "lower --max-model-len" in w for w in warnings)
    assert any("not downloaded yet" in w for w in warnings)
    big_gpu = {**_machine(tmp_path / "b", [("NVIDIA A100-SXM4-80GB", 81920)]), "HF_HUB_CACHE": str(tmp_path)}
    assert not [w for w in preflight(find("7b"), command, big_gpu) if "GiB per GPU" in w]


def test_preflight_checks_the_key_variable(tmp_path: Path) -> None:
    environ = {**_machine(tmp_path, [("NVIDIA L4", 23034)]), "HF_HUB_CACHE": str(tmp_path)}
    command = build_command(find("3b"), ServeOptions(api_key_env="SERVE_KEY"), environ=environ)
    with pytest.raises(ConfigError, match="SERVE_KEY, but that variable is not set"):
        preflight(find("3b"), command, environ)
    open_command = build_command(find("3b"), ServeOptions(host="0.0.0.0"), environ=environ)
    assert any("without an API key" in w for w in preflight(find("3b"), open_command, environ))


def test_launch_waits_until_the_model_is_served(tmp_path: Path) -> None:
    environ = {**os.environ, **_machine(tmp_path, [("NVIDIA L4", 23034)]), "FAKE_VLLM_DELAY": "0.5"}
    environ["SERVE_KEY"] = "sk-launch-secret"
    port = free_port()
    command = build_command(find("3b"), ServeOptions(port=port, api_key_env="SERVE_KEY"), environ=environ)
    log = tmp_path / "logs" / "vllm.log"
    server = launch(command, log, environ)
    try:
        with pytest.raises(ServerNotReadyError, match="needs an API key"):
            server.wait_ready(timeout_s=10)  # without the key the server refuses
        report = server.wait_ready(timeout_s=10, api_key="sk-launch-secret")
        assert report.models == ["Qwen/Qwen2.5-VL-3B-Instruct"]
        assert server.poll() is None
    finally:
        code = server.stop(timeout_s=10)
    assert code is not None and server.poll() is not None
    text = log.read_text(encoding="utf-8")
    assert "INFO key given: yes" in text  # the key reached the server through VLLM_API_KEY
    assert "sk-launch-secret" not in text
    assert '=== mae: VLLM_API_KEY="$SERVE_KEY" vllm serve Qwen/Qwen2.5-VL-3B-Instruct' in text


def test_launch_crash_reports_the_log_tail(tmp_path: Path) -> None:
    environ = {**os.environ, **_machine(tmp_path, [("NVIDIA L4", 23034)]), "FAKE_VLLM_MODE": "crash"}
    command = build_command(find("3b"), ServeOptions(port=free_port()), environ=environ)
    server = launch(command, tmp_path / "vllm.log", environ)
    try:
        with pytest.raises(ServerNotReadyError) as caught:
            server.wait_ready(timeout_s=20)
    finally:
        server.stop(timeout_s=5)
    assert "exited with code 3" in str(caught.value)
    assert "CUDA out of memory (fake)" in str(caught.value)


def test_launch_without_vllm(tmp_path: Path) -> None:
    environ = _machine(tmp_path, [], with_vllm=False)
    command = build_command(find("3b"), environ=environ)
    with pytest.raises(VllmUnavailableError, match="not installed"):
        launch(command, tmp_path / "vllm.log", environ)
