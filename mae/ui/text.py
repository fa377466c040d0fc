"""Messages as a person reads them: sentences, without class names, reply headers or server paths."""

from __future__ import annotations

import re

_CLASS_PREFIX = re.compile(r"\b(?:[A-Z][A-Za-z]*(?:Error|Exception|Problem)|Exception):\s*")
_HEADER = re.compile(r"#{2,}\s*([^#\n]+?)\s*#{2,}")
_TEMP_PATH = re.compile(r"(?:/tmp|/var/folders|/private/var)(?:/[^\s:'\"]+)*/([^/\s:'\"]+)")


_MARKDOWN_SIGNS = re.compile(r"([\\`*_\[\]()!#|~{}])")
_AUTOLINK = re.compile(r"(?i)(://|\bwww\.)")


def md_text(text: str) -> str:
    """``text`` to put inside Markdown so that it shows as the same text: no HTML, no emphasis, no
    images or links (``![x](http://...)``, ``<img>`` and bare URLs stay letters), line breaks kept."""
    escaped = _MARKDOWN_SIGNS.sub(r"\\\1", text)
    escaped = _AUTOLINK.sub(lambda m: m.group(1).replace(":", "&#58;").replace(".", "&#46;"), escaped)
    escaped = re.sub(r"&(?!#(?:58|46);)", "&amp;", escaped).replace("<", "&lt;").replace(">", "&gt;")
    return "  \n".join(escaped.splitlines())


def md_code(text: str) -> str:
    """``text`` as a Markdown code span that nothing in it can close: its backticks become the look-alike
    ˋ and its line breaks spaces (a blank line would end the span's paragraph), so a model name such as
    ``x` ![m](http://…)`` stays letters, not an image."""
    return "`" + " ".join(text.replace("`", "ˋ").split()) + "`"


def readable(text: str) -> str:
    """``text`` as a person should read it: no class names, no raw reply headers (``### Plan ###``
    becomes “Plan”), no server temp paths (only the file's name), ending in a full stop."""
    text = _CLASS_PREFIX.sub("", text.strip())
    text = _HEADER.sub(lambda m: f"“{m.group(1).strip()}”", text)
    text = _TEMP_PATH.sub(lambda m: m.group(1), text)
    if text and text[0].islower() and text.split(" ", 1)[0].isalpha():
        text = text[0].upper() + text[1:]
    if text and text[-1] not in ".!?…":
        text += "."
    return text
