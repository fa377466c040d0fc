"""A public demo as a script sees it, through Gradio's raw queue protocol (no ``gradio_client``, which
rewrites file paths): what a page load keeps on the server and what its answer carries, the upload
routes, and the handlers a public page does not build."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ui_testkit import free_port, make_backend, settings_for

from mae.device.virtual import VirtualPhone
from mae.ui import space, visitors
from mae.ui.phone_view import TabState

ENVIRON = ("MAE_PUBLIC", "GRADIO_ANALYTICS_ENABLED", "GRADIO_TEMP_DIR")


@pytest.fixture(scope="module")
def public_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import app

    tmp = tmp_path_factory.mktemp("raw")
    saved = {k: os.environ.get(k) for k in ENVIRON}
    os.environ.update(MAE_PUBLIC="1", GRADIO_ANALYTICS_ENABLED="False", GRADIO_TEMP_DIR=str(tmp / "gradio"))
    settings = space.apply_defaults(settings_for(tmp, "http://127.0.0.1:9/v1"))
    demo = app.build_demo(make_backend(settings, VirtualPhone()), lister=lambda: [])
    port = free_port()
    app.launch(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield {"demo": demo, "url": f"http://127.0.0.1:{port}/", "temp": tmp / "gradio", "home": Path.home()}
    finally:
        demo.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def config(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "config", timeout=30) as response:
        return dict(json.loads(response.read()))


def call(url: str, fn_index: int, data: list[Any], session: str) -> list[dict[str, Any]]:
    """Join the queue with ``fn_index`` and read the session's stream to the end: every message."""
    body = {
        "data": data,
        "event_data": None,
        "fn_index": fn_index,
        "trigger_id": None,
        "session_hash": session,
    }
    join = urllib.request.Request(
        url + "gradio_api/queue/join", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(join, timeout=30):
        pass
    messages = []
    with urllib.request.urlopen(f"{url}gradio_api/queue/data?session_hash={session}", timeout=60) as stream:
        for raw in stream:
            line = raw.decode().strip()
            if line.startswith("data:"):
                messages.append(json.loads(line[5:]))
                if messages[-1].get("msg") in ("process_completed", "close_stream"):
                    break
    return messages


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def test_page_loads_keep_no_picture_and_answer_only_temp_paths(public_page: dict[str, Any]) -> None:
    url, demo = public_page["url"], public_page["demo"]
    load = next(d for d in config(url)["dependencies"] if d.get("api_name") == "on_load")
    sessions = [f"rawload{n:03d}" for n in range(12)]
    for session in sessions:
        messages = call(url, int(load["id"]), [{}], session)
        assert messages[-1]["msg"] == "process_completed" and messages[-1]["success"], messages[-1]
        texts = list(strings_in(messages[-1]["output"]))
        assert any("image.webp" in t for t in texts)  # the phone picture was sent
        for text in texts:
            if str(public_page["home"]) in text or text.startswith("/"):
                assert str(public_page["temp"]) in text, text  # only the server's own picture folder
    tabs = [
        value
        for session in sessions
        for value in demo.state_holder.session_data[session].state_data.values()
        if isinstance(value, TabState)
    ]
    assert len(tabs) == len(sessions) and all(tab.picture is None and tab.run is None for tab in tabs)
    assert demo.state_holder.capacity == visitors.STATE_SESSIONS
    visitors.drop_session(demo)(SimpleNamespace(session_hash=sessions[0]))  # the page closed
    assert demo.state_holder.session_data[sessions[0]].state_data == {}


def test_uploads_are_refused_and_the_overlay_is_not_built(public_page: dict[str, Any]) -> None:
    url = public_page["url"]
    boundary = "mae-boundary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\n'
        f"{'x' * 1000}\r\n--{boundary}--\r\n"
    ).encode()
    request = urllib.request.Request(
        url + "gradio_api/upload", body, {"content-type": f"multipart/form-data; boundary={boundary}"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 403
    assert "no file uploads" in refused.value.read().decode()
    names = {d.get("api_name") for d in config(url)["dependencies"]}
    assert "on_overlay" not in names and "on_load" in names
