"""The models mae knows for local use, with the facts needed to serve them on a GPU workstation.

The catalog is data: ``models/catalog.toml`` (shipped in the wheel), read once at import.
Memory figures are approximate, in GiB: bf16 weights are 2 bytes per parameter (detectors: fp32,
4); the KV cache grows with the context length (``kv_cache_mb_per_1k_tokens``, for the whole model,
split across tensor-parallel GPUs). ``recommended_gpu_gb`` is the GPU memory per GPU we suggest for the
recommended tensor-parallel size at the recommended context length, with room for the vision encoder.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mae.errors import ConfigError
from mae.llm.coordinates import CONVENTIONS
from mae.resources import data_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

ModelKind = Literal["vlm", "detector", "ocr"]
Role = Literal["backbone", "captioner", "icons", "ocr"]


class CatalogError(ConfigError):
    """A model name is not in the catalog, or the model cannot be used the way it was asked."""


class VersionArgs(BaseModel):
    """Extra ``vllm serve`` arguments for vLLM versions from ``version`` on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str = Field(pattern=r"^\d+(\.\d+)*$")
    args: tuple[str, ...]


class VllmDefaults(BaseModel):
    """Recommended ``vllm serve`` settings for one model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_model_len: int = Field(default=32768, ge=1024, description="context length in tokens (text + images)")
    images_per_prompt: int = Field(
        default=2, ge=1, description="the Action Reflector sends two screenshots (before/after)"
    )
    mm_processor_kwargs: dict[str, int] = Field(
        default_factory=dict, description="server-side image budget, same as mae's client-side resize"
    )
    tensor_parallel_size: int = Field(default=1, ge=1, description="GPUs to split the model over by default")
    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)
    min_version: str = Field(default="0.7.2", pattern=r"^\d+(\.\d+)*$", description="oldest vLLM serving it")
    extra_args: tuple[str, ...] = ()
    since: tuple[VersionArgs, ...] = ()


def version_tuple(text: str) -> tuple[int, ...]:
    """``"0.11.0"`` -> ``(0, 11, 0)``."""
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


class CatalogEntry(BaseModel):
    """One model mae can use locally."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="short name used on the command line")
    aliases: tuple[str, ...] = ()
    label: str
    kind: ModelKind
    hub_id: str | None = Field(
        default=None, description="Hugging Face repository id; None = nothing to download"
    )
    roles: tuple[Role, ...]
    params_b: float = Field(default=0.0, ge=0, description="parameters, in billions")
    weights_gb: float = Field(default=0.0, ge=0, description="approximate weights size in GPU memory, GiB")
    kv_cache_mb_per_1k_tokens: float = Field(default=0.0, ge=0, description="MiB of KV cache per 1024 tokens")
    attention_heads: int | None = Field(
        default=None, description="language model heads; tensor-parallel size divides it"
    )
    vision_heads: int | None = Field(
        default=None, description="vision encoder heads; tensor-parallel size divides it"
    )
    recommended_gpu_gb: float = Field(
        default=0.0, ge=0, description="GPU memory per GPU we suggest, GiB (0 = CPU)"
    )
    gpu_hints: tuple[str, ...] = ()
    vllm: VllmDefaults | None = None
    coordinates: str | None = Field(
        default=None, description="coordinate convention of a VLM (mae.llm.coordinates)"
    )
    needs_weights: bool = Field(default=False, description="generic entry: `models serve` needs --weights")
    notes: str = ""

    @property
    def servable(self) -> bool:
        """Whether ``vllm serve`` can serve this model."""
        return self.vllm is not None

    @property
    def downloadable(self) -> bool:
        return self.hub_id is not None

    def estimate_gpu_gb(self, max_model_len: int | None = None, tensor_parallel_size: int = 1) -> float:
        """Approximate GPU memory per GPU to hold the weights plus one full-length sequence of KV cache,
        plus ~2 GB for the vision encoder's activations and CUDA graphs."""
        length = max_model_len or (self.vllm.max_model_len if self.vllm else 0)
        kv_gb = self.kv_cache_mb_per_1k_tokens * length / 1024 / 1024
        overhead = 2.0 if self.kind == "vlm" else 0.5
        return round((self.weights_gb + kv_gb) / max(1, tensor_parallel_size) + overhead, 1)

    def check_tensor_parallel(self, size: int) -> None:
        """``CatalogError`` when ``size`` GPUs cannot split this model."""
        if size < 1:
            raise CatalogError("tensor-parallel size must be at least 1")
        heads = [h for h in (self.attention_heads, self.vision_heads) if h]
        if any(h % size for h in heads):
            usable = [n for n in range(1, 17) if all(h % n == 0 for h in heads)]
            raise CatalogError(
                f"{self.label} cannot be split over {size} GPUs (its attention heads, "
                f"{' and '.join(map(str, heads))}, must divide evenly); use --tensor-parallel-size "
                f"{', '.join(map(str, usable))}"
            )


CATALOG_FILE = data_dir("models") / "catalog.toml"


def load_catalog(path: Path | None = None) -> tuple[CatalogEntry, ...]:
    """The entries of ``path`` (default: ``models/catalog.toml``); ``CatalogError`` saying what is wrong."""
    path = path or CATALOG_FILE
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogError(f"the model catalog {path} is missing; reinstall mae or restore it") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CatalogError(f"the model catalog {path} cannot be read: {exc}") from None
    entries: list[CatalogEntry] = []
    for index, raw in enumerate(data.get("model", []), 1):
        try:
            entry = CatalogEntry.model_validate(raw)
        except ValidationError as exc:
            where = raw.get("name", f"entry {index}") if isinstance(raw, dict) else f"entry {index}"
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise CatalogError(f"{path}: {where}: {problems}") from None
        if entry.coordinates is not None and entry.coordinates not in CONVENTIONS:
            raise CatalogError(
                f"{path}: {entry.name}: unknown coordinates {entry.coordinates!r}; "
                f"use one of {', '.join(CONVENTIONS)}"
            )
        entries.append(entry)
    if not entries:
        raise CatalogError(f"{path} lists no [[model]] entries")
    return tuple(entries)


CATALOG: tuple[CatalogEntry, ...] = load_catalog()


def names() -> list[str]:
    """Every catalog name, in catalog order."""
    return [entry.name for entry in CATALOG]


def find(name_or_alias: str) -> CatalogEntry:
    """The catalog entry called ``name_or_alias`` (its name, an alias, its hub id or the hub id's last part,
    case-insensitive); ``CatalogError`` listing the choices otherwise."""
    wanted = name_or_alias.strip().lower()
    for entry in CATALOG:
        keys = {entry.name, *entry.aliases, entry.label.lower()}
        if entry.hub_id:
            keys |= {entry.hub_id.lower(), entry.hub_id.split("/")[-1].lower()}
        if wanted in {key.lower() for key in keys}:
            return entry
    raise CatalogError(
        f"unknown model {name_or_alias!r}; choose one of {', '.join(names())} "
        "(see `python -m mae models list`)"
    )


def servable() -> list[CatalogEntry]:
    """The models ``vllm serve`` can serve (the vision-language models)."""
    return [entry for entry in CATALOG if entry.servable]
