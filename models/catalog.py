"""The models mae knows for local use, with the facts needed to serve them on a GPU workstation.

Memory figures are approximate, in GiB: bf16 weights are 2 bytes per parameter (detectors: fp32,
4); the KV cache grows with the context length (``kv_cache_mb_per_1k_tokens``, for the whole model,
split across tensor-parallel GPUs). ``recommended_gpu_gb`` is the GPU memory per GPU we suggest for the
recommended tensor-parallel size at the recommended context length, with room for the vision encoder.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mae.errors import ConfigError

ModelKind = Literal["vlm", "detector", "ocr"]
Role = Literal["backbone", "captioner", "icons", "ocr"]


class CatalogError(ConfigError):
    """A model name is not in the catalog, or the model cannot be used the way it was asked."""


class VllmDefaults(BaseModel):
    """Recommended ``vllm serve`` settings for one model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_model_len: int = Field(default=32768, ge=1024, description="context length in tokens (text + images)")
    images_per_prompt: int = Field(
        default=2, ge=1, description="the Action Reflector sends two screenshots (before/after)"
    )
    max_pixels: int = Field(
        default=1280 * 28 * 28, ge=1, description="Qwen image budget, same as mae's client-side smart_resize"
    )
    tensor_parallel_size: int = Field(default=1, ge=1, description="GPUs to split the model over by default")
    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)
    extra_args: tuple[str, ...] = ()


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


def _kv_mb_per_1k(layers: int, kv_heads: int, head_dim: int = 128) -> float:
    """KV cache in MiB per 1024 tokens in bf16: keys + values, every layer."""
    return round(layers * kv_heads * head_dim * 2 * 2 * 1024 / 1024 / 1024, 1)


_QWEN_NOTES = (
    "Qwen2.5-VL answers coordinates in the resized image's pixels; mae's 'vllm' preset resizes "
    "screenshots with the same smart_resize rule and maps coordinates back."
)

CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        name="qwen2.5-vl-3b",
        aliases=("3b", "qwen-3b"),
        label="Qwen2.5-VL-3B-Instruct",
        kind="vlm",
        hub_id="Qwen/Qwen2.5-VL-3B-Instruct",
        roles=("captioner", "backbone"),
        params_b=3.75,
        weights_gb=7.0,
        kv_cache_mb_per_1k_tokens=_kv_mb_per_1k(layers=36, kv_heads=2),
        attention_heads=16,
        vision_heads=16,
        recommended_gpu_gb=16,
        gpu_hints=("one 16 GB GPU (RTX 4080, A4000, T4 at 16k context)",),
        vllm=VllmDefaults(max_model_len=16384),
        notes="Good icon captioner; too weak as the planning backbone for multi-app tasks. " + _QWEN_NOTES,
    ),
    CatalogEntry(
        name="qwen2.5-vl-7b",
        aliases=("7b", "qwen-7b", "default"),
        label="Qwen2.5-VL-7B-Instruct",
        kind="vlm",
        hub_id="Qwen/Qwen2.5-VL-7B-Instruct",
        roles=("backbone", "captioner"),
        params_b=8.29,
        weights_gb=15.4,
        kv_cache_mb_per_1k_tokens=_kv_mb_per_1k(layers=28, kv_heads=4),
        attention_heads=28,
        vision_heads=16,
        recommended_gpu_gb=24,
        gpu_hints=(
            "one 24 GB GPU (RTX 3090/4090, A5000, L4)",
            "two 16 GB GPUs with --tensor-parallel-size 2",
        ),
        vllm=VllmDefaults(max_model_len=32768),
        notes="Default of the 'vllm' backbone preset. " + _QWEN_NOTES,
    ),
    CatalogEntry(
        name="qwen2.5-vl-32b",
        aliases=("32b", "qwen-32b"),
        label="Qwen2.5-VL-32B-Instruct",
        kind="vlm",
        hub_id="Qwen/Qwen2.5-VL-32B-Instruct",
        roles=("backbone",),
        params_b=33.5,
        weights_gb=62.4,
        kv_cache_mb_per_1k_tokens=_kv_mb_per_1k(layers=64, kv_heads=8),
        attention_heads=40,
        vision_heads=16,
        recommended_gpu_gb=80,
        gpu_hints=(
            "one 80 GB GPU (A100/H100 80GB) with --gpu-memory-utilization 0.95",
            "two 48 GB GPUs (A6000, L40S) with --tensor-parallel-size 2",
        ),
        vllm=VllmDefaults(max_model_len=32768, gpu_memory_utilization=0.95),
        notes=_QWEN_NOTES,
    ),
    CatalogEntry(
        name="qwen2.5-vl-72b",
        aliases=("72b", "qwen-72b"),
        label="Qwen2.5-VL-72B-Instruct",
        kind="vlm",
        hub_id="Qwen/Qwen2.5-VL-72B-Instruct",
        roles=("backbone",),
        params_b=73.4,
        weights_gb=136.7,
        kv_cache_mb_per_1k_tokens=_kv_mb_per_1k(layers=80, kv_heads=8),
        attention_heads=64,
        vision_heads=16,
        recommended_gpu_gb=80,
        gpu_hints=(
            "four 80 GB GPUs with --tensor-parallel-size 4",
            "two 141 GB GPUs (H200) with --tensor-parallel-size 2",
        ),
        vllm=VllmDefaults(max_model_len=32768, tensor_parallel_size=4, gpu_memory_utilization=0.95),
        notes="Closest open model to the paper's GPT-4o results. " + _QWEN_NOTES,
    ),
    CatalogEntry(
        name="grounding-dino-tiny",
        aliases=("groundingdino", "dino-tiny", "gdino-tiny"),
        label="GroundingDINO tiny",
        kind="detector",
        hub_id="IDEA-Research/grounding-dino-tiny",
        roles=("icons",),
        params_b=0.17,
        weights_gb=0.65,
        recommended_gpu_gb=2,
        gpu_hints=("about 1-2 GB next to the VLM (fp32); also runs on CPU, slowly",),
        notes="Icon grounding for the Perceptor (MAE_ICONS=groundingdino); default MAE_GROUNDINGDINO_MODEL.",
    ),
    CatalogEntry(
        name="grounding-dino-base",
        aliases=("dino-base", "gdino-base"),
        label="GroundingDINO base",
        kind="detector",
        hub_id="IDEA-Research/grounding-dino-base",
        roles=("icons",),
        params_b=0.23,
        weights_gb=0.87,
        recommended_gpu_gb=2,
        gpu_hints=("about 1.5-2.5 GB next to the VLM (fp32)",),
        notes="Slightly better boxes than tiny: MAE_GROUNDINGDINO_MODEL=IDEA-Research/grounding-dino-base.",
    ),
    CatalogEntry(
        name="rapidocr",
        aliases=("ocr", "pp-ocr"),
        label="RapidOCR (PP-OCR, ONNX)",
        kind="ocr",
        hub_id=None,
        roles=("ocr",),
        notes="Bundled in the rapidocr-onnxruntime wheel: nothing to download; CPU, ~0.5 s a screen.",
    ),
)


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
