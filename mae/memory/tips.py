"""Tips (L_T): a numbered list of short pieces of advice, kept as text in the paper's format.

The store keeps the text as written (the Tips reflector rewrites it as a whole); these helpers split it
into items for counting, retrieval and display, and write items back as a numbered list.
"""

from __future__ import annotations

import re

_ITEM_START = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+")
"""An item's first line: ``N.`` or ``N)`` with any number of digits (10,000 Tips stay 10,000), or a bullet."""


def normalize_tips(text: str) -> str:
    """Unix line endings, no trailing spaces on lines, exactly one final newline (empty stays empty)."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    body = "\n".join(lines).strip("\n")
    return body + "\n" if body else ""


_PAPER_TIPS = """\
1. Do not add any payment information. If you are asked to sign in, ignore it or sign in as a guest if \
possible. Close any pop-up windows when opening an app.
2. By default, no apps are open in the background.
3. Screenshots may show partial text in text boxes from your previous input; this does not count as an error.
4. When creating new Notes, you do not need to enter a title unless the user specifically requests it."""

INITIAL_TIPS = normalize_tips(_PAPER_TIPS)
"""The four user-provided Tips the paper starts from (paper §2.2, DESIGN §2): the long-term memory's first
version, and the Tips the v1 and v2 baselines are given."""


def split_tips(text: str) -> list[str]:
    """The items of a Tips text, without their numbers or bullets.

    A line starting with ``N.``, ``N)``, ``-`` or ``*`` starts an item; other non-empty lines continue the
    current one. Text with no numbered lines is one item per non-empty line.
    """
    lines = [line for line in normalize_tips(text).split("\n") if line.strip()]
    if not any(_ITEM_START.match(line) for line in lines):
        return [line.strip() for line in lines]
    items: list[str] = []
    for line in lines:
        match = _ITEM_START.match(line)
        if match or not items:
            items.append(line[match.end() :].strip() if match else line.strip())
        else:
            items[-1] = f"{items[-1]} {line.strip()}"
    return [item for item in items if item]


def format_tips(items: list[str], start: int = 1) -> str:
    """A numbered list (``1. ...``), one item per line."""
    return normalize_tips("\n".join(f"{index}. {item}" for index, item in enumerate(items, start)))


def count_tips(text: str) -> int:
    """Number of items in a Tips text."""
    return len(split_tips(text))
