"""``python -m mae models doctor`` against local fake servers that answer like each coordinate convention.

Each fake (``mae.testing.grounding_fake``) finds the target a request names, answers in its own frame
for the image size it received, with +-15 px of noise, a tenth of its replies anywhere, and the reply
styles real models write; one answers at random, one refuses, one resizes with a pixel budget no
convention predicts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mae.cli import main
from mae.llm.client import ChatClient
from mae.llm.providers import ModelProfile
from mae.serving.calibration import calibration_cases
from mae.serving.doctor import DoctorError, collect_replies, diagnose, plan_requests, run_doctor
from mae.serving.doctor_report import report_markdown, summary_markdown
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest
from mae.testing.grounding_fake import GroundingFake


@pytest.fixture(autouse=True)
def _no_configured_convention(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAE_COORDINATES", raising=False)


def _doctor(
    capsys: pytest.CaptureFixture[str], server: FakeModelServer, out: Path, *extra: str
) -> tuple[int, str]:
    argv = [
        "models",
        "doctor",
        "--backbone",
        "custom",
        "--base-url",
        server.base_url,
        "--model",
        "served-vlm",
    ]
    code = main([*argv, "--out", str(out), *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize(
    ("fake", "configured", "verdict", "exit_code"),
    [
        ("screen", "screen", "taps land on target", 0),
        ("qwen2.5-vl", "screen", "another convention fits", 1),
        # UI-TARS-1.5's frame is within 2 % of an image sent at max_side: check it against the 0-1000 grid
        ("ui-tars-1.5", "qwen3-vl", "another convention fits", 1),
        ("qwen3-vl", "screen", "another convention fits", 1),
    ],
)
def test_each_convention_is_identified(
    fake: str,
    configured: str,
    verdict: str,
    exit_code: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    detected = fake
    with FakeModelServer(responder=GroundingFake(fake)) as server:
        code, out = _doctor(capsys, server, tmp_path / "report", "--coordinates", configured)
        assert len(server.requests) == 20  # the default budget
        server.assert_done()
    assert code == exit_code
    assert f"verdict: {verdict}" in out
    assert f"setting: MAE_COORDINATES={detected}" in out
    assert "Screenshots sent at 768x1664 are answered as if the image were" in out
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert f"| {detected} (" in report and "detected" in report.split(f"| {detected} (")[1].split("|")[0]
    assert (tmp_path / "report" / "doctor.png").stat().st_size > 10_000
    assert "MAE_COORDINATES" in report and "## Image size the server appears to use" in report


def _client(server: FakeModelServer, convention: str | None = None, model: str = "served-vlm") -> ChatClient:
    profile = ModelProfile(base_url=server.base_url, model=model, max_retries=0)
    return ChatClient(profile.with_convention(convention) if convention else profile)


def test_fractions_are_recognised_but_have_no_setting() -> None:
    with FakeModelServer(responder=GroundingFake("fractions")) as server:
        report = run_doctor(_client(server))
    assert report.detected == "fractions" and report.verdict == "unsupported"
    assert report.setting is None and report.exit_code == 1
    assert "0-1 fractions" in report.headline


def test_random_answers_are_reported_unexplained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeModelServer(responder=GroundingFake("random")) as server:
        code, out = _doctor(capsys, server, tmp_path / "r")
    assert code == 1
    assert "verdict: no convention explains the replies" in out
    assert "setting:" not in out
    assert "not finding the targets" in out and "chat template" in out and "vLLM version" in out


def test_an_unexpected_image_budget_is_unexplained_but_fits_one_scale() -> None:
    with FakeModelServer(responder=GroundingFake("resized", max_pixels=640 * 28 * 28)) as server:
        report = run_doctor(_client(server))
    assert report.verdict == "unexplained" and report.detected is None
    assert report.free.hit_rate >= 0.8
    advice = " ".join(report.advice)
    assert "max_pixels" in advice and "answered as if they were" in advice
    first = report.free.groups[0]
    assert first.sent_size == (768, 1664) and first.frame is not None
    assert abs(first.frame[0] - 476) < 25 and abs(first.frame[1] - 1036) < 50  # smart_resize within 640x28x28


def test_the_configured_convention_passes_and_equivalents_are_named() -> None:
    with FakeModelServer(responder=GroundingFake("qwen2.5-vl")) as server:
        client = _client(server, "gui-owl")
        replies = collect_replies(client)
        sizes = {size for request in server.requests for size in request.image_sizes}
    report = diagnose(replies, client)
    assert report.verdict == "ok" and report.exit_code == 0 and report.detected == "qwen2.5-vl"
    assert "gui-owl" in report.fit("qwen2.5-vl").same_as
    named = diagnose(replies, client, configured_name="gui-owl")  # as the setting named it
    assert named.configured == named.detected == "gui-owl" and named.setting == "MAE_COORDINATES=gui-owl"
    assert diagnose(replies, client, configured_name="qwen3-vl").configured == "qwen2.5-vl"  # not this one
    assert sizes <= {(672, 1456), (1484, 672), (672, 1484)}  # sent the way the agent sends (qwen budget)
    # sent within every budget, UI-TARS-1.5 and Qwen2.5-VL read the same: also fine, and said so
    with FakeModelServer(responder=GroundingFake("ui-tars-1.5")) as server:
        report = run_doctor(_client(server, "qwen2.5-vl"))
    assert report.verdict == "ok" and "ui-tars-1.5" in report.fit("qwen2.5-vl").same_as


def test_a_model_name_that_disagrees_with_its_replies_is_warned_about() -> None:
    with FakeModelServer(responder=GroundingFake("qwen3-vl")) as server:
        report = run_doctor(_client(server, model="Qwen/Qwen2.5-VL-7B-Instruct"), trials=10)
    assert report.detected == "qwen3-vl" and report.verdict == "switch"
    assert any("name says it is a qwen2.5-vl model" in warning for warning in report.warnings)


def test_prompts_that_disagree_are_warned_about() -> None:
    grounding, operator = GroundingFake("qwen2.5-vl"), GroundingFake("screen")

    def both(request: RecordedRequest) -> str | None:
        return (operator if "### User Request ###" in request.text else grounding)(request)

    with FakeModelServer(responder=both) as server:
        report = run_doctor(_client(server))
        styles = {"operator" if "### User Request ###" in r.text else "grounding" for r in server.requests}
    assert styles == {"grounding", "operator"}
    assert report.by_style == {"grounding": "qwen2.5-vl", "operator": "screen"}
    assert any("through the Operator prompt" in warning for warning in report.warnings)


def test_refusals_make_the_replies_unreadable() -> None:
    with FakeModelServer(responder=lambda _r: "I'm sorry, but I can't help with identifying that.") as server:
        report = run_doctor(_client(server), trials=6)
    assert report.verdict == "unreadable" and report.exit_code == 1
    assert "chat template" in " ".join(report.advice)


def test_failed_requests_count_as_misses_and_a_dead_server_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = GroundingFake("screen")
    calls: list[int] = []

    def flaky(request: RecordedRequest) -> FakeReply | str | None:
        calls.append(1)
        return (
            FakeReply(status=400, body='{"error": {"message": "bad"}}') if len(calls) == 1 else fake(request)
        )

    with FakeModelServer(responder=flaky) as server:
        report = run_doctor(_client(server), trials=8)
    assert any("1 of 8 requests failed" in warning for warning in report.warnings)
    with FakeModelServer(responder=lambda _r: FakeReply(status=400, body="{}")) as server:
        with pytest.raises(DoctorError, match="no calibration request got an answer"):
            run_doctor(_client(server), trials=4)
        code, out = _doctor(capsys, server, tmp_path / "dead", "--trials", "4")
    assert code == 2 and "error: no calibration request got an answer" in out and "Traceback" not in out


def test_bad_options_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeModelServer() as server:
        code, out = _doctor(capsys, server, tmp_path / "x", "--trials", "500")
        assert code == 2 and "--trials must be between 2 and" in out
        code, out = _doctor(capsys, server, tmp_path / "x", "--threshold", "1.5")
        assert code == 2 and "threshold" in out
        assert not server.requests


def test_calibration_targets_are_unique_on_screen_and_mixed() -> None:
    cases = calibration_cases()
    assert len({case.description for case in cases}) == len(cases)
    for case in cases:
        left, top, right, bottom = case.box
        width, height = case.screen.size
        assert 0 <= left < right <= width and 0 <= top < bottom <= height
    first = cases[:10]
    assert any(c.screen.size[0] > c.screen.size[1] for c in first)
    assert any(c.screen.size[0] < c.screen.size[1] for c in first)
    assert any(c.screen.name.startswith(("home", "notes", "amazon")) for c in first)
    plan = plan_requests(20)
    assert [style for style, _ in plan].count("operator") == 10


def test_report_quotes_model_text_and_summary_holds_none_of_it() -> None:
    hostile = "<img src=x onerror=alert(1)> ![x](http://example.invalid/a.png) | `Tap(1, 2)`"
    with FakeModelServer(responder=lambda _r: hostile) as server:
        report = run_doctor(_client(server), trials=4)
    summary = summary_markdown(report)
    assert "<img" not in summary and "example.invalid" not in summary
    full = report_markdown(report)
    row = next(line for line in full.splitlines() if "onerror" in line)
    assert "`<img src=x onerror=alert(1)> ![x](http://example.invalid/a.png) \\| 'Tap(1, 2)'`" in row
