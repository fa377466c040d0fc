"""Serve a catalog model with vLLM: build the ``vllm serve`` command, check the machine, launch it.

The command binds 127.0.0.1 unless told otherwise. An API key is never put on the command line (where
``ps`` would show it) nor printed: the launcher copies it from the variable the user names into
``VLLM_API_KEY`` of the server's environment, which vLLM reads.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from mae.errors import ConfigError
from mae.llm.coordinates import family_convention
from mae.llm.providers import PRESETS
from mae.llm.weights import local_dir_for, presence, resolve
from mae.serving.catalog import CatalogEntry, CatalogError, version_tuple
from mae.serving.health import (
    HealthReport,
    Progress,
    ServeError,
    ServerNotReadyError,
    log_tail,
    wait_for_model,
)

__all__ = [
    "GpuInfo",
    "HealthReport",
    "ServeCommand",
    "ServeError",
    "ServeOptions",
    "ServerNotReadyError",
    "ServerProcess",
    "VllmUnavailableError",
    "build_command",
    "detect_gpus",
    "find_vllm",
    "launch",
    "mae_env_lines",
    "preflight",
    "vllm_version",
    "wait_for_model",
]

HOSTED_ADVICE = (
    "Without a local GPU, use a hosted backbone instead: MAE_BACKBONE=openai (or anthropic, google, "
    "dashscope) with its API key"
)


class VllmUnavailableError(ServeError):
    """vLLM or a CUDA GPU is missing on this machine."""


class ServeOptions(BaseModel):
    """What the user may change about ``vllm serve``; ``None`` takes the catalog's recommendation."""

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    dtype: Literal["auto", "bfloat16", "float16"] = "bfloat16"
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
    max_model_len: int | None = Field(default=None, ge=1024)
    tensor_parallel_size: int | None = Field(default=None, ge=1)
    images_per_prompt: int | None = Field(default=None, ge=1)
    served_model_name: str | None = None
    api_key_env: str | None = Field(
        default=None, description="name of the variable holding the key; never the key"
    )
    weights: str | None = Field(default=None, description="local model directory or hub id to load instead")
    extra_args: list[str] = Field(default_factory=list)


class ServeCommand(BaseModel):
    """A ``vllm serve`` invocation and what a client needs to reach it. Holds no secret."""

    entry_name: str
    coordinates: str | None = Field(default=None, description="the entry's coordinate convention")
    argv: list[str]
    model_source: str = Field(description="what vLLM loads: a local directory or a hub id")
    served_model_name: str
    host: str
    base_url: str
    api_key_env: str | None = None
    tensor_parallel_size: int
    max_model_len: int
    gpu_memory_utilization: float

    def display(self) -> str:
        """The command as a shell line (the key appears only as a reference to its variable)."""
        line = shlex.join(self.argv)
        if self.api_key_env:
            line = f'VLLM_API_KEY="${self.api_key_env}" {line}'
        return line


class GpuInfo(BaseModel):
    """One NVIDIA GPU as ``nvidia-smi`` reports it."""

    index: int
    name: str
    memory_gib: float


def vllm_version() -> tuple[int, ...] | None:
    """The installed vLLM's version as integers (``(0, 10, 1)``), or ``None`` when it is not installed."""
    try:
        text = metadata.version("vllm")
    except metadata.PackageNotFoundError:
        return None
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3]) or None


def find_vllm(environ: Mapping[str, str] | None = None) -> str | None:
    """The ``vllm`` executable on ``PATH`` or next to this Python, or ``None``."""
    environ = os.environ if environ is None else environ
    found = shutil.which("vllm", path=environ.get("PATH"))
    if found:
        return found
    beside = Path(sys.executable).parent / "vllm"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def _client_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


def _mm_limit(images: int, version: tuple[int, ...] | None) -> str:
    # vLLM before 0.9 took ``image=N``; later versions take JSON (and 0.10+ only JSON).
    if version is not None and version < (0, 9):
        return f"image={images}"
    return json.dumps({"image": images, "video": 0})


