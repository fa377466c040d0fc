"""``mae eval --workers N``: task runs on N virtual phones at once, with the results, reports and resume of
a serial eval; a bounded number of model requests in flight; a worker whose phone fails stops alone.

The reference-action agent answers on the fake model server; a ground-truth Perceptor keeps it fast."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from eval_testkit import record

import mae.cli.eval_cmd as eval_cmd
from mae.cli import main
from mae.config import Settings
from mae.device.virtual import VirtualPhone
from mae.errors import ConfigError, DeviceError
from mae.eval.records import RESULTS_FILE, append_result, read_results
from mae.eval.runner import EvalOptions, pending_episodes, write_options
from mae.eval.tasks import select_tasks, virtual_tasks
from mae.eval.virtual_suite import load_task_suite
from mae.eval.workers import ParallelEvalRunner, RequestGate, WorkerBoard, phone_specs
from mae.run.runtime import Runtime, build_runtime
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest
from mae.testing.reference_agent import ReferenceAgent
from mae.testing.truth_perceptor import TruthPerceptor

VOLATILE = {"run_dir", "finished_at", "totals", "cost_usd", "cost_note"}


def short_task_ids(count: int) -> list[str]:
    """The ``count`` tasks of the basic suite with the fewest reference actions, in suite order."""
    suite = [t for t in load_task_suite() if t.reference_actions]
    chosen = sorted(suite, key=lambda t: len(t.reference_actions))[:count]
    return [t.task_id for t in suite if t in chosen]


class FailingPhone(VirtualPhone):
    """A virtual phone whose connection drops at its ``fail_at``-th screenshot."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.fail_at = fail_at
        self.shots = 0

    def screenshot(self) -> Any:
        self.shots += 1
        if self.shots >= self.fail_at:
            raise DeviceError("the phone went away (USB cable unplugged)")
        return super().screenshot()


@dataclass
class Phones:
    """The phones the eval command opened; ``queued`` ones are handed out first (else fresh ones)."""

    opened: list[VirtualPhone] = field(default_factory=list)
    queued: list[VirtualPhone] = field(default_factory=list)


@pytest.fixture
def phones(monkeypatch: pytest.MonkeyPatch) -> Phones:
    """A fresh virtual phone for every runtime the eval command builds (one per worker)."""
    phones = Phones()

    def fake_build_runtime(settings: Settings, api_keys: Any = None) -> Runtime:
        assert settings.device == "virtual"
        phone = phones.queued.pop(0) if phones.queued else VirtualPhone()
        phones.opened.append(phone)
        return build_runtime(settings, api_keys, device=phone, perceptor=TruthPerceptor(phone))

    monkeypatch.setattr(eval_cmd, "build_runtime", fake_build_runtime)
    return phones


def cli(server: FakeModelServer, out: Path, *extra: str) -> list[str]:
    model = ["--backbone", "custom", "--base-url", server.base_url, "--model", "fake-vlm"]
    return ["eval", *model, "--out", str(out), *extra]


def comparable(folder: Path) -> list[dict[str, Any]]:
    """The records of ``folder`` without what differs between any two runs (timings, paths), by key."""
    records = [json.loads(r.model_dump_json(exclude=VOLATILE)) for r in read_results(folder)]
    return sorted(records, key=lambda r: r["key"])


def report_shape(folder: Path) -> list[str]:
    """``report.md`` with every number masked: the shape of the report, not its timings (its per-task
    rows follow the order the task runs finished in, which parallel workers change)."""
    lines = (folder / "report.md").read_text().splitlines()
    return sorted(re.sub(r"\d+(\.\d+)?", "#", line) for line in lines)


