"""The paper catalogue: a local SQLite view of the change log kept in Chroma (`rag.changelog`).

It holds every copy of every paper as read (the log's state), the merged paper shown for each id,
and what lookup and filtering need: folded venue/year/track/decision columns with counts per value,
author names, a full-text table over title, label and authors, and identity keys for ingest
(whole-abstract hash, title hash, the name a title opens with, the label of an id-less abstract).
It updates in place, so adding a thousand papers to a million costs a thousand rows, and it is
read on demand, so a command that looks at ten papers reads ten rows.

Applying the log is commutative: each copy and each vector entry is a last-writer-wins register
keyed by its own identity and versioned by (time, writer, position), so machines that apply the
same segments in different orders end with the same catalogue.

Each thread gets its own connection (SQLite connections are not shared across threads); writes
happen under `Index`'s write lock."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from rag.errors import StoreError
from rag.identity import abstract_key, copies_digest, idless_keys, looks_idless, title_head, title_key
from rag.merge import listed_claims, merge_papers
from rag.text import STOPWORDS, fold, is_coined
from rag.types import Paper

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS segments (id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS copies (
  skey TEXT PRIMARY KEY, pid TEXT NOT NULL, source TEXT NOT NULL, digest TEXT NOT NULL, data TEXT,
  ts INTEGER NOT NULL, writer TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS copies_pid ON copies(pid);
CREATE INDEX IF NOT EXISTS copies_source ON copies(source);
CREATE TABLE IF NOT EXISTS vectors (
  pid TEXT NOT NULL, version TEXT NOT NULL, n INTEGER NOT NULL,
  ts INTEGER NOT NULL, writer TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (pid, version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS papers (
  pno INTEGER PRIMARY KEY AUTOINCREMENT, pid TEXT NOT NULL UNIQUE, data TEXT NOT NULL,
  own_id INTEGER NOT NULL, has_abstract INTEGER NOT NULL,
  abstract_key TEXT NOT NULL, title_key TEXT NOT NULL, title_head TEXT NOT NULL, label_key TEXT NOT NULL,
  venue TEXT NOT NULL, year INTEGER, tracks TEXT NOT NULL, decision TEXT NOT NULL,
  version TEXT NOT NULL, n_chunks INTEGER NOT NULL, vectors_ok INTEGER NOT NULL, indexed INTEGER NOT NULL,
  sort_key TEXT NOT NULL, claim_key TEXT NOT NULL, claim_head TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS papers_abstract ON papers(abstract_key);
CREATE INDEX IF NOT EXISTS papers_claim_key ON papers(claim_key) WHERE claim_key != '';
CREATE INDEX IF NOT EXISTS papers_claim_head ON papers(claim_head) WHERE claim_head != '';
CREATE TABLE IF NOT EXISTS idless (skey TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idless_key ON idless(kind, key);
CREATE INDEX IF NOT EXISTS idless_skey ON idless(skey);
CREATE INDEX IF NOT EXISTS papers_title ON papers(title_key);
CREATE INDEX IF NOT EXISTS papers_head ON papers(title_head);
CREATE INDEX IF NOT EXISTS papers_label ON papers(label_key);
CREATE INDEX IF NOT EXISTS papers_venue ON papers(venue);
CREATE INDEX IF NOT EXISTS papers_year ON papers(year);
CREATE INDEX IF NOT EXISTS papers_tracks ON papers(tracks);
CREATE INDEX IF NOT EXISTS papers_decision ON papers(decision);
CREATE INDEX IF NOT EXISTS papers_unindexed ON papers(pno) WHERE indexed = 0;
CREATE INDEX IF NOT EXISTS papers_novectors ON papers(pno) WHERE vectors_ok = 0;
CREATE INDEX IF NOT EXISTS papers_idless ON papers(pno) WHERE own_id = 0;
CREATE INDEX IF NOT EXISTS papers_title_only ON papers(pno) WHERE has_abstract = 0;
CREATE INDEX IF NOT EXISTS papers_sort ON papers(sort_key, pid);
CREATE TABLE IF NOT EXISTS authors (key TEXT NOT NULL, name TEXT NOT NULL, pno INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS authors_key ON authors(key);
CREATE TABLE IF NOT EXISTS names (key TEXT NOT NULL, name TEXT NOT NULL, pno INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS names_key ON names(key);
CREATE INDEX IF NOT EXISTS names_pno ON names(pno);
CREATE INDEX IF NOT EXISTS authors_pno ON authors(pno);
CREATE VIRTUAL TABLE IF NOT EXISTS papers_fts
  USING fts5(title, label, authors, tokenize="unicode61 remove_diacritics 2");
CREATE TABLE IF NOT EXISTS gone (pno INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS facets (field TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (field, value)) WITHOUT ROWID;
"""
FACET_FIELDS = ("venue", "year", "tracks", "decision")
CACHE_KIB = 65536  # SQLite's page cache per connection
BULK_CACHE_KIB = 1 << 20  # while a long log is applied (`Catalog.bulk_load`)
# Bumped whenever SCHEMA changes, or the rules that derive its rows from the log do (`names_of`,
# the identity keys, `merge_papers`): a catalogue of another version is only a cache, rebuilt from
# the log. 5: names may open with digits ("3D-MolT5"); caches derived before kept the old names.
# 6: the identity claims of listed papers (`claim_key`, `claim_head`) and the keys of id-less
# copies (`idless`), so that which paper an id-less copy joins no longer depends on ingest order.
SCHEMA_VERSION = 6


