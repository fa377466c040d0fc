"""With a login (``MAE_AUTH``), every route asks for it first (``mae.ui.guard``).

The demo is launched with ``auth`` on 127.0.0.1; every route the app registers, those of Gradio's
``/gradio_api`` router included, is requested with each method and without a login (path parameters
filled in). Only the login page and static, app-independent files may answer; ``/openapi.json``
(FastAPI's own route list) is not served at all, and uploads over the size limit are refused. With
the login cookie the same routes answer as Gradio makes them.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_testkit import free_port, make_backend, settings_for

from mae.device.virtual import VirtualPhone

OPEN_WITHOUT_LOGIN = {
    "/",
    "/logout",
    "/favicon.ico",
    "/theme.css",
    "/gradio_api/theme.css",
    "/robots.txt",
    "/manifest.json",
}
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


METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
CHROMIUM = Path("/usr/bin/chromium")
LOGIN_ROUTES = {("POST", "/login"), ("POST", "/login/"), ("GET", "/logout")}


def all_routes(routes: list[Any]) -> Iterator[tuple[str, set[str]]]:
    """Every (path, methods) the app serves, through included routers (websocket routes: ``{"WS"}``)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            prefix = getattr(getattr(route, "include_context", None), "prefix", "") or ""
            for path, methods in all_routes(inner.routes):
                yield prefix + path, methods
            continue
        path = getattr(route, "path", "")
        if path:
            yield path, set(getattr(route, "methods", None) or {"WS"})


def status_of(
    url: str, data: bytes | None = None, headers: dict[str, str] | None = None, method: str | None = None
) -> tuple[int, str]:
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read(4000).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def test_an_upload_over_the_limit_is_refused(demo: tuple[Any, str]) -> None:
    app_, _ = demo
    assert app_.max_file_size == 20 * 1024 * 1024


def test_every_route_and_method_needs_the_login(demo: tuple[Any, str]) -> None:
    app_, base = demo
    routes = sorted(all_routes(app_.server_app.routes))
    paths = {p for p, _ in routes}
    assert {"/gradio_api/queue/join", "/gradio_api/cancel", "/gradio_api/upload"} <= paths
    assert any(p.startswith("/gradio_api/heartbeat/") for p in paths)
    opened = []
    for path, _methods in routes:
        url = base + re.sub(r"\{[^}]+\}", "x", path)
        for method in METHODS:
            if (method, path) in LOGIN_ROUTES:
                continue
            data = b"{}" if method in ("POST", "PUT", "PATCH") else None
            status, _ = status_of(url, data, {"content-type": "application/json"}, method)
            static = path in OPEN_WITHOUT_LOGIN or path.startswith(("/assets/", "/static/", "/svelte/"))
            if status < 400 and not (static and method in ("GET", "HEAD")):
                opened.append(f"{method} {path} -> {status}")
    assert opened == [], opened
    assert len(routes) >= 60
    status, body = status_of(base + "/")
    assert status == 200 and ('"auth_required":true' in body.replace(" ", "") or "login" in body.lower())
    assert status_of(base + "/openapi.json")[0] in (401, 404)  # FastAPI's route list is not served


def test_the_login_cookie_opens_the_routes(demo: tuple[Any, str]) -> None:
    _, base = demo
    form = b"username=u&password=pw"
    request = urllib.request.Request(base + "/login", data=form, method="POST")
    request.add_header("content-type", "application/x-www-form-urlencoded")
    with urllib.request.urlopen(request, timeout=30) as response:
        cookies = [v.split(";", 1)[0] for k, v in response.headers.items() if k.lower() == "set-cookie"]
    cookie = "; ".join(cookies)
    status, body = status_of(base + "/config", headers={"cookie": cookie})
    assert status == 200 and "components" in json.loads(body) if body.endswith("}") else status == 200
    assert status_of(base + "/gradio_api/info", headers={"cookie": cookie})[0] == 200
    assert status_of(base + "/gradio_api/info", headers={"cookie": "access-token-x=forged"})[0] == 401


@pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium at /usr/bin/chromium"
)
def test_a_person_logs_in_through_the_page(demo: tuple[Any, str]) -> None:
    """The login page works behind the front door: the form shows, and after it the Run tab does."""
    from playwright.sync_api import expect, sync_playwright

    _, base = demo
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(base + "/")
            page.get_by_label("username").fill("u")
            page.get_by_label("password").fill("pw")
            page.get_by_role("button", name="Login").click()
            expect(page.locator("#mae-task textarea")).to_be_visible(timeout=60_000)
        finally:
            browser.close()
