"""Bad input never costs good input and never crashes: broken characters, links, files that are
not lists, broken CSV, a Chroma server that goes away, a damaged cache, bad batch lines."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag.papers.readers import Reading, read_file, read_paths
from tests.conftest import HASH, ROOT, consistent, free_port, hash_app, run_rag, wait_for_http

pytestmark = pytest.mark.slow  # end to end: real Chroma, real processes


def test_a_lone_surrogate_is_replaced_in_that_record_only(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"id": "A", "title": "Bad \\ud800 title", "abstract": ""}\n'
        '{"id": "B", "title": "Good title", "abstract": ""}\n',
        encoding="utf-8",
    )
    reading = Reading([path])
    papers = list(reading)
    assert [p.id for p in papers] == ["A", "B"] and papers[0].title == "Bad \ufffd title"
    assert reading.notes and reading.notes[0].line == 1 and "surrogate" in reading.notes[0].reason
    out = run_rag("ingest", str(path), "--json", env={**HASH, "RAG_HOME": str(tmp_path / "h")})
    assert out.returncode == 0 and json.loads(out.stdout)["added"] == 2


def test_folder_links_do_not_leave_the_folder_and_loops_are_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "lists"
    folder.mkdir()
    (folder / "good.jsonl").write_text('{"id": "G", "title": "A good paper", "abstract": ""}\n', encoding="utf-8")
    outside = tmp_path / "secret.jsonl"
    outside.write_text('{"id": "S", "title": "Outside the folder", "abstract": ""}\n', encoding="utf-8")
    (folder / "escape.jsonl").symlink_to(outside)
    (folder / "passwd").symlink_to("/etc/passwd")
    (folder / "inside.jsonl").symlink_to(folder / "good.jsonl")
    result = read_paths([folder])
    assert sorted(p.id for p in result.papers) == ["G", "G"]  # the inside link is followed, the others not
    assert sum("leaves the folder" in e.reason for e in result.errors) == 2
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    out = run_rag("ingest", str(loop), env={**HASH, "RAG_HOME": str(tmp_path / "h")})
    assert out.returncode != 0 and "symbolic link loop" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) <= 2


def test_a_text_file_is_read_only_when_it_has_the_page_layout(tmp_path: Path) -> None:
    out = run_rag("ingest", str(ROOT / "README.md"), env={**HASH, "RAG_HOME": str(tmp_path / "h")})
    assert out.returncode != 0 and "not a paper list" in out.stderr and "JSON Lines" in out.stderr
    notes = tmp_path / "notes.txt"
    notes.write_text(
        "Shopping list\n\nmilk, eggs and bread for the weekend, and something else to remember later on.\n"
    )
    assert "not a paper list" in str(read_file(notes).errors[0])


def test_csv_with_an_open_quote_or_semicolons_loses_no_row(tmp_path: Path) -> None:
    broken = tmp_path / "broken.csv"
    broken.write_text(
        "id,title,abstract\n"
        'C1,"First paper,An abstract that is fine.\n'
        "C2,Second paper,Another fine abstract.\n"
        'C3,Third paper,"A quoted, multi-line\nabstract that is legal."\n',
        encoding="utf-8",
    )
    result = read_file(broken)
    assert [p.id for p in result.papers] == ["C2", "C3"] and "multi-line abstract" in result.papers[1].abstract
    assert [(e.line, "never closed" in e.reason) for e in result.errors] == [(2, True)]
    semi = tmp_path / "semi.csv"
    semi.write_text("id;title;abstract;year\nS1;Semicolon paper;Values with, commas inside;2024\n", encoding="utf-8")
    paper = read_file(semi).papers[0]
    assert (paper.id, paper.title, paper.abstract, paper.year) == (
        "S1",
        "Semicolon paper",
        "Values with, commas inside",
        2024,
    )
    reading = Reading([broken])
    list(reading)
    assert [(f.read, f.skipped) for f in reading.files] == [(2, 1)]


def test_batch_files_with_bad_lines_exit_non_zero_after_the_others(sample_home: Path, tmp_path: Path) -> None:
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"id": 1, "query": "PLNL"}\nnot json\n{"id": 3, "query": "Celcomen"}\n', encoding="utf-8")
    out = run_rag("search", "--queries", str(batch), "--k", "1", env={"RAG_HOME": str(sample_home)})
    assert out.returncode == 1 and [json.loads(line)["id"] for line in out.stdout.splitlines()] == [1, 3]
    assert f"{batch}:2" in out.stderr


def test_a_damaged_cache_is_rebuilt_from_chroma(tmp_path: Path) -> None:
    home = tmp_path / "home"
    app = hash_app(home)
    app.ingest_sample(progress=False)
    folder = app.index.folder
    (folder / "catalog.sqlite").write_bytes(b"this is not a database" * 100)
    for extra in folder.glob("catalog.sqlite-*"):
        extra.unlink()
    manifest = folder / "keyword" / "manifest.json"
    manifest.write_text("{broken")
    out = run_rag("search", "PLNL", "--k", "1", "--json", env={**HASH, "RAG_HOME": str(home)})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["label"] == "PLNL"
    shutil.rmtree(folder)
    folder.write_text("a file where the cache folder was")
    out = run_rag("search", "Celcomen", "--k", "1", "--json", env={**HASH, "RAG_HOME": str(home)})
    assert out.returncode == 0 and json.loads(out.stdout)[0]["label"] == "Celcomen", out.stderr
    assert consistent(hash_app(home)) == (96, 96)


def _chroma(path: Path, port: int) -> subprocess.Popen[bytes]:
    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    proc = subprocess.Popen(
        [exe, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_http(f"http://127.0.0.1:{port}/api/v2/heartbeat", proc, timeout=60)
    return proc


def _wait_for_first_rows(port: int, ingest: subprocess.Popen[str], timeout: float = 120) -> None:
    """Return once the server holds some rows, so the kill lands mid-ingest on any machine speed."""
    import chromadb

    client = chromadb.HttpClient(host="127.0.0.1", port=port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert ingest.poll() is None, "the ingest ended before the server was killed"
        if any(c.count() > 0 for c in client.list_collections()):
            return
        time.sleep(0.05)
    raise AssertionError("the ingest wrote nothing to the server")


def test_a_chroma_server_that_goes_away_is_one_line_and_a_rerun_completes(tmp_path: Path) -> None:
    port = free_port()
    server = _chroma(tmp_path / "server", port)
    big = tmp_path / "big.jsonl"
    big.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"P{i}",
                    "title": f"Paper {i} on topic {i % 17}",
                    "abstract": f"We study problem {i} with method M{i % 13} and report results. " * 3,
                }
            )
            + "\n"
            for i in range(6000)
        ),
        encoding="utf-8",
    )
    env = {
        **os.environ,
        **HASH,
        "RAG_HOME": str(tmp_path / "home"),
        "RAG_CHROMA_HOST": "127.0.0.1",
        "RAG_CHROMA_PORT": str(port),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "rag.cli", "ingest", str(big)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_first_rows(port, proc)  # the ingest is under way, not yet done
    server.send_signal(signal.SIGKILL)
    server.wait()
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 5, err
    lines = [line for line in err.strip().splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0] and "Traceback" not in err
    search = subprocess.run(
        [sys.executable, "-m", "rag.cli", "search", "topic"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert search.returncode == 5 and f"127.0.0.1:{port}" in search.stderr and "Traceback" not in search.stderr
    server = _chroma(tmp_path / "server", port)  # the same data folder, back again
    try:
        rerun = subprocess.run(
            [sys.executable, "-m", "rag.cli", "ingest", str(big), "--json"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert rerun.returncode == 0, rerun.stderr
        app = hash_app(tmp_path / "home", chroma_host="127.0.0.1", chroma_port=port)
        assert consistent(app) == (6000, 6000)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_source_code_mentioning_papers_is_not_read(tmp_path: Path) -> None:
    env = {**HASH, "RAG_HOME": str(tmp_path / "h")}
    out = run_rag("ingest", str(ROOT / "eval" / "bench" / "title_search.py"), env=env)
    assert out.returncode == 2 and "not a paper list" in out.stderr and "page text (.txt or .md" in out.stderr
    out = run_rag("ingest", str(ROOT / "rag"), "--json", env=env)  # the package's own source
    assert out.returncode == 2 and "nothing could be read" in out.stderr
    folder = tmp_path / "code"
    shutil.copytree(ROOT / "eval", folder / "eval")
    shutil.copytree(ROOT / "data" / "sample", folder / "sample")
    out = run_rag("ingest", str(folder), env=env)
    assert "added 96," in out.stdout, out.stderr  # the sample only: no "paper" from a .py file
    ignored = next(line for line in out.stderr.splitlines() if line.startswith("ignored "))
    assert "file(s) that are not paper lists" in ignored and "JSON Lines (.jsonl)" in ignored


def test_one_bad_byte_costs_no_csv_row(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"id,title,abstract\nV1,Good,fine abstract text\nV2,Bad \xe9 latin,x\nV3,Good3,fine\n")
    out = run_rag("ingest", str(bad), env={**HASH, "RAG_HOME": str(tmp_path / "h")})
    assert out.returncode == 0 and "added 3," in out.stdout, out.stderr
    assert f"note: {bad}:3: bytes that are not UTF-8 replaced with U+FFFD" in out.stderr
    out = run_rag("papers", "latin", "--json", env={**HASH, "RAG_HOME": str(tmp_path / "h")})
    assert [p["title"] for p in json.loads(out.stdout)] == ["Bad \ufffd latin"]


def test_bad_bytes_on_many_lines_are_one_note_and_jsonl_keeps_the_record(tmp_path: Path) -> None:
    lines = [b'{"id": "L%d", "title": "Caf\xe9 number %d"}' % (i, i) for i in range(1, 6)]
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    reading = Reading([path])
    assert [p.title for p in reading] == [f"Caf\ufffd number {i}" for i in range(1, 6)]
    assert len(reading.notes) == 1 and "on 5 lines (1, 2, 3, …)" in reading.notes[0].reason


def test_folder_links_to_folders_are_reported(tmp_path: Path) -> None:
    folder = tmp_path / "lists"
    (folder / "real").mkdir(parents=True)
    (folder / "real" / "a.jsonl").write_text('{"id": "A", "title": "A paper"}\n', encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    (folder / "outside").symlink_to(tmp_path / "elsewhere")
    (folder / "again").symlink_to(folder / "real")
    out = run_rag("ingest", str(folder), env={**HASH, "RAG_HOME": str(tmp_path / "h")})
    assert out.returncode == 1 and "added 1," in out.stdout
    assert f"skipped {folder / 'outside'}: symbolic link to a folder (to {tmp_path / 'elsewhere'})" in out.stderr
    assert f"skipped {folder / 'again'}: symbolic link to a folder" in out.stderr


def test_remove_of_an_unknown_source_says_so_and_reset_keeps_stdout_for_json(tmp_path: Path) -> None:
    env = {**HASH, "RAG_HOME": str(tmp_path / "h")}
    papers = tmp_path / "papers.jsonl"
    papers.write_text('{"id": "P1", "title": "One paper"}\n{"id": "P2", "title": "Two paper"}\n', encoding="utf-8")
    assert run_rag("ingest", str(papers), env=env).returncode == 0
    out = run_rag("remove", "--source", str(tmp_path / "paper.jsonl"), env=env)
    assert out.returncode == 1 and out.stdout == ""
    assert "not a source of the index" in out.stderr and f"near matches: {papers}" in out.stderr
    assert json.loads(run_rag("status", "--json", env=env).stdout)["papers"] == 2
    refused = _reset_answering("n", env)
    assert refused.returncode != 0 and refused.stdout == "" and "Delete every paper" in refused.stderr
    done = _reset_answering("y", env)
    assert done.returncode == 0 and json.loads(done.stdout)["reset"] is True


def _reset_answering(answer: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`rag reset --json` with `answer` typed at its confirmation prompt."""
    return subprocess.run(
        [sys.executable, "-m", "rag.cli", "reset", "--json"],
        input=answer + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=120,
    )


