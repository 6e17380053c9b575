"""Lookup shows what matches, ranked, and says how many match in all (issue 21, item 14): `rag
papers "bag of heuristics"` gave 50 rows, most unrelated (any abstract with one of the words), and
the UI said "200 papers" for narrow queries (the length of its page of results)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.types import Filters
from tests.conftest import hash_app, run_rag


def records() -> list[dict[str, object]]:
    """One paper about a bag of heuristics, papers that share one of its words, and 230 papers
    about diffusion (more than a page of the UI's lookup)."""
    papers: list[dict[str, object]] = [
        {
            "id": "bag",
            "title": "Arithmetic Without Algorithms",
            "abstract": "We show that language models solve arithmetic with a bag of heuristics, not algorithms.",
        },
        {"id": "h1", "title": "Learning Search Heuristics", "abstract": "We learn heuristics for SAT solvers."},
        {"id": "h2", "title": "Heuristic Text Generation", "abstract": "Decoding heuristics are analysed here."},
        {"id": "b1", "title": "Bag-of-Words Retrieval", "abstract": "A bag of words model for retrieval."},
        {"id": "b2", "title": "Multiple-Instance Learning", "abstract": "Each bag holds instances to classify."},
    ]
    papers += [
        {"id": f"d{i}", "title": f"Diffusion Model Number {i}", "abstract": f"A diffusion model, variant {i}."}
        for i in range(230)
    ]
    for p in papers:
        p.update(venue="ICLR", year=2025, authors=["Ann Author"])
    return papers


def ingest(tmp_path: Path) -> Path:
    data = tmp_path / "papers.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records()), encoding="utf-8")
    home = tmp_path / "home"
    done = run_rag("ingest", str(data), env={"RAG_HOME": str(home), "RAG_EMBEDDER": "hash"})
    assert done.returncode == 0, done.stderr
    return home


@pytest.mark.slow
def test_papers_lists_only_what_matches_and_says_how_many(tmp_path: Path) -> None:
    home = ingest(tmp_path)
    env = {"RAG_HOME": str(home), "RAG_EMBEDDER": "hash"}
    done = run_rag("papers", "bag of heuristics", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert [r["paper_id"] for r in json.loads(done.stdout)] == ["bag"]
    assert "1 paper match" in done.stderr

    done = run_rag("papers", "heuristics", "--json", env=env)
    assert {r["paper_id"] for r in json.loads(done.stdout)} == {"bag", "h1", "h2"}
    assert "3 papers match" in done.stderr

    done = run_rag("papers", "diffusion", "--limit", "10", "--json", env=env)
    assert len(json.loads(done.stdout)) == 10
    assert "230 papers match (the first 10 shown" in done.stderr


@pytest.mark.slow
def test_ui_lookup_counts_the_matches_not_the_page(tmp_path: Path) -> None:
    from ui.app import ANY, Handlers

    app = hash_app(ingest(tmp_path))
    handlers = Handlers(app, tmp_path / "files")
    table, _ = handlers.lookup("bag of heuristics", ANY, ANY, "", ANY, "")
    assert "1 paper match, best match first" in table and table.count("<tr data-id=") == 1
    table, _ = handlers.lookup("diffusion", ANY, ANY, "", ANY, "")
    assert "230 papers match, the first 200 shown" in table and table.count("<tr data-id=") == 200
    assert app.lookup_total("diffusion", Filters(venue="ICML")) == 0
    assert app.lookup_total("", Filters(venue="ICLR")) == 235
