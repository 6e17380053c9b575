"""The shared-server mode: a real `chroma run` on 127.0.0.1, two data folders (two "machines")."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from rag.app import App
from rag.settings import Settings
from tests.conftest import free_port


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


def test_a_server_gone_mid_search_is_one_clear_error_for_every_thread(
    chroma_process: tuple[subprocess.Popen[bytes], int], tmp_path: Path
) -> None:
    """UI threads search while the server dies under them: each ends with the StoreError that
    names the server (no hang, no traceback of chromadb's or httpx's own types)."""
    from rag.errors import StoreError

    proc, port = chroma_process
    app = App(Settings(home=tmp_path / "ui", chroma_host="127.0.0.1", chroma_port=port, embedder="hash"))
    app.ingest([next(Path(app.settings.sample_dir).glob("001_*.txt"))], progress=False)
    assert app.search("Celcomen", k=1).hits
    searched = threading.Barrier(5)
    outcomes: list[str] = []

    def search_until_it_fails() -> None:
        searched.wait(timeout=60)
        for _ in range(2000):
            try:
                app.search("Celcomen graphs", k=3)
            except StoreError as err:
                outcomes.append("store error" if f"http://127.0.0.1:{port}" in str(err) else f"unnamed: {err}")
                return
            except Exception as err:  # any other type is what this test looks for
                outcomes.append(f"{type(err).__name__}: {err}")
                return
        outcomes.append("never failed")

    threads = [threading.Thread(target=search_until_it_fails, daemon=True) for _ in range(4)]
    for thread in threads:
        thread.start()
    searched.wait(timeout=60)
    proc.kill()
    proc.wait(timeout=30)
    for thread in threads:
        thread.join(timeout=120)
    assert not [t for t in threads if t.is_alive()], "a search thread hangs on the dead server"
    assert outcomes == ["store error"] * 4, outcomes


def test_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    from rag.errors import StoreError

    with pytest.raises(StoreError, match=r"Chroma server at http://127.0.0.1:\d+ failed"):
        App(Settings(home=tmp_path, chroma_host="127.0.0.1", chroma_port=free_port())).index.status()
