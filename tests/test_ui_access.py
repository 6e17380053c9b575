"""Who may talk to `rag ui --mcp` (issue 21, items 8 and 10): real HTTP requests with foreign Host
and Origin headers against the real launched UI and its MCP endpoint, the password of a shared
deployment, the refusal to bind beyond loopback without one, and every upload route closed."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port, run_rag, wait_for_http

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
)
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@contextmanager
def rag_ui(home: Path, log: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[int]:
    """`rag ui --mcp` in a subprocess; yields its port."""
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rag.cli", "ui", "--mcp", "--port", str(port), *args],
            cwd=ROOT,
            env={**os.environ, "RAG_HOME": str(home), **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_http(f"http://127.0.0.1:{port}/", proc, timeout=120)
            yield port
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def request(
    port: int, method: str, path: str, headers: dict[str, str] | None = None, body: str | bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One request to 127.0.0.1:port with exactly these headers (Host included when given)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def ui_home(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("access") / "home"
    shutil.copytree(sample_home, home)
    return home


@pytest.fixture(scope="module")
def ui_port(ui_home: Path) -> Iterator[int]:
    with rag_ui(ui_home, ui_home.parent / "ui.log") as port:
        yield port


def calls(port: int) -> list[tuple[str, str, str | None, dict[str, str]]]:
    """What a rebinding page would do: read the API, run a tool, talk MCP, preflight."""
    search = json.dumps({"data": ["persuasion", 1, None, None, None, None, None, None]})
    return [
        ("GET", "/", None, {}),
        ("GET", "/config", None, {}),
        ("GET", "/gradio_api/info", None, {}),
        ("POST", "/gradio_api/call/search_papers", search, {"Content-Type": "application/json"}),
        ("POST", "/gradio_api/mcp/", INITIALIZE, MCP_HEADERS),
        ("OPTIONS", "/gradio_api/mcp/", None, {"Access-Control-Request-Method": "POST"}),
        ("OPTIONS", "/gradio_api/call/ask", None, {"Access-Control-Request-Method": "POST"}),
    ]


def test_requests_for_another_host_or_from_another_origin_are_refused(ui_port: int) -> None:
    """DNS rebinding: evil.example resolves to 127.0.0.1, so its page's requests reach the UI with
    Host and Origin naming evil.example. They are refused with 403 and no access-control header
    names them; the same requests for 127.0.0.1 or localhost are served."""
    port = ui_port
    evil = f"evil.example:{port}"
    foreign = [
        {"Host": evil, "Origin": f"http://{evil}"},  # the rebinding page itself
        {"Host": evil},  # a rebinding page's request without an Origin (GET)
        {"Host": f"127.0.0.1:{port}", "Origin": f"http://{evil}"},  # a cross-site request
        {"Host": f"127.0.0.1:{port}", "Origin": "http://127.0.0.1:1"},  # another local server's page
        {"Host": f"127.0.0.1:{port}", "Origin": "null"},  # a sandboxed frame or a file: page
        {"Host": f"127.0.0.1.evil.example:{port}"},
    ]
    for method, path, body, headers in calls(port):
        for bad in foreign:
            status, got, text = request(port, method, path, {**headers, **bad}, body)
            assert status == 403, (method, path, bad, status, text[:200])
            assert not any(k.startswith("access-control-allow") for k in got), (method, path, bad, got)
            assert b"evil" not in text
    own = [
        {"Host": f"127.0.0.1:{port}"},
        {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"},
        {"Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}"},
    ]
    for headers in own:
        status, got, _ = request(port, "POST", "/gradio_api/mcp/", {**MCP_HEADERS, **headers}, INITIALIZE)
        assert status == 200, headers
        if "Origin" in headers:
            assert got.get("access-control-allow-origin") == headers["Origin"]
        status, _, _ = request(port, "GET", "/gradio_api/info", headers)
        assert status == 200, headers


def test_every_upload_route_is_closed(ui_port: int) -> None:
    """`/gradio_api/process_recording` took a file and echoed it back; `/upload` was already
    closed. Any request with a file body is refused, on any route."""
    port = ui_port
    body = (
        b'--x\r\nContent-Disposition: form-data; name="video"; filename="a.mp4"\r\n'
        b"Content-Type: video/mp4\r\n\r\nUPLOADED-BYTES\r\n--x--\r\n"
    )
    multipart = {"Content-Type": "multipart/form-data; boundary=x", "Host": f"127.0.0.1:{port}"}
    for path in (
        "/gradio_api/process_recording",
        "/gradio_api/process_recording/",
        "/gradio_api/upload",
        "/gradio_api/upload?upload_id=1",
        "/gradio_api/call/ask",
        "/gradio_api/queue/join",
        "/gradio_api/run/predict",
    ):
        status, _, text = request(port, "POST", path, multipart, body)
        assert status == 403, (path, status, text[:200])
        assert b"UPLOADED-BYTES" not in text
    status, _, text = request(port, "POST", "/gradio_api/process_recording", {"Host": f"127.0.0.1:{port}"}, b"x")
    assert status == 403, text[:200]


def test_a_shared_deployment_needs_the_password(ui_home: Path, tmp_path: Path) -> None:
    """RAG_UI_AUTH: served on every interface, the page's API needs Gradio's login and the MCP
    endpoint the password as a bearer token; this machine's own name is accepted as Host."""
    env = {"RAG_UI_AUTH": "alice:s3cret-pw"}
    with rag_ui(ui_home, tmp_path / "ui.log", "--host", "0.0.0.0", env=env) as port:
        host = {"Host": f"127.0.0.1:{port}"}
        search = json.dumps({"data": ["persuasion", 1, None, None, None, None, None, None]})
        status, _, _ = request(port, "POST", "/gradio_api/call/search_papers", {**host, **MCP_HEADERS}, search)
        assert status == 401
        form = {**host, "Content-Type": "application/x-www-form-urlencoded"}
        status, _, _ = request(port, "POST", "/login", form, "username=alice&password=wrong")
        assert status == 400
        status, got, _ = request(port, "POST", "/login", form, "username=alice&password=s3cret-pw")
        assert status == 200
        cookies = "; ".join(c.split(";")[0] for c in got.get("set-cookie", "").split(", ") if "=" in c.split(";")[0])
        status, _, text = request(
            port, "POST", "/gradio_api/call/search_papers", {**host, **MCP_HEADERS, "Cookie": cookies}, search
        )
        assert status == 200, text[:200]

        status, _, _ = request(port, "POST", "/gradio_api/mcp/", {**host, **MCP_HEADERS}, INITIALIZE)
        assert status == 401
        wrong = {**host, **MCP_HEADERS, "Authorization": "Bearer wrong"}
        assert request(port, "POST", "/gradio_api/mcp/", wrong, INITIALIZE)[0] == 401
        right = {**host, **MCP_HEADERS, "Authorization": "Bearer s3cret-pw"}
        assert request(port, "POST", "/gradio_api/mcp/", right, INITIALIZE)[0] == 200

        by_name = {**right, "Host": f"{socket.gethostname()}:{port}"}  # how the network reaches it
        assert request(port, "POST", "/gradio_api/mcp/", by_name, INITIALIZE)[0] == 200
        evil = {**right, "Host": f"evil.example:{port}"}  # the password does not make a foreign Host fine
        assert request(port, "POST", "/gradio_api/mcp/", evil, INITIALIZE)[0] == 403


