"""The catalogue's rows as ingest, search and answers read them: papers by id or number, the
filters as masks over paper numbers, facet values and counts, and the identity lookups ingest
makes (copies, claimants of an abstract or a coined title)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag.store.catalog.connection import Connection, _chunks_of, _fts_query, name_key
from rag.text import fold
from rag.types import Filters, Paper


@dataclass
class CopyRow:
    """A copy as the catalogue holds it: which paper it belongs to and a digest of what it says."""

    skey: str
    pid: str
    digest: str
    live: bool


@dataclass
class PaperState:
    """What ingest needs to know of a catalogued paper to decide what to do."""

    pno: int
    pid: str
    own_id: bool
    has_abstract: bool
    version: str
    n_chunks: int
    vectors_ok: bool


class Rows(Connection):
    # -- reading papers -----------------------------------------------------------------------
    def get(self, paper_id: str) -> Paper | None:
        row = self.db.execute("SELECT data FROM papers WHERE pid = ?", (paper_id,)).fetchone()
        return Paper.from_dict(json.loads(row[0])) if row else None

    def get_many(self, paper_ids: Iterable[str]) -> dict[str, Paper]:
        ids = list(dict.fromkeys(paper_ids))
        out: dict[str, Paper] = {}
        for part in _chunks_of(list(ids)):
            marks = ",".join("?" * len(part))
            for pid, data in self.db.execute(f"SELECT pid, data FROM papers WHERE pid IN ({marks})", part):
                out[pid] = Paper.from_dict(json.loads(data))
        return out

    def by_pno(self, pnos: Sequence[int]) -> dict[int, Paper]:
        out: dict[int, Paper] = {}
        pnos = list(dict.fromkeys(int(p) for p in pnos))
        for part in _chunks_of(list(pnos)):
            marks = ",".join("?" * len(part))
            for pno, data in self.db.execute(f"SELECT pno, data FROM papers WHERE pno IN ({marks})", part):
                out[pno] = Paper.from_dict(json.loads(data))
        return out

    def pnos(self, paper_ids: Iterable[str]) -> dict[str, int]:
        ids = list(dict.fromkeys(paper_ids))
        out: dict[str, int] = {}
        for part in _chunks_of(list(ids)):
            marks = ",".join("?" * len(part))
            out.update(self.db.execute(f"SELECT pid, pno FROM papers WHERE pid IN ({marks})", part).fetchall())
        return out

    def title_only(self, paper_ids: Iterable[str]) -> set[str]:
        """Those of the papers that have no abstract (the search's fusion lifts them: `Fusion.title_only`)."""
        ids = list(dict.fromkeys(paper_ids))
        out: set[str] = set()
        for part in _chunks_of(ids):
            marks = ",".join("?" * len(part))
            rows = self.db.execute(f"SELECT pid FROM papers WHERE has_abstract = 0 AND pid IN ({marks})", part)
            out.update(pid for (pid,) in rows)
        return out

    def pids_of(self, pnos: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        pnos = list(dict.fromkeys(int(p) for p in pnos))
        for part in _chunks_of(list(pnos)):
            marks = ",".join("?" * len(part))
            out.update(self.db.execute(f"SELECT pno, pid FROM papers WHERE pno IN ({marks})", part).fetchall())
        return out

    def live_vectors(self, paper_ids: Iterable[str]) -> dict[tuple[str, str], int]:
        """(paper id, text version) -> chunk count, for the versions whose vectors the log says
        are in Chroma."""
        ids = list(dict.fromkeys(paper_ids))
        out: dict[tuple[str, str], int] = {}
        for part in _chunks_of(list(ids)):
            marks = ",".join("?" * len(part))
            for pid, version, n in self.db.execute(
                f"SELECT pid, version, n FROM vectors WHERE n > 0 AND pid IN ({marks})", part
            ):
                out[(pid, version)] = n
        return out

    def current_versions(self, paper_ids: Sequence[str]) -> dict[str, tuple[int, str, int]]:
        """Paper number, own text version and chunk count of each paper whose vectors are in
        Chroma."""
        out: dict[str, tuple[int, str, int]] = {}
        for part in _chunks_of(list(paper_ids)):
            marks = ",".join("?" * len(part))
            for pid, pno, version, n in self.db.execute(
                f"SELECT pid, pno, version, n_chunks FROM papers WHERE vectors_ok = 1 AND pid IN ({marks})", part
            ):
                out[pid] = (pno, version, n)
        return out

    def live_vector_set(self) -> set[tuple[str, str]]:
        """(paper, version) of every text version whose vectors the log says are in Chroma, as
        `ChunkId.text_version` names them."""
        return {(pid, version) for pid, version in self.db.execute("SELECT pid, version FROM vectors WHERE n > 0")}

    def iter_papers(self, batch: int = 2000) -> Iterator[tuple[int, Paper]]:
        last = -1
        while True:
            rows = self.db.execute(
                "SELECT pno, data FROM papers WHERE pno > ? ORDER BY pno LIMIT ?", (last, batch)
            ).fetchall()
            if not rows:
                return
            for pno, data in rows:
                yield pno, Paper.from_dict(json.loads(data))
            last = rows[-1][0]

    def max_pno(self) -> int:
        row = self.db.execute("SELECT max(pno) FROM papers").fetchone()
        return int(row[0] or 0)

    # -- filters ----------------------------------------------------------------------------
    def facet_values(self, field: str) -> list[str]:
        """Distinct non-empty values of venue, year, track or decision, sorted; a paper's track
        values include its area and every track its copies name. Any other field is a
        ValueError. Cached until the catalogue changes."""
        if field not in ("venue", "year", "track", "decision"):
            raise ValueError(f"no facet {field!r}: use venue, year, track or decision")
        key = (field, self.generation)
        with self._mask_lock:
            cached = self._facet_cache.get(key)
        if cached is not None:
            return list(cached)
        column = "tracks" if field == "track" else field
        rows = [r[0] for r in self.db.execute("SELECT value FROM facets WHERE field = ? AND n > 0", (column,))]
        values = sorted({part for v in rows for part in v.split(" | ") if part} if column == "tracks" else set(rows))
        with self._mask_lock:
            self._facet_cache[key] = values
        return list(values)

    def _matching(self, column: str, wanted: str) -> list[str]:
        folded = fold(wanted)
        rows = self.db.execute("SELECT value FROM facets WHERE field = ? AND n > 0", (column,))
        return [r[0] for r in rows if folded in fold(r[0])]

    def _where(self, filters: Filters) -> tuple[str, list[Any]] | None:
        """SQL conditions for the filters; None when they can match nothing."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, wanted in (("venue", filters.venue), ("tracks", filters.track), ("decision", filters.decision)):
            if wanted:
                values = self._matching(column, wanted)
                if not values:
                    return None
                clauses.append(f"{column} IN ({','.join('?' * len(values))})")
                params += values
        if filters.year:
            clauses.append("year = ?")
            params.append(int(filters.year))
        if filters.author:
            pnos = self._author_pnos(filters.author)
            if not pnos:
                return None
            clauses.append(f"pno IN ({','.join('?' * len(pnos))})")
            params += pnos
        # A value left out keeps the papers known to hold another: a paper whose decision the list
        # does not record is not known to be "not a poster" (27 ICLR seeds without one were counted so).
        for facet, value in filters.excluded:
            if facet == "year":
                clauses.append("year IS NOT NULL AND year != ?")
                params.append(int(value))
                continue
            column = "tracks" if facet == "track" else facet
            if column in ("venue", "tracks", "decision"):
                values = self._matching(column, value)
                clauses.append(f"{column} != '' AND {column} NOT IN ({','.join('?' * len(values))})")
                params += values
        return (" AND ".join(clauses) or "1"), params

    def _author_pnos(self, wanted: str) -> list[int]:
        """Papers with an author whose name holds `wanted` as whole words (accents, case and the
        periods of initials ignored): "Levine" and "Sergey Levine" find Sergey Levine, while "Bo
        Li" finds neither Bo Liu nor Ruibo Liu, and "Yang Liu" not Shih-Yang Liu, other people.
        Full-text candidates by word prefix, then checked on the names themselves."""
        query = _fts_query(wanted)
        key = name_key(wanted)
        if not query or not key:
            return []
        words = re.compile(rf"(?<![\w'-]){re.escape(key)}(?![\w'-])")
        found = []
        for pno, authors in self.db.execute(
            "SELECT rowid, authors FROM papers_fts WHERE papers_fts MATCH ?", (f"authors : ({query})",)
        ):
            if any(words.search(name_key(name)) for name in authors.split(" ; ")):
                found.append(int(pno))
        return found

    def allowed(self, filters: Filters) -> np.ndarray | None:
        """A boolean mask over paper numbers (`pno`) of the papers that pass the filters, or None
        when no filter is set. Cached per filter until the catalogue changes."""
        if not filters.active():
            return None
        key = (filters, self.generation)
        with self._mask_lock:
            cached = self._mask_cache.get(key)
        if cached is not None:
            return cached
        mask = np.zeros(self.max_pno() + 1, dtype=bool)
        where = self._where(filters)
        if where is not None:
            rows = self.db.execute(f"SELECT pno FROM papers WHERE {where[0]}", where[1]).fetchall()
            if rows:
                mask[np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))] = True
        with self._mask_lock:
            if len(self._mask_cache) > 32:
                self._mask_cache.clear()
            self._mask_cache[key] = mask
        return mask

    def count(self, filters: Filters = Filters()) -> int:
        """How many papers pass the filters."""
        where = self._where(filters)
        if where is None:
            return 0
        return int(self.db.execute(f"SELECT count(*) FROM papers WHERE {where[0]}", where[1]).fetchone()[0])

    def count_by_identity(self, filters: Filters = Filters(), sources: int = 3) -> tuple[int, int, list[str]]:
        """How many papers pass the filters with their own id and without one, and up to
        `sources` + 1 source files of those without (the extra one says there are more). A paper
        without an id joins a listed paper only when their abstracts or coined titles prove them
        the same, so an id-less paper may repeat a listed one: a count that mixes the two says so
        instead of passing off one total."""
        where = self._where(filters)
        if where is None:
            return 0, 0, []
        sql = f"SELECT own_id, count(*) FROM papers WHERE {where[0]} GROUP BY own_id"
        counts = dict(self.db.execute(sql, where[1]).fetchall())
        with_id, without = int(counts.get(1, 0)), int(counts.get(0, 0))
        files: list[str] = []
        if without:
            rows = self.db.execute(
                f"SELECT DISTINCT source FROM copies WHERE data IS NOT NULL AND pid IN "
                f"(SELECT pid FROM papers WHERE own_id = 0 AND {where[0]}) ORDER BY source LIMIT ?",
                [*where[1], sources + 1],
            )
            files = [r[0] for r in rows]
        return with_id, without, files

    def select(self, filters: Filters = Filters(), limit: int = 50, offset: int = 0) -> list[Paper]:
        """Papers passing the filters, in a stable order (folded display title, then id), from
        `offset`, at most `limit` (negative: all); paging visits every paper exactly once."""
        where = self._where(filters)
        if where is None:
            return []
        rows = self.db.execute(
            f"SELECT data FROM papers WHERE {where[0]} ORDER BY sort_key, pid LIMIT ? OFFSET ?",
            [*where[1], limit, offset],
        )
        return [Paper.from_dict(json.loads(r[0])) for r in rows]

    # -- identity (for ingest) --------------------------------------------------------------
    def copies(self, skeys: Sequence[str]) -> dict[str, CopyRow]:
        out: dict[str, CopyRow] = {}
        for part in _chunks_of(list(skeys)):
            marks = ",".join("?" * len(part))
            for skey, pid, digest, live in self.db.execute(
                f"SELECT skey, pid, digest, data IS NOT NULL FROM copies WHERE skey IN ({marks})", part
            ):
                out[skey] = CopyRow(skey, pid, digest, bool(live))
        return out

    def copies_of(self, paper_ids: Sequence[str]) -> dict[str, list[tuple[str, str, Paper]]]:
        """Live copies (copy key, digest, copy) of each paper."""
        out: dict[str, list[tuple[str, str, Paper]]] = {}
        ids = list(dict.fromkeys(paper_ids))
        for part in _chunks_of(list(ids)):
            marks = ",".join("?" * len(part))
            for skey, pid, digest, data in self.db.execute(
                f"SELECT skey, pid, digest, data FROM copies WHERE data IS NOT NULL AND pid IN ({marks}) ORDER BY skey",
                part,
            ):
                out.setdefault(pid, []).append((skey, digest, Paper.from_dict(json.loads(data))))
        return out

    def states(self, paper_ids: Sequence[str]) -> dict[str, PaperState]:
        out: dict[str, PaperState] = {}
        ids = list(dict.fromkeys(paper_ids))
        for part in _chunks_of(list(ids)):
            marks = ",".join("?" * len(part))
            for row in self.db.execute(
                f"SELECT pno, pid, own_id, has_abstract, version, n_chunks, vectors_ok FROM papers "
                f"WHERE pid IN ({marks})",
                part,
            ):
                out[row[1]] = PaperState(row[0], row[1], bool(row[2]), bool(row[3]), row[4], row[5], bool(row[6]))
        return out

    def titles_and_sources(self, paper_ids: Sequence[str]) -> dict[str, tuple[str, list[str]]]:
        """Title key and source files of each catalogued paper (for ingest: does a new copy with
        this id join another source's paper, and do their titles agree?)."""
        out: dict[str, tuple[str, list[str]]] = {}
        for part in _chunks_of(list(dict.fromkeys(paper_ids))):
            marks = ",".join("?" * len(part))
            for pid, key, data in self.db.execute(
                f"SELECT pid, title_key, data FROM papers WHERE pid IN ({marks})", part
            ):
                out[pid] = (key, list(json.loads(data).get("extra", {}).get("sources") or []))
        return out

    def has_idless(self) -> bool:
        """Whether any live id-less copy could join a listed paper (ingest skips identity checks otherwise)."""
        return self.db.execute("SELECT 1 FROM idless LIMIT 1").fetchone() is not None

    def claimants_of_abstract(self, key: str) -> list[str]:
        """Listed papers whose own copies' abstract has this whole-abstract key."""
        return [r[0] for r in self.db.execute("SELECT pid FROM papers WHERE claim_key = ? ORDER BY pid", (key,))]

    def claimants_of_head(self, heads: Iterable[str]) -> list[str]:
        """Listed papers whose own copies have no abstract and whose title opens with one of these
        names ("BrainOOD: …")."""
        wanted = sorted(set(heads))
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        return [
            r[0]
            for r in self.db.execute(
                f"SELECT DISTINCT pid FROM papers WHERE claim_head IN ({marks}) ORDER BY pid", wanted
            )
        ]

    def idless_copies(self, abstracts: Iterable[str], names: Iterable[str]) -> list[tuple[str, str, bool, Paper]]:
        """Live id-less copies with one of these whole-abstract keys, or introducing one of these
        names: (copy key, the paper it belongs to, whether that paper is listed, the copy)."""
        skeys: set[str] = set()
        for kind, keys in (("a", sorted(set(abstracts))), ("n", sorted(set(names)))):
            for part in _chunks_of(keys):
                marks = ",".join("?" * len(part))
                skeys.update(
                    r[0]
                    for r in self.db.execute(
                        f"SELECT skey FROM idless WHERE kind = ? AND key IN ({marks})", [kind, *part]
                    )
                )
        out: list[tuple[str, str, bool, Paper]] = []
        for part in _chunks_of(sorted(skeys)):
            marks = ",".join("?" * len(part))
            for skey, pid, data, own in self.db.execute(
                f"SELECT c.skey, c.pid, c.data, p.own_id FROM copies c LEFT JOIN papers p ON p.pid = c.pid "
                f"WHERE c.data IS NOT NULL AND c.skey IN ({marks}) ORDER BY c.skey",
                part,
            ):
                out.append((skey, pid, bool(own), Paper.from_dict(json.loads(data))))
        return out

    def identity_keys(self, paper_ids: Iterable[str], skeys: Iterable[str]) -> tuple[set[str], set[str]]:
        """(whole-abstract keys, names) that these papers claim and these id-less copies hold: what
        a change to them can change for other copies."""
        abstracts: set[str] = set()
        names: set[str] = set()
        for part in _chunks_of(sorted(set(paper_ids))):
            marks = ",".join("?" * len(part))
            for key, head in self.db.execute(f"SELECT claim_key, claim_head FROM papers WHERE pid IN ({marks})", part):
                abstracts.add(key)
                names.add(head)
        for part in _chunks_of(sorted(set(skeys))):
            marks = ",".join("?" * len(part))
            for kind, key in self.db.execute(f"SELECT kind, key FROM idless WHERE skey IN ({marks})", part):
                (abstracts if kind == "a" else names).add(key)
        return abstracts - {""}, names - {""}

    def sources(self) -> list[str]:
        """Every source file that holds a live copy, sorted (an indexed lookup, not a scan of
        the papers)."""
        return [r[0] for r in self.db.execute("SELECT DISTINCT source FROM copies WHERE data IS NOT NULL ORDER BY 1")]

    def source_pids(self, source: str) -> dict[str, list[str]]:
        """Live copies of one source file, by paper id."""
        out: dict[str, list[str]] = {}
        for skey, pid in self.db.execute(
            "SELECT skey, pid FROM copies WHERE source = ? AND data IS NOT NULL", (source,)
        ):
            out.setdefault(pid, []).append(skey)
        return out

    def missing_vectors(self, limit: int = 100000) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT pid FROM papers WHERE vectors_ok = 0 LIMIT ?", (limit,))]

    # -- the keyword index catches up ------------------------------------------------------
    def unindexed(self, after: int = 0, limit: int = 5000) -> list[tuple[int, Paper, int]]:
        """Papers (after paper number `after`) the keyword index does not hold yet, with their
        chunk counts."""
        rows = self.db.execute(
            "SELECT pno, data, n_chunks FROM papers WHERE indexed = 0 AND pno > ? ORDER BY pno LIMIT ?", (after, limit)
        ).fetchall()
        return [(r[0], Paper.from_dict(json.loads(r[1])), r[2]) for r in rows]

    def gone(self) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT pno FROM gone")]
