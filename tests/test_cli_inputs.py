"""Bad command-line inputs each give a one-line error and exit 2 (never a traceback)."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image

from mae.actions.registry import make_atomic
from mae.cli import main
from mae.errors import ActionError

CUSTOM = ["--backbone", "custom", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
CUSTOM += ["--device", "virtual"]


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims ``width`` x ``height`` (a decompression bomb's shape)."""
    buffer = io.BytesIO()
    Image.new("L", (1, 1)).save(buffer, format="PNG")
    data = bytearray(buffer.getvalue())
    ihdr = data[12:29]  # b"IHDR" + 13 bytes of header fields
    ihdr[4:12] = struct.pack(">II", width, height)
    data[12:29] = ihdr
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(ihdr)))
    return bytes(data)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "bomb.png").write_bytes(png_claiming(20000, 20000))
    Image.new("RGB", (1, 1)).save(tmp_path / "dot.png")
    Image.new("RGB", (6000, 1)).save(tmp_path / "strip.png")
    (tmp_path / "latin1.toml").write_bytes(b'backbone = "\xe9"\n')
    (tmp_path / "nested.toml").write_text("a = " + "[" * 3000 + "]" * 3000 + "\n")
    (tmp_path / "tasks.json").write_text("[" * 50000 + "]" * 50000)
    (tmp_path / "shortcuts.json").write_text("[" * 50000 + "]" * 50000)
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "folder").mkdir()
    return tmp_path


CASES = {
    "decompression bomb": ["perceive", "{d}/bomb.png"],
    "1x1 image": ["perceive", "{d}/dot.png"],
    "strip image": ["perceive", "{d}/strip.png"],
    "profile is a folder": ["run", "x", "--profile", "{d}/folder", *CUSTOM],
    "profile not UTF-8": ["run", "x", "--profile", "{d}/latin1.toml", *CUSTOM],
    "profile nested": ["run", "x", "--profile", "{d}/nested.toml", *CUSTOM],
    "log dir is a file": ["run", "x", "--log-dir", "{d}/a-file", *CUSTOM],
    "log dir inside a file": ["run", "x", "--log-dir", "{d}/a-file/runs", *CUSTOM],
    "base URL not a URL": ["run", "x", *CUSTOM, "--base-url", "notaurl"],
    "task too long": ["run", "x" * 5000, *CUSTOM, "--log-dir", "{d}/runs"],
    "nested task list": ["run", "--tasks", "{d}/tasks.json", *CUSTOM, "--memory-dir", "{d}/mem"],
    "nested shortcuts": ["memory", "import", "--shortcuts", "{d}/shortcuts.json", "--memory-dir", "{d}/mem"],
    "memory dir unwritable": ["run", "x", *CUSTOM, "--memory-dir", "/proc/self/mem-test"],
    "screenshot extension": ["device", "screenshot", "-o", "{d}/x.xyz", "--device", "virtual"],
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_cli_input_is_one_line_and_exit_2(
    case: str, files: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MAE_PROFILE", raising=False)
    argv = [part.format(d=files) for part in CASES[case]]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err


def test_an_unwritable_memory_folder_is_refused_before_the_task(
    files: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MAE_PROFILE", raising=False)
    argv = ["run", "x", *CUSTOM, "--memory-dir", "/proc/self/mem-test", "--log-dir", str(files / "runs")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "cannot write the memory folder /proc/self/mem-test" in err and "--memory-dir" in err
    assert not (files / "runs").exists()  # nothing ran


def test_memory_import_without_a_kind_says_how_to_import(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["memory", "import", str(files / "nosuch.txt"), "--memory-dir", str(files / "mem")])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--tips" in err and "--shortcuts" in err and "usage: python -m mae memory import" in err


def test_importing_tips_says_how_to_get_the_old_ones_back(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (files / "tips.txt").write_text("1. Close pop-ups first.\n2. Prefer search over scrolling.\n")
    argv = ["memory", "import", "--tips", str(files / "tips.txt"), "--memory-dir", str(files / "m")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Tips replaced" in out and "python -m mae memory rollback 0" in out


def test_type_with_a_lone_surrogate_is_an_action_error() -> None:
    with pytest.raises(ActionError, match="unpaired surrogate"):
        make_atomic("Type", {"text": "caf\udce9"})


def test_a_log_folder_that_refuses_writes_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mae.errors import ConfigError
    from mae.run.trajectory import new_run_dir

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)  # what a read-only mount answers
    with pytest.raises(ConfigError, match=r"cannot write the run log in .* \(permission denied\): choose"):
        new_run_dir(tmp_path / "runs", "Open Notes")


@pytest.mark.parametrize("text", ["pizza\x1b[0m", "a\x00b", "bell\x07"])
def test_type_with_a_control_character_is_an_action_error(text: str) -> None:
    with pytest.raises(ActionError, match="control character"):
        make_atomic("Type", {"text": text})
    assert make_atomic("Type", {"text": "two\nlines\tand a tab"}).text == "two\nlines\tand a tab"
