"""``python -m mae eval`` end to end: the virtual phone, a fast Perceptor, and the reference-action agent
on the fake model server. Tasks are picked from whatever the suite holds (the two shortest of one
scenario), so the tests survive changes to the task list."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from eval_testkit import TruthPerceptor

import mae.cli.eval_cmd as eval_cmd
import mae.eval.runner as eval_runner
from mae.cli import main
from mae.config import Settings
from mae.device.virtual import VirtualPhone
from mae.errors import ConfigError
from mae.eval.marks import JudgeMarks, judged_records, save_marks
from mae.eval.records import read_results
from mae.eval.virtual_suite import VirtualTask, load_task_suite
from mae.run.runtime import Runtime, build_runtime
from mae.testing.fake_model_server import FakeModelServer, FakeReply
from mae.testing.reference_agent import ReferenceAgent


def two_short_tasks() -> list[VirtualTask]:
    """The two tasks with the fewest reference actions within one scenario, in suite order."""
    by_scenario: dict[str, list[VirtualTask]] = {}
    for task in load_task_suite():
        if task.reference_actions:
            by_scenario.setdefault(task.scenario, []).append(task)
    best = min(
        (
            sorted(group, key=lambda t: len(t.reference_actions))[:2]
            for group in by_scenario.values()
            if len(group) > 1
        ),
        key=lambda pair: sum(len(t.reference_actions) for t in pair),
    )
    order = [t.task_id for t in load_task_suite()]
    return sorted(best, key=lambda t: order.index(t.task_id))


@pytest.fixture
def phone(monkeypatch: pytest.MonkeyPatch) -> VirtualPhone:
    phone = VirtualPhone()

    def fake_build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
        assert settings.device == "virtual"
        return build_runtime(settings, api_keys, device=phone, perceptor=TruthPerceptor(phone))

    monkeypatch.setattr(eval_cmd, "build_runtime", fake_build_runtime)
    return phone


def cli(server: FakeModelServer, out: Path, *extra: str) -> list[str]:
    return [
        "eval",
        "--backbone",
        "custom",
        "--base-url",
        server.base_url,
        "--model",
        "fake-vlm",
        "--out",
        str(out),
        *extra,
    ]


def test_eval_cli_virtual_writes_results_reports_and_plots(
    phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = two_short_tasks()
    fake_server.responder = ReferenceAgent()
    out = tmp_path / "eval"
    ids = ",".join(t.task_id for t in tasks)
    assert main(cli(fake_server, out, "--suite", "virtual:basic", "--agent", "e", "--tasks", ids)) == 0
    captured = capsys.readouterr()
    assert "[1/2]" in captured.err and "left" in captured.err  # progress with an ETA on stderr
    records = read_results(out)
    assert [r.task_id for r in records] == [t.task_id for t in tasks]
    for record, task in zip(records, tasks, strict=True):
        assert record.grader == "code" and record.finished and not record.termination_error
        assert record.curve[-1] == 1.0 and record.curve[0] < 1.0  # the reference actions reach full score
        assert len(record.curve) == len(record.actions) + 1 == len(task.reference_actions) + 1
        assert all(step is not None for step in record.rubric_steps)
    for name in (
        "report.md",
        "report.html",
        "sss_curve.png",
        "ss_per_scenario.png",
        "seconds_per_operation.png",
    ):
        assert (out / name).stat().st_size > 0, name
    assert (out / "sss_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = (out / "report.md").read_text()
    assert "| Mobile-Agent-E | Multi-Agent | 100.0 |" in report and "graded by code" in report
    assert "data:image/png;base64," in (out / "report.html").read_text()


def interrupting(real_run_task: Callable[..., Any], picked: Callable[[str], bool]) -> Callable[..., Any]:
    """``run_task`` that raises ``KeyboardInterrupt`` (Ctrl-C) at the first action of each task
    ``picked`` chooses by its instruction."""

    def run(instruction: str, **kw: Any) -> Any:
        listener = kw["listener"]

        def breaking(event: Any) -> None:
            listener(event)
            if picked(instruction) and event.type == "action":
                raise KeyboardInterrupt

        return real_run_task(instruction, **{**kw, "listener": breaking})

    return run


def test_eval_cli_resume_finishes_only_what_was_left(
    phone: VirtualPhone,
    fake_server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tasks = two_short_tasks()
    agent = ReferenceAgent()
    fake_server.responder = agent
    out = tmp_path / "eval"
    ids = ",".join(t.task_id for t in tasks)
    real_run_task: Callable[..., Any] = eval_runner.run_task
    second = interrupting(real_run_task, lambda instruction: instruction == tasks[1].instruction)
    monkeypatch.setattr(eval_runner, "run_task", second)  # Ctrl-C in the middle of the second task
    assert main(cli(fake_server, out, "--suite", "virtual:basic", "--tasks", ids)) == 130
    assert [r.task_id for r in read_results(out)] == [tasks[0].task_id]
    assert (out / "report.md").exists()

    monkeypatch.setattr(eval_runner, "run_task", real_run_task)
    assert main(cli(fake_server, out, "--suite", "virtual:basic", "--tasks", ids)) == 2  # needs --resume
    assert main(cli(fake_server, out, "--resume", "--setting", "evolution")) == 2  # other options
    other_model = [*cli(fake_server, out, "--resume")]
    other_model[other_model.index("fake-vlm")] = "another-vlm"
    assert main(other_model) == 2  # another backbone would mix two models in one report
    assert "was run with the backbone custom:fake-vlm, not custom:another-vlm" in capsys.readouterr().err
    assert main(cli(fake_server, out, "--resume", "--max-steps", "5")) == 2  # another step limit
    assert "was started with other --max-steps" in capsys.readouterr().err
    started = [r for r in agent.requests if r.role == "manager" and "name the first subgoal" in r.text]
    before = len(started)
    assert main(cli(fake_server, out, "--resume")) == 0
    started = [r for r in agent.requests if r.role == "manager" and "name the first subgoal" in r.text][
        before:
    ]
    assert len(started) == 1 and tasks[1].instruction in started[0].text  # only the interrupted task ran
    records = read_results(out)
    assert [r.task_id for r in records] == [t.task_id for t in tasks]
    assert all(r.finished for r in records)


def test_eval_cli_stopped_in_its_first_task_says_nothing_finished(
    phone: VirtualPhone,
    fake_server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tasks = two_short_tasks()
    fake_server.responder = ReferenceAgent()
    first = interrupting(eval_runner.run_task, lambda instruction: True)
    monkeypatch.setattr(eval_runner, "run_task", first)  # Ctrl-C during the very first task
    out = tmp_path / "eval"
    ids = ",".join(t.task_id for t in tasks)
    assert main(cli(fake_server, out, "--suite", "virtual:basic", "--tasks", ids)) == 130
    err = capsys.readouterr().err
    assert "no task finished, so there is nothing to report yet" in err
    assert "not an eval folder" not in err and "runs again on resume" in err


def test_eval_compare_puts_two_folders_side_by_side(
    phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = two_short_tasks()[1]
    for name, policy in (("full", "reference"), ("half", "halfway")):
        fake_server.responder = ReferenceAgent(policy=policy)  # type: ignore[arg-type]
        assert (
            main(cli(fake_server, tmp_path / name, "--suite", "virtual:basic", "--tasks", task.task_id)) == 0
        )
    capsys.readouterr()
    assert (
        main(
            [
                "eval",
                "compare",
                str(tmp_path / "full"),
                str(tmp_path / "half"),
                "--out",
                str(tmp_path / "c.md"),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    half = read_results(tmp_path / "half")[0]
    assert half.curve[-1] < 1.0  # stopping halfway loses rubric items
    delta = (half.curve[-1] - 1.0) * 100
    assert f"| Satisfaction Score (%) | 100.0 | {half.curve[-1] * 100:.1f} | {delta:+.1f} |" in text
    assert f"| {task.task_id} |" in text and (tmp_path / "c.md").read_text() == text


def test_eval_evolution_shares_memory_and_tells_the_reflectors_the_future_tasks(
    phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    tasks = two_short_tasks()
    agent = ReferenceAgent()
    fake_server.responder = agent
    out = tmp_path / "eval"
    ids = ",".join(t.task_id for t in tasks)
    assert (
        main(cli(fake_server, out, "--suite", "virtual:basic", "--setting", "evolution", "--tasks", ids)) == 0
    )
    first, second = read_results(out)
    assert first.setting == "evolution" and first.future_tasks == [tasks[1].instruction]
    assert second.future_tasks == []
    assert second.memory_version is not None and first.memory_version is not None
    assert second.memory_version > first.memory_version  # the first task's reflections were stored
    reflections = [r for r in agent.requests if r.role == "experience" and "### Current Tips ###" in r.text]
    assert len(reflections) == 2
    assert tasks[1].instruction in reflections[0].text.split("### Upcoming Tasks ###")[1]
    assert list((out / "memory").iterdir())  # the shared memory lives in the eval folder
    assert "Mobile-Agent-E + Evo" in (out / "report.md").read_text()
    # what each task was given and what it wrote back, in the record and the report
    assert first.memory is not None and second.memory is not None
    assert first.memory.version_written == second.memory_version
    assert len(first.memory.tips_given) == first.memory.tips_in_store == 4  # the paper's four user Tips
    assert first.memory.tips_written and set(first.memory.tips_written) <= set(second.memory.tips_given)
    assert second.memory.tips_in_store == len(second.memory.tips_given) > 4
    report = (out / "report.md").read_text()
    assert "## Long-term memory per task (Tips and Shortcuts)" in report
    table = report.split("## Long-term memory per task (Tips and Shortcuts)")[1]
    row = next(line for line in table.splitlines() if line.startswith(f"| {tasks[0].task_id} |"))
    assert f"memory version {first.memory.version_written}" in row and "Tip(s) new or reworded" in row


def test_eval_mobile_eval_e_tasks_wait_for_the_judge(
    phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    instruction = "Open Notes and check the first note."
    suite = tmp_path / "scenario_9.json"
    suite.write_text(
        json.dumps(
            {
                "scenario": "NOTES",
                "scenario_id": 9,
                "tasks": [
                    {
                        "task_id": "n1",
                        "instruction": instruction,
                        "type": "single_app",
                        "apps": ["Notes"],
                        "rubrics": ["Opened Notes", "Opened the first note"],
                        "human_reference_operations": ["open notes"],
                    },
                ],
            }
        )
    )
    fake_server.responder = ReferenceAgent({instruction: ['Open_App("Notes")']})
    out = tmp_path / "eval"
    assert main(cli(fake_server, out, "--suite", str(suite), "--device", "virtual")) == 0
    (record,) = read_results(out)
    assert record.source == "mobile-eval-e" and record.grader == "none" and record.reference_operations == 1
    assert "not graded yet" in (out / "report.md").read_text()
    save_marks(
        out,
        JudgeMarks(key=record.key, rubric_steps=[1, None], action_correct=[True], reflection_correct=[True]),
    )
    assert main(["eval", "report", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "| Mobile-Agent-E | Multi-Agent | 50.0 | 100.0 | 100.0 | 0.0 |" in report
    assert "judged by a person" in report
    judge = ["eval", "judge", str(out), "--backbone", "custom", "--base-url", fake_server.base_url]
    assert main([*judge, "--model", "judge-vlm"]) == 0  # a person's marks are never overwritten
    assert "marked 0 task run(s)" in capsys.readouterr().out


def test_eval_model_judge_grades_ungraded_runs_and_is_labelled(
    phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    instruction = "Open Notes and check the first note."
    suite = tmp_path / "scenario_9.json"
    task = {"task_id": "n1", "instruction": instruction, "rubrics": ["Opened Notes", "Opened the first note"]}
    suite.write_text(json.dumps({"scenario": "NOTES", "tasks": [task]}))
    fake_server.responder = ReferenceAgent({instruction: ['Open_App("Notes")', "Home()"]})
    out = tmp_path / "eval"
    assert main(cli(fake_server, out, "--suite", str(suite), "--device", "virtual")) == 0
    refusal = "I'm sorry, but I can't judge screenshots."
    verdict = "Here you go:\r\n### Thought ###\r\nNotes opened.\r\n"
    verdict += "### Rubric Steps ###\r\n1. After step 1\r\n2. never\r\n"
    fake_server.add(refusal, verdict, role="judge")
    judge = ["eval", "judge", str(out), "--backbone", "custom", "--base-url", fake_server.base_url]
    assert main([*judge, "--model", "judge-vlm"]) == 0
    assert "marked 1 task run(s)" in capsys.readouterr().out
    requests = fake_server.requests_for("judge")
    assert len(requests) == 2 and requests[0].image_count == 2  # the screens after both steps
    assert "1. Opened Notes" in requests[0].text and "step 2: Home()" in requests[0].text
    (record,) = judged_records(out, read_results(out))
    assert record.grader == "model" and record.rubric_steps == [1, None]
    report = (out / "report.md").read_text()
    assert "[MODEL JUDGE (not a person)]" in report and "MODEL JUDGE, not a person" in report
    assert "| Mobile-Agent-E | Multi-Agent | 50.0 |" in report


def test_eval_cli_errors_are_sentences(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--out", str(tmp_path / "x")]) == 2
    assert "--suite virtual" in capsys.readouterr().err
    assert main(["eval", "--suite", str(tmp_path / "missing"), "--out", str(tmp_path / "y")]) == 2
    assert "neither 'virtual' nor an existing file" in capsys.readouterr().err
    assert main(["eval", "--suite", "virtual", "--tasks", "no_such_*", "--out", str(tmp_path / "z")]) == 2
    assert "matches no task" in capsys.readouterr().err
    assert main(["eval", "--out", str(tmp_path / "w"), "--resume"]) == 2
    assert "nothing to resume" in capsys.readouterr().err
    assert main(["eval", "compare", str(tmp_path), str(tmp_path)]) == 2
    assert "is not an eval folder" in capsys.readouterr().err
    assert main(["eval", "--suite", "virtual", "--role-model", "boss=x", "--out", str(tmp_path / "v")]) == 2
    assert "ROLE=MODEL" in capsys.readouterr().err


def test_eval_honours_the_run_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def capture(settings: Any, api_keys: Any = None) -> Any:
        seen.append(settings)
        raise ConfigError("settings captured")

    monkeypatch.setattr(eval_cmd, "build_runtime", capture)
    out = tmp_path / "e"
    args = ["eval", "--suite", "virtual", "--agent", "v2", "--out", str(out), "--temperature", "0.9"]
    args += ["--timeout", "30", "--parallel-notetaker", "--max-steps", "7", "--role-model", "manager=m2"]
    assert main(args) == 2
    (settings,) = seen
    assert settings.temperature == 0.9 and settings.timeout_s == 30
    assert settings.loop.parallel_notetaker and settings.loop.max_steps == 7 and settings.loop.agent == "v2"
    assert settings.device == "virtual" and settings.log_dir == out / "runs"
    assert settings.roles["manager"].model == "m2"


@pytest.mark.parametrize("agent", ["v2", "v1"])
def test_eval_runs_the_baselines_and_counts_a_provider_failure_as_a_harness_exit(
    phone: VirtualPhone, tmp_path: Path, agent: str
) -> None:
    from mae.config import LoopSettings

    if "agent" not in LoopSettings.model_fields:
        pytest.skip("this build has no baseline agents")
    task = two_short_tasks()[0]
    refusal = FakeReply(status=400, body=json.dumps({"error": {"message": "model not found"}}))
    with FakeModelServer(responder=lambda request: refusal) as server:
        out = tmp_path / agent
        assert (
            main(cli(server, out, "--suite", "virtual:basic", "--agent", agent, "--tasks", task.task_id)) == 0
        )
        assert server.requests  # the baseline asked its model
    (record,) = read_results(out)
    assert record.agent == agent and record.exit_reason.value == "model_error" and record.harness_exit
    assert record.grader == "code" and record.curve == [0.0]
    assert (
        main(cli(server, tmp_path / "evo", "--suite", "virtual", "--agent", agent, "--setting", "evolution"))
        == 2
    )
    name = "Mobile-Agent-v2 | Multi-Agent" if agent == "v2" else "Mobile-Agent-v1 | Single-Agent"
    # a provider failure is the harness's exit, not the agent's termination error
    assert (
        f"| {name} | 0.0 | not judged | not judged | 0.0 | – | – | 100.0 |" in (out / "report.md").read_text()
    )


def test_eval_cli_a_provider_outage_stops_the_eval_and_scores_nothing(
    phone: VirtualPhone, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.responder = lambda request: FakeReply(status=503, body='{"error": {"message": "down"}}')
    out = tmp_path / "eval"
    ids = ",".join(t.task_id for t in two_short_tasks())
    argv = cli(fake_server, out, "--suite", "virtual:basic", "--tasks", ids, "--max-retries", "0")
    assert main(argv) == 7  # as `run`'s model_error
    err = capsys.readouterr().err
    assert "the model provider failed" in err and "it is not recorded and runs again on resume" in err
    assert "fix it, then continue with  python -m mae eval --out" in err
    assert not (out / "results.jsonl").exists()  # an outage is no task failure: nothing is scored
    assert len(fake_server.requests) == 1  # and the eval stopped at once
