"""``python -m mae models``: list, serve (dry run and a fake vllm), check, download."""

from __future__ import annotations

import json
import os
import shlex
import signal
from pathlib import Path

import pytest
from fake_gpu_tools import free_port, install_fake_nvidia_smi, install_fake_vllm, path_with

from mae.cli import main
from mae.serving.catalog import CATALOG, find, names
from mae.testing.fake_model_server import FakeModelServer


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty weights folder and Hugging Face cache, and a PATH without vllm or nvidia-smi."""
    monkeypatch.setenv("MAE_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("PATH", path_with(tmp_path / "bin"))
    return tmp_path


def test_serve_dry_run_prints_the_command(machine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, "models", "serve", "7b", "--dry-run")
    assert code == 0
    first = out.splitlines()[0]
    argv = shlex.split(first)
    assert argv[:3] == ["vllm", "serve", "Qwen/Qwen2.5-VL-7B-Instruct"]
    assert json.loads(argv[argv.index("--limit-mm-per-prompt") + 1]) == {"image": 2, "video": 0}
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    assert "about 19 GiB per GPU" in out
    assert "export MAE_BACKBONE=vllm" in out
    assert "MAE_MODEL" not in out  # the preset's default model


def test_serve_dry_run_with_options(
    machine: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_VLLM_KEY", "sk-dry-run-secret")
    code, out, _err = _run(
        capsys,
        "models",
        "serve",
        "qwen2.5-vl-3b",
        "--dry-run",
        "--port",
        "8011",
        "--gpu-memory-utilization",
        "0.6",
        "--api-key-env",
        "LOCAL_VLLM_KEY",
        "--vllm-args=--enforce-eager --max-num-seqs 4",
    )
    assert code == 0
    assert "sk-dry-run-secret" not in out
    first = out.splitlines()[0]
    assert first.startswith('VLLM_API_KEY="$LOCAL_VLLM_KEY" vllm serve Qwen/Qwen2.5-VL-3B-Instruct')
    assert "--port 8011" in first and "--gpu-memory-utilization 0.6" in first
    assert first.endswith("--enforce-eager --max-num-seqs 4")
    assert "export MAE_BASE_URL=http://127.0.0.1:8011/v1" in out
    assert "export MAE_MODEL=Qwen/Qwen2.5-VL-3B-Instruct" in out
    assert "export MAE_API_KEY_ENV=LOCAL_VLLM_KEY" in out


def test_serve_unknown_or_unservable_model(machine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _run(capsys, "models", "serve", "llava", "--dry-run")
    assert code == 2 and "unknown model 'llava'" in err and "qwen2.5-vl-72b" in err
    code, _out, err = _run(capsys, "models", "serve", "grounding-dino-base", "--dry-run")
    assert code == 2 and "not served by vLLM" in err
    code, _out, err = _run(capsys, "models", "serve", "7b", "--dry-run", "--gpu-memory-utilization", "1.5")
    assert code == 2 and "--gpu-memory-utilization: Input should be less than or equal to 1" in err


def test_serve_without_vllm_or_gpu_says_what_to_do(machine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _run(capsys, "models", "serve", "7b", "--port", str(free_port()))
    assert code == 2
    assert "vLLM is not installed" in err and "requirements-gpu.txt" in err
    install_fake_vllm(machine / "bin")
    code, _out, err = _run(capsys, "models", "serve", "7b", "--port", str(free_port()))
    assert code == 2 and "no NVIDIA GPU found" in err


def test_serve_starts_waits_and_detaches(machine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install_fake_vllm(machine / "bin")
    install_fake_nvidia_smi(machine / "bin", [("NVIDIA GeForce RTX 4090", 24564)])
    weights = machine / "models" / "Qwen" / "Qwen2.5-VL-7B-Instruct"  # downloaded: no network needed
    weights.mkdir(parents=True)
    (weights / "config.json").write_text("{}", encoding="utf-8")
    port = str(free_port())
    log = machine / "vllm.log"
    code, out, err = _run(capsys, "models", "serve", "7b", "--port", port, "--log-file", str(log), "--detach")
    pid = int(out.split("(pid ")[1].split(")")[0])
    try:
        assert code == 0, err
        assert err == ""  # no warnings: enough memory, weights present
        assert f"vllm serve {weights} --host 127.0.0.1 --port {port}" in out
        assert "ready after" in out and f"at http://127.0.0.1:{port}/v1" in out
        assert f"export MAE_BASE_URL=http://127.0.0.1:{port}/v1" in out
        assert f"kill {pid}" in out
        assert f"INFO fake vllm {weights}" in log.read_text(encoding="utf-8")
        code, out, _err = _run(capsys, "models", "serve", "7b", "--port", port, "--log-file", str(log))
        assert code == 0 and "already served" in out
        code, out, _err = _run(capsys, "models", "check", "--base-url", f"http://127.0.0.1:{port}/v1")
        assert code == 0 and "Qwen/Qwen2.5-VL-7B-Instruct" in out
    finally:
        os.killpg(pid, signal.SIGTERM)
        os.waitpid(pid, 0)


def test_list_shows_catalog_and_local_presence(machine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = machine / "models" / "Qwen" / "Qwen2.5-VL-3B-Instruct"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}", encoding="utf-8")
    code, out, _err = _run(capsys, "models", "list")
    assert code == 0
    for name in names():
        assert name in out
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert rows["qwen2.5-vl-3b"].endswith(f"yes ({folder})")
    assert rows["qwen2.5-vl-7b"].endswith("no")
    assert rows["rapidocr"].endswith("bundled")
    assert "4x80 GiB" in rows["qwen2.5-vl-72b"]
    code, out, _err = _run(capsys, "models", "list", "--json")
    data = {item["name"]: item for item in json.loads(out)}
    assert data["qwen2.5-vl-3b"]["present"].startswith("yes")
    assert data["qwen2.5-vl-7b"]["vllm"]["max_model_len"] == 32768


def test_check_against_the_fake_server(
    fake_server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = _run(capsys, "models", "check", "--base-url", fake_server.base_url, "--model", "fake")
    assert code == 0
    assert f"ok: {fake_server.base_url}" in out and "fake  <- mae uses this" in out
    code, _out, err = _run(capsys, "models", "check", "--base-url", fake_server.base_url, "--model", "other")
    assert code == 2 and "serves fake, not other" in err


def test_check_shows_the_shutdown_dates_an_endpoint_reports(
    fake_server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.served_models = [
        {"id": "gpt-6.1-sol", "object": "model", "shutdown_date": None},
        {"id": "gpt-5", "object": "model", "shutdown_date": "2026-12-11"},
        {"id": "gpt-4o", "object": "model"},  # no date from the endpoint: the published one is shown
    ]
    code, out, err = _run(capsys, "models", "check", "--base-url", fake_server.base_url, "--model", "gpt-5")
    assert code == 0
    assert "gpt-6.1-sol\n" in out and "gpt-4o  (shuts down 2027-01-14)" in out
    assert "gpt-5  (shuts down 2026-12-11)  <- mae uses this" in out
    assert "warning: gpt-5 shuts down on 2026-12-11" in err and "choose a current model" in err


def test_check_uses_maes_settings(
    fake_server: FakeModelServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAE_BACKBONE", "custom")
    monkeypatch.setenv("MAE_BASE_URL", fake_server.base_url)
    monkeypatch.setenv("MAE_MODEL", "fake")
    code, out, _err = _run(capsys, "models", "check")
    assert code == 0 and "fake  <- mae uses this" in out
    monkeypatch.setenv("MAE_BACKBONE", "vllm")
    monkeypatch.delenv("MAE_MODEL")
    code, _out, err = _run(capsys, "models", "check")
    assert code == 2 and "not Qwen/Qwen2.5-VL-7B-Instruct" in err  # mae would ask for the preset's model


def test_check_unreachable(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    code, _out, err = _run(capsys, "models", "check", "--base-url", url, "--wait", "0.5")
    assert code == 2
    assert "no server answers" in err and "python -m mae models serve" in err


def test_download(machine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, "models", "download", "rapidocr")
    assert code == 0 and "needs no download" in out
    code, _out, err = _run(capsys, "models", "download", "grounding-dino-tiny")  # HF_HUB_OFFLINE=1 in tests
    assert (
        code == 2
        and "downloads are disabled" in err
        and "hf download IDEA-Research/grounding-dino-tiny" in err
    )
    code, _out, err = _run(capsys, "models", "download", "nonsense")
    assert code == 2 and "unknown model" in err


def test_check_warns_when_the_configured_convention_does_not_match_the_family(
    fake_server: FakeModelServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """vLLM lists the served name and, as ``root``, the weights: a Qwen3-VL model under a neutral name,
    with mae left on screen pixels (or told the wrong family), gets a warning naming the fix."""
    fake_server.served_models = [
        {"id": "phone-model", "object": "model", "root": "Qwen/Qwen3-VL-8B-Instruct"}
    ]
    monkeypatch.setenv("MAE_BACKBONE", "custom")
    monkeypatch.setenv("MAE_BASE_URL", fake_server.base_url)
    monkeypatch.setenv("MAE_MODEL", "phone-model")
    code, _out, err = _run(capsys, "models", "check")
    assert code == 0
    assert "phone-model is a qwen3-vl model" in err and "configured for 'screen'" in err
    assert "MAE_COORDINATES=qwen3-vl" in err
    monkeypatch.setenv("MAE_COORDINATES", "qwen2.5-vl")  # the factor-28 trap
    code, _out, err = _run(capsys, "models", "check")
    assert code == 0 and "configured for 'qwen2.5-vl'" in err
    monkeypatch.setenv("MAE_COORDINATES", "qwen3-vl")
    code, _out, err = _run(capsys, "models", "check")
    assert code == 0 and "warning" not in err
    # served under its hub id, mae picks the family by itself
    fake_server.served_models = [{"id": "mPLUG/GUI-Owl-7B", "object": "model", "root": "mPLUG/GUI-Owl-7B"}]
    monkeypatch.delenv("MAE_COORDINATES")
    monkeypatch.setenv("MAE_MODEL", "mPLUG/GUI-Owl-7B")
    code, out, err = _run(capsys, "models", "check")
    assert code == 0 and "mae uses this" in out and "warning" not in err


@pytest.mark.parametrize("name", [e.name for e in CATALOG if e.vllm is not None])
def test_dry_run_prints_the_command_for_every_servable_entry(
    name: str, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = find(name)
    extra = [] if entry.hub_id else ["--weights", "OpenGVLab/InternVL3-8B"]
    code, out, _err = _run(capsys, "models", "serve", name, "--dry-run", *extra)
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith(f"vllm serve {entry.hub_id or 'OpenGVLab/InternVL3-8B'} --host 127.0.0.1")
    assert "export MAE_BACKBONE=vllm" in out
    if entry.hub_id and entry.hub_id != "Qwen/Qwen2.5-VL-7B-Instruct":
        assert f"export MAE_MODEL={entry.hub_id}" in out
