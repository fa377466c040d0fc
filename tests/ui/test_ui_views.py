"""Event-to-update functions of the demo, without a browser: timeline, status, progress, approval."""

from __future__ import annotations

from PIL import Image

from mae.run.events import Event
from mae.ui.views import (
    Perceived,
    RunView,
    approval_html,
    draw_boxes,
    executed_steps,
    fold,
    memory_html,
    phone_image,
    phone_picture,
    progress_html,
    status_markdown,
    timeline_html,
)


def stage(step: int, name: str, seconds: float, result: dict | None, tokens: dict | None = None) -> Event:
    data = {"stage": name, "seconds": seconds, "result": result, "raw": None}
    if tokens is not None:
        data["tokens"] = tokens
    return Event("stage_finished", step=step, data=data)


def one_step_events() -> list[Event]:
    screen = Image.new("RGB", (1080, 2340), "white")
    annotated = Image.new("RGB", (1080, 2340), "red")
    return [
        Event(
            "run_started",
            data={
                "task": "Open Notes",
                "device": "virtual",
                "backbone": "custom:m",
                "run_dir": "/tmp/r",
                "max_steps": 5,
            },
        ),
        Event("stage_started", step=1, data={"stage": "manager"}),
        stage(
            1,
            "manager",
            1.25,
            {"thought": "t", "plan": "1. Open Notes", "subgoal": "Open Notes", "finished": False},
            {"input": 100, "output": 20},
        ),
        Event(
            "model_call",
            step=1,
            data={"role": "manager", "input_tokens": 100, "output_tokens": 20, "ok": True},
        ),
        stage(
            1,
            "operator",
            0.5,
            {
                "thought": "Tap the icon <script>",
                "text": 'Open_App("Notes")',
                "description": "Notes opens",
                "action": {"name": "Open_App"},
                "atomic": ['Open_App("Notes")'],
            },
        ),
        Event(
            "model_call",
            step=1,
            data={"role": "operator", "input_tokens": 50, "output_tokens": 10, "ok": True},
        ),
        Event(
            "action",
            step=1,
            data={"action": 'Open_App("Notes")', "description": "Notes opens"},
            image=annotated,
        ),
        stage(1, "execute", 0.2, None),
        Event("screen", step=1, image=screen),
        stage(1, "reflector", 0.75, {"outcome": "A", "progress": "Notes is open", "error_description": ""}),
        Event(
            "outcome", step=1, data={"outcome": "A", "progress": "Notes is open", "error_description": None}
        ),
        stage(1, "notetaker", 0.3, {"notes": "Nothing yet"}),
    ]


def test_timeline_shows_every_stage_with_its_time_and_fields() -> None:
    view = fold(one_step_events())
    html = timeline_html(view)
    for text in (
        "Step 1",
        "Open_App(&quot;Notes&quot;)",
        "Manager",
        "1.2 s",
        "Subgoal",
        "Open Notes",
        "Operator",
        "Expectation",
        "Notes opens",
        "Action Reflector",
        "A — successful",
        "Notes is open",
        "Notetaker",
        "Nothing yet",
        "120 tok",
    ):
        assert text in html, text
    assert "<script>" not in html  # model text is escaped
    assert "Tap the icon &lt;script&gt;" in html
    assert "Steps" not in html  # atomic steps only shown for Shortcuts
    assert 'data-step="1"' in html


def test_timeline_lists_newest_step_first_and_marks_the_live_stage() -> None:
    events = [*one_step_events(), Event("stage_started", step=2, data={"stage": "manager"})]
    view = fold(events)
    html = timeline_html(view)
    assert html.index('data-step="2"') < html.index('data-step="1"')
    assert "Manager is working" in html


def test_progress_and_running_status() -> None:
    view = fold(one_step_events())
    assert "Step 1 of 5" in progress_html(view)
    assert "width:20%" in progress_html(view)
    status = status_markdown(view, now=view.started_at + 12 if view.started_at else None)
    assert "Running" in status and "custom:m" in status and "12 s" in status and "2 model calls" in status
    assert "180 tokens" in status


def test_final_status_reports_exit_reason_time_calls_and_tokens() -> None:
    finished = Event(
        "run_finished",
        step=2,
        data={
            "exit_reason": "finished",
            "finished": True,
            "steps": 1,
            "seconds": 3.5,
            "totals": {"model_calls": 5, "input_tokens": 900, "output_tokens": 100},
            "run_dir": "/tmp/r",
        },
    )
    view = fold([*one_step_events(), finished])
    status = status_markdown(view)
    assert "Finished" in status and "`finished`" in status and "· 1 step ·" in status
    assert "3.5 s" in status and "5 model calls" in status and "1000 tokens" in status
    assert "width:100%" in progress_html(view)
    assert not view.running


