"""The Judge view follows its eval, in a real browser (Debian's chromium through Playwright).

The real case: a second eval of the same single task (``--max-steps 1``) left the panel on the first
eval's run ("finished" where the new results say ``max_steps``), and marks saved there went to the new
folder's run. Here the panel must show the new run, save onto it, refuse a save when the run on screen
is no longer the one the folder holds, and follow results that change behind the page.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from ui_testkit import MODEL, free_port, make_backend, settings_for

from mae.device.virtual import VirtualPhone
from mae.errors import ExitReason
from mae.eval.marks import MARKS_DIR
from mae.eval.records import TaskRecord, append_result, read_results
from mae.eval.virtual_suite import load_task_suite
from mae.testing.fake_model_server import FakeModelServer
from mae.testing.reference_agent import ReferenceAgent
from mae.ui import judge_view
from mae.ui.runner import Backend

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "ui"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
WAIT_MS = 120_000
"""A ceiling, not an expectation: the page usually answers in seconds."""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@contextmanager
def serve(tmp_path: Path, follow_s: float, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Backend]]:
    """The demo on a free port, its Judge view looking for changed results every ``follow_s``."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    import app

    monkeypatch.setattr(judge_view, "FOLLOW_S", follow_s)
    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    blocks = app.build_demo(backend, lister=lambda: [])
    port = free_port()
    app.launch(blocks, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/", backend
    finally:
        blocks.close()


def rerun(folder: Path, exit_reason: ExitReason) -> TaskRecord:
    """Append a rerun of the folder's only task run (as a resume does): same key, another run."""
    (record,) = read_results(folder)
    again = record.model_copy(
        update={"exit_reason": exit_reason, "finished_at": time.time() + 1, "run_dir": None}
    )
    append_result(folder, again)
    return again


def test_ui_judge_view_shows_the_new_eval_of_the_same_task_and_saves_onto_the_run_shown(
    tmp_path: Path, fake_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import expect, sync_playwright

    fake_server.responder = ReferenceAgent()
    shortest = min(
        (t for t in load_task_suite() if t.reference_actions), key=lambda t: len(t.reference_actions)
    )
    # no timer during this test: the save below must meet a change the page has not seen yet
    with serve(tmp_path, 3600.0, monkeypatch) as (url, backend), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1100})
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        page.get_by_role("tab", name="Evaluate").click()
        page.locator("#mae-eval-suite").get_by_text("Basic").click()
        tasks = page.locator("#mae-eval-tasks")
        expect(tasks).to_contain_text(shortest.task_id, timeout=WAIT_MS)
        for box in tasks.locator("input[type=checkbox]").all():
            if box.is_checked():
                box.uncheck()
        tasks.locator("label", has_text=shortest.task_id).click()
        page.locator("#mae-eval-base-url").locator("input, textarea").fill(fake_server.base_url)
        page.locator("#mae-eval-model").locator("input, textarea").fill(MODEL)
        header = page.locator("#mae-judge-instruction")

        page.locator("#mae-eval-start").click()
        expect(header).to_contain_text("· finished ·", timeout=WAIT_MS)
        (first,) = [p for p in backend.log_dir.iterdir() if p.name.startswith("eval-")]

        steps = page.locator("#mae-eval-max-steps").locator("input[type=number]")
        steps.fill("1")
        steps.press("Enter")
        page.locator("#mae-eval-start").click()
        expect(header).to_contain_text("· max_steps ·", timeout=WAIT_MS)  # not the first eval's "finished"
        (second,) = [p for p in backend.log_dir.iterdir() if p.name.startswith("eval-") and p != first]
        (record,) = read_results(second)
        assert record.exit_reason == ExitReason.MAX_STEPS
        expect(page.locator("#mae-judge-folder").locator("input")).to_have_value(str(second), timeout=WAIT_MS)
        page.locator("#mae-judge-save").click()
        expect(page.locator("#mae-judge-status")).to_contain_text(
            f"Saved your marks for {record.key}", timeout=WAIT_MS
        )
        assert (second / MARKS_DIR).is_dir() and not (first / MARKS_DIR).exists()

        # a rerun replaces the run behind the page: a save is refused and the new run is shown
        rerun(second, ExitReason.STOPPED)
        page.locator("#mae-judge-save").click()
        expect(page.locator("#mae-judge-status")).to_contain_text(
            "no longer the one this eval folder", timeout=WAIT_MS
        )
        expect(header).to_contain_text("· stopped ·", timeout=WAIT_MS)
        page.locator("#mae-judge-save").click()
        expect(page.locator("#mae-judge-status")).to_contain_text("Saved your marks", timeout=WAIT_MS)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "judge_view_follows.png"), full_page=True)
        browser.close()

    (marks_file,) = (second / MARKS_DIR).iterdir()
    assert json.loads(marks_file.read_text())["key"] == record.key


def test_ui_judge_view_follows_results_that_change_behind_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with serve(tmp_path, 1.0, monkeypatch) as (url, backend), sync_playwright() as playwright:
        folder = backend.log_dir / "eval-20260101-000000"
        folder.mkdir(parents=True)
        task = TaskRecord(
            key="t1#r0",
            task_id="t1",
            instruction="Open Notes",
            exit_reason=ExitReason.FINISHED,
            rubrics=["Notes is open"],
            finished_at=time.time(),
        )
        append_result(folder, task)
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1100})
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        page.get_by_role("tab", name="Evaluate").click()
        header = page.locator("#mae-judge-instruction")
        expect(header).to_contain_text("· finished ·", timeout=WAIT_MS)
        rerun(folder, ExitReason.MAX_STEPS)  # e.g. `mae eval --resume` from a terminal
        expect(header).to_contain_text("· max_steps ·", timeout=WAIT_MS)
        expect(page.locator("#mae-eval-results")).to_contain_text("max_steps", timeout=WAIT_MS)
        browser.close()
