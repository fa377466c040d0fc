"""Argument errors: the usage of the subcommand typed, "did you mean" for subcommands, choices and flags,
and the options that name a model wherever a model is named."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from mae.cli import COMMANDS, build_parser, main


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err


def test_a_mistyped_flag_gets_the_subcommands_usage_and_the_flag_it_resembles(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _error(["run", "--devise", "virtual", "Open Notes"], capsys)
    assert err.startswith("usage: python -m mae run ")
    assert "--devise: did you mean --device?" in err
    err = _error(["models", "check", "--bakbone=vllm"], capsys)
    assert err.startswith("usage: python -m mae models check ") and "did you mean --backbone?" in err
    err = _error(["device", "do", "Back()", "--devcie", "virtual"], capsys)
    assert err.startswith("usage: python -m mae device do ") and "did you mean --device?" in err


def test_unknown_words_without_a_close_flag_say_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    err = _error(["run", "Open", "Notes", "--device", "virtual"], capsys)
    assert "unrecognized arguments: Notes" in err and "in quotes" in err
    err = _error(["config", "show", "--zzzzzz"], capsys)
    assert "python -m mae config show --help lists its options" in err


def test_a_mistyped_subcommand_or_choice_gets_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert "did you mean 'run'?" in _error(["rn", "Open Notes"], capsys)
    err = _error(["device", "scrennshot"], capsys)
    assert err.startswith("usage: python -m mae device ") and "did you mean 'screenshot'?" in err
    err = _error(["run", "--tasks", "t.json", "--setting", "evolutoin"], capsys)
    assert "did you mean 'evolution'?" in err


def test_models_check_takes_the_backbone_like_run_and_the_doctor(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    for argv in (
        ["run", "x"],
        ["eval"],
        ["mcp"],
        ["models", "check"],
        ["models", "doctor"],
    ):
        args = parser.parse_args([*argv, "--backbone", "custom", "--base-url", "http://127.0.0.1:9/v1"])
        assert (args.backbone, args.base_url) == ("custom", "http://127.0.0.1:9/v1"), argv
    # custom without a model is the settings' own sentence, not an argument error
    assert main(["models", "check", "--backbone", "custom", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "needs a base URL and a model" in capsys.readouterr().err


def test_the_top_level_help_lists_what_each_subcommand_says_of_itself() -> None:
    full = build_parser()
    quick = build_parser(())
    for parser, expect_loaded in ((full, True), (quick, False)):
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        listed = {choice.dest: choice.help for choice in sub._choices_actions}
        assert listed == {name: help_text for name, (_module, help_text) in COMMANDS.items()}
        assert ("--device" in sub.choices["run"].format_help()) is expect_loaded


def test_the_cli_says_where_a_missing_key_goes_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "Open Notes", "--backbone", "openai", "--device", "virtual"]
    assert main([*argv, "--log-dir", str(tmp_path / "runs"), "--memory-dir", str(tmp_path / "mem")]) == 2
    err = capsys.readouterr().err.strip()
    assert "OPENAI_API_KEY" in err and "export OPENAI_API_KEY=" in err and "demo" not in err
    assert "\n" not in err
