"""Local model serving for a GPU workstation: the model catalog, where weights live, and vLLM.

- ``models.catalog``: the models mae knows for local use (Qwen2.5-VL sizes, GroundingDINO, OCR).
- ``models.weights``: ``MAE_MODELS_DIR`` / Hugging Face cache lookup, ``resolve`` and ``download``.
- ``models.vllm``: the ``vllm serve`` command, launching it, and the health check.

Command line: ``python -m mae models list|serve|check|download``.
"""

from models.catalog import CATALOG, CatalogEntry, CatalogError, find
from models.weights import WeightsError, download, models_dir, resolve

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
