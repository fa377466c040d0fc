"""Local model serving for a GPU workstation: the model catalog, where weights live, and vLLM.

- ``mae.serving.catalog``: the models mae knows for local use (Qwen2.5-VL sizes, GroundingDINO, OCR).
- ``mae.serving.weights``: ``MAE_MODELS_DIR`` / Hugging Face cache lookup, ``resolve`` and ``download``.
- ``mae.serving.vllm``: the ``vllm serve`` command, launching it, and the health check.

Command line: ``python -m mae models list|serve|check|download``.
"""

from mae.serving.catalog import CATALOG, CatalogEntry, CatalogError, find
from mae.serving.weights import WeightsError, download, models_dir, resolve

__all__ = [
    "CATALOG",
    "CatalogEntry",
    "CatalogError",
    "WeightsError",
    "download",
    "find",
    "models_dir",
    "resolve",
]
