"""An index: the Chroma store (vectors and the change log, shared by every machine) plus what each
machine derives from the log on its own disk (the SQLite catalogue and the segmented keyword
index), kept in step by `sync`.

Writers of one data folder are serialised by a lock file: a second `rag ingest` waits, saying so,
then runs. Machines sharing a Chroma server share no lock; their safety comes from the log (see
`rag.store.log`): nobody deletes what it did not write and replace. Readers never wait: a reader
that finds the lock taken searches what is already applied.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rag.embed import Embedder
from rag.errors import IndexMissingError, StoreError
from rag.papers import Chunker
from rag.store import snapshot
from rag.store.catalog import Catalog, SchemaChanged
from rag.store.chroma import ChromaStore, writable
from rag.store.keyword import FLUSH_DOCS, KeywordIndex, SegmentBuilder, SegmentWorker
from rag.text import short_hash
from rag.types import ChunkId, Paper

log = logging.getLogger(__name__)
# From this many unapplied log segments (about 20,000 papers) a sync builds keyword segments in a
# second process while it applies the catalogue.
PARALLEL_KEYWORD_SEGMENTS = 10
# A writer publishes a snapshot of its cache (`rag.store.snapshot`) once the log holds this many segments
# (100,000 papers) that the newest snapshot lacks; a new machine starts from it.
SNAPSHOT_EVERY = 50
ORPHAN_GRACE_S = 3600.0  # a writer commits its segment seconds after its upsert; an hour is proof enough


def keyword_text(paper: Paper, chunk_text: str) -> str:
    """What BM25 sees for a chunk: its text (title and abstract piece, or the title alone) and the
    paper's label, authors, venue, year, track and decision, so all of them are searchable."""
    fields = [
        paper.label,
        "; ".join(paper.authors),
        paper.venue,
        str(paper.year or ""),
        paper.track,
        str(paper.extra.get("area") or ""),
        paper.decision,
    ]
    return chunk_text + "\n" + " ".join(f for f in fields if f)


