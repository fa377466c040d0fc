"""``mae eval --ray``: a local Ray instance, two actors with a virtual phone each, a few task runs.

The driver keeps the eval folder (records, run folders, the evolution memory) and its resume. Ray starts
once per module with two CPUs, no dashboard and quiet workers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mae.config import Settings
from mae.eval.records import RESULTS_FILE, read_results
from mae.eval.runner import EvalOptions, write_options
from mae.eval.tasks import select_tasks, virtual_tasks
from mae.eval.virtual_suite import load_task_suite
from mae.testing.fake_model_server import FakeModelServer
from mae.testing.reference_agent import ReferenceAgent
from mae.testing.truth_perceptor import TruthPerceptor

ray = pytest.importorskip("ray")  # requirements-dev.txt installs it: CI runs these tests

from mae.eval.ray_pool import RayEvalRunner, connect_ray, pack_folder, unpack_folder  # noqa: E402


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    connection = connect_ray(num_cpus=2)
    try:
        yield
    finally:
        connection.close()


def short_task_ids(count: int) -> list[str]:
    suite = [t for t in load_task_suite() if t.reference_actions]
    chosen = sorted(suite, key=lambda t: len(t.reference_actions))[:count]
    return [t.task_id for t in suite if t in chosen]


def run_on_ray(
    folder: Path, server: FakeModelServer, options: EvalOptions, progress: list[str]
) -> RayEvalRunner:
    tasks = select_tasks(virtual_tasks("basic"), options.tasks)
    settings = Settings.model_validate(
        {"backbone": "custom", "base_url": server.base_url, "model": "fake-vlm", "device": "virtual"}
    )
    write_options(folder, options)
    runner = RayEvalRunner(
        folder,
        options,
        tasks,
        settings,
        actors=2,
        progress=progress.append,
        perceptor_factory=TruthPerceptor.for_device,
    )
    runner.run()
    return runner


def test_ray_actors_run_the_tasks_and_the_driver_keeps_the_folder(local_ray: None, tmp_path: Path) -> None:
    ids = short_task_ids(3)
    options = EvalOptions(suite="virtual:basic", tasks=",".join(ids), backbone="custom:fake-vlm")
    progress: list[str] = []
    with FakeModelServer(responder=ReferenceAgent()) as server:
        runner = run_on_ray(tmp_path, server, options, progress)
        records = read_results(tmp_path)
        assert sorted(r.task_id for r in records) == sorted(ids)
        assert all(r.finished and r.grader == "code" and r.curve[-1] == 1.0 for r in records)
        assert runner.max_in_flight_seen == 1  # one request at a time per actor by default
        text = "\n".join(progress)
        assert "2 Ray actor(s): a1 virtual" in text and "[a1]" in text and "[a2]" in text
        for record in records:  # the run folders came back to the driver's eval folder
            run_dir = Path(record.run_dir or "")
            assert run_dir.parent == tmp_path / "runs" and (run_dir / "summary.json").is_file()
            assert json.loads((run_dir / "summary.json").read_text())
        lines = (tmp_path / RESULTS_FILE).read_text().splitlines()
        resumed: list[str] = []
        run_on_ray(tmp_path, server, options, resumed)  # resume: nothing left to do
        assert (tmp_path / RESULTS_FILE).read_text().splitlines() == lines
        assert "resuming: 3 of 3 task runs already done" in resumed


def test_packed_folders_come_back_whole_and_stay_inside(tmp_path: Path) -> None:
    source = tmp_path / "run"
    (source / "sub").mkdir(parents=True)
    (source / "summary.json").write_text("{}")
    (source / "sub" / "step_001_before.jpg").write_bytes(b"\xff\xd8jpeg")
    target = tmp_path / "copy"
    unpack_folder(pack_folder(source), target)
    assert (target / "sub" / "step_001_before.jpg").read_bytes() == b"\xff\xd8jpeg"
    assert pack_folder(tmp_path / "absent") == b""
