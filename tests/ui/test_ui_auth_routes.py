"""With a login (``MAE_AUTH``), every route that tells anything about the app asks for it first.

The demo is launched with ``auth`` on 127.0.0.1; every GET route without path parameters is requested
without a login. Only the login page and static, app-independent files may answer; ``/openapi.json``
(FastAPI's own route list) is not served at all, and uploads over the size limit are refused.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from ui_testkit import free_port, make_backend, settings_for

from mae.device.virtual import VirtualPhone

OPEN_WITHOUT_LOGIN = {"/", "/logout", "/favicon.ico", "/theme.css", "/robots.txt", "/manifest.json"}
"""The login page and static files with nothing of the app's state in them."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    import app

    tmp = tmp_path_factory.mktemp("auth")
    backend = make_backend(settings_for(tmp, "http://127.0.0.1:9/v1"), VirtualPhone())
    demo = app.build_demo(backend, lister=lambda: [])
    port = free_port()
    launch = {"server_name": "127.0.0.1", "server_port": port, "prevent_thread_lock": True, "quiet": True}
    app.launch(demo, auth=("u", "pw"), **launch)
    try:
        yield demo, f"http://127.0.0.1:{port}"
    finally:
        demo.close()


def status_of(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read(4000).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def test_every_route_needs_the_login(demo: tuple[Any, str]) -> None:
    app_, base = demo
    checked = []
    for route in app_.server_app.routes:
        path = getattr(route, "path", "")
        if not path or "{" in path or "GET" not in (getattr(route, "methods", None) or set()):
            continue
        status, body = status_of(base + path)
        checked.append(path)
        if status == 200:
            assert path in OPEN_WITHOUT_LOGIN, f"{path} answers without a login"
        if path == "/" and status == 200:
            assert '"auth_required":true' in body.replace(" ", "") or "login" in body.lower()
    assert "/config" in checked and len(checked) >= 8
    assert status_of(base + "/openapi.json")[0] == 404
    for path in ("/gradio_api/info", "/gradio_api/openapi.json", "/config", "/gradio_api/upload"):
        assert status_of(base + path)[0] in (401, 403, 404, 405), path


def test_an_upload_over_the_limit_is_refused(demo: tuple[Any, str]) -> None:
    app_, _ = demo
    assert app_.max_file_size == 20 * 1024 * 1024
