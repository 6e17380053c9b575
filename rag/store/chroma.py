"""The only module that imports chromadb (a local folder or a `chroma run` server).

Two collections per index, named by the same fingerprint (embedding model + chunking):
- `chunks_<fp>`: one record per chunk: its vector and `{"paper_id", "n"}`. No document: the text
  lives once, in the log, and each machine's catalogue and keyword index are built from there.
  A paper without an abstract has one chunk, the vector of its title.
- `log_<fp>`: the change log (`rag.store.log`), one record per write batch.
- `snap_<fp>`: snapshots of a machine's derived cache (`rag.store.snapshot`), so a new machine need not
  derive a million papers from the log: file parts, then one manifest record per snapshot.

Every Chroma failure (a server that went away mid-ingest, a refused request) becomes one
StoreError naming the store, and the work already written stays valid: a re-run completes it.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np

from rag.errors import StoreError
from rag.store.log import Segment

log = logging.getLogger(__name__)
T = TypeVar("T")
PAGE = 16  # log segments per read (each up to about a megabyte)
# For the collections of few, large records (log segments, snapshot parts). Chroma keeps a write
# in its queue until `sync_threshold` records (1,000 by default) have come, and each write costs
# in proportion to what waits there: 250 writes of 1 MB took 130 s (the last ones 0.95 s each)
# with the default and 16.7 s flushed every 8; listing their ids 0.97 s against 0.02 s.
FEW_LARGE_RECORDS = {"hnsw": {"batch_size": 4, "sync_threshold": 8}}


class StoreSpec(NamedTuple):
    """What another process needs to open the same store (the ingest writer process)."""

    fingerprint: str
    path: Path | None
    host: str | None
    port: int


def _apply_log(spec: StoreSpec) -> None:
    """In a fresh process (`ChromaStore.persist_index`): open the store and read the chunks once,
    so Chroma applies its log to the graph with the collection's current threshold."""
    store = ChromaStore(*spec).open()
    chunks = store._chunks
    got = chunks.get(limit=1, include=["embeddings"])
    if got["ids"]:
        chunks.query(query_embeddings=[list(got["embeddings"][0])], n_results=1, include=[])


def writable(folder: Path) -> bool:
    """Whether this process may write in `folder` (false on a read-only mount, even for root)."""
    return os.access(folder, os.W_OK)


CHROMA_DB = "chroma.sqlite3"


def read_only_view(folder: Path) -> Path:
    """A folder a local Chroma can open for reading the index in `folder`, which this process may
    not write (a shared index on a read-only mount). Chroma writes to its SQLite file whenever it
    opens a folder ("attempt to write a readonly database", even with migrations off), so the view
    holds a private copy of that file, taken consistently through SQLite's backup API, and links to
    the vector segment folders, which readers only read. Kept in the user's cache folder and
    reused until the index's file changes (its size and time name the view); older views of the
    same index are removed."""
    from platformdirs import user_cache_path

    source = folder / CHROMA_DB
    try:
        stat = source.stat()
    except OSError as err:
        raise StoreError(f"no Chroma index in {folder} ({err.strerror}), and the folder is read-only") from err
    name = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:16]
    root = user_cache_path("paper-rag") / "read-only"
    view = root / f"{name}-{stat.st_size}-{stat.st_mtime_ns}"
    if (view / CHROMA_DB).exists():
        return view
    root.mkdir(parents=True, exist_ok=True)
    work = root / f"{view.name}.{os.getpid()}.tmp"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(mode=0o700)
    _copy_database(source, work / CHROMA_DB)
    for child in folder.iterdir():
        if child.is_dir():
            (work / child.name).symlink_to(child.resolve(), target_is_directory=True)
    try:
        work.rename(view)
    except OSError:  # another process made the same view meanwhile: use that one
        shutil.rmtree(work, ignore_errors=True)
    for old in root.glob(f"{name}-*"):
        if old != view and not old.name.endswith(".tmp"):
            shutil.rmtree(old, ignore_errors=True)
    return view


