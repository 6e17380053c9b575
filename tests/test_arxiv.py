"""The arXiv metadata snapshot as a first-class, streamed format with category and date filters."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from rag.papers.readers import Reading, ReadOptions, detect_format
from tests.conftest import DATA, HASH, hash_app, run_rag

SNAPSHOT = DATA / "arxiv-snapshot.jsonl"


def test_snapshot_records_become_papers_with_arxiv_identity() -> None:
    assert detect_format(SNAPSHOT, SNAPSHOT.read_bytes()[:4096]) == "arxiv"
    reading = Reading([SNAPSHOT])
    papers = {p.id: p for p in reading}
    assert set(papers) == {"2401.00001", "2312.09999", "hep-th/9901001", "2402.00002"}
    probe = papers["2401.00001"]
    assert probe.own_id and probe.title == "Sparse Probes for Language Models"
    assert probe.authors == ["Ada Lovelace", "Alan Turing", "Grace Hopper"] and probe.year == 2024
    assert probe.url == "https://arxiv.org/abs/2401.00001" and probe.abstract.startswith("We propose SparseProbe")
    assert probe.venue == "arXiv" and probe.extra["categories"] == ["cs.CL", "cs.LG"]
    assert papers["2312.09999"].venue == "CVPR 2024" and papers["hep-th/9901001"].year == 1999
    assert [(e.line, "invalid JSON" in e.reason) for e in reading.errors] == [(5, True)]


def test_category_and_since_filters() -> None:
    cl = [p.id for p in Reading([SNAPSHOT], ReadOptions(categories=("cs.CL",)))]
    assert cl == ["2401.00001", "2402.00002"]
    cs = [p.id for p in Reading([SNAPSHOT], ReadOptions(categories=("cs.CV", "hep"), since=date(2008, 1, 1)))]
    assert cs == ["2312.09999", "hep-th/9901001"]
    recent = [p.id for p in Reading([SNAPSHOT], ReadOptions(since=date(2024, 1, 1)))]
    assert recent == ["2401.00001", "2402.00002"]


def test_ingest_with_filters_never_drops_what_the_filter_skipped(tmp_path: Path) -> None:
    env = {**HASH, "RAG_HOME": str(tmp_path / "home")}
    everything = run_rag("ingest", str(SNAPSHOT), "--json", env=env)
    assert everything.returncode == 1 and json.loads(everything.stdout)["added"] == 4  # one bad line
    only_cl = run_rag("ingest", str(SNAPSHOT), "--category", "cs.CL", "--since", "2024-01-01", "--json", env=env)
    summary = json.loads(only_cl.stdout)
    assert summary["papers_read"] == 2 and summary["removed"] == 0 and summary["unchanged"] == 2
    app = hash_app(tmp_path / "home")
    assert app.search("SparseProbe", k=1).hits[0].paper.id == "2401.00001"
    assert len(app.lookup("", limit=10)) == 4