def test_serving_beyond_loopback_needs_a_password_or_an_explicit_flag(ui_home: Path, tmp_path: Path) -> None:
    for args in (["--host", "0.0.0.0"], ["--host", "192.0.2.1"], ["--share"]):
        done = run_rag("ui", "--port", str(free_port()), *args, env={"RAG_HOME": str(ui_home)}, timeout=120)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert "RAG_UI_AUTH" in done.stderr and "--no-auth" in done.stderr and "Traceback" not in done.stderr
    with rag_ui(ui_home, tmp_path / "ui.log", "--host", "0.0.0.0", "--no-auth") as port:  # said on purpose
        assert request(port, "GET", "/gradio_api/info", {"Host": f"127.0.0.1:{port}"})[0] == 200
        assert request(port, "GET", "/gradio_api/info", {"Host": f"evil.example:{port}"})[0] == 403


def test_allow_host_names_a_proxy(ui_home: Path, tmp_path: Path) -> None:
    """A reverse proxy or DNS name given with --allow-host is served, on any port of its origin."""
    with rag_ui(ui_home, tmp_path / "ui.log", "--allow-host", "papers.lab.example") as port:
        proxied = {"Host": "papers.lab.example", "Origin": "https://papers.lab.example", **MCP_HEADERS}
        status, got, _ = request(port, "POST", "/gradio_api/mcp/", proxied, INITIALIZE)
        assert status == 200 and got.get("access-control-allow-origin") == "https://papers.lab.example"
        assert request(port, "GET", "/gradio_api/info", {"Host": "other.lab.example"})[0] == 403