# -- issue 21: one record never aborts a run, non-regular files never hang it, encodings -----------
def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_deeply_nested_record_is_one_error_and_the_rest_goes_in(tmp_path: Path) -> None:
    """A JSON Lines record nested 1,200 levels deep (Python's parser gives up at about 1,000) and
    one nested 200 levels (parsed, but no paper has such fields) are each one error naming file
    and line; the other records of the file, and the other files, go in."""
    jsonl = tmp_path / "deep.jsonl"
    jsonl.write_text(
        '{"id": "D1", "title": "Before the deep line"}\n'
        + '{"id": "D2", "title": "Deep", "extra": '
        + _deep(1200)
        + "}\n"
        + '{"id": "D3", "title": "Deep but parsed", "extra": '
        + _deep(200)
        + "}\n"
        + '{"id": "D4", "title": "After the deep line"}\n',
        encoding="utf-8",
    )
    array = tmp_path / "deep.json"
    array.write_text(
        '[\n{"id": "J1", "title": "First of the array"},\n{"id": "J2", "x": ' + _deep(1500) + "},\n"
        '{"id": "J3", "title": "Last of the array"}\n]\n',
        encoding="utf-8",
    )
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": "O1", "title": "Another file"}\n', encoding="utf-8")
    out = run_rag("ingest", str(jsonl), str(array), str(other), "--json", env={**HASH, "RAG_HOME": str(tmp_path / "h")})
    assert "Traceback" not in out.stderr and out.returncode == 1, out.stderr
    summary = json.loads(out.stdout)
    assert summary["added"] == 5
    errors = {(Path(e["file"]).name, e["line"]): e["reason"] for e in summary["errors"]}
    assert set(errors) == {("deep.jsonl", 2), ("deep.jsonl", 3), ("deep.json", 3)}
    assert all("nested" in reason for reason in errors.values()), errors


