"""The projection of the change log into the catalogue's rows: applying segments (each copy and
vector entry a last-writer-wins register, so any order gives the same rows), merging each paper's
copies into the paper shown, its names, authors, facets and identity keys, and which papers the
keyword index has yet to see."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from rag.papers import (
    abstract_key,
    copies_digest,
    idless_keys,
    listed_claims,
    looks_idless,
    merge_papers,
    title_head,
    title_key,
)
from rag.store.catalog.connection import FACET_FIELDS, _chunks_of
from rag.store.catalog.names import name_key, names_of
from rag.store.catalog.rows import Rows
from rag.store.log import CopyEntry, VectorEntry, Versioned
from rag.text import fold
from rag.types import Paper

log = logging.getLogger(__name__)


def tracks_of(paper: Paper) -> str:
    parts = [paper.track, str(paper.extra.get("area") or ""), *map(str, paper.extra.get("tracks") or [])]
    return " | ".join(dict.fromkeys(p for p in parts if p))


class LogProjection(Rows):
    # -- applying the log ------------------------------------------------------------------
    def apply(
        self,
        segment_id: str,
        copies: Sequence[CopyEntry],
        vectors: Sequence[VectorEntry],
        chunk_of: Callable[[Paper], tuple[str, int]],
        merged: dict[str, tuple[Paper, str, int]] | None = None,
        hints: dict[str, tuple[str, str, str, int]] | None = None,
        added: list[tuple[int, Paper, int]] | None = None,
    ) -> set[str]:
        """Apply one log segment: copies (version, copy key, paper id, source, digest, the copy as
        read or None for removed) and vector entries (version, paper id, text version, chunk count
        or 0 for removed). `chunk_of(paper)` gives the text version and chunk count of a merged
        paper; `merged` may give them ready-made (a writer has just computed them from the same
        copies), and `hints` (copies digest, label, version, chunks) spare the work when the copies
        match. Papers new to the catalogue are appended to `added` (paper number, paper, chunks),
        so a caller indexing them need not read them back. Returns the ids of papers whose shown
        record changed. Idempotent."""
        with self.write() as db:
            if db.execute("SELECT 1 FROM segments WHERE id = ?", (segment_id,)).fetchone():
                return set()
            touched: set[str] = set()
            skeys = [c[1] for c in copies]
            current = {}
            for part in _chunks_of(list(skeys)):
                marks = ",".join("?" * len(part))
                current.update(
                    {
                        r[0]: (r[1], (r[2], r[3], r[4]))
                        for r in db.execute(
                            f"SELECT skey, pid, ts, writer, seq FROM copies WHERE skey IN ({marks})", part
                        )
                    }
                )
            rows = []
            written: dict[str, dict[str, Any]] = {}  # the copies this segment wins, already parsed
            for version, skey, pid, source, digest, data in copies:
                old = current.get(skey)
                if old is not None and old[1] >= version:
                    continue  # a newer change to this copy is already applied
                if old is not None:
                    touched.add(old[0])
                touched.add(pid)
                current[skey] = (pid, version)
                text = None if data is None else json.dumps(data, ensure_ascii=False)
                rows.append((skey, pid, source, digest, text, *version))
                if data is not None:
                    written[skey] = data
                else:
                    written.pop(skey, None)
            db.executemany("INSERT OR REPLACE INTO copies VALUES (?,?,?,?,?,?,?,?)", rows)
            self._index_idless(db, rows, written)
            vec_rows = []
            vec_pids = sorted({v[1] for v in vectors})
            held: dict[tuple[str, str], Versioned] = {}
            for part in _chunks_of(list(vec_pids)):
                marks = ",".join("?" * len(part))
                for pid, text_version, ts, writer, seq in db.execute(
                    f"SELECT pid, version, ts, writer, seq FROM vectors WHERE pid IN ({marks})", part
                ):
                    held[(pid, text_version)] = (ts, writer, seq)
            for version, pid, text_version, n in vectors:
                old_v = held.get((pid, text_version))
                if old_v is not None and old_v >= version:
                    continue
                held[(pid, text_version)] = version
                vec_rows.append((pid, text_version, n, *version))
                touched.add(pid)
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?,?,?,?,?,?)", vec_rows)
            changed = self._refresh(db, touched, chunk_of, merged or {}, hints or {}, written, added)
            db.execute("INSERT INTO segments VALUES (?)", (segment_id,))
            db.execute("INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE SET value = value + 1")
        return changed

    @staticmethod
    def _index_idless(db: sqlite3.Connection, rows: list[tuple[Any, ...]], written: dict[str, dict[str, Any]]) -> None:
        """Keep `idless` in step with the copies just written: the keys (`rag.papers.identity.idless_keys`)
        of each live id-less copy, so that a listed paper arriving later finds the copies that are
        its own, wherever they live now, and a rival arriving later finds the ones to take back."""
        gone = [(r[0],) for r in rows if looks_idless(r[0]) or r[0] not in written]
        db.executemany("DELETE FROM idless WHERE skey = ?", gone)
        keys = [
            (skey, kind, key)
            for skey, data in written.items()
            if data.get("own_id") is False
            for kind, key in idless_keys(Paper.from_dict(data))
        ]
        db.executemany("INSERT INTO idless VALUES (?, ?, ?)", keys)

    def _refresh(
        self,
        db: sqlite3.Connection,
        pids: set[str],
        chunk_of: Callable[[Paper], tuple[str, int]],
        known: dict[str, tuple[Paper, str, int]],
        hints: dict[str, tuple[str, str, str, int]],
        written: dict[str, dict[str, Any]],
        added: list[tuple[int, Paper, int]] | None,
    ) -> set[str]:
        """Recompute the shown paper of each id from its live copies; drop papers with none.
        Copies this segment has just written (`written`) are not parsed again from the table."""
        changed: set[str] = set()
        new: list[tuple[Paper, str, str, int, int, tuple[str, str]]] = []
        ids = sorted(pids)
        for part in _chunks_of(list(ids), 500):
            marks = ",".join("?" * len(part))
            copies: dict[str, list[Paper]] = {}
            digests: dict[str, list[str]] = {}
            mixed: set[str] = set()  # papers that may hold id-less copies: their claims need their copies
            for skey, pid, digest in db.execute(
                f"SELECT skey, pid, digest FROM copies WHERE data IS NOT NULL AND pid IN ({marks}) ORDER BY skey", part
            ):
                digests.setdefault(pid, []).append(digest)
                held = copies.setdefault(pid, [])
                if looks_idless(skey):
                    mixed.add(pid)
                elif pid in known and pid not in mixed:
                    continue
                as_read = written.get(skey)
                if as_read is None:
                    as_read = json.loads(db.execute("SELECT data FROM copies WHERE skey = ?", (skey,)).fetchone()[0])
                held.append(Paper.from_dict(as_read))
            for pid in mixed & known.keys():  # the copies skipped above before the id-less one showed
                if len(copies[pid]) < len(digests[pid]):
                    copies[pid] = [
                        Paper.from_dict(json.loads(data))
                        for (data,) in db.execute(
                            "SELECT data FROM copies WHERE data IS NOT NULL AND pid = ? ORDER BY skey", (pid,)
                        )
                    ]
            existing = {
                r[1]: r
                for r in db.execute(
                    f"SELECT pno, pid, data, venue, year, tracks, decision, vectors_ok, claim_key, claim_head "
                    f"FROM papers WHERE pid IN ({marks})",
                    part,
                )
            }
            live = {
                (r[0], r[1])
                for r in db.execute(f"SELECT pid, version FROM vectors WHERE n > 0 AND pid IN ({marks})", part)
            }
            for pid in part:
                row = existing.get(pid)
                if pid not in copies:
                    if row is not None:
                        self._remove_paper(db, row)
                        changed.add(pid)
                    continue
                hint = hints.get(pid)
                if pid in known:
                    paper, version, n_chunks = known[pid]
                elif hint is not None and hint[0] == copies_digest(digests[pid]):
                    paper = merge_papers(copies[pid], pid, label=hint[1])
                    version, n_chunks = hint[2], hint[3]
                else:
                    paper = merge_papers(copies[pid], pid)
                    version, n_chunks = chunk_of(paper)
                vectors_ok = int((pid, version) in live)
                data = json.dumps(paper.to_dict(), ensure_ascii=False)
                claims = listed_claims(paper, copies[pid] if pid in mixed else None)
                if row is not None and row[2] == data and row[7] == vectors_ok and (row[8], row[9]) == claims:
                    continue
                changed.add(pid)
                if row is None:
                    new.append((paper, data, version, n_chunks, vectors_ok, claims))
                else:
                    self._write_paper(
                        db, row, paper, data, version, n_chunks, vectors_ok, claims, reindex=row[2] != data
                    )
            self._insert_papers(db, new, added)
            new = []
        return changed

    def _values(
        self, paper: Paper, data: str, version: str, n_chunks: int, vectors_ok: int, claims: tuple[str, str]
    ) -> tuple[Any, ...]:
        return (
            data,
            int(paper.own_id),
            int(bool(paper.abstract)),
            abstract_key(paper.abstract),
            title_key(paper.title),
            title_head(paper.title),
            fold(paper.label) if paper.label else "",
            paper.venue,
            paper.year,
            tracks_of(paper),
            paper.decision,
            version,
            n_chunks,
            vectors_ok,
            fold(paper.display_title),
            *claims,
        )

    @staticmethod
    def _people_and_names(paper: Paper, pno: int) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, int]]]:
        """Rows for the authors table (full names of two words or more) and the names table."""
        people = {name_key(a): a.strip() for a in paper.authors if a.strip()}
        authors = [(key, shown, pno) for key, shown in people.items() if len(key.split()) >= 2]
        return authors, [(fold(n), n, pno) for n in names_of(paper)]

    def _insert_papers(
        self,
        db: sqlite3.Connection,
        new: list[tuple[Paper, str, str, int, int, tuple[str, str]]],
        added: list[tuple[int, Paper, int]] | None = None,
    ) -> None:
        """New papers in a few statements (bulk ingest and a second machine's first sync)."""
        if not new:
            return
        db.executemany(
            "INSERT INTO papers (data, own_id, has_abstract, abstract_key, title_key, title_head, label_key, venue, "
            "year, tracks, decision, version, n_chunks, vectors_ok, sort_key, claim_key, claim_head, indexed, pid) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,?)",
            [(*self._values(*item), item[0].id) for item in new],
        )
        ids = [item[0].id for item in new]
        numbers: dict[str, int] = {}
        for part in _chunks_of(list(ids)):
            numbers.update(db.execute(f"SELECT pid, pno FROM papers WHERE pid IN ({','.join('?' * len(part))})", part))
        facets: Counter[tuple[str, str]] = Counter()
        authors: list[tuple[str, str, int]] = []
        names: list[tuple[str, str, int]] = []
        fts: list[tuple[int, str, str, str]] = []
        for paper, _, _, n_chunks, _, _ in new:
            pno = numbers[paper.id]
            if added is not None:
                added.append((pno, paper, n_chunks))
            for field, value in zip(FACET_FIELDS, (paper.venue, paper.year, tracks_of(paper), paper.decision)):
                if value not in (None, ""):
                    facets[(field, str(value))] += 1
            people, own_names = self._people_and_names(paper, pno)
            authors += people
            names += own_names
            fts.append((pno, paper.title, paper.label, " ; ".join(paper.authors)))
        db.executemany(
            "INSERT INTO facets VALUES (?,?,?) ON CONFLICT(field, value) DO UPDATE SET n = n + excluded.n",
            [(f, v, n) for (f, v), n in facets.items()],
        )
        db.executemany("INSERT INTO authors VALUES (?, ?, ?)", authors)
        db.executemany("INSERT INTO names VALUES (?, ?, ?)", names)
        db.executemany("INSERT INTO papers_fts (rowid, title, label, authors) VALUES (?,?,?,?)", fts)

    def _write_paper(
        self,
        db: sqlite3.Connection,
        row: Any,
        paper: Paper,
        data: str,
        version: str,
        n_chunks: int,
        vectors_ok: int,
        claims: tuple[str, str],
        reindex: bool,
    ) -> None:
        """Update one catalogued paper in place (its facets, authors and full text too)."""
        tracks = tracks_of(paper)
        values = self._values(paper, data, version, n_chunks, vectors_ok, claims)
        pno = row[0]
        db.execute(
            "UPDATE papers SET data=?, own_id=?, has_abstract=?, abstract_key=?, title_key=?, title_head=?, "
            "label_key=?, "
            "venue=?, year=?, tracks=?, decision=?, version=?, n_chunks=?, vectors_ok=?, sort_key=?, claim_key=?, "
            "claim_head=?, "
            "indexed = CASE WHEN ? THEN 0 ELSE indexed END WHERE pno = ?",
            (*values, int(reindex), pno),
        )
        self._count_facets(db, row[3], row[4], row[5], row[6], -1)
        db.execute("DELETE FROM authors WHERE pno = ?", (pno,))
        db.execute("DELETE FROM names WHERE pno = ?", (pno,))
        db.execute("DELETE FROM papers_fts WHERE rowid = ?", (pno,))
        self._count_facets(db, paper.venue, paper.year, tracks, paper.decision, +1)
        people, own_names = self._people_and_names(paper, pno)
        db.executemany("INSERT INTO authors VALUES (?, ?, ?)", people)
        db.executemany("INSERT INTO names VALUES (?, ?, ?)", own_names)
        db.execute(
            "INSERT INTO papers_fts (rowid, title, label, authors) VALUES (?,?,?,?)",
            (pno, paper.title, paper.label, " ; ".join(paper.authors)),
        )

    def _remove_paper(self, db: sqlite3.Connection, row: Any) -> None:
        pno = row[0]
        self._count_facets(db, row[3], row[4], row[5], row[6], -1)
        db.execute("DELETE FROM papers WHERE pno = ?", (pno,))
        db.execute("DELETE FROM authors WHERE pno = ?", (pno,))
        db.execute("DELETE FROM names WHERE pno = ?", (pno,))
        db.execute("DELETE FROM papers_fts WHERE rowid = ?", (pno,))
        db.execute("INSERT OR IGNORE INTO gone VALUES (?)", (pno,))

    @staticmethod
    def _count_facets(
        db: sqlite3.Connection, venue: str, year: int | None, tracks: str, decision: str, delta: int
    ) -> None:
        rows = [
            (f, str(v), delta) for f, v in zip(FACET_FIELDS, (venue, year, tracks, decision)) if v not in (None, "")
        ]
        db.executemany(
            "INSERT INTO facets VALUES (?,?,?) ON CONFLICT(field, value) DO UPDATE SET n = n + excluded.n", rows
        )

    def mark_indexed(self, pnos: Sequence[int], gone: Sequence[int]) -> None:
        with self.write() as db:
            db.executemany("UPDATE papers SET indexed = 1 WHERE pno = ?", [(p,) for p in pnos])
            db.executemany("DELETE FROM gone WHERE pno = ?", [(p,) for p in gone])

    def reset_indexed(self) -> None:
        """Every paper to be keyword-indexed again (after the keyword index was lost)."""
        with self.write() as db:
            db.execute("UPDATE papers SET indexed = 0")
            db.execute("DELETE FROM gone")
