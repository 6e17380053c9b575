"""Who may talk to the UI: the first wall, in front of everything Gradio serves.

DNS rebinding: a web page on evil.example can make its own name resolve to 127.0.0.1 and then call
the UI's API (and `rag ui --mcp`'s MCP endpoint) from the user's browser, as the same origin as
far as the browser knows, spending the user's OPENAI_API_KEY. Gradio's CORS layer only judges the
Origin against the Host, so such a request passes, and its answer even names evil.example in
access-control-allow-origin. The one thing such a request cannot fake is the name it was sent to:
its Host header says evil.example. So every request must name, in Host and (when it sends one) in
Origin, an address this server was started for; anything else is refused with 403 before Gradio
sees it, so no foreign origin is ever echoed.

A shared deployment (bound beyond loopback) is protected by a password, RAG_UI_AUTH: Gradio's login
form for the page and its API, and a bearer token for the MCP endpoint, which Gradio's login does
not cover.

The guard must be the outermost layer: middleware passed to Gradio sits inside Gradio's CORS
middleware, which answers preflight requests itself. `outermost_lifespan` puts it around the whole
stack at start-up (Starlette builds its middleware stack on the first event, the lifespan one,
and uvicorn accepts connections only after the lifespan has started)."""

from __future__ import annotations

import hmac
import socket
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from rag.errors import SettingsError
from ui.security import HEADERS, ASGIApp, Receive, Scope, Send

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD = frozenset({"0.0.0.0", "::", ""})
MCP_PATH = "/gradio_api/mcp"


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    host = host.strip().strip("[]").lower()
    return host in LOOPBACK or host.startswith("127.")


def host_name(value: str) -> str:
    """The host of a Host header or an Origin's netloc, lower case, without port, brackets or a
    trailing dot ("[::1]:7860" -> "::1", "LocalHost.:80" -> "localhost")."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else ""
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".")


def machine_names() -> set[str]:
    """This machine's names and the addresses they resolve to: what a browser on the network uses
    to reach a server bound to every interface (0.0.0.0)."""
    names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    for name in list(names):
        with suppress(OSError):
            names |= {str(info[4][0]).lower() for info in socket.getaddrinfo(name, None)}
    return {n for n in names if n}


@dataclass
class Access:
    """The addresses a server answers to and its password, decided at launch.

    `hosts` are accepted in Host; an Origin must name one of them with the server's own port, or
    one of `proxied` (names given with --allow-host, reached through a proxy on any port).
    `secret` is RAG_UI_AUTH's password, required as `Authorization: Bearer …` on the MCP endpoint."""

    port: int
    hosts: set[str] = field(default_factory=set)
    proxied: set[str] = field(default_factory=set)
    secret: str | None = None

    @classmethod
    def for_server(cls, bind: str, port: int, allow: Iterable[str] = (), secret: str | None = None) -> Access:
        hosts = set(LOOPBACK)
        if bind.strip("[]") in WILDCARD:
            hosts |= machine_names()
        else:
            hosts.add(host_name(bind) if not bind.startswith("[") else bind.strip("[]").lower())
        proxied = {host_name(a) for a in allow if a.strip()}
        return cls(port=port, hosts=hosts | proxied, proxied=proxied, secret=secret or None)

    def allow(self, url: str) -> None:
        """Also answer to the host of `url` (a share link's, known only after launch)."""
        name = (urlsplit(url).hostname or "").lower()
        if name:
            self.hosts.add(name)
            self.proxied.add(name)

    def host_ok(self, host: str | None) -> bool:
        return bool(host) and host_name(host or "") in self.hosts

    def origin_ok(self, origin: str) -> bool:
        """An Origin is a scheme, a host and a port; "null" (sandboxed frames, file: pages) is refused."""
        try:
            parts = urlsplit(origin.strip())
            port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        except ValueError:
            return False
        name = (parts.hostname or "").rstrip(".")
        if parts.scheme not in ("http", "https") or name not in self.hosts:
            return False
        return port == self.port or name in self.proxied

    def token_ok(self, authorization: str | None) -> bool:
        if self.secret is None:
            return True
        scheme, _, token = (authorization or "").partition(" ")
        password = split_secret(self.secret)[1]
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), password.encode())

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(status, reason) to refuse this request with, or None to let it through."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not self.host_ok(headers.get("host")):
            return 403, "refused: the Host header does not name this server (see `rag ui --allow-host`)"
        origin = headers.get("origin")
        if origin is not None and not self.origin_ok(origin):
            return 403, "refused: requests from other web sites are not served"
        if str(scope.get("path", "")).startswith(MCP_PATH) and not self.token_ok(headers.get("authorization")):
            return 401, "the MCP endpoint needs `Authorization: Bearer <the password of RAG_UI_AUTH>`"
        return None


def split_secret(secret: str) -> tuple[str, str]:
    """RAG_UI_AUTH as (user, password): "user:password", or a bare password for any user ("")."""
    user, sep, password = secret.partition(":")
    return (user, password) if sep and user and password else ("", secret)


def password_check(secret: str) -> Callable[[str, str], bool]:
    """Gradio's `auth` callable for RAG_UI_AUTH, comparing in constant time."""
    user, password = split_secret(secret)

    def check(username: str, given: str) -> bool:
        user_ok = not user or hmac.compare_digest(username.encode(), user.encode())
        return hmac.compare_digest(given.encode(), password.encode()) and user_ok

    return check


def check_exposure(host: str, share: bool, secret: str | None, no_auth: bool) -> None:
    """Refuse to serve beyond this machine without a password unless told to: anyone who can reach
    the address could use the UI, and the LLM key behind it."""
    if (share or not is_loopback(host)) and not secret and not no_auth:
        where = "a public share link" if share else f"{host}, which other machines can reach"
        raise SettingsError(
            f"refusing to serve the UI on {where} without a password: set RAG_UI_AUTH=user:password "
            "(or pass --no-auth to serve it to anyone who can reach it)"
        )


class HostGuard:
    """ASGI middleware applying `Access.refusal` to every HTTP request and websocket."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self.access.refusal(scope)
        if refused is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            status, reason = refused
            body = reason.encode()
            extra = [(b"www-authenticate", b"Bearer")] if status == 401 else []
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(body)).encode()),
                        *extra,
                        *HEADERS,
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})


def outermost_lifespan(access: Access) -> Callable[[Any], Any]:
    """A lifespan (for `launch(app_kwargs={"lifespan": …})`) that wraps the app's whole middleware
    stack, Gradio's CORS layer included, in a HostGuard before the server accepts a connection."""

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        if not isinstance(app.middleware_stack, HostGuard):
            app.middleware_stack = HostGuard(app.middleware_stack, access)
        yield

    return lifespan


def guarded(app: Any) -> bool:
    """Whether `app` (Gradio's server app, once launched) answers through a HostGuard."""
    return isinstance(getattr(app, "middleware_stack", None), HostGuard)
