"""The demo server's front door: one ASGI middleware in front of every route Gradio registers.

- With a login (``MAE_AUTH``), every request needs it except the login page itself (``/``, which Gradio
  renders as a login form for a visitor without one), ``/login``, ``/logout``, static files that hold
  nothing of the app (``STATIC``) and Gradio's own start-up call. Gradio checks the login on some
  routes only (its queue, cancel, heartbeat, reset and upload routes answer without one), so the
  check is made here, once, for all.
- On a public demo (``mae.public_mode``) the upload routes are refused: no input of the public page
  takes a file, and every upload stays on the server's disk.

``app.launch`` hands ``app_kwargs`` to Gradio, which builds its FastAPI app with this middleware.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOGIN_PAGE = {("GET", "/"), ("HEAD", "/"), ("POST", "/login"), ("POST", "/login/"), ("GET", "/logout")}
"""The routes of the login itself."""
STATIC = ("/assets/", "/static/", "/svelte/")
STATIC_FILES = {"/favicon.ico", "/theme.css", "/gradio_api/theme.css", "/robots.txt", "/manifest.json"}
"""Gradio's own static files: the login page needs them, and they hold nothing of this app."""
UPLOADS = ("/gradio_api/upload", "/upload")
LOGIN_NEEDED = (
    "Log in first: open the demo's page and enter the user name and password the operator gave you."
)
NO_UPLOADS = "This public demo takes no file uploads: type the task in the Task box instead."


def is_open(method: str, path: str) -> bool:
    """Whether ``method path`` answers without a login (the login page and static files)."""
    if (method, path) in LOGIN_PAGE:
        return True
    if method not in ("GET", "HEAD"):
        return False
    return path in STATIC_FILES or (path.startswith(STATIC) and ".." not in path)


def is_upload(path: str) -> bool:
    return any(path == u or path.startswith(u + "/") or path.startswith(u + "_") for u in UPLOADS)


class FrontDoor:
    """The middleware: ``login`` requires Gradio's login cookie on every closed route; ``public`` refuses
    uploads. Gradio's tokens are read from the app (``scope["app"].tokens``) at each request."""

    def __init__(self, app: ASGIApp, *, login: bool = False, public: bool = False) -> None:
        self.app = app
        self.login = login
        self.public = public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "") or "/"
        method = scope.get("method", "GET") if scope["type"] == "http" else "GET"
        if self.public and is_upload(path):
            await refuse(scope, send, 403, NO_UPLOADS)
            return
        if self.login and not is_open(method, path) and not logged_in(scope) and not starting(scope, path):
            await refuse(scope, send, 401, LOGIN_NEEDED)
            return
        await self.app(scope, receive, send)


STARTUP = "/gradio_api/startup-events"


def starting(scope: Scope, path: str) -> bool:
    """Gradio's own first call of its start-up route, which ``launch`` makes before anyone can log in
    (later calls need the login like every route)."""
    return path == STARTUP and getattr(scope.get("app"), "startup_events_triggered", True) is False


def logged_in(scope: Scope) -> bool:
    """Whether the request carries a token Gradio's login handed out."""
    app = scope.get("app")
    tokens = getattr(app, "tokens", None) or {}
    cookie = SimpleCookie()
    for name, value in scope.get("headers", []):
        if name.lower() == b"cookie":
            try:
                cookie.load(value.decode("latin-1"))
            except Exception:  # a malformed cookie header carries no login
                return False
    return any(key.startswith("access-token") and morsel.value in tokens for key, morsel in cookie.items())


async def refuse(scope: Scope, send: Send, status: int, message: str) -> None:
    """Answer ``status`` with ``message`` as JSON (a websocket is closed instead)."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = json.dumps({"detail": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def app_kwargs(*, login: bool, public: bool) -> dict[str, Any]:
    """What ``launch`` passes Gradio to build its FastAPI app: no route list of FastAPI's own (it would
    answer before any login) and the front door in front of every route."""
    from starlette.middleware import Middleware

    return {
        "openapi_url": None,
        "docs_url": None,
        "redoc_url": None,
        "middleware": [Middleware(FrontDoor, login=login, public=public)],
    }
