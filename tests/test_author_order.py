"""Author lists whose order the data does not have (issue 21, item 2): ICLR's lists are sorted by
given name, so their first name is not the paper's first author. Such lists are detected (the
source declares it, the list is long and sorted, or most of a source's lists are), every place
that shows them says "(alphabetical)", and BibTeX keys come from the title instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.answer.cite import bibtex_entry, bibtex_key
from rag.papers.readers import Reading
from rag.types import ALPHABETICAL, Paper
from tests.conftest import HASH, run_rag, shared_data_or_skip

NAMES = ["Ada Byron", "Bea Cole", "Cy Dunn", "Di Eng", "Ed Fox", "Flo Gray", "Gus Hale", "Hal Ives"]


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _orders(path: Path) -> dict[str, str]:
    return {p.id: p.authors_order for p in Reading([path])}


def test_a_source_that_sorts_its_lists_has_every_list_marked_even_the_short_ones(tmp_path: Path) -> None:
    sorted_source = [
        {"id": f"S{i}", "title": f"Paper {i}", "authors": sorted(NAMES[i % 3 : i % 3 + 4 + i % 3])} for i in range(30)
    ]
    sorted_source += [
        {"id": "S-two", "title": "Two authors", "authors": ["Zed Young", "Amy Bell"]},  # not sorted, yet the source is
        {"id": "S-one", "title": "One author", "authors": ["Amy Bell"]},
    ]
    orders = _orders(_write(tmp_path / "iclr-like.jsonl", sorted_source))
    assert {pid: o for pid, o in orders.items() if o != ALPHABETICAL} == {"S-one": ""}  # one name has no order
    in_order = [
        {"id": f"K{i}", "title": f"Paper {i}", "authors": [NAMES[(i + 3) % 8], NAMES[i % 8], NAMES[(i + 5) % 8]]}
        for i in range(30)
    ]
    in_order.append(
        {"id": "K-long", "title": "Sorted by surname", "authors": ["A Ames", "Z Baker", "C Cole", "B Dean", "Y Eve"]}
    )
    in_order.append({"id": "K-said", "title": "Declared", "authors": ["Z Z", "A A"], "author_order": "alphabetical"})
    orders = _orders(_write(tmp_path / "icml-like.jsonl", in_order))
    assert {pid for pid, o in orders.items() if o == ALPHABETICAL} == {"K-long", "K-said"}


def test_bibtex_keys_never_invent_a_first_author() -> None:
    paper = Paper(
        id="tcsZt9ZNKD",
        title="Scaling and evaluating sparse autoencoders",
        authors=["Alec Radford", "Gabriel Goh", "Leo Gao"],
        year=2025,
        venue="ICLR",
        authors_order=ALPHABETICAL,
    )
    entry = bibtex_entry(paper)
    assert entry.startswith("@inproceedings{scaling2025evaluating,")
    assert "note = {authors (alphabetical):" in entry and "radford" not in entry.split(",")[0]
    listed = Paper(id="x", title="Scaling laws", authors=["Leo Gao", "Alec Radford"], year=2025)
    assert bibtex_key(listed) == "gao2025scaling"
    nobody = Paper(id="y", title="PersuasionBench: measuring persuasion", year=2025)
    assert bibtex_key(nobody) == "persuasionbench2025measuring"  # no "anon2025…"


@pytest.mark.slow
def test_every_printer_says_alphabetical_and_json_says_the_order(tmp_path: Path) -> None:
    records = [
        {
            "id": f"R{i}",
            "title": f"Method Q{i} for graphs",
            "abstract": f"We propose Q{i}, a method for graph problem {i}.",
            "authors": sorted(NAMES[: 3 + i % 4]),
            "venue": "ICLR",
            "year": 2025,
        }
        for i in range(25)
    ]
    env = {**HASH, "RAG_HOME": str(tmp_path / "home")}
    assert run_rag("ingest", str(_write(tmp_path / "list.jsonl", records)), env=env).returncode == 0
    papers = run_rag("papers", "Method Q3", env=env).stdout
    assert "authors (alphabetical): Ada Byron, Bea Cole" in papers
    hit = json.loads(run_rag("search", "Method Q3 for graphs", "--k", "1", "--json", env=env).stdout)[0]
    assert hit["authors_order"] == "alphabetical"
    answer = json.loads(run_rag("ask", "Who wrote Method Q3 for graphs?", "--json", env=env).stdout)
    assert "(alphabetical)" in answer["answer"] and not answer["abstained"]
    bib = run_rag("bibtex", "R3", env=env).stdout
    assert bib.startswith("@inproceedings{method2025q3,") and "authors (alphabetical)" in bib


def test_iclr_lists_are_alphabetical_and_icml_lists_keep_their_order() -> None:
    iclr, icml = shared_data_or_skip("iclr2025.jsonl"), shared_data_or_skip("icml2025.jsonl")
    papers = {p.id: p for p in Reading([iclr])}
    assert all(p.alphabetical for p in papers.values() if len(p.authors) >= 2)
    assert bibtex_key(papers["tcsZt9ZNKD"]) == "scaling2025evaluating"  # was radford2025scaling; Leo Gao is first
    listed = [p for p in Reading([icml]) if len(p.authors) >= 2]
    assert sum(p.alphabetical for p in listed) < 0.03 * len(listed)
