"""The hand-written held-out sets are sound: every file parses, ids are unique, every item has a
split and a kind, answerable items name gold papers and a verbatim quote, unanswerable ones none;
over the bundled sample (its index is built here) every quote is a piece of its gold paper.
A broken set would silently move the figures every choice is made on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.heldout import HELDOUT, SOURCES
from rag.app import App
from rag.evaluation import SPLITS, load_items

KINDS = {
    "paraphrase",
    "factoid",
    "how",
    "synthesis",
    "list-qualified",
    "catalogue",
    "near-miss",
    "off-topic",
    "follow-up",
    "topic-switch",
    "title-only",
}
FILES = sorted(HELDOUT.glob("*.jsonl"))


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_written_set_is_a_source_of_the_heldout_runner() -> None:
    assert len(FILES) >= 13
    assert {p.name for p in FILES} <= {s.path.name for s in SOURCES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_items_are_well_formed(path: Path) -> None:
    rows = records(path)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicate ids"
    for r in rows:
        where = f"{path.name}: {r['id']}"
        assert r["split"] in SPLITS and r["kind"] in KINDS and r["question"].strip(), where
        gold = r.get("gold_ids") or r.get("gold_quotes") or r.get("gold_pattern")
        if r["answerable"]:
            assert gold or r.get("answer_contains"), where
        else:
            assert not gold and not r.get("evidence") and not r.get("answer_contains"), where


@pytest.mark.parametrize("path", sorted(HELDOUT.glob("sample_*.jsonl")), ids=lambda p: p.name)
def test_sample_quotes_are_pieces_of_their_gold_abstracts(sample_app: App, path: Path) -> None:
    catalog = sample_app.index.load().catalog
    items, errors = load_items(path, catalog)
    assert errors == [] and len(items) == len(records(path))
    quotes = {r["id"]: r.get("evidence", []) + r.get("answer_contains", []) for r in records(path)}
    for item in items:
        if not item.answerable or item.kind == "catalogue":  # a catalogue fact is a count or a field
            continue
        papers = catalog.get_many(item.gold_ids).values()
        texts = [f"{p.title}\n{p.abstract}\n{', '.join(p.authors)}" for p in papers]
        assert texts, f"{path.name}: {item.id} has no gold paper in the sample"
        for quote in quotes[item.id]:
            assert any(quote.strip("*") in t for t in texts), f"{path.name}: {item.id}: {quote!r}"
