"""The Evaluate tab and the Judge view in a real browser (Debian's chromium through Playwright).

An eval of the shortest virtual task runs against the reference-action agent on the fake model server;
then the Judge view shows its screenshots beside the rubric checklist, a rubric item and an action are
marked, and the saved marks change the metrics. The worker count runs two short tasks on two virtual
phones with a progress line per worker; at 1280x720 Start stays in view and the task picker narrows the
list. Screenshots go to ``artifacts/ui/``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_testkit import MODEL, free_port, make_backend, settings_for

from mae.device.virtual import VirtualPhone
from mae.eval.marks import judged_records
from mae.eval.records import read_results
from mae.eval.virtual_suite import load_task_suite
from mae.testing.fake_model_server import FakeModelServer, FakeReply, RecordedRequest
from mae.testing.reference_agent import ReferenceAgent
from mae.ui.runner import Backend

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "ui"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[str, Backend]]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    import app

    backend = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"), VirtualPhone())
    blocks = app.build_demo(backend, lister=lambda: [])
    port = free_port()
    app.launch(blocks, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/", backend
    finally:
        blocks.close()


def test_ui_evaluate_tab_runs_an_eval_and_the_judge_marks_change_the_metrics(
    demo: tuple[str, Backend], fake_server: FakeModelServer
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, backend = demo
    fake_server.responder = ReferenceAgent()
    shortest = min(
        (t for t in load_task_suite() if t.reference_actions), key=lambda t: len(t.reference_actions)
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1100})
        page.set_default_timeout(90_000)
        page.goto(url)
        page.get_by_role("tab", name="Evaluate").click()
        page.locator("#mae-eval-suite").get_by_text("Basic").click()  # load_task_suite()'s default suite
        tasks = page.locator("#mae-eval-tasks")
        expect(tasks).to_contain_text(shortest.task_id)
        for box in tasks.locator("input[type=checkbox]").all():
            if box.is_checked():
                box.uncheck()
        tasks.locator("label", has_text=shortest.task_id).click()
        page.locator("#mae-eval-base-url").locator("input, textarea").fill(fake_server.base_url)
        page.locator("#mae-eval-model").locator("input, textarea").fill(MODEL)
        page.locator("#mae-eval-start").click()
        expect(page.locator("#mae-eval-progress")).to_contain_text("Finished", timeout=120_000)
        # the task's line says how it ended (and, when it called any, which Shortcuts: the scripted agent
        # calls none, so the line ends at the score; tests/eval/test_memory_report.py has the rest)
        line = page.locator("#mae-eval-progress li", has_text=f"{shortest.task_id}#r0: finished")
        expect(line).to_have_text(re.compile(rf"^{shortest.task_id}#r0: finished, \d+ steps, SS 100%$"))
        expect(page.locator("#mae-eval-summary")).to_contain_text("SS 100.0")
        expect(page.locator("#mae-eval-summary")).to_contain_text("AA (code proxy)")  # not the paper's AA
        table = page.locator("#mae-eval-results")  # per run: the report's per-task columns
        for column in ("AA (code proxy)", "RA (code proxy)", "steps/ref ops", "model calls", "input tokens"):
            expect(table).to_contain_text(column)
        expect(table).to_contain_text("not judged")  # the paper's AA/RA until a person marks the run
        expect(table).to_contain_text("100.0")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "evaluate_tab.png"), full_page=True)

        # the Judge view opens the finished eval: screenshots beside the rubric checklist
        first_rubric = page.locator("#mae-judge-rubric-0")
        expect(first_rubric).to_be_visible()
        expect(first_rubric).to_contain_text(shortest.rubrics[0])
        expect(page.locator("#mae-judge-gallery img").first).to_be_visible()
        # actions read in screen pixels, as drawn on the screenshots; the model's own text is labelled
        expect(page.locator("#mae-judge-instruction")).to_contain_text(
            "Actions are in screen pixels, as drawn on the screenshots; the model wrote its points in its "
            "768×1664 image"
        )
        page.locator("#mae-judge-gallery .thumbnail-item").nth(1).click()
        expect(page.locator("#mae-judge-gallery")).to_contain_text("model wrote Tap(")
        page.screenshot(path=str(ARTIFACTS / "judge_view_frames.png"), full_page=True)
        first_rubric.locator("input").click()
        page.get_by_role("option", name="never", exact=True).click()
        actions = page.locator("#mae-judge-actions")
        actions.locator("input[type=checkbox]").first.uncheck()
        page.locator("#mae-judge-save").click()
        expect(page.locator("#mae-judge-status")).to_contain_text("Saved your marks")
        page.screenshot(path=str(ARTIFACTS / "judge_view.png"), full_page=True)
        browser.close()

    (folder,) = [p for p in backend.log_dir.iterdir() if p.name.startswith("eval-")]
    (record,) = judged_records(folder, read_results(folder))
    assert record.grader == "person" and record.correctness_source == "person"
    assert record.rubric_steps[0] is None and record.action_correct[0] is False
    taps = [a for a in record.actions if a.written]
    assert taps and all(a.text.startswith("Tap(") and a.text != a.written for a in taps)
    expected = (len(shortest.rubrics) - 1) / len(shortest.rubrics) * 100
    report = (folder / "report.md").read_text()
    assert f"| Mobile-Agent-E | Multi-Agent | {expected:.1f} |" in report and "judged by a person" in report


def test_ui_evaluate_tab_at_1280x720_keeps_start_in_view_and_follows_the_run_tabs_model(
    demo: tuple[str, Backend],
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, _backend = demo
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.set_default_timeout(90_000)
        page.goto(url)
        page.locator("#mae-base-url").locator("input, textarea").fill("http://127.0.0.1:8000/v1")
        page.locator("#mae-model").locator("input, textarea").fill("my-served-vlm")
        page.locator("#mae-model").locator("input, textarea").press("Tab")
        page.get_by_role("tab", name="Evaluate").click()
        start = page.locator("#mae-eval-start")
        box = start.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 720, box
        expect(page.locator("#mae-eval-base-url").locator("input, textarea")).to_have_value(
            "http://127.0.0.1:8000/v1"
        )
        expect(page.locator("#mae-eval-model").locator("input, textarea")).to_have_value("my-served-vlm")
        tasks = page.locator("#mae-eval-tasks")
        expect(tasks.locator("input[type=checkbox]")).to_have_count(25)  # the hard suite, not all 42
        page.locator("#mae-eval-search").locator("input, textarea").fill("korean")
        expect(tasks.locator("input[type=checkbox]")).to_have_count(1)
        expect(tasks).to_contain_text("Korean restaurant")
        page.locator("#mae-eval-suite").get_by_text("Basic").click()
        expect(tasks.locator("input[type=checkbox]")).to_have_count(1)
        expect(tasks).to_contain_text("v_korean")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "evaluate_tab_1280x720.png"))
        browser.close()


def test_ui_evaluate_tab_runs_two_workers_with_a_progress_line_each(
    demo: tuple[str, Backend], fake_server: FakeModelServer
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, backend = demo
    agent = ReferenceAgent()

    def unhurried(request: RecordedRequest) -> FakeReply | str | None:  # time to see both workers busy
        reply = agent(request)
        return FakeReply(text=reply, delay_s=0.3) if isinstance(reply, str) else reply

    fake_server.responder = unhurried
    shortest = sorted(
        (t for t in load_task_suite() if t.reference_actions), key=lambda t: len(t.reference_actions)
    )
    picked = [t.task_id for t in shortest[:2]]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1100})
        page.set_default_timeout(90_000)
        page.goto(url)
        page.get_by_role("tab", name="Evaluate").click()
        page.locator("#mae-eval-suite").get_by_text("Basic").click()  # load_task_suite()'s default suite
        tasks = page.locator("#mae-eval-tasks")
        expect(tasks).to_contain_text(picked[0])
        for box in tasks.locator("input[type=checkbox]").all():
            if box.is_checked():
                box.uncheck()
        for task_id in picked:
            tasks.locator("label", has_text=task_id).click()
        page.locator("#mae-eval-workers").locator("input").fill("2")
        page.locator("#mae-eval-base-url").locator("input, textarea").fill(fake_server.base_url)
        page.locator("#mae-eval-model").locator("input, textarea").fill(MODEL)
        page.locator("#mae-eval-start").click()
        progress = page.locator("#mae-eval-progress")
        expect(progress).to_contain_text("on 2 workers", timeout=120_000)
        expect(progress).to_contain_text("w1 (virtual)")
        expect(progress).to_contain_text("w2 (virtual)")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "evaluate_workers_running.png"), full_page=True)
        expect(progress).to_contain_text("Finished", timeout=180_000)
        expect(progress).to_contain_text("w1 (virtual): finished · 1 done")
        expect(progress).to_contain_text("w2 (virtual): finished · 1 done")
        expect(page.locator("#mae-eval-summary")).to_contain_text("SS 100.0")
        page.screenshot(path=str(ARTIFACTS / "evaluate_workers.png"), full_page=True)
        browser.close()

    (folder,) = [p for p in backend.log_dir.iterdir() if p.name.startswith("eval-")]
    assert sorted(r.task_id for r in read_results(folder)) == sorted(picked)