def test_failed_exit_shows_reason_message_and_last_warning() -> None:
    events = [
        *one_step_events(),
        Event("warning", step=1, data={"message": "perception: OCR slow"}),
        Event(
            "run_finished",
            data={
                "exit_reason": "model_error",
                "finished": False,
                "steps": 1,
                "seconds": 1.0,
                "totals": {},
                "message": "ModelError: Manager: write each section under its header: ### Plan ###",
            },
        ),
    ]
    view = fold(events)
    status = status_markdown(view)
    assert "Ended" in status and "model provider failed" in status
    assert "Manager: write each section under its header: “Plan”." in status  # a sentence, no class name
    assert "ModelError" not in status and "###" not in status
    stopped = fold([Event("run_finished", data={"exit_reason": "stopped", "message": "stopped by the user"})])
    assert status_markdown(stopped).count("stopped by the user") == 1
    assert "OCR slow" in status
    assert "OCR slow" in timeline_html(view)


def test_approval_box_appears_and_goes_away() -> None:
    view = fold(one_step_events())
    assert approval_html(view) == ""
    view.apply(
        Event(
            "approval_needed",
            step=2,
            data={
                "action": "Tap(1, 2)",
                "description": "Send the message",
                "reason": "sending a message: 'Send'",
            },
        )
    )
    text = approval_html(view)
    assert "Tap(1, 2)" in text and "Send the message" in text and "sending a message" in text
    assert "Waiting for your approval" in status_markdown(view)
    view.apply(Event("approval", step=2, data={"approved": True, "action": "Tap(1, 2)"}))
    assert approval_html(view) == ""
    assert "approved by the user" in timeline_html(view)


def test_phone_image_prefers_the_annotated_action_then_the_screen() -> None:
    view = fold(one_step_events()[:7])
    image = phone_image(view)
    assert image is not None and image.getpixel((0, 0)) == (255, 0, 0)
    view.apply(Event("screen", step=1, image=Image.new("RGB", (1080, 2340), "white")))
    image = phone_image(view)
    assert image is not None and image.getpixel((0, 0)) == (255, 255, 255)
    assert view.screen_version == 2


def test_boxes_belong_to_the_picture_they_were_computed_for() -> None:
    green, blue = (34, 197, 94), (59, 130, 246)
    home = Image.new("RGB", (1080, 2340), "white")
    home_boxes = (("text", (10, 10, 200, 60)),)
    view = RunView()
    view.apply(Perceived(home, home_boxes))  # the run's first screen, perceived before step 1
    assert phone_picture(view) == (home, list(home_boxes))
    boxed = phone_image(view, overlay=True)
    assert boxed is not None and boxed.getpixel((10, 30)) == green
    plain = phone_image(view)
    assert plain is not None and plain.getpixel((10, 30)) == (255, 255, 255)

    annotated = Image.new("RGB", (1080, 2340), "red")  # the action drawn on the home screen
    view.apply(Event("action", step=1, data={"action": 'Open_App("Notes")'}, image=annotated))
    boxed = phone_image(view, overlay=True)
    assert boxed is not None and boxed.getpixel((10, 30)) == green  # the home screen's own boxes

    notes = Image.new("RGB", (1080, 2340), "yellow")  # the screen after the action
    view.apply(Event("screen", step=1, image=notes))
    boxed = phone_image(view, overlay=True)
    assert boxed is not None and boxed.getpixel((10, 30)) == (255, 255, 0)  # no stale home boxes
    view.apply(Perceived(home, (("icon", (300, 300, 400, 400)),)))  # a result for another picture
    assert view.screen_boxes is None
    view.apply(Perceived(notes, (("icon", (300, 300, 400, 400)),)))
    boxed = phone_image(view, overlay=True)
    assert boxed is not None and boxed.getpixel((300, 350)) == blue and boxed.getpixel((10, 30)) != green
    assert draw_boxes(notes, []).tobytes() == notes.tobytes()


def test_executed_steps_count_an_action_the_loop_did_not_record() -> None:
    view = fold(one_step_events())
    view.apply(Event("run_finished", data={"exit_reason": "unusable_reply", "finished": False, "steps": 0}))
    assert executed_steps(view) == 1
    assert "1 step ·" in status_markdown(view)