def _copy_database(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite file this process may only read: opened read-only (taking a
    shared lock, so a writer elsewhere cannot change it mid-copy), else, where even that is refused
    (no lock possible on the medium), as immutable."""
    error: sqlite3.Error | None = None
    for flags in ("mode=ro", "immutable=1"):
        try:
            src = sqlite3.connect(f"{source.as_uri()}?{flags}", uri=True)
            try:
                dst = sqlite3.connect(target)
                try:
                    src.backup(dst)
                    return
                finally:
                    dst.close()
            finally:
                src.close()
        except sqlite3.Error as err:
            error = err
            target.unlink(missing_ok=True)
    raise StoreError(f"cannot read the Chroma index {source} ({error})")


class _Handles(NamedTuple):
    """The two open collections, swapped as one value: a thread that read them keeps a pair
    that belongs together while another thread drops or reopens them after a reset."""

    chunks: Any
    log: Any


@dataclass(frozen=True)
class DenseMatch:
    chunk_id: str
    similarity: float


class ChromaStore:
    def __init__(self, fingerprint: str, path: Path | None = None, host: str | None = None, port: int = 8000) -> None:
        self.fingerprint = fingerprint
        self.spec = StoreSpec(fingerprint, path, host, port)
        self.location = f"http://{host}:{port}" if host else str(path)
        self.chunks_name = f"chunks_{fingerprint}"
        self.log_name = f"log_{fingerprint}"
        self.snapshots_name = f"snap_{fingerprint}"
        self._lock = threading.Lock()
        self._handles: _Handles | None = None
        self._client: Any = self._guard(lambda: self._connect(path, host, port), "connect")
        self.batch_size = min(int(self._client.get_max_batch_size()), 5000)

    @staticmethod
    def _connect(path: Path | None, host: str | None, port: int) -> Any:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        if host:
            client = chromadb.HttpClient(host=host, port=port, settings=settings)
            client.heartbeat()
            return client
        assert path is not None
        if path.is_dir() and not writable(path):
            path = read_only_view(path)
        else:
            path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=settings)

    def _guard(self, call: Callable[[], T], what: str) -> T:
        """Run a Chroma call; any failure becomes one StoreError naming the store."""
        try:
            return call()
        except StoreError:
            raise
        except Exception as err:  # chromadb and httpx raise many unrelated types for one failure
            kind = type(err).__name__
            if kind == "NotFoundError":  # deleted by a reset elsewhere: reopen on the next call
                self._handles = None
            text = str(err).strip().splitlines()[0][:200] if str(err).strip() else kind
            if "http" in self.location:
                raise StoreError(
                    f"the Chroma server at {self.location} failed during {what} ({kind}: {text}): "
                    "check that it runs, then re-run; what was written is kept"
                ) from err
            raise StoreError(f"the Chroma store at {self.location} failed during {what} ({kind}: {text})") from err

    # -- collections ---------------------------------------------------------------------------
    def exists(self) -> bool:
        """Whether the index's collections exist. Also notices a reset by another process or
        machine (the log collection was deleted, and perhaps created anew under a new id): the
        open handles are dropped, so the next call reaches the collections that exist now. Dropping
        is one assignment: a call already under way on another thread keeps the pair it read."""
        found = self._guard(lambda: list(self._client.list_collections()), "list collections")
        ids = {getattr(c, "name", c): str(getattr(c, "id", "")) for c in found}
        handles = self._handles
        if handles is not None and ids.get(self.log_name) != str(handles.log.id):
            self._handles = None
        return self.log_name in ids

    @property
    def log_id(self) -> str:
        """The id of the open log collection: a new one after every reset, so a machine's cache
        derived from the old log is never mistaken for one of the new."""
        handles = self._handles
        return str(handles.log.id) if handles is not None else ""

    def open(self, create: bool = False) -> ChromaStore:
        """Open (or create) both collections once; safe to call from many threads."""
        self._opened(create)
        return self

    def _opened(self, create: bool = False) -> _Handles:
        """The open collections, opened now if they are not (first use, or dropped after a reset)."""
        handles = self._handles
        if handles is not None:
            return handles
        with self._lock:
            if self._handles is None:
                self._handles = self._guard(lambda: self._open(create), "open collections")
            return self._handles

    @property
    def _chunks(self) -> Any:
        return self._opened().chunks

    @property
    def _log(self) -> Any:
        return self._opened().log

    def _open(self, create: bool) -> _Handles:
        if not create:
            chunks = self._client.get_collection(self.chunks_name, embedding_function=None)
            return _Handles(chunks, self._client.get_collection(self.log_name, embedding_function=None))
        for attempt in range(3):  # two machines creating at once: the loser retries and opens
            try:
                chunks = self._client.get_or_create_collection(
                    self.chunks_name, metadata={"hnsw:space": "cosine"}, embedding_function=None
                )
                return _Handles(chunks, self._few_large_records(self.log_name))
            except Exception:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _few_large_records(self, name: str) -> Any:
        """Open or create a collection of few, large records, configured for them (FEW_LARGE_RECORDS).
        One created before that configuration gets it now; a running `chroma run` was seen to apply
        it only to collections it creates, so an existing log keeps its pace until the server restarts."""
        collection = self._client.get_or_create_collection(
            name, embedding_function=None, configuration=FEW_LARGE_RECORDS
        )
        wanted = FEW_LARGE_RECORDS["hnsw"]["sync_threshold"]
        if (collection.configuration_json.get("hnsw") or {}).get("sync_threshold") != wanted:
            try:
                collection.modify(configuration=FEW_LARGE_RECORDS)
            except Exception as err:  # only a matter of speed: never a reason to fail
                log.warning("could not configure %s for large records (%s)", name, err)
        return collection

    def reset(self) -> None:
        """Delete the collections (everything this index holds in Chroma)."""
        names = self._guard(
            lambda: {getattr(c, "name", c) for c in self._client.list_collections()}, "list collections"
        )
        for name in (self.log_name, self.chunks_name, self.snapshots_name):
            if name in names:
                self._guard(lambda: self._client.delete_collection(name), f"delete {name}")
        self._handles = None

    # -- chunks --------------------------------------------------------------------------------
    def upsert_chunks(self, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(ids), self.batch_size):
            end = start + self.batch_size
            self._guard(
                lambda: self._chunks.upsert(
                    ids=list(ids[start:end]), embeddings=vectors[start:end], metadatas=list(metadatas[start:end])
                ),
                "upsert chunks",
            )

    def delete_chunks(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self.batch_size):
            part = list(ids[start : start + self.batch_size])
            self._guard(lambda: self._chunks.delete(ids=part), "delete chunks")

    def existing_chunks(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), self.batch_size):
            part = list(ids[start : start + self.batch_size])
            found.update(self._guard(lambda: self._chunks.get(ids=part, include=[])["ids"], "read chunk ids"))
        return found

    def chunk_ids(self) -> list[str]:
        """Every chunk id in Chroma (for checks and tests; pages through the collection)."""
        ids: list[str] = []
        while True:
            got = self._guard(lambda: self._chunks.get(include=[], limit=10000, offset=len(ids)), "read chunk ids")
            ids += got["ids"]
            if len(got["ids"]) < 10000:
                return ids

    def chunk_metadata(self) -> Iterator[tuple[str, dict[str, Any] | None]]:
        """Every chunk id with its metadata, a page at a time (for compaction)."""
        offset = 0
        while True:
            got = self._guard(
                lambda: self._chunks.get(include=["metadatas"], limit=10000, offset=offset), "read chunk ids"
            )
            yield from zip(got["ids"], got["metadatas"] or [None] * len(got["ids"]))
            if len(got["ids"]) < 10000:
                return
            offset += len(got["ids"])

    def persist_index(self) -> None:
        """Have a local Chroma write the chunks' whole HNSW graph to disk (writers call it when they
        finish), so that every process searches the same graph.

        Why: Chroma writes its graph only once `sync_threshold` (1,000) records have come since the
        last write. A process that opens the folder applies the records after that from Chroma's
        write-ahead log, inserting them in parallel in an order of its own: each process searched
        a different graph, and the approximate neighbours changed from run to run (5 different
        hybrid top-10s in 20 runs over 600 papers; chroma-core/chroma#3638, #7463: there is no
        call to persist). A segment writer keeps the threshold it was created with for the life of
        its process, so this one cannot be told to persist: the threshold is set to 1, a fresh
        process reads the collection (applying the log, and so writing the graph with it), and the
        threshold is set back. Nothing is done when the log is already applied, nor against a
        server, which holds one graph in memory for all its clients."""
        if self.spec.host or not self.unapplied_records():
            return
        chunks = self._chunks
        hnsw = chunks.configuration_json.get("hnsw") or {}
        threshold = int(hnsw.get("sync_threshold") or 1000)
        threshold = threshold if threshold > 1 else 1000  # a run killed right here left it at 1
        self._guard(lambda: chunks.modify(configuration={"hnsw": {"sync_threshold": 1}}), "persist the index")
        try:
            context = multiprocessing.get_context("spawn")  # chromadb's threads do not survive a fork
            proc = context.Process(target=_apply_log, args=(self.spec,), name="rag-persist-index")
            proc.start()
            proc.join()
        finally:
            self._guard(
                lambda: chunks.modify(configuration={"hnsw": {"sync_threshold": threshold}}), "persist the index"
            )
        left = self.unapplied_records()
        if left:
            log.warning("Chroma did not write %d records of its vector log to its graph: searches may vary", left)

    def unapplied_records(self) -> int | None:
        """How many records of the chunks collection's write-ahead log its vector graph on disk
        lacks (None where that cannot be told: a server, or a Chroma whose files are laid out
        otherwise). Read from Chroma's own SQLite file, read-only."""
        if self.spec.path is None:
            return None
        collection = str(self._chunks.id)
        try:
            db = sqlite3.connect(f"{(self.spec.path / CHROMA_DB).as_uri()}?mode=ro", uri=True, timeout=30)
            try:
                row = db.execute(
                    "SELECT count(*) FROM embeddings_queue WHERE topic LIKE ? AND seq_id > coalesce(("
                    "SELECT m.seq_id FROM max_seq_id m JOIN segments s ON s.id = m.segment_id "
                    "WHERE s.collection = ? AND s.scope = 'VECTOR'), 0)",
                    (f"%/{collection}", collection),
                ).fetchone()
            finally:
                db.close()
        except sqlite3.Error:
            return None
        return int(row[0])

    def count_chunks(self) -> int:
        return int(self._guard(lambda: self._chunks.count(), "count chunks"))

    def query(self, vector: np.ndarray, n: int, paper_ids: Sequence[str] | None = None) -> list[DenseMatch]:
        """Nearest chunks by cosine similarity, best first; restricted to `paper_ids` if given."""
        where: dict[str, Any] | None = None
        if paper_ids is not None:
            if not paper_ids:
                return []
            where = {"paper_id": {"$in": list(paper_ids)}} if len(paper_ids) > 1 else {"paper_id": paper_ids[0]}
        got = self._guard(
            lambda: self._chunks.query(
                query_embeddings=[vector.tolist()], n_results=n, where=where, include=["distances"]
            ),
            "search",
        )
        # Equal distances in id order: Chroma returns ties in the order its graph visits them.
        ranked = sorted(zip(got["distances"][0], got["ids"][0]))
        return [DenseMatch(cid, 1.0 - float(d)) for d, cid in ranked]

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), self.batch_size):
            part = list(ids[start : start + self.batch_size])
            got = self._guard(lambda: self._chunks.get(ids=part, include=["embeddings"]), "read vectors")
            out.update((cid, np.asarray(vec, dtype=np.float32)) for cid, vec in zip(got["ids"], got["embeddings"]))
        return out

    # -- the change log ------------------------------------------------------------------------
    def write_segment(self, segment: Segment) -> None:
        meta = {"ts": segment.ts, "writer": segment.writer, "entries": len(segment), "blob": segment.encode()}
        self._guard(lambda: self._log.upsert(ids=[segment.id], embeddings=[[0.0]], metadatas=[meta]), "write the log")

    def segment_ids(self) -> list[str]:
        ids: list[str] = []
        offset = 0
        while True:
            got = self._guard(lambda: self._log.get(include=[], limit=10000, offset=offset), "read the log")
            ids += got["ids"]
            if len(got["ids"]) < 10000:
                return sorted(ids)
            offset += len(got["ids"])

    def read_segments(self, ids: Sequence[str]) -> Iterator[Segment]:
        """Segments by id, in id (time) order, a page at a time."""
        ordered = sorted(ids)
        for start in range(0, len(ordered), PAGE):
            part = ordered[start : start + PAGE]
            got = self._guard(lambda: self._log.get(ids=part, include=["metadatas"]), "read the log")
            by_id = dict(zip(got["ids"], got["metadatas"]))
            for sid in part:
                meta = by_id.get(sid)
                if meta is not None:
                    yield Segment.decode(sid, int(meta["ts"]), str(meta["writer"]), str(meta["blob"]))

    def delete_segments(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self.batch_size):
            part = list(ids[start : start + self.batch_size])
            self._guard(lambda: self._log.delete(ids=part), "delete log segments")

    # -- snapshots of a derived cache ------------------------------------------------------------
    def _snapshots_to_write(self) -> Any:
        return self._guard(lambda: self._few_large_records(self.snapshots_name), "open the snapshots")

    def _snapshots(self) -> Any | None:
        """The snapshots collection; None when no snapshot was ever written (readers never create it)."""
        found = self._guard(lambda: list(self._client.list_collections()), "list collections")
        if self.snapshots_name not in {getattr(c, "name", c) for c in found}:
            return None
        return self._guard(
            lambda: self._client.get_collection(self.snapshots_name, embedding_function=None), "open the snapshots"
        )

    def write_snapshot_parts(self, snapshot: str, parts: Sequence[tuple[str, str]]) -> None:
        """Parts (id, blob) of a snapshot being written; unread until its manifest is written."""
        meta = [{"kind": "part", "snapshot": snapshot, "blob": blob} for _, blob in parts]
        ids = [pid for pid, _ in parts]
        collection = self._snapshots_to_write()
        self._guard(
            lambda: collection.upsert(ids=ids, embeddings=[[0.0]] * len(ids), metadatas=meta), "write a snapshot"
        )

    def write_snapshot_manifest(self, snapshot: str, manifest: str) -> None:
        collection = self._snapshots_to_write()
        meta = {"kind": "manifest", "snapshot": snapshot, "manifest": manifest}
        self._guard(lambda: collection.upsert(ids=[snapshot], embeddings=[[0.0]], metadatas=[meta]), "write a snapshot")

    def snapshot_manifests(self) -> list[tuple[str, str]]:
        """(snapshot id, manifest text) of every complete snapshot, oldest first."""
        collection = self._snapshots()
        if collection is None:
            return []
        got = self._guard(
            lambda: collection.get(where={"kind": "manifest"}, include=["metadatas"]), "read the snapshots"
        )
        return sorted((sid, str(meta["manifest"])) for sid, meta in zip(got["ids"], got["metadatas"]))

    def read_snapshot_parts(self, ids: Sequence[str]) -> list[str | None]:
        """The blobs of these parts, in this order (None for a part that is gone)."""
        collection = self._snapshots()
        if collection is None:
            return [None] * len(ids)
        got = self._guard(lambda: collection.get(ids=list(ids), include=["metadatas"]), "read a snapshot")
        by_id = {pid: str(meta["blob"]) for pid, meta in zip(got["ids"], got["metadatas"])}
        return [by_id.get(pid) for pid in ids]

    def snapshot_record_ids(self) -> list[str]:
        """Every record id, parts and manifests (the ids name their snapshot and its time)."""
        collection = self._snapshots()
        if collection is None:
            return []
        ids: list[str] = []
        while True:
            got = self._guard(lambda: collection.get(include=[], limit=10000, offset=len(ids)), "read the snapshots")
            ids += got["ids"]
            if len(got["ids"]) < 10000:
                return ids

    def delete_snapshot_records(self, ids: Sequence[str]) -> None:
        collection = self._snapshots()
        if collection is None:
            return
        for start in range(0, len(ids), self.batch_size):
            part = list(ids[start : start + self.batch_size])
            self._guard(lambda: collection.delete(ids=part), "delete a snapshot")