def test_a_fifo_in_a_folder_is_reported_and_never_read(tmp_path: Path) -> None:
    """A FIFO named like a list would block `open` (and so the ingest holding the write lock)
    forever: only regular files are read, the rest is reported."""
    folder = tmp_path / "lists"
    folder.mkdir()
    (folder / "good.jsonl").write_text('{"id": "G", "title": "A good paper"}\n', encoding="utf-8")
    os.mkfifo(folder / "pipe.jsonl")
    os.mkfifo(tmp_path / "given.jsonl")
    env = {**HASH, "RAG_HOME": str(tmp_path / "h")}
    try:
        out = run_rag("ingest", str(folder), str(tmp_path / "given.jsonl"), env=env, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("ingest blocked on a FIFO") from None
    assert out.returncode == 1 and "added 1," in out.stdout, out.stderr
    assert f"skipped {folder / 'pipe.jsonl'}: not a regular file (a FIFO); not read" in out.stderr
    assert f"skipped {tmp_path / 'given.jsonl'}: not a regular file (a FIFO); not read" in out.stderr


def test_a_nul_byte_costs_its_row_and_a_utf16_file_is_read(tmp_path: Path) -> None:
    """One NUL byte in a CSV is the fault of its row, not a sign of a binary file; a file that
    opens with a UTF-16 (or UTF-8) byte-order mark is decoded as it says. A PNG is still binary."""
    csv_file = tmp_path / "nul.csv"
    csv_file.write_bytes(b"id,title,abstract\nN1,First,fine\nN2,Bro\x00ken,bad row\nN3,Third,fine\n")
    utf16 = tmp_path / "wide.jsonl"
    records = '{"id": "W1", "title": "Wide café"}\n{"id": "W2", "title": "Wide two"}\n'
    utf16.write_bytes(records.encode("utf-16"))  # with its byte-order mark
    utf16_csv = tmp_path / "wide.csv"
    utf16_csv.write_bytes("id,title\nWC1,Wide CSV row\n".encode("utf-16-be").join([b"\xfe\xff", b""]))
    reading = Reading([csv_file, utf16, utf16_csv, ROOT / "docs" / "ui-map.png"])
    papers = list(reading)
    assert [p.id for p in papers] == ["N1", "N3", "W1", "W2", "WC1"] and papers[2].title == "Wide café"
    problems = {(Path(e.source).name, e.line): e.reason for e in reading.errors}
    assert set(problems) == {("nul.csv", 3), ("ui-map.png", None)}
    assert "NUL" in problems[("nul.csv", 3)] and "binary" in problems[("ui-map.png", None)]
    assert any("UTF-16" in n.reason and n.source == str(utf16) for n in reading.notes)


def test_error_texts_say_what_is_wrong_and_what_is_accepted(tmp_path: Path) -> None:
    """A truncated JSON Lines record says it is cut short (not "Invalid control character at,
    column 897"); a CSV without a title or abstract column lists the column names that are read;
    RAG_HOME naming a file says RAG_HOME, not Chroma's NotADirectoryError."""
    env = {**HASH, "RAG_HOME": str(tmp_path / "h")}
    record = json.dumps({"id": "T1", "title": "A paper cut short", "abstract": "We study truncation " * 20})
    cut = tmp_path / "cut.jsonl"
    cut.write_text(record[:200] + "\n" + record.replace("T1", "T2") + "\n" + record[:150], encoding="utf-8")
    out = run_rag("ingest", str(cut), env=env)
    assert out.returncode == 1 and "added 1," in out.stdout, out.stderr
    assert f"skipped {cut}:1: the record is cut short at column 201 (a truncated file, or a record split" in out.stderr
    assert f"skipped {cut}:3: the record is cut short" in out.stderr
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text('{"id": "B1" "title": "x"}\n', encoding="utf-8")
    assert "invalid JSON: Expecting ',' delimiter at column 13" in str(read_file(bad_json).errors[0])

    csv_file = tmp_path / "unknown.csv"
    csv_file.write_text("paper,summary_text\nA,B\n", encoding="utf-8")
    error = str(read_file(csv_file).errors[0])
    assert "header (paper, summary_text) has no title or abstract column" in error
    assert "title: title, name" in error and "abstract: abstract, summary, text" in error

    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x", encoding="utf-8")
    for home in (a_file, a_file / "below"):
        out = run_rag("search", "anything", env={**HASH, "RAG_HOME": str(home)})
        assert out.returncode != 0 and "Traceback" not in out.stderr and "NotADirectoryError" not in out.stderr
        assert f"RAG_HOME ({home})" in out.stderr and f"{a_file} is a file" in out.stderr