def test_working_memory_panel_shows_latest_plan_progress_and_notes() -> None:
    text = memory_html(fold(one_step_events()))
    assert '<span class="mae-key">Plan</span><span class="mae-val">1. Open Notes' in text
    assert '<span class="mae-key">Progress</span><span class="mae-val">Notes is open' in text
    assert '<span class="mae-key">Notes</span><span class="mae-val">Nothing yet' in text


def test_experience_stage_gets_its_own_card() -> None:
    events = [
        *one_step_events(),
        Event(
            "run_finished",
            step=1,
            data={"exit_reason": "finished", "finished": True, "steps": 1, "seconds": 2.0, "totals": {}},
        ),
        Event("stage_started", step=1, data={"stage": "experience"}),
    ]
    view = fold(events)
    assert "updating the Tips and Shortcuts" in timeline_html(view)
    assert "Updating the long-term memory" in status_markdown(view)
    view.apply(
        stage(
            1,
            "experience",
            4.0,
            {"summary": "memory version 2; new Shortcuts: Open_Notes", "new_shortcuts": "Open_Notes"},
        )
    )
    html = timeline_html(view)
    assert "Self-evolution" in html and "Open_Notes" in html and "4.0 s" in html
    assert "experience" not in {s for step in view.steps.values() for s in step.stages}


def test_empty_and_idle_views() -> None:
    view = RunView()
    assert "No run yet" in timeline_html(view)
    assert "Idle" in progress_html(view)
    assert "Ready" in status_markdown(view)
    assert phone_image(view) is None


def test_invalid_action_and_shortcut_steps_are_shown() -> None:
    events = [
        Event("run_started", data={"task": "t", "max_steps": 3}),
        stage(1, "operator", 0.1, {"text": "Tap(9999, 1)", "description": "tap", "atomic": []}, None),
        Event(
            "outcome", step=1, data={"outcome": "C", "progress": "", "error_description": "invalid action"}
        ),
        stage(
            2,
            "operator",
            0.1,
            {
                "text": 'Tap_Type_and_Enter(1, 2, "x")',
                "shortcut": "Tap_Type_and_Enter",
                "atomic": ["Tap(1, 2)", 'Type("x")', "Enter()"],
            },
            None,
        ),
    ]
    html = timeline_html(fold(events))
    assert "C — no change" in html and "invalid action" in html and "mae-outcome-C" in html
    assert "Steps" in html and "Enter()" in html


def test_step_cards_show_the_action_in_screen_pixels_with_the_models_text_labelled() -> None:
    full = "Tap(900, 399) · model wrote Tap(640, 284) in its 768×1664 image"
    events = [
        Event("run_started", data={"task": "t", "max_steps": 5}),
        stage(1, "operator", 1.0, {"text": "Tap(640, 284)", "shown": full, "frame": "in its 768×1664 image"}),
        Event(
            "action", step=1, data={"action": "Tap(900, 399)", "written": "Tap(640, 284)", "description": ""}
        ),
        stage(2, "decision", 1.0, {"thought": "t", "action": "Tap(640, 284)", "shown": full}),
        stage(3, "v1_agent", 1.0, {"observation": "o", "thought": "t", "action": "Click text (Notes)"}),
        stage(4, "operator", 1.0, {"text": "Back()"}),  # a trajectory written before the field existed
    ]
    html = timeline_html(fold(events))
    assert "Step 1 — <code>Tap(900, 399)</code>" in html
    assert html.count(full) == 2 and ">Tap(640, 284)<" not in html  # the model's text only labelled
    assert "Click text (Notes)" in html and "Back()" in html
    assert "in its 768×1664 image</span>" not in html.replace(full, "")  # the frame is not a row of its own


def test_a_model_name_cannot_close_the_status_lines_code_span() -> None:
    """An independent fuzz typed ``x` ![m](http://127.0.0.1:P/model.png) <img src=...> `y`` as the
    Model: the status line's code span closed and the browser fetched both pictures."""
    import markdown_it

    view = fold(one_step_events())
    view.backbone = "custom:x` ![m](http://127.0.0.1:9/model.png) <img src='http://127.0.0.1:9/r.png'>\n\n`y"
    html = markdown_it.MarkdownIt().render(status_markdown(view))
    assert "<img" not in html and "&lt;img" in html
    assert html.count("<code>") == 2  # the device and the backbone, each whole
