"""``Type`` text escaping: the generated command runs through a real POSIX ``sh`` with a stand-in
``input``, and what ``input`` receives is decoded exactly as Android's ``InputShellCommand.sendText``
does (``%s`` -> space). The decoded keystrokes must equal the text asked for."""

from __future__ import annotations

import base64
import random
import subprocess

import pytest

from mae.device.adb_text import (
    KEYCODE_ENTER,
    KEYCODE_TAB,
    adb_keyboard_command,
    input_text_arguments,
    input_text_command,
    needs_adb_keyboard,
    split_keys,
)
from mae.errors import ActionError

# The stand-ins print one record per call: the command name, then each argument, NUL-separated.
SHIMS = (
    "input() { printf 'input'; for a in \"$@\"; do printf '\\000%s' \"$a\"; done; printf '\\001'; }; "
    "am() { printf 'am'; for a in \"$@\"; do printf '\\000%s' \"$a\"; done; printf '\\001'; }; "
)
KEYS = {KEYCODE_ENTER: "\n", KEYCODE_TAB: "\t"}


def android_send_text(arg: str) -> str:
    """Python port of Android's ``input text`` decoding (``%s`` becomes a space, nothing else)."""
    buff = list(arg)
    escape = False
    i = 0
    while i < len(buff):
        if escape:
            escape = False
            if buff[i] == "s":
                buff[i] = " "
                i -= 1
                del buff[i]
        if buff[i] == "%":
            escape = True
        i += 1
    return "".join(buff)


def run_on_sh(command: str) -> list[list[str]]:
    """Run ``command`` in ``/bin/sh`` with the stand-ins; return each call as [name, *args]."""
    out = subprocess.run(["sh", "-c", SHIMS + command], capture_output=True, check=True, timeout=10).stdout
    records = out.decode("utf-8").split("\x01")
    return [record.split("\x00") for record in records if record]


def typed_by_input(command: str) -> str:
    """What the phone would type for an ``input text`` / ``input keyevent`` command line."""
    typed = []
    for call in run_on_sh(command):
        assert call[0] == "input"
        verb, args = call[1], call[2:]
        assert len(args) == 1, f"input {verb} got {len(args)} arguments: {args}"
        if verb == "text":
            assert all(32 <= ord(c) <= 126 for c in args[0]), "input text only carries printable ASCII"
            assert " " not in args[0], "spaces must travel as %s"
            typed.append(android_send_text(args[0]))
        else:
            assert verb == "keyevent"
            typed.append(KEYS[int(args[0])])
    return "".join(typed)


TRICKY = [
    "hello world",
    "it's",
    "'",
    'say "hi"',
    "a & b | c ; d",
    "$HOME and ${PATH}",
    "`whoami`",
    "$(reboot)",
    "100% sure",
    "50%sale",
    "%s%s",
    "%%s",
    "%",
    "s%",
    "a\\nb",
    "C:\\Users\\me",
    "\\'",
    "*.txt ?",
    "<tag> (paren)",
    "~!@#$%^&*()_+-={}[]|:;'<>,.?/",
    "line1\nline2",
    "a\r\nb",
    "trailing space ",
    "  leading spaces",
    "multiple   spaces",
    "tab\there",
    "'single' \"double\" `back`",
    "-5 degrees",
    "#hashtag",
    "echo 'x' > /sdcard/f && rm -rf /",
    "!!",
    "don't stop; \"believin'\"",
    "https://www.google.com/search?q=korean+food&hl=en",
    "late-night Korean restaurants in Champaign, IL",
    "\n\nstarts with newlines",
]


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_text_survives_sh_and_input(text: str) -> None:
    expected = text.replace("\r\n", "\n")
    assert typed_by_input(input_text_command(text)) == expected


def test_random_texts_heavy_in_special_characters_round_trip() -> None:
    rng = random.Random(1234)
    alphabet = "%s %s'\"\\$`&|;()<>*?!#~\n\tab-"
    for _ in range(150):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        assert typed_by_input(input_text_command(text)) == text, repr(text)


def test_plain_text_is_one_input_call() -> None:
    command = input_text_command("Bose QC45 reviews")
    assert command == "input text 'Bose%sQC45%sreviews'"
    assert len(run_on_sh(command)) == 1


def test_literal_percent_s_is_split_into_two_calls() -> None:
    assert input_text_arguments("50%sale") == ["50%", "sale"]
    assert input_text_arguments("100% sure") == ["100%%ssure"]


def test_newlines_become_enter_key_between_parts() -> None:
    command = input_text_command("first\nsecond")
    assert command == "input text 'first' && input keyevent 66 && input text 'second'"


def test_empty_text_makes_no_command() -> None:
    assert input_text_command("") == ""


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x7f"])
def test_control_characters_are_refused(char: str) -> None:
    with pytest.raises(ActionError, match="control character"):
        input_text_command(f"a{char}b")


@pytest.mark.parametrize(
    ("text", "needs"),
    [
        ("plain ascii ~", False),
        ("Café", True),
        ("你好嗎", True),
        ("😸 cat", True),
        ("naïve", True),
        ("x\ny", False),
    ],
)
def test_which_text_needs_adb_keyboard(text: str, needs: bool) -> None:
    assert needs_adb_keyboard(text) is needs


def test_non_ascii_is_refused_by_input_text() -> None:
    with pytest.raises(ActionError, match="ADB Keyboard"):
        input_text_command("Crème brûlée")


@pytest.mark.parametrize("text", ["你好嗎? Hello?", "😸 Cat", "Crème brûlée\nà la carte", "naïve 'quote' $x"])
def test_adb_keyboard_broadcasts_carry_utf8_base64(text: str) -> None:
    typed = []
    for call in run_on_sh(adb_keyboard_command(text)):
        if call[0] == "am":
            assert call[1:5] == ["broadcast", "-a", "ADB_INPUT_B64", "--es"]
            assert call[5] == "msg"
            typed.append(base64.b64decode(call[6]).decode("utf-8"))
        else:
            assert call[1:] == ["keyevent", str(KEYCODE_ENTER)]
            typed.append("\n")
    assert "".join(typed) == text


def test_split_keys_keeps_runs_and_keys_in_order() -> None:
    assert split_keys("a\tb\r\nc") == ["a", KEYCODE_TAB, "b", KEYCODE_ENTER, "c"]
