"""History tab: past runs from the trajectory directory, replay by frame, zip and GIF export."""

from __future__ import annotations

import dataclasses
import time
import zipfile
from pathlib import Path

import pytest
from PIL import Image
from ui_testkit import MODEL, make_backend, settings_for, two_step_script

from mae.device.virtual import VirtualPhone
from mae.testing.fake_model_server import FakeModelServer
from mae.ui import history
from mae.ui.forms import RunForm
from mae.ui.session import RunController


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real two-step run on the virtual phone."""
    tmp = tmp_path_factory.mktemp("history")
    with FakeModelServer() as server:
        two_step_script().load(server)
        backend = make_backend(settings_for(tmp, server.base_url), VirtualPhone())
        form = RunForm(
            task="Open Notes, then go home",
            device="virtual",
            backbone="custom",
            base_url=server.base_url,
            model=MODEL,
            evolution=False,
        )
        controller = RunController(backend.run_job)
        controller.start(backend.make_job(form))
        controller.join(60)
    assert controller.result is not None
    return Path(controller.result.run_dir)


def test_runs_are_listed_newest_first(run_dir: Path, tmp_path: Path) -> None:
    (run_dir.parent / "not-a-run").mkdir(exist_ok=True)
    runs = history.list_runs(run_dir.parent)
    assert [info.path for info in runs] == [run_dir]
    info = runs[0]
    assert (
        info.task == "Open Notes, then go home" and info.exit_reason == "finished" and info.status == "done"
    )
    assert info.steps >= 2 and "finished" in info.label()
    assert history.list_runs(tmp_path / "absent") == []


def test_replay_shows_each_annotated_step_then_the_final_screen(run_dir: Path) -> None:
    replay = history.load_replay(run_dir)
    assert replay is not None
    assert [step for step, _ in replay.frames] == [1, 2, 3]
    assert replay.frames[0][1].name.startswith("step_001_before")
    assert replay.frames[-1][1].name.startswith("step_002_after")
    image, card = history.frame_at(replay, 1)
    assert image is not None and image.size == (540, 1170)
    assert history.frame_at(replay, 1, display_width=2000)[0].size == (1080, 2340)  # type: ignore[union-attr]
    assert "Step 1" in card and "Open_App(&quot;Notes&quot;)" in card and "Notes is open" in card
    assert "Manager" in card and "Operator" in card and "Action Reflector" in card and "Notetaker" in card
    _, card = history.frame_at(replay, 2)
    assert "Home()" in card
    _, card = history.frame_at(replay, 99)  # clamped to the last frame
    assert "Step 3" in card and "judges the task finished" in card
    summary = history.summary_markdown(replay)
    assert "Open Notes, then go home" in summary and "(finished)" in summary and "9 model calls" in summary


def test_zip_holds_the_whole_run(run_dir: Path, tmp_path: Path) -> None:
    archive = history.export_zip(run_dir, tmp_path)
    with zipfile.ZipFile(archive) as handle:
        names = handle.namelist()
    assert f"{run_dir.name}/summary.json" in names and f"{run_dir.name}/steps.jsonl" in names
    assert any(name.endswith("step_001_before.jpg") for name in names)


def test_gif_animates_the_annotated_screens(run_dir: Path, tmp_path: Path) -> None:
    target = history.export_gif(run_dir, tmp_path, width=180)
    with Image.open(target) as gif:
        assert gif.format == "GIF" and gif.n_frames == 3 and gif.size == (180, 390)


def test_a_run_without_screens_has_no_gif_and_a_partial_log_still_loads(tmp_path: Path) -> None:
    broken = tmp_path / "20240101-000000-broken"
    broken.mkdir()
    (broken / "steps.jsonl").write_text(
        '{"kind": "action", "step": 1, "text": "Home()"}\n{"kind": "ag', "utf-8"
    )
    replay = history.load_replay(broken)
    assert replay is not None and replay.steps[1].action == "Home()"
    assert history.frame_at(replay, 1)[0] is None
    with pytest.raises(ValueError, match="no screenshots"):
        history.export_gif(broken, tmp_path)
    assert history.load_replay(tmp_path / "missing") is None
    assert history.run_info(broken) is not None and history.run_info(broken).started <= time.time()


def test_a_graded_run_shows_its_score_and_curve(run_dir: Path, tmp_path: Path) -> None:
    import json
    import shutil

    from mae.ui.export import export_html

    ungraded = history.run_info(run_dir)
    assert ungraded is not None and ungraded.score is None and ungraded.row()[-1] == "not graded"
    assert ungraded.row()[1:4] == ["Open Notes, then go home", "the agent finished the task", ungraded.steps]

    # an evaluation folder: results.jsonl names the run; its curve is the SSS after each step
    evaluation = tmp_path / "eval"
    copy = evaluation / "runs" / run_dir.name
    shutil.copytree(run_dir, copy)
    record = {"run_dir": str(copy), "curve": [0.0, 0.5, 1.0], "rubrics": ["Notes opened", "Home"]}
    record["final_passed"] = [True, True]
    (evaluation / "results.jsonl").write_text("not json\n" + json.dumps(record) + "\n")
    graded = history.run_info(copy)
    assert graded is not None and graded.score == 1.0 and graded.row()[-1] == "100%"
    page = export_html(copy, tmp_path).read_text()
    assert 'id="mae-sss-curve"' in page and "Satisfaction Score: 100%" in page and "✔ Notes opened" in page
    assert page.count("<polyline") == 1 and page.count("<circle") == 3

    plain = export_html(run_dir, tmp_path / "plain" if (tmp_path / "plain").mkdir() is None else tmp_path)
    text = plain.read_text()
    assert "mae-sss-curve" not in text and text.count("data:image/jpeg;base64,") == 3
    assert 'id="mae-step-1"' in text and 'id="mae-step-2"' in text and "http://" not in text
    with pytest.raises(ValueError, match="not a run folder"):
        export_html(tmp_path / "nothing-here", tmp_path)


def test_the_history_picker_counts_steps_in_words() -> None:
    from mae.ui.history import RunInfo

    one = RunInfo(Path("r"), "Open Notes", "finished", "finished", steps=1, seconds=2.0, started=0.0)
    assert one.label().endswith("· 1 step")
    assert RunInfo(Path("r"), "t", "finished", "finished", 3, 2.0, 0.0).label().endswith("· 3 steps")


def test_the_summary_shows_typed_text_as_text(run_dir: Path) -> None:
    """A task from a visitor, an MCP client or a task file never becomes an image or a link."""
    replay = history.load_replay(run_dir)
    task = "<img src=http://127.0.0.1:9/a.png> ![t](http://127.0.0.1:9/b.png) **bold** [x](javascript:1)"
    info = dataclasses.replace(replay.info, task=task, exit_reason="`x` <b>")
    summary = history.summary_markdown(dataclasses.replace(replay, info=info))
    assert "<img" not in summary and "<b>" not in summary and "](http" not in summary
    assert "](javascript" not in summary and "**bold**" not in summary
    assert "http&#58;//127.0.0.1:9/b.png" in summary  # the letters stay, no URL is fetched
