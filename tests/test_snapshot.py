"""Snapshots of a derived cache (`rag.store.snapshot`): a new machine starts from the newest one and
applies only the log segments written after it, and ends with the catalogue and the keyword index
it would have derived from the whole log. A snapshot that is damaged, unsafe or of another
version is never used: the machine derives from the log instead."""

from __future__ import annotations

import base64
import json
import logging
import shutil
import zlib
from pathlib import Path
from typing import Any

import pytest

from rag.app import App
from rag.store.catalog import Catalog
from rag.store.index import PARALLEL_KEYWORD_SEGMENTS
from rag.store.snapshot import newest
from tests.conftest import HASH, catalogue_rows, consistent, hash_app, run_rag


def _records(n: int, start: int = 0, tag: str = "") -> list[dict[str, object]]:
    return [
        {
            "id": f"S{i}",
            "title": f"Method Zor{i} for sparse graphs{tag}",
            "abstract": f"We study sparse graph problem {i} with Zor{i}.{tag}",
            "authors": [f"Grace Hopper{i % 5}", "Edsger Dijkstra"],
            "venue": "ICLR" if i % 2 else "ICML",
            "year": 2024 + i % 2,
        }
        for i in range(start, start + n)
    ]


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _fresh_machine(home: Path, tmp_path: Path, name: str) -> App:
    """Another machine of a local-folder index: a copy of its home (Chroma folder included) with no cache."""
    copy = tmp_path / name
    shutil.copytree(home, copy)
    shutil.rmtree(copy / "cache")
    return hash_app(copy)


def test_a_new_machine_starts_from_the_snapshot_and_applies_what_came_after(tmp_path: Path, chroma_server: int) -> None:
    """Against a real `chroma run`: machine A ingests enough segments to publish a snapshot, then
    edits and removes papers; machine C adds papers of its own. A new machine B starts from A's
    snapshot, applies the later segments of both writers, and agrees with A row for row."""
    server = {"chroma_host": "127.0.0.1", "chroma_port": chroma_server}
    first = _records(300)
    a = hash_app(tmp_path / "a", ingest_batch=20, snapshot_every=PARALLEL_KEYWORD_SEGMENTS, **server)
    report = a.ingest([_write(tmp_path / "a.jsonl", first)], progress=False).public()
    published = report["snapshot_published"]
    assert published is not None and published["segments"] == 15 and published["stored_bytes"] > 0

    edited = [dict(r, abstract=str(r["abstract"]) + " Revised Kepler.") if i < 30 else r for i, r in enumerate(first)]
    again = a.ingest([_write(tmp_path / "a.jsonl", edited[10:])], progress=False).public()
    assert again["snapshot_published"] is None  # two segments since the snapshot: not due
    c = hash_app(tmp_path / "c", ingest_batch=20, **server)
    c.ingest([_write(tmp_path / "c.jsonl", _records(40, start=1000))], progress=False)

    b = hash_app(tmp_path / "b", **server)
    hits = b.search("Zor1005", k=1, mode="keyword").hits
    assert b.index.restored is not None and b.index.restored["snapshot"] == published["snapshot"]
    assert hits and hits[0].paper.id == "S1005"  # written by C after the snapshot
    a.index.load()  # A applies C's segments too
    assert catalogue_rows(b) == catalogue_rows(a)
    assert not any(row[0] == "S3" for row in catalogue_rows(b))  # removed after the snapshot
    revised = b.search("Kepler Zor12", k=1, mode="keyword").hits
    assert revised and revised[0].paper.id == "S12" and "Revised" in revised[0].paper.abstract
    untouched = b.search("Zor250", k=1, mode="keyword").hits  # indexed only in the snapshot's keyword segments
    assert untouched and untouched[0].paper.id == "S250"
    assert len(b.index.keyword) == len(a.index.keyword)
    assert consistent(b) == consistent(a)


