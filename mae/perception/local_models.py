"""Plumbing shared by the in-process models (GroundingDINO icons, Qwen2.5-VL captions).

Where the weights come from (``mae.llm.weights.resolve``: a local directory or a hub id, offline-aware),
which torch device and dtype to use (CUDA when present, half precision there), and a per-process cache
so that building a second Perceptor (the UI builds one per run) does not load the same weights again.
torch and transformers are imported only when a model is actually loaded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mae.errors import ConfigError
from mae.llm.weights import WeightsError, is_offline, resolve

if TYPE_CHECKING:
    import torch

T = TypeVar("T")

INSTALL_HINT = (
    "install torch for your CUDA version (https://pytorch.org/get-started/locally/), then "
    "`pip install -r requirements-gpu.txt`"
)
_DTYPES = {
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
}
_DTYPES |= {"float32": "float32", "fp32": "float32", "float": "float32"}


@dataclass
class LoadedModel:
    """A model with the objects that prepare its inputs, placed on ``device``."""

    model: Any
    processor: Any
    device: str
    dtype: torch.dtype
    extras: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


_cache: dict[tuple[str, ...], Any] = {}
_cache_lock = threading.Lock()


def require_torch(feature: str) -> None:
    """Raise ``ConfigError`` with install instructions when torch or transformers is missing."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"{feature} needs torch and transformers ({exc}); {INSTALL_HINT}") from None


def pick_device(device: str | None) -> str:
    """``device`` as given (checked), else ``cuda`` when a CUDA GPU is visible, else ``cpu``."""
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(
            f"device {device!r} was asked for but torch sees no CUDA GPU (torch {torch.__version__}); check "
            "`nvidia-smi` and that torch is a CUDA build, or leave the device unset to use the CPU"
        )
    return device


def pick_dtype(dtype: str | torch.dtype | None, device: str, *, prefer_bf16: bool) -> torch.dtype:
    """``dtype`` as given, else half precision on a GPU (bf16 when supported and preferred), else fp32."""
    import torch

    if dtype is None:
        if not device.startswith("cuda"):
            return torch.float32
        if prefer_bf16 and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float16
    if isinstance(dtype, torch.dtype):
        return dtype
    name = _DTYPES.get(dtype.strip().lower())
    if name is None:
        raise ConfigError(f"unknown dtype {dtype!r}; use float16, bfloat16 or float32")
    chosen: torch.dtype = getattr(torch, name)
    return chosen


@contextmanager
def inference(device: str) -> Iterator[None]:
    """``torch.inference_mode``, and on CUDA attention without the cuDNN backend.

    torch (2.11 here) sends half-precision ``scaled_dot_product_attention`` to cuDNN, which plans anew
    for every sequence length: each decoding step then cost 44-67 ms on an H100 instead of 3-5 ms, for a
    tiny model and for one with Qwen2.5-VL-3B's attention shapes alike (``benchmarks/local_models.py``).
    Flash, memory-efficient and math attention remain allowed.
    """
    import torch

    with torch.inference_mode():
        if not device.startswith("cuda"):
            yield
            return
        from torch.nn.attention import SDPBackend, sdpa_kernel

        allowed = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
        with sdpa_kernel(allowed):
            yield


def dtype_kwargs(dtype: torch.dtype) -> dict[str, Any]:
    """The ``from_pretrained`` keyword for the weights' dtype (``dtype`` since transformers 4.56)."""
    import transformers

    major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def weights_source(model_id_or_path: str) -> tuple[str, bool]:
    """What to pass to ``from_pretrained`` and whether to stay offline (``local_files_only``)."""
    resolved = resolve(model_id_or_path)
    if not isinstance(resolved, str):
        return str(resolved), True
    return resolved, is_offline()


def load_once(key: tuple[str, ...], loader: Callable[[], T]) -> T:
    """``loader()``'s result, computed once per process for ``key`` (concurrent callers wait)."""
    with _cache_lock:
        if key in _cache:
            found: T = _cache[key]
            return found
        loaded = loader()
        _cache[key] = loaded
        return loaded


def forget_loaded() -> None:
    """Drop every cached model (frees their memory once nothing else holds them)."""
    with _cache_lock:
        _cache.clear()


def load_failed(what: str, source: str, exc: Exception) -> WeightsError:
    """The error for weights that exist (or were named) but could not be loaded."""
    return WeightsError(
        f"could not load {what} from {source} ({type(exc).__name__}: {exc}). Check that it is a complete "
        "checkpoint (config.json, *.safetensors, the processor and tokenizer files); download it again with "
        f"`python -m mae models download <id>` if in doubt. Needs: {INSTALL_HINT}"
    )


__all__ = [
    "INSTALL_HINT",
    "LoadedModel",
    "dtype_kwargs",
    "forget_loaded",
    "load_failed",
    "load_once",
    "pick_device",
    "pick_dtype",
    "require_torch",
    "weights_source",
]
