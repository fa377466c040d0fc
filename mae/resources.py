"""Data folders mae ships: ``prompts/`` and the model catalog in ``models/``.

In a repository checkout (or an editable install) they are the top-level folders a person edits. A
wheel (``pip install .``) carries copies inside the package, under ``mae/_bundled/`` (see setup.py).
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The folder ``name`` (``prompts`` or ``models``): the installed copy if there is one, else the
    repository's."""
    bundled = _PACKAGE / "_bundled" / name
    if bundled.is_dir():
        return bundled
    return _PACKAGE.parent / name