class SchemaChanged(Exception):
    """The catalogue file was written by another version of this code."""


@dataclass(frozen=True)
class Filters:
    venue: str | None = None
    year: int | None = None
    track: str | None = None
    decision: str | None = None
    author: str | None = None

    def active(self) -> bool:
        return any(v not in (None, "") for v in (self.venue, self.year, self.track, self.decision, self.author))

    def public(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


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


Versioned = tuple[int, str, int]  # (time ns, writer, position in its segment): last writer wins
# A copy entry of the log: version, copy key, paper id, source, digest, the copy as read (None: removed).
CopyEntry = tuple[Versioned, str, str, str, str, dict[str, Any] | None]
VectorEntry = tuple[Versioned, str, str, int]  # version, paper id, text version, chunks (0: deleted)


def tracks_of(paper: Paper) -> str:
    parts = [paper.track, str(paper.extra.get("area") or ""), *map(str, paper.extra.get("tracks") or [])]
    return " | ".join(dict.fromkeys(p for p in parts if p))


_NAME_PUNCT = re.compile(r"[^\w\s'-]")
_ASCII_NAME_PUNCT = str.maketrans({chr(i): " " for i in range(128) if _NAME_PUNCT.match(chr(i))})


def name_key(text: str) -> str:
    """A person's name as a match key: folded, punctuation but hyphens and apostrophes dropped
    (the periods of initials too), single spaces. ASCII names by translation (the same result,
    faster: it runs for every author of every paper applying the log)."""
    folded = fold(text)
    spaced = folded.translate(_ASCII_NAME_PUNCT) if folded.isascii() else _NAME_PUNCT.sub(" ", folded)
    return " ".join(spaced.split())


def _any_case(name: str) -> bool:
    """A name unmistakable in any case: inner capitals or digits ("GradSurg", "TGB-Seq", "GPT4o")."""
    return any(c.isupper() for c in name[1:]) and not name.isupper() or any(c.isdigit() for c in name)


_TITLE_WORD = re.compile(r"[A-Za-z][\w-]*[A-Za-z0-9]")


@lru_cache(maxsize=1 << 18)
def _name_like(word: str, coined_only: bool) -> bool:
    """A word that can be a paper's name (cached: titles share most of their words, and this
    ran once per title word per paper at ingest)."""
    coined = is_coined(word)
    if coined_only and not coined:
        return False
    return (
        len(word) >= 3
        and " " not in word
        and (coined or (word[:1].isupper() and "-" not in word))
        and fold(word) not in STOPWORDS
    )


def names_of(paper: Paper) -> set[str]:
    """The single-word names a paper goes by: its label when that is one name-like word
    ("Celcomen"), the word its title opens with before a colon ("Cybench: A Framework …"), and
    the coined words of its title (not of an ALL-CAPS title, where every word looks coined)."""
    title = paper.title
    shouting = bool(title) and sum(map(str.isupper, title)) > 0.6 * sum(map(str.isalpha, title))
    found: set[str] = set()
    if paper.label and _name_like(paper.label.strip(), False):
        found.add(paper.label.strip())
    if title and not shouting:
        head = title.split(":", 1)[0].strip() if ":" in title else ""
        if head and _name_like(head, False):
            found.add(head)
        found |= {w for w in _TITLE_WORD.findall(title) if _name_like(w, True)}
    return found


def _chunks_of(items: list[Any], size: int = 900) -> Iterator[list[Any]]:
    """Slices that fit SQLite's limit on bound parameters per statement."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _fts_query(text: str) -> str:
    """A safe FTS5 query: every word a quoted prefix term."""
    words = re.findall(r"\w+", fold(text))
    return " ".join(f'"{w}"*' for w in words[:16])


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that never writes. `mode=ro` still takes locks and reads the write-ahead log
    beside the file, so a writer elsewhere may go on; where the medium refuses even that (a WAL
    database on a read-only mount with no `-shm` file), the file is opened as immutable: nobody
    can be writing it there."""
    for flags in ("mode=ro", "immutable=1"):
        conn = sqlite3.connect(f"{path.as_uri()}?{flags}", uri=True, timeout=60, isolation_level=None)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()
            if flags == "immutable=1":
                raise
    raise AssertionError("unreachable")


class Catalog:
    def __init__(self, path: Path, read_only: bool = False) -> None:
        """`read_only`: open an existing catalogue without ever writing (a data folder on a
        read-only mount): no schema set-up, no journal mode change, and a catalogue of another
        schema is an error rather than a cache to rebuild."""
        self.path = path
        self.read_only = read_only
        self._local = threading.local()
        self._mask_cache: dict[tuple[Filters, int], np.ndarray] = {}
        self._facet_cache: dict[tuple[str, int], list[str]] = {}
        self._mask_lock = threading.Lock()
        if read_only:
            version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
            if version != SCHEMA_VERSION:
                self.close()
                raise SchemaChanged(f"catalogue schema {version}, this code reads {SCHEMA_VERSION}")
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
            fresh = self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
            if version != SCHEMA_VERSION and not fresh:
                self.close()
                raise SchemaChanged(f"catalogue schema {version}, this code writes {SCHEMA_VERSION}")
            self.db.executescript(SCHEMA)
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as err:
            raise StoreError(
                f"the local catalogue {path} is damaged ({err}): delete it; it is rebuilt from Chroma"
            ) from err

    @classmethod
    def of(cls, papers: Sequence[Paper], path: Path | None = None) -> Catalog:
        """A catalogue holding just these papers (each its own single copy): for tests and tools
        that need catalogue operations without an index."""
        import tempfile

        catalog = cls(path or Path(tempfile.mkdtemp(prefix="rag-catalog-")) / "catalog.sqlite")
        copies: list[CopyEntry] = [
            ((1, "of", i), f"of|{p.id}", p.id, p.source or "of", str(i), p.to_dict()) for i, p in enumerate(papers)
        ]
        catalog.apply("of", copies, [], lambda paper: ("v", 1), {p.id: (p, "v", 1) for p in papers})
        return catalog

    # -- connections --------------------------------------------------------------------------
    @property
    def db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None and self.read_only:
            conn = _connect_read_only(self.path)
            conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            self._local.conn = conn
        elif conn is None:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=True)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            self._local.conn = conn
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; inside one held open by `begin` it joins that one."""
        db = self.db
        if getattr(self._local, "held", False):
            yield db
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def begin(self) -> None:
        """Hold a write transaction open across calls: ingest applies a batch here before its
        writes to Chroma are acknowledged, keeps working on the next batch (this connection sees
        its own changes), and commits only when Chroma has them (or rolls back)."""
        self.db.execute("BEGIN IMMEDIATE")
        self._local.held = True

    def commit(self) -> None:
        if getattr(self._local, "held", False):
            self._local.held = False
            self.db.execute("COMMIT")

    def rollback(self) -> None:
        if getattr(self._local, "held", False):
            self._local.held = False
            self.db.execute("ROLLBACK")

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def bulk_load(self, segments_per_commit: int = 25) -> Iterator[Callable[[], None]]:
        """Apply a long log (a second machine's first sync, a rebuild) in few transactions: the
        caller calls the yielded `flush` after each segment, and a transaction commits every
        `segments_per_commit` of them instead of after each one. A commit writes every page the
        transaction dirtied, and new papers dirty pages all over the indexes of random keys
        (hashes, names): applying a million papers took 710 s committing every segment of 2,000,
        504 s every ten (`python -m eval.bench.catalog_load`). Readers see whole groups of
        segments. The page cache is 1 GiB meanwhile (64 MiB otherwise): 7% faster at 500,000
        papers, more as the catalogue grows. Call with the write lock held."""
        applied = 0
        self.db.execute(f"PRAGMA cache_size=-{BULK_CACHE_KIB}")

        def flush() -> None:
            nonlocal applied
            applied += 1
            if applied % segments_per_commit == 0:
                self.commit()
                self.begin()

        self.begin()
        try:
            yield flush
            self.commit()
        except BaseException:
            self.rollback()
            raise
        finally:
            self.db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")

    def copy_to(self, path: Path) -> None:
        """A consistent copy of the committed catalogue in a new file (SQLite's backup API: readers
        and this connection go on meanwhile), for a snapshot. Call with the write lock held, so the
        copy matches the keyword index."""
        target = sqlite3.connect(path)
        try:
            self.db.backup(target)
        finally:
            target.close()

    def replace_with(self, path: Path) -> None:
        """Become the catalogue in the file at `path` (a downloaded snapshot), in one transaction
        through SQLite's backup API rather than by swapping files: another process with this
        catalogue open then reads the new content, where a swapped file would leave it reading the
        old one for good. Raises SchemaChanged for a file of another schema version."""
        source = sqlite3.connect(path)
        try:
            version = int(source.execute("PRAGMA user_version").fetchone()[0])
            if version != SCHEMA_VERSION:
                raise SchemaChanged(f"snapshot catalogue schema {version}, this code writes {SCHEMA_VERSION}")
            before = self.generation
            source.backup(self.db)
        finally:
            source.close()
        # a process that cached masks for an earlier state must not take them for this one
        self.db.execute("UPDATE meta SET value = value + ? WHERE key = 'generation'", (before + 1,))
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        with self._mask_lock:
            self._mask_cache.clear()
            self._facet_cache.clear()

    # -- state ------------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0]) if row else 0

    def applied_segments(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT id FROM segments")}

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM papers").fetchone()[0])

    def probe(self) -> None:
        """Read a row of each main table: a damaged file fails here, on opening, at a cost that
        does not grow with the collection (counting scanned every paper, 3 s at 1M)."""
        for table in ("papers", "copies", "segments"):
            self.db.execute(f"SELECT * FROM {table} LIMIT 1").fetchall()

    def counts(self) -> dict[str, int]:
        """The figures `rag status` shows, in one pass over the papers."""
        db = self.db
        papers, with_abstract, chunks, missing, unindexed = db.execute(
            "SELECT count(*), coalesce(sum(has_abstract = 1), 0), coalesce(sum(n_chunks), 0), "
            "coalesce(sum(vectors_ok = 0), 0), coalesce(sum(indexed = 0), 0) FROM papers"
        ).fetchone()
        return {
            "papers": int(papers),
            "with_abstract": int(with_abstract),
            "title_only": int(papers) - int(with_abstract),
            "expected_chunks": int(chunks),
            "missing_vectors": int(missing),
            "not_keyword_indexed": int(unindexed),
            "copies": int(db.execute("SELECT count(*) FROM copies WHERE data IS NOT NULL").fetchone()[0]),
            "segments": int(db.execute("SELECT count(*) FROM segments").fetchone()[0]),
        }

    def totals(self) -> tuple[int, int]:
        """(papers, papers without abstract), as `counts` gives them, from indexes alone: ingest
        ends by printing them, so its summary and `rag status` say the same."""
        db = self.db
        papers = int(db.execute("SELECT count(*) FROM papers").fetchone()[0])
        return papers, int(db.execute("SELECT count(*) FROM papers WHERE has_abstract = 0").fetchone()[0])

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
        return (" AND ".join(clauses) or "1"), params

    def _author_pnos(self, wanted: str) -> list[int]:
        """Papers with an author whose name contains `wanted` (accents and case ignored): full-text
        candidates by word prefix, then checked on the names themselves."""
        query = _fts_query(wanted)
        if not query:
            return []
        folded = fold(wanted).strip()
        found = []
        for pno, authors in self.db.execute(
            "SELECT rowid, authors FROM papers_fts WHERE papers_fts MATCH ?", (f"authors : ({query})",)
        ):
            if any(folded in name for name in fold(authors).split(" ; ")):
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

    # -- lookup -------------------------------------------------------------------------------
    def lookup(self, query: str = "", filters: Filters = Filters(), limit: int = 50) -> list[Paper]:
        """Papers whose title, label or authors name the query, most relevant first: an exact
        title or label first, then full-text rank with title and label weighted over authors.
        Without a query: the papers passing the filters."""
        if not query.strip():
            return self.select(filters, limit)
        allowed = self.allowed(filters)
        found: list[int] = []
        exact = self.title_matches(query)
        found += [p for p in self.pnos(exact).values()]
        fts = _fts_query(query)
        if fts:
            rows = self.db.execute(
                "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? "
                "ORDER BY bm25(papers_fts, 10.0, 8.0, 2.0) LIMIT ?",
                (fts, max(limit * 4, 200)),
            ).fetchall()
            found += [int(r[0]) for r in rows]
        ordered = [p for p in dict.fromkeys(found) if allowed is None or (p < len(allowed) and allowed[p])]
        papers = self.by_pno(ordered[:limit])
        return [papers[p] for p in ordered[:limit] if p in papers]

    def named_pnos(self, query: str) -> set[int]:
        """Every paper `lookup` finds by title, label or authors for the query, unranked and
        unlimited: what "N papers match" counts."""
        found = set(self.pnos(self.title_matches(query)).values())
        fts = _fts_query(query)
        if fts:
            rows = self.db.execute("SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?", (fts,))
            found |= {int(r[0]) for r in rows}
        return found

    def title_matches(self, query: str) -> list[str]:
        """Papers whose whole title or label is the query (case, accents and punctuation aside),
        or whose title starts with it when the query is a long title cut short ("SWIFT: On-the-Fly
        Self-Speculative Decoding…")."""
        key = title_key(query.rstrip("…. "))
        if not key:
            return []
        found = [r[0] for r in self.db.execute("SELECT pid FROM papers WHERE title_key = ?", (key,))]
        folded = fold(query).strip()
        if not found and len(folded) <= 60:
            found = [
                r[0]
                for r in self.db.execute(
                    "SELECT pid FROM papers WHERE label_key = ? OR title_head = ?", (folded, folded)
                )
            ]
        if not found and len(folded) >= 24 and query.rstrip().endswith(("…", "...")):
            prefix = _fts_query(query.rstrip("…. "))
            rows = self.db.execute(
                "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? LIMIT 50", (f"title : ({prefix})",)
            ).fetchall()
            papers = self.by_pno([r[0] for r in rows])
            stem = re.sub(r"\W+", "", fold(query.rstrip("…. ")))
            found = [p.id for p in papers.values() if re.sub(r"\W+", "", fold(p.title)).startswith(stem)]
        return found

    def authors_named_in(self, text: str) -> list[str]:
        """Full author names (two words or more, as written in the catalogue) that occur in the
        text as whole words, ignoring case, accents and the periods of initials ("Justin S Kang"
        finds "Justin S. Kang"). Longest first; a name inside a longer found name is not repeated;
        a surname alone never matches. Found by looking up each run of two to six words."""
        words = name_key(text).split()
        spans = [(start, size) for size in range(6, 1, -1) for start in range(len(words) - size + 1)]
        keys = list(dict.fromkeys(" ".join(words[start : start + size]) for start, size in spans))
        shown: dict[str, str] = {}
        for part in _chunks_of(list(keys)):
            for key, name in self.db.execute(
                f"SELECT key, min(name) FROM authors WHERE key IN ({','.join('?' * len(part))}) GROUP BY key", part
            ):
                shown[key] = name
        found: list[str] = []
        covered: set[int] = set()
        for start, size in spans:
            span = set(range(start, start + size))
            name = shown.get(" ".join(words[start : start + size]))
            if name is not None and not span & covered and name not in found:
                found.append(name)
                covered |= span
        return found

    def papers_by_author(self, name: str, filters: Filters = Filters(), limit: int = 50) -> list[Paper]:
        """Papers passing the filters with an author whose full name is `name` (folded, initials'
        periods ignored), in `select` order, at most `limit`."""
        where = self._where(filters)
        if where is None:
            return []
        rows = self.db.execute(
            f"SELECT data FROM papers WHERE pno IN (SELECT pno FROM authors WHERE key = ?) AND {where[0]} "
            "ORDER BY sort_key, pid LIMIT ?",
            [name_key(name), *where[1], limit],
        )
        return [Paper.from_dict(json.loads(r[0])) for r in rows]

    def pids_by_authors(self, names: Sequence[str]) -> list[str]:
        rows: list[str] = []
        for name in names:
            rows += [
                r[0]
                for r in self.db.execute(
                    "SELECT p.pid FROM authors a JOIN papers p ON p.pno = a.pno WHERE a.key = ? ORDER BY p.pno",
                    (name_key(name),),
                )
            ]
        return list(dict.fromkeys(rows))

    def titles_in(self, text: str) -> list[str]:
        """Papers whose whole title (12 characters or more) occurs in the text: every run of up to
        forty words is looked up by its title key, so no title list is scanned."""
        words = re.findall(r"\S+", text)
        keys: set[str] = set()
        for start in range(len(words)):
            for end in range(start + 1, min(len(words), start + 40) + 1):
                run = " ".join(words[start:end]).strip(" \"'“”‘’?!.,;:()")
                if len(run) >= 12:
                    keys.add(title_key(run))
        keys.discard("")
        found: list[str] = []
        ordered = sorted(keys)
        for part in _chunks_of(list(ordered)):
            found += [
                r[0]
                for r in self.db.execute(
                    f"SELECT pid FROM papers WHERE title_key IN ({','.join('?' * len(part))})", part
                )
            ]
        return found

    def papers_named_in(self, text: str) -> list[str]:
        """Ids of papers the text names, most specific first: a whole title (or a long title cut
        short with "…"), then a paper's names (`names_of`) as whole words in the order they occur:
        exactly as written, or in any case when the name is unmistakably coined (inner capitals
        or digits: "gradsurg" finds GradSurg, but "gets" never finds GETS). A name shared by more
        than three papers ("Position", "In-Context") names none of them."""
        found = self.titles_in(text) or self.title_matches(text.strip(" \"'“”"))
        words = re.findall(r"[\w][\w-]*[\w]|\w", text)
        candidates: list[str] = []
        for word in words:
            candidates += [word] + ([word[:-1]] if word.endswith("s") and len(word) > 3 else [])
        keys = sorted({fold(w) for w in candidates})
        rows: dict[str, list[tuple[str, str]]] = {}
        for part in _chunks_of(list(keys)):
            for key, name, pid in self.db.execute(
                f"SELECT n.key, n.name, p.pid FROM names n JOIN papers p ON p.pno = n.pno WHERE n.key IN "
                f"({','.join('?' * len(part))})",
                part,
            ):
                rows.setdefault(key, []).append((name, pid))
        for word in candidates:
            hits = [pid for name, pid in rows.get(fold(word), []) if name == word or _any_case(name)]
            if 0 < len(set(hits)) <= 3:
                found += hits
        return list(dict.fromkeys(found))

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

    def namers(self, names: Iterable[str]) -> set[str]:
        """The distinct id-less abstracts (their whole-abstract key, else their copy key) that
        introduce one of these coined names."""
        wanted = sorted(set(names))
        if not wanted:
            return set()
        marks = ",".join("?" * len(wanted))
        rows = self.db.execute(
            f"SELECT n.skey, a.key FROM idless n LEFT JOIN idless a ON a.skey = n.skey AND a.kind = 'a' "
            f"WHERE n.kind = 'n' AND n.key IN ({marks})",
            wanted,
        )
        return {key or skey for skey, key in rows}

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
        """Keep `idless` in step with the copies just written: the keys (`rag.identity.idless_keys`)
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

    def mark_indexed(self, pnos: Sequence[int], gone: Sequence[int]) -> None:
        with self.write() as db:
            db.executemany("UPDATE papers SET indexed = 1 WHERE pno = ?", [(p,) for p in pnos])
            db.executemany("DELETE FROM gone WHERE pno = ?", [(p,) for p in gone])

    def reset_indexed(self) -> None:
        """Every paper to be keyword-indexed again (after the keyword index was lost)."""
        with self.write() as db:
            db.execute("UPDATE papers SET indexed = 0")
            db.execute("DELETE FROM gone")
