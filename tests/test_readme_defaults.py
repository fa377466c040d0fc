"""README's configuration table says what ``python -m mae config show`` says, for every default it lists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from mae.config import ENV_FIELDS
from mae.llm.providers import ModelProfile

REPO = Path(__file__).resolve().parents[1]
LITERAL = r"(?:`[^`]+`|\d+(?:\.\d+)?(?: s)?)"


def _readme_defaults() -> dict[str, str]:
    """``MAE_*`` variable -> the default README's "most used" table gives, where it gives a value (not a
    description such as "the preset's")."""
    text = (REPO / "README.md").read_text()
    table = text[text.index("| variable | meaning | default |") :].split("\n\n", 1)[0]
    defaults: dict[str, str] = {}
    for row in table.splitlines()[2:]:
        variables_cell, _, default_cell = (cell.strip() for cell in row.strip("|").split(" | "))
        if not re.fullmatch(rf"{LITERAL}(?:, {LITERAL})*", default_cell):
            continue
        variables = [name for name in re.findall(r"`(MAE_[A-Z0-9_]+)`", variables_cell) if name in ENV_FIELDS]
        values = [value.strip("`") for value in default_cell.split(", ")]
        assert len(variables) == len(values), row
        defaults.update(zip(variables, values, strict=True))
    return defaults


def _config_show(tmp_path: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAE_") and not k.endswith("_API_KEY")}
    env.update(
        HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data"), XDG_CACHE_HOME=str(tmp_path / "cache")
    )
    shown = subprocess.run(
        [sys.executable, "-m", "mae", "config", "show"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    settings: dict[str, Any] = {}
    for line in shown.stdout.splitlines():
        match = re.fullmatch(r"  ([a-z_.]+) = (.+)", line)
        if match:
            raw = match.group(2)
            settings[match.group(1)] = None if raw == "null" else raw.strip('"')
    return settings


def _same(readme: str, shown: str) -> bool:
    readme = readme.removesuffix(" s")
    try:
        return float(readme) == float(shown)
    except ValueError:
        return Path(readme) == Path(shown) if "/" in readme + shown else readme == shown


def test_every_default_in_the_readme_table_is_what_config_show_says(tmp_path: Path) -> None:
    readme = _readme_defaults()
    assert {"MAE_BACKBONE", "MAE_CAPTIONS", "MAE_MAX_STEPS", "MAE_TIMEOUT"} <= set(readme)
    shown = _config_show(tmp_path)
    wrong = []
    for variable, value in readme.items():
        setting = ENV_FIELDS[variable]
        actual = shown[setting]
        if actual is None:  # a per-call setting left to each model profile: the profile's default
            actual = str(ModelProfile.model_fields[setting].default)
        if not _same(value, actual):
            wrong.append(f"{variable}: README says {value!r}, config show {actual!r}")
    assert not wrong, wrong