def test_a_damaged_snapshot_is_abandoned_for_the_log(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    home = tmp_path / "home"
    writer = hash_app(home, ingest_batch=10, snapshot_every=0)
    writer.ingest([_write(tmp_path / "a.jsonl", _records(150))], progress=False)
    assert writer.index.publish_snapshot_if_due() is None  # snapshot_every=0: never by itself
    first = writer.snapshot()
    second = writer.snapshot()
    store = writer.index.store
    assert second["older_snapshots_deleted"] == 1
    assert [sid for sid, _ in store.snapshot_manifests()] == [second["snapshot"]]
    assert {rid[:32] for rid in store.snapshot_record_ids()} == {second["snapshot"]}
    assert first["snapshot"] < second["snapshot"]

    manifest = newest(store)
    assert manifest is not None
    part = manifest.files[0]["parts"][0][0]  # the catalogue's first page, header included
    store.write_snapshot_parts(manifest.id, [(part, base64.b64encode(zlib.compress(b"not a database")).decode())])
    reader = _fresh_machine(home, tmp_path, "reader")
    with caplog.at_level(logging.WARNING, logger="rag.store.index"):
        hits = reader.search("Zor7", k=1, mode="keyword").hits
    assert reader.index.restored is None
    assert any(
        "could not start from the snapshot" in r.getMessage() and "damaged" in r.getMessage() for r in caplog.records
    )
    assert hits and hits[0].paper.id == "S7"
    assert catalogue_rows(reader) == catalogue_rows(writer)


def _published(tmp_path: Path) -> tuple[App, str, dict[str, Any]]:
    """A local index of 12 segments with one snapshot: the writer, the snapshot's id and manifest."""
    writer = hash_app(tmp_path / "home", ingest_batch=10, snapshot_every=0)
    writer.ingest([_write(tmp_path / "a.jsonl", _records(120))], progress=False)
    good = writer.snapshot()
    return writer, good["snapshot"], json.loads(writer.index.store.snapshot_manifests()[-1][1])


def test_a_snapshot_naming_files_outside_the_cache_is_refused(tmp_path: Path) -> None:
    writer, good, body = _published(tmp_path)
    store = writer.index.store
    body["files"].append({"name": "keyword/../../../../escaped", "size": 3, "parts": body["files"][0]["parts"][:1]})
    hostile = good[:-6] + "ffffff"  # sorts after the good one: the newest
    store.write_snapshot_manifest(hostile, json.dumps(body))
    reader = _fresh_machine(tmp_path / "home", tmp_path, "reader")
    assert reader.search("Zor7", k=1, mode="keyword").hits[0].paper.id == "S7"
    assert reader.index.restored is None
    assert not list(tmp_path.rglob("escaped"))
    assert catalogue_rows(reader) == catalogue_rows(writer)


def test_a_keyword_manifest_naming_files_outside_the_snapshot_moves_nothing(tmp_path: Path) -> None:
    """The keyword manifest inside a snapshot names the segments to move into the cache: a name
    that climbs out of the download must not bring a file in from elsewhere."""
    from rag.store.snapshot import _pack

    writer, good, body = _published(tmp_path)
    store = writer.index.store
    entry = next(f for f in body["files"] if f["name"] == "keyword/manifest.json")
    hostile_manifest = json.dumps({"segments": [{"name": "../../victim", "deleted": None}]}).encode()
    blob, crc = _pack(hostile_manifest)
    part = good[:-6] + "ffffff-f99999-0000000"
    store.write_snapshot_parts(good[:-6] + "ffffff", [(part, blob)])
    entry.update(size=len(hostile_manifest), parts=[[part, len(hostile_manifest), crc]])
    store.write_snapshot_manifest(good[:-6] + "ffffff", json.dumps(body))
    reader = _fresh_machine(tmp_path / "home", tmp_path, "reader")
    victim = reader.index.folder / "victim"  # where "../../victim" points from the download
    victim.mkdir(parents=True)
    (victim / "keep.txt").write_text("mine")
    assert reader.search("Zor7", k=1, mode="keyword").hits[0].paper.id == "S7"
    assert (victim / "keep.txt").read_text() == "mine"
    assert reader.index.restored is None
    assert catalogue_rows(reader) == catalogue_rows(writer)
    assert len(reader.index.keyword) == len(writer.index.keyword)  # indexed again from the catalogue


def test_a_snapshot_of_another_schema_or_log_is_not_used(tmp_path: Path) -> None:
    writer, good, body = _published(tmp_path)
    store = writer.index.store
    for n, change in enumerate(({"schema": body["schema"] + 1}, {"log": "another-log"}, {"format": 99})):
        store.write_snapshot_manifest(good[:-6] + f"fffff{n}", json.dumps({**body, **change}))
    store.write_snapshot_manifest(good[:-6] + "ffffff", "{not json")
    store.write_snapshot_manifest(good[:-6] + "fffffe", json.dumps({"format": body["format"]}))
    found = newest(store)
    assert found is not None and found.id == good


def test_a_catalogue_replaced_by_a_snapshot_is_seen_by_connections_already_open(tmp_path: Path) -> None:
    """Another process with the (empty) catalogue open must read the restored papers, which a swap
    of files would hide from it."""
    from rag.types import Paper

    source = Catalog.of([Paper(id=f"p{i}", title=f"Title {i}", abstract="An abstract.") for i in range(50)])
    copy = tmp_path / "copy.sqlite"
    source.copy_to(copy)
    target_path = tmp_path / "catalog.sqlite"
    target = Catalog(target_path)
    other = Catalog(target_path)  # its own connection, as another process would have
    assert len(other) == 0 and other.generation == 0
    target.replace_with(copy)
    assert len(other) == 50
    assert other.get("p7") is not None and other.get("p7").title == "Title 7"  # type: ignore[union-attr]
    assert other.generation > source.generation  # masks cached for an earlier state are not reused


def test_rag_snapshot_prints_what_it_published(tmp_path: Path) -> None:
    env = {**HASH, "RAG_HOME": str(tmp_path / "home"), "RAG_INGEST_BATCH": "30"}
    assert run_rag("ingest", str(_write(tmp_path / "a.jsonl", _records(90))), "--json", env=env).returncode == 0
    done = run_rag("snapshot", "--json", env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["segments"] == 3 and result["files"] >= 2 and result["bytes"] > result["stored_bytes"] > 0
    text = run_rag("snapshot", env=env)
    assert text.returncode == 0 and "older snapshots deleted: 1" in text.stdout
