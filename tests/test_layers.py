"""The package's layers: every import (at the top, in a function or for type checking) goes down or
sideways, and no two modules import each other. The order is the README's Architecture section."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "mae"

LAYERS: list[set[str]] = [
    {"mae", "mae.errors", "mae.wording", "mae.public_mode", "mae.resources"},
    {"mae.llm"},
    {"mae.config"},
    {"mae.perception"},
    {"mae.device"},
    {"mae.actions"},
    {"mae.memory"},
    {"mae.agents"},
    {"mae.run"},
    {"mae.serving"},
    {"mae.eval"},
    {"mae.testing"},
    {"mae.ui"},
    {"mae.mcp"},
    {"mae.cli", "mae.__main__"},
]
"""Lowest first. ``mae`` (the package itself) only carries the version; ``__main__`` starts the CLI."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py") if "_bundled" not in p.parts}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``mae`` that ``path`` imports; ``from pkg import sub`` counts as ``pkg.sub`` only."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules.keys()
            found.update(submodules)
            if node.module in modules and len(submodules) < len(node.names):
                found.add(node.module)
    return found


def _layer(module: str) -> int:
    for index, layer in enumerate(LAYERS):
        if module in layer or ".".join(module.split(".")[:2]) in layer:
            return index
    raise AssertionError(f"{module} belongs to no layer: add its package to LAYERS")


def test_no_module_imports_from_a_higher_layer() -> None:
    modules = _modules()
    upward = [
        f"{name} imports {target}"
        for name, path in sorted(modules.items())
        for target in sorted(_imports(path, modules))
        if _layer(target) > _layer(name)
    ]
    assert upward == []


def test_no_two_modules_import_each_other() -> None:
    modules = _modules()
    graph = {name: _imports(path, modules) for name, path in modules.items()}
    mutual = sorted(
        f"{a} <-> {b}" for a, targets in graph.items() for b in targets if a < b and a in graph.get(b, set())
    )
    assert mutual == []
