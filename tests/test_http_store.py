"""The shared-server mode: a real `chroma run` on 127.0.0.1, two data folders (two "machines")."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag.app import App
from rag.settings import Settings
from tests.conftest import free_port, wait_for_http


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[int]:
    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    port = free_port()
    proc = subprocess.Popen(
        [exe, "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_http(f"http://127.0.0.1:{port}/api/v2/heartbeat", proc, timeout=60)
    yield port
    proc.terminate()
    proc.wait(timeout=30)


def test_second_machine_searches_without_reingest(chroma_server: int, tmp_path: Path) -> None:
    first = App(Settings(home=tmp_path / "machine-a", chroma_host="127.0.0.1", chroma_port=chroma_server))
    first.ingest([next(Path(first.settings.sample_dir).glob("001_*.txt"))], progress=False)
    second = App(Settings(home=tmp_path / "machine-b", chroma_host="127.0.0.1", chroma_port=chroma_server))
    status = second.index.status()
    assert status["papers"] == 19 and status["store"] == f"http://127.0.0.1:{chroma_server}"
    assert second.search("Celcomen", k=1).hits[0].paper.label == "Celcomen"
    # A later ingest on machine A makes machine B's cached keyword index stale; B notices.
    first.ingest([next(Path(first.settings.sample_dir).glob("000_*.txt"))], progress=False)
    assert second.search("PLNL", k=1, mode="keyword").hits[0].paper.label == "PLNL"
    assert second.index.status()["papers"] == 19 + 19


def test_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    from rag.errors import StoreError

    with pytest.raises(StoreError, match=r"Chroma server at http://127.0.0.1:\d+ failed"):
        App(Settings(home=tmp_path, chroma_host="127.0.0.1", chroma_port=free_port())).index.status()