class WriteLock:
    """An advisory lock file serialising the writers of one data folder (`fcntl.flock`: released
    by the kernel when the holder dies, so a killed ingest never leaves it stuck)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._depth = 0
        self._thread_lock = threading.RLock()

    def acquire(self, wait: bool = True, on_wait: Callable[[str], None] | None = None) -> bool:
        """Take the lock. `wait=False` gives up when another *process* holds it (a reader
        then serves what is applied rather than wait out a long ingest). Threads of this process
        always take turns: when one is bringing the shared cache up to date (a first sync, say),
        another one waiting for it sees the result instead of an empty catalogue."""
        self._thread_lock.acquire()
        if self._depth:
            self._depth += 1
            return True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            self._thread_lock.release()
            raise StoreError(
                f"cannot take the write lock {self.path} ({err.strerror}): changing the index needs a writable "
                "data folder (RAG_HOME); searching and asking do not"
            ) from err
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno not in (errno.EAGAIN, errno.EACCES) or not wait:
                os.close(fd)
                self._thread_lock.release()
                if not wait:
                    return False
                raise
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            if on_wait:
                on_wait(f"waiting for {holder} to finish writing to {self.path.parent} …")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"rag (pid {os.getpid()})".encode(), 0)
        self._fd = fd
        self._depth = 1
        return True

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        self._thread_lock.release()

    @contextmanager
    def held(self, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        self.acquire(True, on_wait)
        try:
            yield
        finally:
            self.release()


def _is_live(chunk_id: str, live: set[tuple[str, str]]) -> bool:
    """Whether a chunk in Chroma belongs to a text version the log accounts for (an id in no
    format this code writes belongs to none)."""
    try:
        return ChunkId.parse(chunk_id).text_version in live
    except ValueError:
        return False


@dataclass(frozen=True)
class Loaded:
    """A loaded index: the catalogue and keyword index always exist here."""

    store: ChromaStore
    catalog: Catalog
    keyword: KeywordIndex
    embedder: Embedder
    chunker: Chunker
    stale_segments: int = 0


class Index:
    def __init__(
        self, store: ChromaStore, embedder: Embedder, chunker: Chunker, home: Path, snapshot_every: int = SNAPSHOT_EVERY
    ) -> None:
        self.store = store
        self.snapshot_every = snapshot_every
        self.restored: dict[str, Any] | None = None  # what the last sync took from a snapshot
        self.embedder = embedder
        self.chunker = chunker
        self.home = home
        self.cache_root = home / "cache"
        self.cache_prefix = f"{store.fingerprint}-{short_hash(store.location, 8)}"
        self.lock = WriteLock(home / "write.lock")
        self._catalog: Catalog | None = None
        self._keyword: KeywordIndex | None = None
        self._folder: Path | None = None
        self._open_lock = threading.Lock()
        self._request = threading.local()  # the view of the request this thread serves (`reading`)

    @property
    def folder(self) -> Path:
        """This machine's cache of the index, named by the log collection it was derived from:
        after a reset (anywhere) the log has a new id, so every machine derives a new cache
        instead of serving papers that no longer exist, and no process deletes a folder that
        another one still reads."""
        log_id = self.store.log_id
        if not log_id:
            with contextlib.suppress(StoreError):  # no index yet: nothing derived from a log
                log_id = self.store.open().log_id
        folder = self.cache_root / (f"{self.cache_prefix}-{log_id[:8]}" if log_id else self.cache_prefix)
        if log_id and not folder.is_dir() and self.read_only:
            # A read-only data folder mounted elsewhere than where it was written: its cache is
            # named by the store's old location, but the log's id still identifies it.
            found = sorted(self.cache_root.glob(f"{self.fingerprint}-*-{log_id[:8]}"))
            return found[0] if found else folder
        return folder

    @property
    def fingerprint(self) -> str:
        return self.store.fingerprint

    @property
    def read_only(self) -> bool:
        """Whether the data folder is one this process may only read (a shared index on a
        read-only mount): then the cache is served as it is, never synced, locked or rebuilt."""
        return self.home.is_dir() and not writable(self.home)

    def exists(self) -> bool:
        return self.store.exists()

    def require(self) -> None:
        if not self.exists():
            raise IndexMissingError(
                f"no index for {self.fingerprint} at {self.store.location}: run `rag ingest PATH` first "
                "(or `rag ingest` for the bundled sample)"
            )

    # -- the derived parts ------------------------------------------------------------------
    def _derived(self) -> tuple[Catalog, KeywordIndex]:
        with self._open_lock:
            if self._folder != self.folder:
                self._catalog = self._keyword = None
                self._folder = self.folder
            if (self._catalog is None or self._keyword is None) and self.read_only:
                self._catalog, self._keyword = self._read_only_cache()
            if self._catalog is None or self._keyword is None:
                try:
                    self.folder.mkdir(parents=True, exist_ok=True)
                    self._catalog = Catalog(self.folder / "catalog.sqlite")
                    self._catalog.probe()
                    self._keyword = KeywordIndex(self.folder / "keyword")
                except (OSError, sqlite3.DatabaseError, StoreError, ValueError, SchemaChanged) as err:
                    self._catalog = self._keyword = None
                    self._discard_cache(err)
                    self._catalog = Catalog(self.folder / "catalog.sqlite")
                    self._keyword = KeywordIndex(self.folder / "keyword")
            return self._catalog, self._keyword

    def _read_only_cache(self) -> tuple[Catalog, KeywordIndex]:
        """The cache of a read-only data folder, opened without writing a byte; what cannot be
        read there cannot be rebuilt either, so it is an error that says where to fix it."""
        where = f"{self.home} (RAG_HOME) is read-only"
        if not (self.folder / "catalog.sqlite").is_file():
            raise StoreError(
                f"{where} and holds no cache of this index ({self.folder}): run `rag status` once where it is "
                "writable, or point RAG_HOME at a writable copy"
            )
        try:
            catalog = Catalog(self.folder / "catalog.sqlite", read_only=True)
            catalog.probe()
            return catalog, KeywordIndex(self.folder / "keyword")
        except (OSError, sqlite3.DatabaseError, ValueError, SchemaChanged) as err:
            raise StoreError(
                f"cannot read the cache {self.folder} ({err}), and {where}, so it cannot be rebuilt here: run "
                "`rag status` once where it is writable"
            ) from err

    def forget(self) -> None:
        """Drop this process's handles on the cache (after a reset here)."""
        with self._open_lock:
            self._catalog = self._keyword = None
            self._folder = None

    def remove_old_caches(self, everything: bool = False) -> None:
        """Delete this index's cache folders derived from logs that no longer exist (a reset
        here or elsewhere); with `everything`, all of them (after a reset here). Writers call it
        with the write lock held, readers never: a UI thread may still be reading the folder a
        reset elsewhere made stale, and finds the new one on its next search. Without a known
        current log nothing is deleted (the handles may just have been dropped by a thread)."""
        if not self.cache_root.is_dir():
            return
        current = None
        if not everything:
            if not self.store.log_id:
                return
            current = self.folder
        for path in self.cache_root.glob(self.cache_prefix + "*"):
            if path != current and path.is_dir():
                shutil.rmtree(path, ignore_errors=True)

    def _discard_cache(self, err: Exception) -> None:
        """The local cache is damaged (a corrupt file, a folder replaced by a file) or was made by
        another version of the code: it is only derived from Chroma, so remove it and rebuild."""
        why = "was made by another version" if isinstance(err, SchemaChanged) else "is damaged"
        log.warning("local cache %s %s (%s): rebuilding it from Chroma", self.folder, why, err)
        for path in (self.folder, self.folder.parent):
            if path.exists() and not path.is_dir():
                path.unlink()
        shutil.rmtree(self.folder, ignore_errors=True)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as again:
            raise StoreError(
                f"cannot use the cache folder {self.folder} ({again.strerror}): delete it and re-run"
            ) from again

    @property
    def catalog(self) -> Catalog:
        return self._derived()[0]

    @property
    def keyword(self) -> KeywordIndex:
        return self._derived()[1]

    # -- loading and syncing ----------------------------------------------------------------
    @contextmanager
    def reading(self) -> Iterator[Loaded]:
        """One request (a search, an answer, a chat turn): the index is brought up to date once, and
        every `load` this thread makes inside returns that same view. Without it a `rag ask` listed
        the log's segments in Chroma three times (the pipeline, the retriever and the relevance
        model each loaded the index)."""
        current: Loaded | None = getattr(self._request, "loaded", None)
        if current is not None:
            yield current
            return
        self._request.loaded = self.load()
        try:
            yield self._request.loaded
        finally:
            self._request.loaded = None

    def load(self) -> Loaded:
        """The index, brought up to date with the log when no other process is writing here (the
        request's view inside `reading`)."""
        current: Loaded | None = getattr(self._request, "loaded", None)
        if current is not None:
            return current
        self.require()
        self.store.open()
        stale = self.sync(wait=False)
        catalog, keyword = self._derived()
        try:
            keyword.reload()
        except ValueError as err:
            if self.read_only:
                raise StoreError(
                    f"{err}, and {self.home} (RAG_HOME) is read-only, so it cannot be rebuilt here"
                ) from err
            if self.lock.acquire(wait=False):
                try:
                    self._rebuild_keyword(err)
                finally:
                    self.lock.release()
        return Loaded(self.store, catalog, keyword, self.embedder, self.chunker, stale)

    def pending_segments(self) -> list[str]:
        applied = self.catalog.applied_segments()
        return [s for s in self.store.segment_ids() if s not in applied]

    def sync(self, wait: bool = True, on_wait: Callable[[str], None] | None = None, from_snapshot: bool = True) -> int:
        """Apply the log segments this machine has not seen, then bring the keyword index up to
        date; an empty cache starts from the newest snapshot, if there is one (unless not
        `from_snapshot`: a rebuild derives everything from the log). Even a short log pays: the
        7,064 papers of five real segments restore in 1.0 s and derive in 12.7 s. Returns how many segments
        remain unapplied (another process holds the lock)."""
        pending = self.pending_segments()
        if self.read_only:
            return len(pending)  # served as it is: applying the log would write
        catalog = self.catalog
        behind = bool(catalog.unindexed(limit=1) or catalog.gone())
        if not pending and not behind:
            return 0
        if not self.lock.acquire(wait, on_wait):
            return len(pending)
        try:
            pending = self.pending_segments()
            fresh = from_snapshot and catalog.generation == 0
            if pending and fresh and self._restore_snapshot():
                pending = self.pending_segments()
            started = time.perf_counter()
            if len(pending) >= PARALLEL_KEYWORD_SEGMENTS:
                self._apply_with_keyword_worker(pending)
            else:
                for segment in self.store.read_segments(pending):
                    copies, vectors = segment.versioned()
                    catalog.apply(segment.id, copies, vectors, self.chunker.version_of, hints=segment.hint_map())
            if pending:
                log.info("applied %d log segments in %.1f s", len(pending), time.perf_counter() - started)
            self.catch_up_keyword()
        finally:
            self.lock.release()
        return 0

    def _restore_snapshot(self) -> bool:
        """Start an empty cache from the newest snapshot in Chroma, if there is one; on any failure
        say why and derive from the log instead. Call with the write lock held."""
        catalog, keyword = self._derived()
        try:
            self.restored = snapshot.restore(self.store, catalog, keyword, self.folder / "snapshot.tmp")
        except (snapshot.SnapshotError, SchemaChanged, StoreError, OSError, sqlite3.Error, ValueError) as err:
            log.warning("could not start from the snapshot in Chroma (%s): deriving the cache from the log", err)
            return False
        if self.restored is not None:
            log.info("started from snapshot %s", self.restored)
        return self.restored is not None

    def publish_snapshot(self) -> dict[str, Any]:
        """Publish this machine's cache for new machines to start from (`rag snapshot`). Call with
        the write lock held, after a sync."""
        self.catch_up_keyword()
        catalog, keyword = self._derived()
        return snapshot.publish(self.store, catalog, keyword, self.folder / "snapshot.tmp")

    def publish_snapshot_if_due(self) -> dict[str, Any] | None:
        """Publish when the log holds SNAPSHOT_EVERY segments the newest snapshot lacks (ingest
        calls it at its end). Call with the write lock held."""
        if self.snapshot_every <= 0:
            return None
        last = snapshot.newest(self.store)
        if len(self.catalog.applied_segments()) - (last.segments if last else 0) < self.snapshot_every:
            return None
        return self.publish_snapshot()

    def _apply_with_keyword_worker(self, pending: list[str]) -> None:
        """Apply a long log (a second machine's first sync) with the keyword index built beside
        it: after each segment, the papers it added go to a SegmentWorker process, which
        tokenises them while this process applies the next segment. Papers changed again by a
        later segment are left unmarked, so `catch_up_keyword` indexes their final text (and
        deletes the worker's document of the earlier one). Call with the write lock held."""
        catalog, keyword = self._derived()
        worker = SegmentWorker(keyword.folder)
        sent: set[int] = set()
        stale: set[int] = set()
        try:
            with catalog.bulk_load() as flush:
                self._apply_segments(pending, worker, sent, stale, flush)
            written = worker.finish()
        finally:
            worker.close()
        gone = catalog.gone()
        keyword.update(np.asarray(sorted(sent) + gone, dtype=np.int64), [], written)
        catalog.mark_indexed(sorted(sent - stale), gone)

    def _apply_segments(
        self, pending: list[str], worker: SegmentWorker, sent: set[int], stale: set[int], flush: Callable[[], None]
    ) -> None:
        """Apply each segment, sending the papers it adds to the keyword worker; note in `stale`
        the papers sent earlier that a later segment changed."""
        catalog = self.catalog
        for segment in self.store.read_segments(pending):
            copies, vectors = segment.versioned()
            added: list[tuple[int, Paper, int]] = []
            changed = catalog.apply(
                segment.id, copies, vectors, self.chunker.version_of, hints=segment.hint_map(), added=added
            )
            flush()
            stale |= sent.intersection(catalog.pnos(sorted(changed - {p.id for _, p, _ in added})).values())
            docs = [
                (pno, n, keyword_text(paper, t))
                for pno, paper, n_chunks in added
                for n, t in enumerate(self.chunker.texts(paper, n_chunks))
            ]
            sent.update(pno for pno, _, _ in added)
            if docs:
                worker.add(docs)

    def catch_up_keyword(self) -> int:
        """Index what the catalogue marks as not yet keyword-indexed and drop removed papers, in
        segments of up to FLUSH_DOCS documents. Call with the write lock held."""
        catalog, keyword = self._derived()
        gone = catalog.gone()
        indexed = 0
        last = 0
        while True:
            builder = SegmentBuilder()
            done: list[int] = []
            while len(builder) < FLUSH_DOCS:
                batch = catalog.unindexed(after=last, limit=5000)
                if not batch:
                    break
                for pno, paper, n_chunks in batch:
                    for n, text in enumerate(self.chunker.texts(paper, n_chunks)):
                        builder.add(pno, n, keyword_text(paper, text))
                    done.append(pno)
                last = batch[-1][0]
            if not done and not gone:
                return indexed
            keyword.update(np.asarray(done + gone, dtype=np.int64), [builder])
            catalog.mark_indexed(done, gone)
            indexed += len(done)
            gone = []
            if len(builder) < FLUSH_DOCS:
                return indexed

    def _rebuild_keyword(self, err: Exception) -> None:
        log.warning("keyword index damaged (%s): rebuilding it from the catalogue", err)
        self.keyword.clear()
        self.catalog.reset_indexed()
        self.catch_up_keyword()

    def compact(self, rebuild: bool = False, grace_s: float = ORPHAN_GRACE_S) -> dict[str, int]:
        """Merge the keyword segments; delete orphan chunks (vectors no log entry names: what a
        killed writer upserted before its segment); with `rebuild`, first derive this machine's
        cache anew from the log (a cache that disagrees with Chroma).

        Orphans are proven garbage only when no writer can be about to commit them: in a local
        folder the write lock is held here, so any orphan is garbage; on a shared server a writer
        elsewhere may be between its upsert and its segment, so only orphans older than `grace_s`
        (their upsert time is in their metadata) are deleted."""
        with self.lock.held():
            if rebuild:
                folder = self.folder
                self.forget()
                shutil.rmtree(folder, ignore_errors=True)  # another process's open files stay readable
            self.sync(from_snapshot=not rebuild)
            self.remove_old_caches()
            self.keyword.compact()
            live = self.catalog.live_vector_set()
            shared = "http" in self.store.location
            cutoff = time.time() - grace_s if shared else float("inf")
            orphans = [
                cid
                for cid, meta in self.store.chunk_metadata()
                if not _is_live(cid, live) and int((meta or {}).get("ts", 0)) < cutoff
            ]
            self.store.delete_chunks(orphans)
            if orphans:
                self.store.persist_index()  # every reader searches the same graph (see there)
        return {"orphan_chunks_deleted": len(orphans), "keyword_segments": len(self.keyword.reload().segments)}

    def status(self) -> dict[str, object]:
        """What Chroma holds (chunks, log segments) beside what this machine's cache shows."""
        self.require()
        self.store.open()
        stale = self.sync(wait=False)
        counts = self.catalog.counts()
        chunks = self.store.count_chunks()
        segments = len(self.store.segment_ids())
        last = snapshot.newest(self.store)
        if stale:
            cache = f"stale: {stale} log segments not applied yet (another process is writing)"
        elif chunks != counts["expected_chunks"]:
            cache = (
                f"disagrees with Chroma: the log names {counts['expected_chunks']} chunks, Chroma holds {chunks}. "
                "A writer may be at work; if none is, `rag compact --rebuild` derives the cache again from the log "
                "and deletes orphan chunks, and `rag ingest` re-embeds papers whose vectors are missing"
            )
        else:
            cache = "in sync"
        return {
            "papers": counts["papers"],
            "with_abstract": counts["with_abstract"],
            "title_only": counts["title_only"],
            "chunks_in_chroma": chunks,
            "chunks_expected": counts["expected_chunks"],
            "papers_missing_vectors": counts["missing_vectors"],
            "log_segments": segments,
            "cache": cache,
            "keyword_segments": len(self.keyword.reload().segments),
            "snapshot": (
                "none: new machines derive their cache from the whole log"
                if last is None
                else f"{last.id} ({last.size / 2**20:.0f} MiB): new machines start from it, "
                f"{max(segments - last.segments, 0)} log segments newer"
            ),
            "embedding_model": self.embedder.name,
            "fingerprint": self.fingerprint,
            "collection": self.store.chunks_name,
            "log_collection": self.store.log_name,
            "store": self.store.location,
            "data_folder": str(self.home),
            "cache_folder": str(self.folder),
        }
