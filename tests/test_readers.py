from __future__ import annotations

import shutil
from pathlib import Path

from rag.papers.readers import Reading, detect_format, read_file, read_paths
from rag.papers.readers.records import split_authors
from tests.conftest import DATA, ROOT, SAMPLE


def test_sample_files_read_with_venue_track_and_cut_authors() -> None:
    result = read_paths([SAMPLE], venue="ICML", year=2025)
    assert not result.errors
    assert len(result.papers) == 96
    iclr = [p for p in result.papers if p.venue == "ICLR"]
    assert len(iclr) == 76 and all(p.year == 2025 for p in iclr)
    icml = [p for p in result.papers if "004_" in p.source]
    assert len(icml) == 20 and all(p.venue == "ICML" and p.track and p.authors for p in icml)
    assert all(" · " in p.track for p in icml)
    cut = [p for p in icml if p.authors_truncated]
    assert cut and all("等" not in " ".join(p.authors) for p in cut)
    assert all(not p.title and len(p.abstract) > 200 for p in result.papers)


def test_chinese_header_sets_venue_and_year() -> None:
    result = read_file(next(SAMPLE.glob("000_*.txt")))
    assert result.papers and all((p.venue, p.year) == ("ICLR", 2025) for p in result.papers)


def test_jsonl_keeps_good_records_and_names_bad_lines() -> None:
    result = read_file(DATA / "papers.jsonl")
    assert [p.id for p in result.papers] == ["T1", "T2", "T4"]
    assert {e.line for e in result.errors} == {3, 4}
    assert all("papers.jsonl" in str(e) for e in result.errors)
    t1 = result.papers[0]
    assert t1.extra == {"site": "openreview"} and t1.decision == "Accept (Poster)"
    t4 = result.papers[2]
    assert t4.authors == ["Edsger Dijkstra", "Barbara Liskov"] and t4.year == 2025


def test_json_array_csv_bibtex() -> None:
    json_result = read_file(DATA / "papers.json")
    assert [p.id for p in json_result.papers] == ["J1", "J2"]
    csv_result = read_file(DATA / "papers.csv")
    assert [p.id for p in csv_result.papers] == ["C1"]
    assert csv_result.papers[0].authors == ["Marie Curie", "Pierre Curie"]
    assert csv_result.errors and csv_result.errors[0].line == 3
    bib = read_file(DATA / "papers.bib")
    lit = next(p for p in bib.papers if p.id == "knuth2025lit")
    assert lit.title == "Literate Retrieval: Documents as Programs"
    assert lit.authors == ["Knuth, Donald", "Lamport, Leslie"] and lit.authors_truncated
    assert lit.venue == "ICLR" and lit.year == 2025 and "LitRet" in lit.abstract
    assert any(p.id == "noabstract2024" and not p.abstract for p in bib.papers)


def test_malformed_files_are_named_with_their_problem(tmp_path: Path) -> None:
    cases = {
        "empty.jsonl": "empty",
        "binary.png": "binary",
        "syntax_error.json": "invalid JSON",
    }
    for name, word in cases.items():
        result = read_file(DATA / name)
        assert not result.papers, name
        assert result.errors and word in str(result.errors[0]) and name in str(result.errors[0])
    assert read_file(DATA / "syntax_error.json").errors[0].line == 2
    missing = read_paths([tmp_path / "nope.jsonl"])
    assert "no such file" in str(missing.errors[0])


def test_short_paragraph_is_reported_not_fatal() -> None:
    result = read_file(DATA / "page_with_short.txt")
    assert len(result.papers) == 1
    assert result.errors[0].line == 5 and "too short" in result.errors[0].reason


def test_folder_reads_every_file_and_fills_venue() -> None:
    result = read_paths([DATA], venue="TestConf", year=2030)
    assert {"T1", "J1", "C1", "knuth2025lit"} <= {p.id for p in result.papers}
    assert next(p for p in result.papers if p.id == "knuth2025lit").venue == "ICLR"  # file says
    assert next(p for p in result.papers if "page_with_short" in p.source).venue == "ICLR"


def test_sniffing_by_content(tmp_path: Path) -> None:
    target = tmp_path / "list.txt"
    target.write_text('{"id": "a", "title": "x"}\n{"id": "b", "title": "y"}\n')
    assert detect_format(target, target.read_bytes()) == "jsonl"
    assert detect_format(tmp_path / "x.dat", b"@article{a, title={x}}") == "bibtex"
    assert detect_format(tmp_path / "x.dat", b"title,abstract\nA,B\n") == "csv"
    assert detect_format(tmp_path / "x.dat", b"id;title;abstract\n1;A;B\n") == "csv"
    assert detect_format(tmp_path / "notes.md", (ROOT / "README.md").read_bytes()) is None


def test_split_authors_marks_cut_lists() -> None:
    assert split_authors("A. One, B. Two 等") == (["A. One", "B. Two"], True)
    assert split_authors("A. One and B. Two") == (["A. One", "B. Two"], False)
    assert split_authors(["A", "B", "et al."]) == (["A", "B"], True)


def test_invalid_utf8_costs_only_the_bad_characters() -> None:
    reading = Reading([DATA / "latin1.txt"])
    papers = list(reading)
    assert len(papers) == 1 and "Caf\ufffd latte" in papers[0].abstract and not reading.errors
    assert [(n.line, "not UTF-8" in n.reason) for n in reading.notes] == [(3, True)]


def test_only_text_files_with_the_page_layout_are_read(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(next(SAMPLE.glob("001_*.txt")), folder / "iclr.txt")
    abstract = "We study how abstracts of accepted papers are written, and measure them over many venues. " * 2
    (folder / "bench.py").write_text(f'"""Benchmark over the papers."""\n\n# {abstract}\n')
    (folder / "notes.md").write_text(f"Accepted papers and abstracts\n\n{abstract}\n")
    (folder / "list.txt").write_text(f"Papers I liked\n\n{abstract}\n")
    (folder / "data.toml").write_text('[papers]\ntitle = "x"\n')
    reading = Reading([folder])
    papers = list(reading)
    assert {Path(p.source).name for p in papers} == {"iclr.txt"} and len(papers) == 19  # a header, 19 abstracts
    assert sorted(Path(f).name for f in reading.ignored) == ["bench.py", "data.toml", "list.txt", "notes.md"]
    assert not reading.errors
    assert detect_format(folder / "iclr.md", (folder / "iclr.txt").read_bytes()) == "pagetext"
    assert detect_format(folder / "iclr.py", (folder / "iclr.txt").read_bytes()) is None