def build_command(
    entry: CatalogEntry,
    options: ServeOptions | None = None,
    *,
    version: tuple[int, ...] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServeCommand:
    """The ``vllm serve`` command for ``entry``. ``version`` picks the CLI syntax (newest when ``None``).

    Weights come from ``options.weights``, else ``MAE_MODELS_DIR`` when downloaded there, else the hub id
    (vLLM then uses the Hugging Face cache). The served name defaults to the hub id, so mae's ``vllm``
    preset finds the model under its usual name.
    """
    options = options or ServeOptions()
    if entry.vllm is None:
        raise CatalogError(
            f"{entry.label} is not served by vLLM: it runs inside mae's Perceptor (roles: "
            f"{', '.join(entry.roles)}). Serve one of the vision-language models instead "
            "(`python -m mae models list`)"
        )
    if entry.hub_id is None and not options.weights:
        raise CatalogError(
            f"{entry.name} stands for any vision-language model: give it with --weights HUB_ID (for "
            "example --weights OpenGVLab/InternVL3-8B) or a local model directory"
        )
    defaults = entry.vllm
    if version is not None and version < version_tuple(defaults.min_version):
        raise CatalogError(
            f"{entry.label} needs vLLM {defaults.min_version} or newer, but "
            f"{'.'.join(map(str, version))} is installed: `pip install -U vllm`"
        )
    tp = options.tensor_parallel_size or defaults.tensor_parallel_size
    entry.check_tensor_parallel(tp)
    if options.weights:
        source = str(options.weights)
    else:
        assert entry.hub_id is not None
        local = local_dir_for(entry.hub_id, environ)
        source = str(local) if (local / "config.json").is_file() else entry.hub_id
    served = options.served_model_name or entry.hub_id or source
    util = options.gpu_memory_utilization or defaults.gpu_memory_utilization
    max_len = options.max_model_len or defaults.max_model_len
    images = options.images_per_prompt or defaults.images_per_prompt
    if options.api_key_env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", options.api_key_env):
        raise ConfigError(
            "--api-key-env takes the NAME of an environment variable (letters, digits and _, like "
            "LOCAL_VLLM_KEY), not the key itself"
        )
    processor = (
        ["--mm-processor-kwargs", json.dumps(defaults.mm_processor_kwargs)]
        if defaults.mm_processor_kwargs
        else []
    )
    by_version = [
        arg
        for extra in defaults.since
        if version is None or version >= version_tuple(extra.version)
        for arg in extra.args
    ]
    argv = [
        "vllm",
        "serve",
        source,
        "--host",
        options.host,
        "--port",
        str(options.port),
        "--served-model-name",
        served,
        "--dtype",
        options.dtype,
        "--gpu-memory-utilization",
        f"{util:g}",
        "--max-model-len",
        str(max_len),
        "--tensor-parallel-size",
        str(tp),
        "--limit-mm-per-prompt",
        _mm_limit(images, version),
        *processor,
        *defaults.extra_args,
        *by_version,
        *options.extra_args,
    ]
    return ServeCommand(
        entry_name=entry.name,
        coordinates=entry.coordinates,
        argv=argv,
        model_source=source,
        served_model_name=served,
        host=options.host,
        base_url=f"http://{_client_host(options.host)}:{options.port}/v1",
        api_key_env=options.api_key_env,
        tensor_parallel_size=tp,
        max_model_len=max_len,
        gpu_memory_utilization=util,
    )


def mae_env_lines(command: ServeCommand) -> list[str]:
    """The ``export`` lines that point mae at this server (only what differs from the ``vllm`` preset)."""
    preset = PRESETS["vllm"]
    lines = ["export MAE_BACKBONE=vllm"]
    if command.base_url != preset.base_url:
        lines.append(f"export MAE_BASE_URL={command.base_url}")
    if command.served_model_name != preset.model:
        lines.append(f"export MAE_MODEL={shlex.quote(command.served_model_name)}")
    if command.api_key_env:
        lines.append(f"export MAE_API_KEY_ENV={command.api_key_env}")
    if command.coordinates and family_convention(command.served_model_name) != command.coordinates:
        lines.append(f"export MAE_COORDINATES={command.coordinates}")
    return lines


def detect_gpus(environ: Mapping[str, str] | None = None, timeout_s: float = 20.0) -> list[GpuInfo]:
    """NVIDIA GPUs listed by ``nvidia-smi`` (restricted to ``CUDA_VISIBLE_DEVICES`` when it holds indices);
    ``[]`` when ``nvidia-smi`` is missing or fails."""
    environ = os.environ if environ is None else environ
    exe = shutil.which("nvidia-smi", path=environ.get("PATH"))
    if exe is None:
        return []
    query = [exe, "--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits"]
    try:
        done = subprocess.run(query, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    gpus: list[GpuInfo] = []
    for line in done.stdout.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) < 3:
            continue
        with contextlib.suppress(ValueError):
            gpus.append(
                GpuInfo(index=int(parts[0]), name=", ".join(parts[1:-1]), memory_gib=float(parts[-1]) / 1024)
            )
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        wanted = [item.strip() for item in visible.split(",") if item.strip()]
        if all(item.isdigit() for item in wanted):
            gpus = [gpu for gpu in gpus if str(gpu.index) in wanted]
    return gpus


def preflight(
    entry: CatalogEntry, command: ServeCommand, environ: Mapping[str, str] | None = None
) -> list[str]:
    """Check that this machine can run ``command``: vLLM installed, enough CUDA GPUs, weights reachable,
    the API key variable set. Raises with what to do; returns warnings (memory looks short, ...)."""
    environ = os.environ if environ is None else environ
    if find_vllm(environ) is None:
        raise VllmUnavailableError(
            "vLLM is not installed (no `vllm` command on PATH). On Linux with an NVIDIA GPU: install torch "
            "for your CUDA version, then `pip install -r requirements-gpu.txt`. " + HOSTED_ADVICE
        )
    gpus = detect_gpus(environ)
    if not gpus:
        raise VllmUnavailableError(
            "no NVIDIA GPU found (`nvidia-smi` is missing, fails, or CUDA_VISIBLE_DEVICES hides every GPU): "
            "vLLM needs a CUDA GPU. Check the driver with `nvidia-smi`. " + HOSTED_ADVICE
        )
    if command.tensor_parallel_size > len(gpus):
        size = command.tensor_parallel_size
        raise ServeError(
            f"--tensor-parallel-size {size} needs {size} GPUs but {len(gpus)} is visible; lower it or pick a "
            "smaller model (`python -m mae models list`)"
        )
    resolve(command.model_source, environ)
    warnings: list[str] = []
    if command.model_source == entry.hub_id and presence(entry.hub_id, environ).where == "missing":
        warnings.append(
            f"the weights of {entry.hub_id} are not downloaded yet: vLLM fetches about "
            f"{entry.weights_gb:.0f} GiB on first start (or run `python -m mae models download` first)"
        )
    if command.api_key_env and not environ.get(command.api_key_env):
        raise ConfigError(f"--api-key-env names {command.api_key_env}, but that variable is not set")
    need = entry.estimate_gpu_gb(command.max_model_len, command.tensor_parallel_size)
    smallest = min(gpu.memory_gib for gpu in gpus[: command.tensor_parallel_size])
    usable = smallest * command.gpu_memory_utilization
    if usable < need:
        warnings.append(
            f"{entry.label} needs about {need:.0f} GiB per GPU at --max-model-len {command.max_model_len} "
            f"with --tensor-parallel-size {command.tensor_parallel_size}, but vLLM may use only "
            f"{usable:.0f} GiB of {smallest:.0f} GiB. If it fails: lower --max-model-len, raise "
            "--gpu-memory-utilization, use more GPUs, or pick a smaller model"
        )
    if command.host not in ("127.0.0.1", "localhost", "::1") and not command.api_key_env:
        warnings.append(
            f"the server listens on {command.host}, beyond this machine, without an API key: add "
            "--api-key-env NAME"
        )
    return warnings


class ServerProcess:
    """A running ``vllm serve`` started by ``launch``."""

    def __init__(self, process: subprocess.Popen[bytes], command: ServeCommand, log_path: Path) -> None:
        self.process = process
        self.command = command
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self.process.pid

    def poll(self) -> int | None:
        return self.process.poll()

    def log_tail(self, lines: int = 25) -> str:
        return log_tail(self.log_path, lines)

    def wait_ready(
        self, timeout_s: float = 900.0, progress: Progress | None = None, api_key: str | None = None
    ) -> HealthReport:
        """Wait until the server lists its model (see ``mae.serving.health.wait_for_model``)."""
        return wait_for_model(
            self.command.base_url,
            self.command.served_model_name,
            timeout_s=timeout_s,
            api_key=api_key,
            progress=progress,
            process=self.process,
            log_path=self.log_path,
        )

    def stop(self, timeout_s: float = 30.0) -> int | None:
        """Stop the server and its worker processes (its own process group): SIGTERM, then SIGKILL."""
        if self.process.poll() is not None:
            return self.process.returncode
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, sig)
            try:
                return self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                continue
        return self.process.poll()


def launch(command: ServeCommand, log_path: Path, environ: Mapping[str, str] | None = None) -> ServerProcess:
    """Start ``command`` in its own process group, stdout and stderr appended to ``log_path``."""
    env = dict(os.environ if environ is None else environ)
    exe = find_vllm(env)
    if exe is None:
        raise VllmUnavailableError(
            "vLLM is not installed (no `vllm` command): `pip install -r requirements-gpu.txt`. "
            + HOSTED_ADVICE
        )
    if command.api_key_env:
        key = env.get(command.api_key_env)
        if not key:
            raise ConfigError(f"--api-key-env names {command.api_key_env}, but that variable is not set")
        env["VLLM_API_KEY"] = key
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        log.write(f"\n=== mae: {command.display()}\n".encode())
        log.flush()
        process = subprocess.Popen(
            [exe, *command.argv[1:]],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    return ServerProcess(process, command, log_path)
