"""Many writers and many readers, with real processes, a real `chroma run` and real threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from rag.app import App
from rag.errors import RagError
from rag.settings import Settings
from tests.conftest import HASH, ROOT, consistent, hash_app, shared_data_or_skip


def _slice(source: Path, target: Path, start: int, count: int) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines()[start : start + count]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def _spawn(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "rag.cli", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    return out, err


def _ids(path: Path) -> set[str]:
    return {json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


@pytest.fixture
def two_lists(tmp_path: Path) -> tuple[Path, Path]:
    iclr, icml = shared_data_or_skip("iclr2025.jsonl"), shared_data_or_skip("icml2025.jsonl")
    return _slice(iclr, tmp_path / "iclr150.jsonl", 0, 150), _slice(icml, tmp_path / "icml150.jsonl", 0, 150)


def test_two_ingests_into_one_folder_both_land(tmp_path: Path, two_lists: tuple[Path, Path]) -> None:
    """The reproduction from the issue: two processes started 3 s apart. The second waits for the
    lock, says so, and then runs; every paper and every chunk of both is there."""
    env = {**HASH, "RAG_HOME": str(tmp_path / "home")}
    first = _spawn(["ingest", str(two_lists[0]), "--json"], env)
    time.sleep(3)
    second = _spawn(["ingest", str(two_lists[1]), "--json"], env)
    out_a, _ = _finish(first)
    out_b, err_b = _finish(second)
    assert json.loads(out_a)["added"] == 150 and json.loads(out_b)["added"] == 150
    app = hash_app(tmp_path / "home")
    papers, chunks = consistent(app)
    assert papers == 300 and chunks == 300
    assert {p.id for _, p in app.index.catalog.iter_papers()} == _ids(two_lists[0]) | _ids(two_lists[1])


def test_a_second_writer_waits_for_the_lock_and_says_so(tmp_path: Path) -> None:
    from rag.store.index import WriteLock

    home = tmp_path / "home"
    lock = WriteLock(home / "write.lock")
    assert lock.acquire(wait=False)
    proc = _spawn(["ingest", "--json"], {**HASH, "RAG_HOME": str(home)})
    try:
        deadline = time.time() + 60
        assert proc.stderr is not None
        line = proc.stderr.readline()
        while "waiting for" not in line and time.time() < deadline and proc.poll() is None:
            line = proc.stderr.readline()
        assert "waiting for" in line and str(home) in line
        time.sleep(1)
        assert proc.poll() is None, "the second writer must not run while the lock is held"
    finally:
        lock.release()
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0 and json.loads(out)["added"] == 96


def test_two_machines_write_one_chroma_server_at_once(
    tmp_path: Path, two_lists: tuple[Path, Path], chroma_server: int
) -> None:
    """Two data folders (two machines, no shared lock) ingest into one server at the same time;
    then every paper and chunk is present, and a third machine sees them all."""
    server = {**HASH, "RAG_CHROMA_HOST": "127.0.0.1", "RAG_CHROMA_PORT": str(chroma_server)}
    a = _spawn(["ingest", str(two_lists[0]), "--json"], {**server, "RAG_HOME": str(tmp_path / "machine-a")})
    b = _spawn(["ingest", str(two_lists[1]), "--json"], {**server, "RAG_HOME": str(tmp_path / "machine-b")})
    _finish(a)
    _finish(b)
    settings = {"chroma_host": "127.0.0.1", "chroma_port": chroma_server}
    third = hash_app(tmp_path / "machine-c", **settings)
    assert consistent(third) == (300, 300)
    assert third.status()["cache"] == "in sync"
    shown = {p.id: p for _, p in third.index.catalog.iter_papers()}
    for machine in ("machine-a", "machine-b"):
        app = hash_app(tmp_path / machine, **settings)
        assert consistent(app) == (300, 300)
        # Every machine derives the same papers from the log (labels and versions included).
        assert {p.id: p for _, p in app.index.catalog.iter_papers()} == shown
    title = json.loads(two_lists[1].read_text(encoding="utf-8").splitlines()[7])["title"]
    assert third.search(title, k=1).hits[0].paper.title == title
    # A sequential re-run on either machine finds nothing to do.
    again = hash_app(tmp_path / "machine-a", **settings).ingest([two_lists[0], two_lists[1]], progress=False)
    assert again.unchanged == 300 and not again.added and again.chunks_embedded == 0


def test_two_shards_in_two_processes_split_one_file(tmp_path: Path, chroma_server: int) -> None:
    source = _slice(shared_data_or_skip("icml2025.jsonl"), tmp_path / "icml200.jsonl", 0, 200)
    server = {**HASH, "RAG_CHROMA_HOST": "127.0.0.1", "RAG_CHROMA_PORT": str(chroma_server)}
    procs = [
        _spawn(["ingest", str(source), "--shard", f"{i}/2", "--json"], {**server, "RAG_HOME": str(tmp_path / f"m{i}")})
        for i in (1, 2)
    ]
    counts = [json.loads(_finish(p)[0])["papers_read"] for p in procs]
    assert counts == [100, 100]
    app = hash_app(tmp_path / "m3", chroma_host="127.0.0.1", chroma_port=chroma_server)
    assert consistent(app) == (200, 200)
    assert {p.id for _, p in app.index.catalog.iter_papers()} == _ids(source)


def test_fifty_threads_share_one_app(tmp_path: Path) -> None:
    home = tmp_path / "home"
    hash_app(home).ingest_sample(progress=False)
    questions = [
        "PLNL",
        "Celcomen",
        "sparse autoencoders",
        "What STL-10 accuracy does PLNL reach?",
        "Which paper introduced PersuasionBench?",
    ]
    for trial in range(3):  # a fresh App each time: the first loads race, too
        app = App(Settings(home=home, embedder="hash"))
        results: Counter[str] = Counter()
        errors: list[str] = []

        def work(i: int) -> None:
            try:
                query = questions[i % len(questions)]
                hits = app.search(query, k=3).hits
                results["hits" if len(hits) == 3 else "short"] += 1
                app.chat().ask(query)
                results["answered"] += 1
            except Exception as err:  # any error is the failure this test looks for
                errors.append(f"{type(err).__name__}: {err}")

        threads = [threading.Thread(target=work, args=(i,)) for i in range(50)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert not errors, errors[:3]
        assert results == Counter({"hits": 50, "answered": 50}), (trial, results)


def test_readers_keep_working_while_a_writer_writes_and_removes(tmp_path: Path, two_lists: tuple[Path, Path]) -> None:
    home = tmp_path / "home"
    env = {**HASH, "RAG_HOME": str(home)}
    _finish(_spawn(["ingest", str(two_lists[0])], env))
    reader = App(Settings(home=home, embedder="hash"))
    stop = threading.Event()
    errors: list[str] = []
    searches = Counter[str]()

    def read() -> None:
        while not stop.is_set():
            try:
                searches["ok" if reader.search("graph neural networks", k=5).hits else "empty"] += 1
            except Exception as err:
                errors.append(f"{type(err).__name__}: {err}")
                return

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    _finish(_spawn(["ingest", str(two_lists[1])], env))
    _finish(_spawn(["remove", "--source", str(two_lists[0])], env))
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors[:3]
    assert searches["ok"] > 0
    assert consistent(hash_app(home)) == (150, 150)
    after = reader.search("graph neural networks", k=5).hits
    assert after and all(h.paper.id in _ids(two_lists[1]) for h in after)


def _fillers(path: Path, prefix: str, count: int, shared_abstract: str) -> Path:
    records = [
        {"id": f"{prefix}{i}", "title": f"Filler {prefix} {i}", "abstract": f"Filler text {prefix} {i} about graphs."}
        for i in range(count)
    ]
    records.append({"id": "SHARED", "title": "The shared paper", "abstract": shared_abstract})
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_two_machines_changing_one_paper_at_once_leave_nothing_stale(tmp_path: Path, chroma_server: int) -> None:
    """Two machines list the same paper (same id) with different abstracts and write at once: each
    embeds the text it knows. Whichever text the merged paper ends with, the other version's
    vectors must not stay live for ever: the next ingest on any machine tombstones and deletes them,
    and counts each paper once."""
    v1 = "We study graph sparsification with spectral guarantees and report the first version of our results."
    v2 = v1 + " A second, longer version adds experiments on molecules and citation networks of many sizes."
    ra = _fillers(tmp_path / "ra.jsonl", "A", 1500, v1)
    rb = _fillers(tmp_path / "rb.jsonl", "B", 1500, v2)
    server = {**HASH, "RAG_CHROMA_HOST": "127.0.0.1", "RAG_CHROMA_PORT": str(chroma_server)}
    a = _spawn(["ingest", str(ra), "--json"], {**server, "RAG_HOME": str(tmp_path / "ma")})
    b = _spawn(["ingest", str(rb), "--json"], {**server, "RAG_HOME": str(tmp_path / "mb")})
    _finish(a)
    _finish(b)
    settings = {"chroma_host": "127.0.0.1", "chroma_port": chroma_server}
    again = hash_app(tmp_path / "mc", **settings).ingest([ra, rb], progress=False)
    assert again.unchanged + len(again.repaired) == 3001  # papers, not copies
    third = hash_app(tmp_path / "md", **settings)
    assert consistent(third) == (3001, 3001)
    status = third.status()
    assert status["chunks_in_chroma"] == status["chunks_expected"] == 3001
    shared = third.paper("SHARED")
    assert shared is not None and shared.abstract == v2  # the richer copy wins, whatever the order


def _before_a_reset(tmp_path: Path, port: int) -> tuple[dict[str, object], App, Path]:
    """Machine 1 on a shared server with 41 papers, and the list it ingests after its reset."""
    settings: dict[str, object] = {"chroma_host": "127.0.0.1", "chroma_port": port}
    first = _fillers(tmp_path / "first.jsonl", "F", 40, "A paper that is deleted by the reset on another machine.")
    second = _fillers(tmp_path / "second.jsonl", "S", 7, "A paper ingested after the reset on another machine.")
    m1 = hash_app(tmp_path / "m1", **settings)
    m1.ingest([first], progress=False)
    return settings, m1, second


def test_a_reset_on_one_machine_reaches_the_others(tmp_path: Path, chroma_server: int) -> None:
    """Machine 1 resets the shared index and ingests other papers; machine 2 (a fresh command, and
    an App that stayed open across the reset) then shows only what the server holds."""
    settings, m1, second = _before_a_reset(tmp_path, chroma_server)
    m2 = hash_app(tmp_path / "m2", **settings)
    assert m2.status()["papers"] == 41 and m2.search("Filler F 3", k=3).hits
    m1.reset()
    m1 = hash_app(tmp_path / "m1", **settings)
    m1.ingest([second], progress=False)
    hits = m2.search("Filler", k=20).hits  # the App opened before the reset
    assert hits and all(h.paper.id.startswith(("S", "SHARED")) for h in hits)
    assert m2.status()["papers"] == 8
    fresh = hash_app(tmp_path / "m2", **settings)
    assert consistent(fresh) == (8, 8)
    assert fresh.paper("F3") is None


def test_threads_keep_searching_one_app_across_a_reset_elsewhere(tmp_path: Path, chroma_server: int) -> None:
    """UI threads share one App while another machine resets the index and ingests anew. Each
    search returns hits or one clean error (StoreError: the collection it held was deleted;
    IndexMissingError: between the reset and the new ingest);
    none trips over handles another thread dropped, and none waits forever (the store lock was
    taken twice when a collection vanished while it was being opened)."""
    settings, m1, second = _before_a_reset(tmp_path, chroma_server)
    ui = hash_app(tmp_path / "ui", **settings)
    assert ui.search("Filler", k=3).hits
    stop = threading.Event()
    counts: Counter[str] = Counter()
    errors: list[str] = []

    def search_until_stopped() -> None:
        while not stop.is_set():
            try:
                ui.search("Filler graphs", k=5)
                counts["ok"] += 1
            except RagError as err:  # the index deleted under it: one clean error, as a user sees it
                counts[type(err).__name__] += 1
            except Exception as err:  # anything else is the race this test looks for
                errors.append(f"{type(err).__name__}: {err}")

    threads = [threading.Thread(target=search_until_stopped, daemon=True) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(3):
            m1.reset()
            m1 = hash_app(tmp_path / "m1", **settings)
            m1.ingest([second], progress=False)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
    assert not [t for t in threads if t.is_alive()], "a search thread is stuck (a lock taken twice?)"
    assert not errors, errors[:3]
    assert counts["ok"] > 0, counts
    hits = ui.search("Filler", k=20).hits
    assert hits and all(h.paper.id.startswith(("S", "SHARED")) for h in hits)


def test_compact_on_a_shared_server_spares_orphans_a_writer_may_still_commit(
    tmp_path: Path, chroma_server: int
) -> None:
    """On a server no lock proves that no writer is between its upsert and its segment, so only
    orphans older than the grace period are deleted."""
    import numpy as np

    app = hash_app(tmp_path / "m1", chroma_host="127.0.0.1", chroma_port=chroma_server)
    app.ingest([_fillers(tmp_path / "f.jsonl", "F", 5, "A shared paper for the compaction test.")], progress=False)
    vectors = np.ones((2, app.embedder.dim), dtype=np.float32) / np.sqrt(app.embedder.dim)
    now = int(time.time())
    app.index.store.upsert_chunks(
        ["FRESH#v#0", "STALE#v#0"],
        vectors,
        [{"paper_id": "FRESH", "n": 0, "ts": now}, {"paper_id": "STALE", "n": 0, "ts": now - 7200}],
    )
    assert app.compact()["orphan_chunks_deleted"] == 1
    ids = set(app.index.store.chunk_ids())
    assert "FRESH#v#0" in ids and "STALE#v#0" not in ids


def test_threads_on_a_fresh_cache_wait_for_the_first_sync(tmp_path: Path) -> None:
    """An index copied to a new place (or a second machine) starts with no local cache: the
    first search builds it from the log. Threads searching at that moment wait for that thread
    instead of searching an empty catalogue ("Nothing found" in one of two UI tabs)."""
    import shutil

    home = tmp_path / "home"
    hash_app(home).ingest_sample(progress=False)
    extra = [{"id": f"X{i}", "title": f"Extra paper {i}", "abstract": f"Extra abstract {i}."} for i in range(1500)]
    (tmp_path / "extra.jsonl").write_text("".join(json.dumps(r) + "\n" for r in extra), encoding="utf-8")
    hash_app(home, ingest_batch=100).ingest([tmp_path / "extra.jsonl"], progress=False)  # a log that takes a while
    for trial in range(3):
        copy = tmp_path / f"copy{trial}"
        shutil.copytree(home, copy)
        shutil.rmtree(copy / "cache")
        app = hash_app(copy)
        found: list[int] = []
        start = threading.Barrier(8)

        def search() -> None:
            start.wait()
            hits = app.search("Extra paper 1499", k=1, mode="keyword").hits  # in the log's last segment
            found.append(1 if hits and hits[0].paper.id == "X1499" else 0)

        threads = [threading.Thread(target=search) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert found == [1] * 8, (trial, found)
