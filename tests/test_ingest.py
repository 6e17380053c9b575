from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag.app import App
from rag.errors import NothingReadError
from rag.settings import Settings
from tests.conftest import DATA, ROOT, SAMPLE, shared_data_or_skip


def _consistent(app: App) -> tuple[int, int]:
    """(papers, chunks) after checking that every chunk belongs to a record and vice versa."""
    store = app.index.store.open()
    records = store.papers()
    expected = {f"{r.paper.id}#{i}" for r in records for i in range(r.n_chunks)}
    ids = store.chunk_ids()
    assert len(ids) == len(set(ids))
    assert set(ids) == expected
    return len(records), len(ids)


def test_reingest_adds_nothing(sample_app: App) -> None:
    report = sample_app.ingest_sample(progress=False)
    assert (len(report.added), len(report.updated), len(report.unchanged)) == (0, 0, 96)
    assert report.chunks_embedded == 0
    assert _consistent(sample_app) == (96, 96)


def test_changed_abstract_replaces_its_chunks(tmp_path: Path) -> None:
    folder = tmp_path / "list"
    folder.mkdir()
    source = next(SAMPLE.glob("001_*.txt"))
    target = folder / source.name
    text = source.read_text(encoding="utf-8")
    target.write_text(text, encoding="utf-8")
    home = tmp_path / "home"
    first = App(Settings(home=home)).ingest([folder], progress=False)
    assert len(first.added) == 19
    old = "disentangle intra- and inter-cellular gene regulation"
    assert old in text
    target.write_text(text.replace(old, "disentangle ZQXW-unique gene regulation"), encoding="utf-8")
    app = App(Settings(home=home))
    report = app.ingest([folder], progress=False)
    assert (len(report.updated), len(report.added), len(report.unchanged)) == (1, 0, 18)
    assert report.chunks_embedded == 1
    hits = app.search("ZQXW-unique", k=1, mode="keyword").hits
    assert hits and hits[0].paper.label == "Celcomen" and "ZQXW-unique" in hits[0].paper.abstract
    assert all(h.paper.label != "Celcomen" for h in app.search("intra inter cellular", mode="keyword").hits)
    assert _consistent(app) == (19, 19)


def test_broken_records_are_skipped_and_reported(tmp_path: Path) -> None:
    app = App(Settings(home=tmp_path / "h"))
    report = app.ingest([DATA / "papers.jsonl", DATA / "papers.bib", DATA / "binary.png"], progress=False)
    assert {"T1", "T2", "T4", "knuth2025lit", "noabstract2024"} == set(report.added)
    assert {(Path(e.source).name, e.line) for e in report.skipped} >= {("papers.jsonl", 3), ("papers.jsonl", 4)}
    assert any("binary" in e.reason for e in report.skipped)
    status = app.index.status()
    assert status["papers"] == 5 and status["catalogue_only_papers"] == 2 and status["chunks"] == 3
    app.index.load()
    assert app.index.catalog is not None
    assert [p.id for p in app.index.catalog.lookup("graph pooling")] == ["T2"]


def test_nothing_readable_is_an_error_and_harms_nothing(sample_app: App) -> None:
    with pytest.raises(NothingReadError, match="empty"):
        sample_app.ingest([DATA / "empty.jsonl"])
    assert _consistent(sample_app) == (96, 96)


def test_seed_and_jsonl_copies_merge_into_one_paper(sample_app: App, tmp_path: Path) -> None:
    source = shared_data_or_skip("iclr2025.jsonl")
    seeds = {p.abstract[:80] for p in __import__("rag.readers", fromlist=["read_paths"]).read_paths([SAMPLE]).papers}
    subset = tmp_path / "subset.jsonl"
    lines = [line for line in source.read_text(encoding="utf-8").splitlines()
             if json.loads(line)["abstract"][:80] in seeds]
    assert len(lines) >= 10
    subset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = sample_app.ingest([subset], progress=False)
    assert not report.added and len(report.updated) == len(lines)
    assert len(report.removed) == len(lines)  # derived ids replaced by the OpenReview ids
    papers, chunks = _consistent(sample_app)
    assert papers == 96 and chunks == 96
    record = json.loads(lines[0])
    merged = sample_app.index.load().catalog.get(record["id"])  # type: ignore[union-attr]
    assert merged is not None and merged.title == record["title"] and merged.decision == record["decision"]
    assert merged.venue == "ICLR" and merged.year == 2025


def test_killed_ingest_rerun_is_consistent(tmp_path: Path) -> None:
    home = tmp_path / "killed"
    env = {**os.environ, "RAG_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "rag.cli", "ingest"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app = App(Settings(home=home))
    deadline = time.time() + 120
    written = 0
    # Kill once the first batch of chunks is in Chroma but before the run can finish.
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.5)
        try:
            written = App(Settings(home=home)).index.store.open().count_chunks() if app.index.exists() else 0
        except Exception:
            written = 0
        if written > 0:
            break
    assert proc.poll() is None, "ingest finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 0 < written < 96
    rerun = App(Settings(home=home)).ingest_sample(progress=False)
    assert len(rerun.added) + len(rerun.updated) + len(rerun.unchanged) == 96
    assert _consistent(App(Settings(home=home))) == (96, 96)
    again = App(Settings(home=home)).ingest_sample(progress=False)
    assert len(again.unchanged) == 96
