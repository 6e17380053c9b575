"""The second wall: HTTP headers on every response of the app, and no uploads.

The renderer (ui/safe.py) already keeps abstracts and LLM text from producing anything that
loads or runs. The Content-Security-Policy makes the browser refuse, page-wide, what would slip
past it: images, scripts, styles, fonts, frames and fetches from any other origin. Gradio itself
needs inline scripts and `eval`-built handlers (its `js=` hooks), so `script-src` allows those,
but only from this origin: a remote `<script src>` or `<img src>` is blocked.

The app takes no files, but Gradio serves upload routes for every app: `POST …/upload`
(unauthenticated, any size, written to a temp folder) and `POST …/process_recording` (which takes a
video and echoes it back), and may add more. So a request is refused with 403 when it goes to a
known upload route, or when it carries a file body at all (multipart/form-data, whatever the path):
the app's own requests are JSON."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "media-src 'self' blob:",
        "frame-src 'none'",
        "child-src 'none'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'none'",
        "frame-ancestors 'self'",
    ]
)

HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"SAMEORIGIN"),
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UPLOAD_ROUTES = ("/upload", "/process_recording")
LOGIN_ROUTE = "/login"  # Gradio's login form (RAG_UI_AUTH) posts its two fields as a form


def is_upload(scope: Scope) -> bool:
    """A request that sends files: to an upload route, or with a multipart body to any route."""
    if scope.get("method") not in ("POST", "PUT", "PATCH"):
        return False
    path = str(scope.get("path", "")).rstrip("/")
    content_type = b""
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-type":
            content_type = value.lower()
    if path.endswith(UPLOAD_ROUTES):
        return True
    return content_type.lstrip().startswith(b"multipart/") and path != LOGIN_ROUTE


class SecurityHeaders:
    """ASGI middleware (a plain one: Starlette's BaseHTTPMiddleware would buffer the answer
    streams). Passed to Gradio's FastAPI app through `launch(app_kwargs={"middleware": …})`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if is_upload(scope):
            body = b"uploads are disabled: this app takes no files"
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [
                        (b"content-type", b"text/plain"),
                        (b"content-length", str(len(body)).encode()),
                        *HEADERS,
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in HEADERS if h[0] not in present]
            await send(message)

        await self.app(scope, receive, with_headers)


def private_folder() -> Path:
    """A folder for the UI's files that only this user can enter (0700), removed when the process
    ends. Gradio keeps its copies of the files it serves (the exports) under GRADIO_TEMP_DIR, by
    default a folder shared by every user of the machine and left behind after a stop; pointed
    inside this one, they are private and go with it. Gradio reads the variable when its modules
    are imported, so this runs before the first import of gradio."""
    folder = Path(tempfile.mkdtemp(prefix="rag-ui-"))
    atexit.register(shutil.rmtree, folder, True)
    os.environ["GRADIO_TEMP_DIR"] = str(folder / "gradio")
    return folder
