"""Local model serving for a GPU workstation: the model catalog and vLLM (where weights live:
``mae.llm.weights``, ``MAE_MODELS_DIR`` or the Hugging Face cache).

- ``mae.serving.catalog``: the models mae knows for local use (Qwen2.5-VL sizes, GroundingDINO, OCR).
- ``mae.serving.vllm``: the ``vllm serve`` command, launching it, and the health check.

Command line: ``python -m mae models list|serve|check|download``.
"""

from mae.serving.catalog import CATALOG, CatalogEntry, CatalogError, find

__all__ = [
    "CATALOG",
    "CatalogEntry",
    "CatalogError",
    "find",
]
