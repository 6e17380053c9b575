"""No outgoing connections: the real `rag ingest`, `rag ask` and `rag ui` run under strace, and every
address they connect or send to must be loopback, a Unix socket or netlink (issue 12, section 5).

The commands run with none of the package's offline defaults (`rag.OFFLINE_ENV`) in their
environment, so the test checks what `import rag` sets, not what an earlier test left in
`os.environ`. Timing matters: onnxruntime's telemetry first uploads about 9 s after it starts, so a
command that exits sooner hides it. Ingesting the sample takes longer than that, and the UI is kept
up for UI_SECONDS."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rag import OFFLINE_ENV
from tests.conftest import REQUIRE_STRACE, ROOT, free_port, wait_for_http

STRACE = shutil.which("strace")
UI_SECONDS = 15.0  # how long the UI stays up after launch, longer than onnxruntime's upload delay
# sendmsg and sendmmsg too: an unconnected UDP socket can reach the network without connect().
TRACE = ["-f", "--seccomp-bpf", "-qq", "-s", "0", "-e", "signal=none", "-e", "trace=connect,sendto,sendmsg,sendmmsg"]
SOCKADDR = re.compile(r"\{sa_family=(AF_\w+)([^{}]*)\}")
IP = re.compile(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"')
PORT = re.compile(r"sin6?_port=htons\((\d+)\)")
LOCAL_FAMILIES = {"AF_UNIX", "AF_NETLINK", "AF_UNSPEC"}  # AF_UNSPEC: connect() that dissolves a UDP peer


def outside_addresses(trace: str) -> list[str]:
    """Each address in strace output that is neither loopback nor local IPC, with its strace line."""
    found: list[str] = []
    for line in trace.splitlines():
        for family, fields in SOCKADDR.findall(line):
            if family in LOCAL_FAMILIES:
                continue
            ip, port = IP.search(fields), PORT.search(fields)
            if family in {"AF_INET", "AF_INET6"} and ip:
                address = ipaddress.ip_address(ip.group(1) or ip.group(2))
                mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is loopback too
                if (mapped or address).is_loopback:
                    continue
                where = f"{address}:{port.group(1) if port else '?'}"
                found.append(f"{where}{' (DNS)' if port and port.group(1) == '53' else ''}  <- {line.strip()}")
            else:
                found.append(f"{family}  <- {line.strip()}")
    return found


def test_outside_addresses_parses_strace_lines() -> None:
    trace = """\
9 connect(3, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT
9 connect(4, {sa_family=AF_INET, sin_port=htons(7860), sin_addr=inet_addr("127.0.0.1")}, 16) = 0
9 sendto(4, ""..., 1, 0, {sa_family=AF_INET6, sin6_port=htons(9), sin6_flowinfo=htonl(0), \
inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 1
9 sendto(4, ""..., 172, 0, NULL, 0) = 172
9 connect(5, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.255.255.53")}, 16 <unfinished ...>
9 sendmsg(6, {msg_name={sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), \
inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, msg_namelen=28}, 0) = 1
"""
    found = outside_addresses(trace)
    assert [f.split("  <- ")[0] for f in found] == ["10.255.255.53:53 (DNS)", "2001:db8::1:443"]


def _strace_or_skip(tmp_path: Path) -> str:
    """The strace binary, once it has traced a trivial command; else skip (or fail under CI)."""
    reason = "strace is not installed (apt-get install strace; .ci/run does this)"
    if STRACE:
        probe = subprocess.run(
            [STRACE, *TRACE, "-o", str(tmp_path / "probe"), sys.executable, "-c", "pass"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if probe.returncode == 0:
            return STRACE
        reason = f"strace cannot trace here (ptrace not permitted?): {probe.stderr.strip()[:300]}"
    if REQUIRE_STRACE:
        pytest.fail(f"{reason}; RAG_REQUIRE_STRACE=1 makes this a failure")
    pytest.skip(reason)


def _command(strace: str, log: Path, *args: str) -> list[str]:
    return [strace, *TRACE, "-o", str(log), sys.executable, "-m", "rag.cli", *args]


def _env() -> dict[str, str]:
    """The test's environment without the package's offline defaults, which `import rag` must set."""
    return {k: v for k, v in os.environ.items() if k not in OFFLINE_ENV}


def _run(strace: str, log: Path, *args: str) -> None:
    done = subprocess.run(
        _command(strace, log, *args), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"rag {' '.join(args)} failed:\n{done.stderr[-2000:]}"


def _run_ui(strace: str, log: Path, tmp_path: Path) -> None:
    """Start `rag ui`, fetch its page and config so Gradio does its start-up work, keep it up for
    UI_SECONDS, then stop it with Ctrl-C so its shutdown is traced too. strace, given a command and
    -o, blocks SIGINT itself, so the signal to the process group reaches only `rag ui`."""
    port = free_port()
    started = time.monotonic()
    with (tmp_path / "ui.out").open("wb") as out:
        proc = subprocess.Popen(
            _command(strace, log, "ui", "--port", str(port)),
            cwd=ROOT,
            env=_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            url = f"http://127.0.0.1:{port}/"
            wait_for_http(url, proc, timeout=120)
            for path in ("", "config", "gradio_api/info"):
                with urllib.request.urlopen(url + path, timeout=30) as response:
                    assert response.status == 200, f"GET /{path}: {response.status}"
            time.sleep(max(0.0, started + UI_SECONDS - time.monotonic()))
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=60)
        finally:
            with contextlib.suppress(ProcessLookupError):  # whatever is left, also when the start failed
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, (tmp_path / "ui.out").read_text(errors="replace")[-2000:]


def test_ingest_ask_and_ui_connect_only_to_loopback(tmp_path: Path) -> None:
    strace = _strace_or_skip(tmp_path)
    logs = {name: tmp_path / f"{name}.strace" for name in ("ingest", "ask", "ui")}
    _run(strace, logs["ingest"], "ingest")
    _run(strace, logs["ask"], "ask", "What is Celcomen?")
    _run_ui(strace, logs["ui"], tmp_path)
    report = []
    for name, log in logs.items():
        found = outside_addresses(log.read_text(errors="replace"))
        if found:
            report.append(f"rag {name}: {len(found)} outside the machine, e.g.\n  " + "\n  ".join(found[:6]))
    if report:
        pytest.fail(f"connections beyond loopback (strace logs in {tmp_path}):\n" + "\n".join(report), pytrace=False)