def test_parallel_eval_writes_what_a_serial_eval_writes_and_resumes_like_one(
    phones: Phones, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.responder = ReferenceAgent()
    ids = ",".join(short_task_ids(3))
    args = ("--suite", "virtual:basic", "--tasks", ids, "--repeat", "2")
    assert main(cli(fake_server, tmp_path / "serial", *args)) == 0
    assert len(phones.opened) == 1
    capsys.readouterr()
    assert main(cli(fake_server, tmp_path / "parallel", *args, "--workers", "3")) == 0
    assert len(phones.opened) == 4  # three more phones, one per worker
    err = capsys.readouterr().err
    assert "3 workers, at most 3 model requests in flight, 6 task run(s) to do" in err
    for worker in ("[w1]", "[w2]", "[w3]"):
        assert worker in err  # a progress line per worker
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    assert comparable(parallel) == comparable(serial)
    assert all(r.finished and r.curve[-1] == 1.0 for r in read_results(parallel))
    assert report_shape(parallel) == report_shape(serial)
    files = {p.name for p in serial.iterdir() if p.is_file()}
    assert files == {p.name for p in parallel.iterdir() if p.is_file()} and "report.html" in files
    assert len(list((parallel / "runs").iterdir())) == len(list((serial / "runs").iterdir())) == 6
    for result in read_results(parallel):
        assert result.run_dir and (Path(result.run_dir) / "summary.json").is_file()

    # resume with workers: a folder holding the first two task runs gets the other four, in serial format
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    (resumed / "eval.json").write_text((serial / "eval.json").read_text())
    lines = (serial / RESULTS_FILE).read_text().splitlines(keepends=True)
    (resumed / RESULTS_FILE).write_text("".join(lines[:2]))
    assert main(cli(fake_server, resumed, "--resume", "--workers", "2")) == 0
    assert "resuming: 2 of 6 task runs already done" in capsys.readouterr().err
    assert comparable(resumed) == comparable(serial)
    assert len((resumed / RESULTS_FILE).read_text().splitlines()) == 6  # nothing ran twice
    assert main(cli(fake_server, resumed, "--resume", "--workers", "2")) == 0  # nothing left to do


def test_a_worker_whose_phone_fails_ends_its_task_and_the_others_go_on(
    phones: Phones, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.responder = ReferenceAgent()
    phones.queued.append(FailingPhone(fail_at=3))  # worker 1's phone drops in its first task
    ids = short_task_ids(3)
    out = tmp_path / "eval"
    args = ("--suite", "virtual:basic", "--tasks", ",".join(ids), "--workers", "2")
    assert main(cli(fake_server, out, *args)) == 0
    err = capsys.readouterr().err
    assert "[w1] stops: its phone failed" in err and "the 1 other worker(s) go on" in err
    records = read_results(out)
    assert sorted(r.task_id for r in records) == sorted(ids)  # every task ran once
    failed = [r for r in records if r.exit_reason.value == "device_error"]
    assert (
        len(failed) == 1 and "USB cable" in failed[0].message
    )  # ended cleanly, recorded as a serial eval does
    assert sum(r.finished for r in records) == 2
    assert "Traceback" not in err


def test_every_phone_failing_stops_the_eval_with_what_to_do(
    phones: Phones, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.responder = ReferenceAgent()

    phones.queued.extend([FailingPhone(fail_at=1), FailingPhone(fail_at=1)])
    out = tmp_path / "eval"
    ids = ",".join(short_task_ids(3))
    assert main(cli(fake_server, out, "--suite", "virtual:basic", "--tasks", ids, "--workers", "2")) == 8
    err = capsys.readouterr().err
    assert [r.exit_reason.value for r in read_results(out)] == ["device_error"] * 2
    assert "every phone failed, so 1 task run(s) did not run" in err
    assert "--resume" in err and "Traceback" not in err


def test_requests_in_flight_stay_within_the_bound(tmp_path: Path) -> None:
    """Three workers, at most two requests at once: the server never sees a third."""
    agent = ReferenceAgent()
    lock = threading.Lock()
    seen = {"now": 0, "most": 0}

    def slow(request: RecordedRequest) -> FakeReply | str | None:
        with lock:
            seen["now"] += 1
            seen["most"] = max(seen["most"], seen["now"])
        try:
            time.sleep(0.05)
            return agent(request)
        finally:
            with lock:
                seen["now"] -= 1

    ids = short_task_ids(3)
    options = EvalOptions(suite="virtual:basic", tasks=",".join(ids), backbone="custom:fake-vlm")
    tasks = select_tasks(virtual_tasks("basic"), options.tasks)
    with FakeModelServer(responder=slow) as server:
        settings = Settings.model_validate(
            {
                "backbone": "custom",
                "base_url": server.base_url,
                "model": "fake-vlm",
                "log_dir": tmp_path / "runs",
            }
        )
        phones = [VirtualPhone() for _ in range(3)]
        runtimes = [build_runtime(settings, device=p, perceptor=TruthPerceptor(p)) for p in phones]
        write_options(tmp_path, options)
        board = WorkerBoard()
        gate = RequestGate(2)
        runner = ParallelEvalRunner(tmp_path, options, tasks, runtimes, gate=gate, board=board)
        records = runner.run()
    assert sorted(r.task_id for r in records) == sorted(ids)
    assert seen["most"] == gate.max_in_flight == 2  # the bound was reached, never passed
    assert gate.requests == len(server.requests)
    lines = board.lines()
    assert len(lines) == 3 and all(re.match(r"w\d \(virtual\): finished · \d done", line) for line in lines)
    assert sum(s.done for s in board.snapshot()) == 3


def test_phone_specs_give_each_worker_its_own_phone() -> None:
    assert phone_specs("virtual", 3) == ["virtual"] * 3
    assert phone_specs("emulator-5554, 192.168.1.7:5555", 2) == ["emulator-5554", "192.168.1.7:5555"]
    with pytest.raises(ConfigError, match="needs one phone each, but --device names 1"):
        phone_specs("emulator-5554", 2)
    with pytest.raises(ConfigError, match="between 1 and"):
        phone_specs("virtual", 0)


def test_max_in_flight_without_workers_is_refused(
    phones: Phones, fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "eval"
    assert main(cli(fake_server, out, "--suite", "virtual:basic", "--max-in-flight", "2")) == 2
    assert "add --workers N" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--workers", "0"), "--workers must be between 1 and 64"),
        (("--workers", "2", "--max-in-flight", "0"), "--max-in-flight must be at least 1"),
    ],
)
def test_bad_worker_counts_are_refused_in_a_sentence(
    fake_server: FakeModelServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: tuple[str, ...],
    message: str,
) -> None:
    assert main(cli(fake_server, tmp_path / "eval", "--suite", "virtual:basic", *flags)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "eval").exists()


def test_evolution_keeps_a_scenario_in_order_on_one_worker_and_individual_runs_anywhere(
    tmp_path: Path,
) -> None:
    tasks = virtual_tasks("basic")
    scenarios = {t.scenario for t in tasks}
    options = EvalOptions(suite="virtual:basic", setting="evolution", repeat=2)
    chains = pending_episodes(tmp_path, options, tasks)
    assert len(chains) == 2 * len(scenarios)  # one chain per scenario and repeat
    for chain in chains:
        assert len({(e.task.scenario, e.repeat) for e in chain}) == 1
        assert [e.order for e in chain] == list(range(len(chain)))
        assert chain[0].future == [e.task.instruction for e in chain[1:]]
    individual = pending_episodes(tmp_path, options.model_copy(update={"setting": "individual"}), tasks)
    assert [len(c) for c in individual] == [1] * (2 * len(tasks))
    # a finished task run is left out; the rest of its chain still runs in order
    first = chains[0][0]
    append_result(tmp_path, record(first.task.task_id, scenario=first.task.scenario))
    again = pending_episodes(tmp_path, options, tasks)
    assert [e.key for e in again[0]] == [e.key for e in chains[0][1:]]
