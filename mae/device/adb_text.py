"""Turning a ``Type(text)`` into phone shell commands.

Printable ASCII goes through ``input text`` in one shell call. ``input text`` has two layers of
interpretation that the text must survive:

1. the phone's ``sh`` parses the command line: the text is wrapped in single quotes, inside which
   everything is literal (``$ ` \\ & | ; * ( ) < >`` and double quotes included); a single quote is
   written ``'\\''``;
2. ``input`` then turns every ``%s`` into a space (the historical way to pass spaces), with no way to
   escape a literal ``%s``. So spaces are sent as ``%s``, and a literal ``%`` followed by ``s`` is
   split across two ``input text`` calls (chained with ``&&`` in the same shell call).

A newline is sent as the Enter key (``input keyevent 66``) between the lines, a tab as the Tab key
(61): ``input text`` cannot carry them. Other control characters are refused.

Text ``input text`` cannot carry at all (anything outside ASCII: accents, CJK, emoji) goes through
the ADB Keyboard IME as base64 broadcasts; ``mae.device.adb`` switches the IME and restores it.
"""

from __future__ import annotations

import base64

from mae.errors import ActionError

KEYCODE_HOME = 3
KEYCODE_BACK = 4
KEYCODE_TAB = 61
KEYCODE_ENTER = 66
KEYCODE_DEL = 67
KEYCODE_MOVE_END = 123
KEYCODE_APP_SWITCH = 187

ADB_KEYBOARD_PACKAGE = "com.android.adbkeyboard"
ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
ADB_KEYBOARD_INSTALL_HINT = (
    "install the ADB Keyboard app to type it: download ADBKeyboard.apk from "
    "https://github.com/senzhk/ADBKeyBoard/releases (or F-Droid, package com.android.adbkeyboard) and run "
    "`adb -s {serial} install ADBKeyboard.apk`; mae switches to it only while typing such text and "
    "restores your keyboard afterwards"
)

_SPECIAL_KEYS = {"\n": KEYCODE_ENTER, "\t": KEYCODE_TAB}

TextPiece = str | int
"""A run of characters to type, or a key code to press between runs."""


def split_keys(text: str) -> list[TextPiece]:
    """Split ``text`` into runs of characters and key codes (Enter for newlines, Tab for tabs).

    ``\\r\\n`` and lone ``\\r`` count as a newline. Raises ``ActionError`` for other control characters.
    """
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    pieces: list[TextPiece] = []
    run: list[str] = []
    for char in normalized:
        if char in _SPECIAL_KEYS:
            if run:
                pieces.append("".join(run))
                run = []
            pieces.append(_SPECIAL_KEYS[char])
        elif ord(char) < 32 or ord(char) == 127:
            raise ActionError(f"cannot type the control character {char!r}; remove it from the text")
        else:
            run.append(char)
    if run:
        pieces.append("".join(run))
    return pieces


def needs_adb_keyboard(text: str) -> bool:
    """Whether ``text`` has characters ``input text`` cannot type (anything beyond ASCII)."""
    return any(ord(char) > 127 for char in text)


def shell_quote(word: str) -> str:
    """``word`` in single quotes for the phone's ``sh`` (POSIX quoting; every character literal)."""
    return "'" + word.replace("'", "'\\''") + "'"


def input_text_arguments(run: str) -> list[str]:
    """The ``input text`` arguments (before shell quoting) that type ``run`` exactly.

    Spaces become ``%s``; the run is cut between a literal ``%`` and a following ``s`` so that
    ``input`` never reads them as an escaped space.
    """
    chunks: list[str] = []
    start = 0
    for i in range(1, len(run)):
        if run[i - 1] == "%" and run[i] == "s":
            chunks.append(run[start:i])
            start = i
    chunks.append(run[start:])
    return [chunk.replace(" ", "%s") for chunk in chunks if chunk]


def keyevent_command(keycode: int) -> str:
    """Shell command that presses one key."""
    return f"input keyevent {keycode}"


def input_text_command(text: str) -> str:
    """One shell command line typing printable-ASCII ``text`` (newlines as Enter, tabs as Tab).

    Raises ``ActionError`` if ``text`` needs the ADB Keyboard or has control characters. Returns ``""``
    for empty text.
    """
    if needs_adb_keyboard(text):
        raise ActionError("this text has non-ASCII characters; it must be typed through ADB Keyboard")
    parts: list[str] = []
    for piece in split_keys(text):
        if isinstance(piece, int):
            parts.append(keyevent_command(piece))
        else:
            parts.extend(f"input text {shell_quote(arg)}" for arg in input_text_arguments(piece))
    return " && ".join(parts)


def adb_keyboard_command(text: str) -> str:
    """One shell command line typing ``text`` through ADB Keyboard broadcasts (must be the active IME)."""
    parts: list[str] = []
    for piece in split_keys(text):
        if isinstance(piece, int):
            parts.append(keyevent_command(piece))
        else:
            encoded = base64.b64encode(piece.encode("utf-8")).decode("ascii")
            parts.append(f"am broadcast -a ADB_INPUT_B64 --es msg {encoded}")
    return " && ".join(parts)
