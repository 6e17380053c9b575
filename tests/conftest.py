"""Shared fixtures. Every test gets its own data folder and no API keys (docs/DESIGN.md habit 8)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rag.app import App

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
SAMPLE = ROOT / "data" / "sample"
SHARED_DATA = ROOT.parent / "shared" / "data"
# Read once, then taken out of the environment: these flags are for the test harness, and the library
# refuses `RAG_*` variables it does not know (rag.settings), so no test may see them.
REQUIRE_BROWSER = bool(os.environ.pop("RAG_REQUIRE_BROWSER", ""))  # a missing browser fails, not skips
REQUIRE_STRACE = os.environ.pop("RAG_REQUIRE_STRACE", "") == "1"  # a missing strace fails, not skips


# What makes a test slow: the real embedding model over the sample, a Chroma server, a browser, a
# launched UI, or many real processes. Those tests carry the `slow` mark (`pytest -m "not slow"`
# runs the rest in under a minute); `.ci/run` runs everything.
SLOW_FIXTURES = frozenset(
    "sample_home sample_app chroma_process chroma_server hostile_home mcp_home ui_home ui_port sample_ui browser "
    "read_only_home llm_home escape_home two_lists ui_mcp_url".split()
)
SLOW_FILES = frozenset(
    "test_concurrency.py test_http_store.py test_snapshot.py test_offline.py test_ui_browser.py test_ui_access.py "
    "test_read_only.py test_cli_terminal.py test_mcp.py test_arxiv.py".split()
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & SLOW_FIXTURES or item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "RAG_")):
            monkeypatch.delenv(name)
    home = tmp_path / "rag-home"
    monkeypatch.setenv("RAG_HOME", str(home))
    return home


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_rag(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the real `rag` command in a subprocess (as a user would)."""
    return subprocess.run(
        [sys.executable, "-m", "rag.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )


@pytest.fixture(scope="session")
def sample_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A RAG_HOME holding the bundled sample, ingested once with the real local model."""
    from rag.app import App
    from rag.settings import Settings

    home = tmp_path_factory.mktemp("sample-home")
    App(Settings(home=home)).ingest_sample(progress=False)
    return home


@pytest.fixture
def sample_app(sample_home: Path, tmp_path: Path) -> Iterator[App]:
    """An App over a private copy of the sample index, so tests may change it."""
    from rag.app import App
    from rag.settings import Settings

    home = tmp_path / "sample-index"
    shutil.copytree(sample_home, home)
    yield App(Settings(home=home))


HASH = {"RAG_EMBEDDER": "hash"}  # the stand-in embedder: for tests of ingest logic, not of the model


def hash_app(home: Path, **settings: Any) -> App:
    """An App with the stand-in hash embedder (fast; for tests where the model does not matter)."""
    from rag.app import App
    from rag.settings import Settings

    return App(Settings(home=home, embedder="hash", **settings))


def consistent(app: App) -> tuple[int, int]:
    """(papers, chunks) after checking that Chroma holds exactly the chunks the catalogue's live
    vector entries name: none missing, none extra, no duplicates."""
    from rag.types import ChunkId

    index = app.index
    loaded = index.load()
    catalog = loaded.catalog
    pids = [p.id for _, p in catalog.iter_papers()]
    live = catalog.live_vectors(pids)
    expected = {str(ChunkId(pid, version, i)) for (pid, version), n in live.items() for i in range(n)}
    ids = loaded.store.chunk_ids()
    assert len(ids) == len(set(ids)), "duplicate chunk ids"
    assert set(ids) == expected, f"missing {len(expected - set(ids))}, extra {len(set(ids) - expected)}"
    assert catalog.counts()["missing_vectors"] == 0
    assert {pid for pid, _ in live} == set(pids), "a paper without live vectors"
    current = {s.pid: s.version for s in catalog.states(pids).values()}
    stale = [(pid, version) for pid, version in live if current.get(pid) != version]
    assert not stale, f"live vectors of a text version that is not the paper's own: {stale[:3]}"
    return len(pids), len(ids)


def catalogue_rows(app: App) -> list[tuple[object, ...]]:
    """Every derived catalogue row that does not depend on paper numbers, in a stable order: two
    machines holding the same log must agree on all of them."""
    db = app.index.catalog.db
    papers = db.execute(
        "SELECT pid, data, abstract_key, title_key, title_head, label_key, venue, year, tracks, decision, version, "
        "n_chunks, vectors_ok FROM papers ORDER BY pid"
    ).fetchall()
    authors = db.execute(
        "SELECT p.pid, a.key, a.name FROM authors a JOIN papers p USING (pno) ORDER BY 1, 2"
    ).fetchall()
    names = db.execute("SELECT p.pid, n.key FROM names n JOIN papers p USING (pno) ORDER BY 1, 2").fetchall()
    facets = db.execute("SELECT field, value, n FROM facets WHERE n > 0 ORDER BY 1, 2").fetchall()
    return [*papers, *authors, *names, *facets]


@pytest.fixture
def chroma_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A real `chroma run` on 127.0.0.1 with its own data folder: the process (a test may kill
    it) and its port."""
    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    port = free_port()
    proc = subprocess.Popen(
        [exe, "run", "--path", str(tmp_path / "chroma-server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_http(f"http://127.0.0.1:{port}/api/v2/heartbeat", proc, timeout=60)
    yield proc, port
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def chroma_server(chroma_process: tuple[subprocess.Popen[bytes], int]) -> int:
    """The port of a real `chroma run` on 127.0.0.1."""
    return chroma_process[1]


def shared_data_or_skip(name: str) -> Path:
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} is absent: the public data of ../shared/data is not on this machine")
    return path


def wait_for_http(url: str, proc: subprocess.Popen[bytes], timeout: float = 90) -> None:
    """Poll `url` until it answers; fail with the reason if the server process dies or hangs."""
    import urllib.request

    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"server for {url} exited with code {proc.returncode}")
            time.sleep(0.3)
    proc.kill()
    pytest.fail(f"server for {url} did not answer within {timeout:.0f} s")
