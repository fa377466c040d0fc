"""Where model weights live: ``MAE_MODELS_DIR`` or the Hugging Face cache.

``resolve`` turns what a user wrote (a local directory or a hub id) into what a loader takes: a
``Path`` to a directory holding ``config.json``, or the hub id itself (loaded through the Hugging Face
cache). ``download`` fetches a hub repository into ``MAE_MODELS_DIR``.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import BaseModel

from mae.errors import MaeError

HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_TRUE = {"1", "true", "yes", "on"}


class WeightsError(MaeError):
    """Weights are missing, incomplete, or cannot be fetched. The message says how to get them."""


class Presence(BaseModel):
    """Where a model's weights were found on this machine."""

    where: Literal["models_dir", "hf_cache", "missing"]
    path: Path | None = None

    def describe(self) -> str:
        if self.where == "models_dir":
            return f"yes ({self.path})"
        if self.where == "hf_cache":
            return "yes (Hugging Face cache)"
        return "no"


def models_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$MAE_MODELS_DIR``, else ``<user data dir>/mae/models``."""
    environ = os.environ if environ is None else environ
    configured = environ.get("MAE_MODELS_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(user_data_dir("mae")) / "models"


def local_dir_for(model_id: str, environ: Mapping[str, str] | None = None) -> Path:
    """The directory ``download`` puts ``model_id`` in: ``MAE_MODELS_DIR/<owner>/<name>``."""
    return models_dir(environ) / model_id


def is_offline(environ: Mapping[str, str] | None = None) -> bool:
    """Whether Hugging Face downloads are disabled (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``)."""
    environ = os.environ if environ is None else environ
    return any(
        environ.get(name, "").strip().lower() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def download_hint(model_id: str, environ: Mapping[str, str] | None = None) -> str:
    """The commands that fetch ``model_id`` (to run on a machine with network access)."""
    target = local_dir_for(model_id, environ)
    return (
        f"`python -m mae models download {model_id}` or `hf download {model_id} --local-dir {target}` "
        f"(older huggingface_hub: `huggingface-cli download {model_id} --local-dir {target}`)"
    )


def _check_model_dir(path: Path) -> Path:
    if not path.exists():
        raise WeightsError(f"model directory {path} does not exist; pass a directory holding config.json")
    if not path.is_dir():
        raise WeightsError(f"{path} is a file; pass the model directory that holds config.json")
    if not (path / "config.json").is_file():
        raise WeightsError(
            f"{path} has no config.json, so it is not a model directory (an unfinished download?). Point at "
            "the folder that holds config.json and the *.safetensors files, or download it again"
        )
    return path


def in_hf_cache(model_id: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the Hugging Face cache holds ``model_id``'s ``config.json``."""
    from huggingface_hub import try_to_load_from_cache

    environ = os.environ if environ is None else environ
    cache_dir = environ.get("HF_HUB_CACHE") or None
    found = try_to_load_from_cache(model_id, "config.json", cache_dir=cache_dir)
    return isinstance(found, str) and Path(found).is_file()


def presence(model_id: str, environ: Mapping[str, str] | None = None) -> Presence:
    """Where ``model_id``'s weights are on this machine, if anywhere."""
    local = local_dir_for(model_id, environ)
    if (local / "config.json").is_file():
        return Presence(where="models_dir", path=local)
    if in_hf_cache(model_id, environ):
        return Presence(where="hf_cache")
    return Presence(where="missing")


def _looks_like_path(value: str) -> bool:
    return value.startswith(("/", "./", "../", "~", ".\\")) or "\\" in value or value.count("/") > 1


def resolve(model_id_or_path: str | Path, environ: Mapping[str, str] | None = None) -> Path | str:
    """What a loader should open for ``model_id_or_path``.

    A local directory must contain ``config.json`` (``WeightsError`` otherwise) and is returned as a
    ``Path``. A hub id is returned as a ``Path`` when it was downloaded into ``MAE_MODELS_DIR``, else as
    the id (the loader uses the Hugging Face cache); when downloads are disabled (``HF_HUB_OFFLINE=1``)
    and the cache lacks it, ``WeightsError`` says how to download it.
    """
    raw = str(model_id_or_path).strip()
    if not raw:
        raise WeightsError("no model given: pass a hub id such as Qwen/Qwen2.5-VL-7B-Instruct or a directory")
    candidate = Path(raw).expanduser()
    if isinstance(model_id_or_path, Path) or _looks_like_path(raw) or candidate.is_dir():
        return _check_model_dir(candidate)
    if not HUB_ID.match(raw):
        raise WeightsError(
            f"{raw!r} is neither an existing directory nor a Hugging Face id (owner/name); pass a model "
            "directory holding config.json or an id such as Qwen/Qwen2.5-VL-7B-Instruct"
        )
    found = presence(raw, environ)
    if found.where == "models_dir" and found.path is not None:
        return found.path
    if found.where == "missing" and is_offline(environ):
        raise WeightsError(
            f"the weights of {raw} are not on this machine and Hugging Face downloads are disabled "
            "(HF_HUB_OFFLINE=1). Download them where there is network access: "
            f"{download_hint(raw, environ)}; then copy that folder here and pass its path (or set "
            "MAE_MODELS_DIR)"
        )
    return raw


def download(
    model_id: str,
    local_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    revision: str | None = None,
) -> Path:
    """Download a hub repository into ``local_dir`` (default ``MAE_MODELS_DIR/<owner>/<name>``).

    Uses ``huggingface_hub.snapshot_download`` (resumable; shows its own progress bars). Needs network
    access; a gated repository needs ``HF_TOKEN`` (``hf auth login``).
    """
    if not HUB_ID.match(model_id):
        raise WeightsError(f"{model_id!r} is not a Hugging Face id (owner/name)")
    if is_offline(environ):
        raise WeightsError(
            f"cannot download {model_id}: Hugging Face downloads are disabled (HF_HUB_OFFLINE=1 or "
            "TRANSFORMERS_OFFLINE=1). Unset them, or download on another machine: "
            f"{download_hint(model_id, environ)}"
        )
    target = local_dir or local_dir_for(model_id, environ)
    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError
    except ImportError as exc:  # pragma: no cover - huggingface_hub comes with transformers
        raise WeightsError("huggingface_hub is not installed: pip install huggingface_hub") from exc
    try:
        path = snapshot_download(model_id, local_dir=target, revision=revision)
    except RepositoryNotFoundError:
        _remove_if_empty(target, created)
        raise WeightsError(
            f"{model_id} was not found on the Hugging Face hub (or it is gated: run `hf auth login` first)"
        ) from None
    except (HfHubHTTPError, OSError) as exc:
        _remove_if_empty(target, created)
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise WeightsError(
            f"downloading {model_id} failed ({first_line}). Check the network and disk space, then retry: "
            "the download resumes where it stopped"
        ) from None
    return _check_model_dir(Path(str(path)))


def _remove_if_empty(target: Path, created: bool) -> None:
    """Remove a folder ``download`` created when nothing was downloaded into it (partial files stay)."""
    if not created or any(path.is_file() for path in target.rglob("*")):
        return
    for folder in sorted(
        (p for p in target.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True
    ):
        folder.rmdir()
    target.rmdir()
    with contextlib.suppress(OSError):
        target.parent.rmdir()  # the owner folder, when it is now empty
