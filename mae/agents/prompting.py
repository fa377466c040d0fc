"""Prompt templates as files under ``prompts/``, rendered strictly.

Placeholders are ``$name`` or ``${name}`` (``$$`` is a literal dollar sign). Rendering fails with
``PromptError`` when a placeholder has no value or a supplied value has no placeholder, so a renamed
variable can never silently drop context from a prompt. A leading ``<!-- ... -->`` comment in a
template file documents it and is not sent to the model.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from mae.errors import MaeError
from mae.resources import data_dir

PROMPTS_DIR = data_dir("prompts")
"""The repository's ``prompts/`` folder (one template per agent), or its copy inside an installed wheel."""

_COMMENT = re.compile(r"\A\s*<!--.*?-->\s*", re.S)


class PromptError(MaeError):
    """A prompt template and the values given to it do not match (a bug in mae, not a model mistake)."""


def placeholders(template: str) -> set[str]:
    """Names of the placeholders in ``template``; ``PromptError`` on a malformed ``$``."""
    names: set[str] = set()
    for match in string.Template.pattern.finditer(template):
        if match.group("invalid") is not None:
            line = template.count("\n", 0, match.start()) + 1
            raise PromptError(f"malformed placeholder at line {line}: write $$ for a literal dollar sign")
        name = match.group("named") or match.group("braced")
        if name:
            names.add(name)
    return names


def render(template: str, values: Mapping[str, object], *, name: str = "template") -> str:
    """Fill every placeholder of ``template`` from ``values``; every value must be used."""
    wanted = placeholders(template)
    missing = sorted(wanted - set(values))
    unused = sorted(set(values) - wanted)
    if missing or unused:
        parts = []
        if missing:
            parts.append(f"no value for {', '.join(missing)}")
        if unused:
            parts.append(f"values never used: {', '.join(unused)}")
        raise PromptError(f"prompt {name}: " + "; ".join(parts))
    return string.Template(template).substitute({key: str(value) for key, value in values.items()})


@lru_cache(maxsize=32)
def _read(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PromptError(f"prompt template {path} is missing; reinstall mae or restore prompts/") from None
    return _COMMENT.sub("", text, count=1).strip() + "\n"


def load_template(name: str, prompts_dir: Path | None = None) -> str:
    """The text of ``prompts/<name>.md`` (without its leading comment)."""
    return _read((prompts_dir or PROMPTS_DIR) / f"{name}.md")


def render_prompt(name: str, values: Mapping[str, object], prompts_dir: Path | None = None) -> str:
    """Load ``prompts/<name>.md`` and render it strictly with ``values``."""
    return render(load_template(name, prompts_dir), values, name=name)
