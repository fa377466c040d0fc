"""``device`` commands on the virtual phone: each one-shot command says its phone is fresh, and
``device shell`` keeps one phone for many operations."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from mae.cli import main


def test_one_shot_commands_say_the_virtual_phone_is_fresh(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["device", "do", "--device", "virtual", "Open_App(Notes)"]) == 0
    assert "each command starts a fresh virtual phone" in capsys.readouterr().err
    assert main(["device", "screenshot", "--device", "virtual", "-o", str(tmp_path / "home.png")]) == 0
    assert "device shell" in capsys.readouterr().err


def test_the_shell_keeps_one_phone_and_goes_on_after_a_bad_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, notes = tmp_path / "home.png", tmp_path / "notes.png"
    typed = [f"screenshot {home}", "Tap(5000", "screenshot n.xyz", "Open_App(Notes)", f"screenshot {notes}"]
    lines = "\n".join([*typed, "quit", "Back()", ""])
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    assert main(["device", "shell", "--device", "virtual"]) == 1  # two lines failed
    out, err = capsys.readouterr()
    assert 'done: Open_App("Notes")' in out and "Back()" not in out  # nothing runs after quit
    assert err.count("error: ") == 2 and "Traceback" not in err
    assert "fresh virtual phone" not in err and "virtual is open until quit" in err
    with Image.open(home) as before, Image.open(notes) as after:
        assert ImageChops.difference(before.convert("RGB"), after.convert("RGB")).getbbox() is not None

    monkeypatch.setattr("sys.stdin", io.StringIO("Home()\n"))  # the end of input ends it too
    assert main(["device", "shell", "--device", "virtual"]) == 0
