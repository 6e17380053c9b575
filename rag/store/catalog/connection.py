"""The catalogue's connection and schema: one SQLite connection per thread, the tables, and the
version that says when a cache file was made by other rules (then it is rebuilt from the log)."""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from rag.errors import StoreError
from rag.text import fold
from rag.types import Filters

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


def _chunks_of(items: list[Any], size: int = 900) -> Iterator[list[Any]]:
    """Slices that fit SQLite's limit on bound parameters per statement."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


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


class Connection:
    """The catalogue file: connections, transactions, copies of the file, and its counts."""

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


_NAME_PUNCT = re.compile(r"[^\w\s'-]")
_ASCII_NAME_PUNCT = str.maketrans({chr(i): " " for i in range(128) if _NAME_PUNCT.match(chr(i))})


def name_key(text: str) -> str:
    """A person's name as a match key: folded, punctuation but hyphens and apostrophes dropped
    (the periods of initials too), single spaces. ASCII names by translation (the same result,
    faster: it runs for every author of every paper applying the log)."""
    folded = fold(text)
    spaced = folded.translate(_ASCII_NAME_PUNCT) if folded.isascii() else _NAME_PUNCT.sub(" ", folded)
    return " ".join(spaced.split())


def _fts_query(text: str) -> str:
    """A safe FTS5 query: every word a quoted prefix term."""
    words = re.findall(r"\w+", fold(text))
    return " ".join(f'"{w}"*' for w in words[:16])
