"""Ingest's writes to Chroma, done in this process or in a writer process beside it.

Why a process and not a thread: chromadb's upsert holds the GIL for its whole run (measured here:
a Python loop on another thread made no progress during a 5,000-record upsert), so a thread
cannot overlap writing with ingest's own work. A second process can, on the second core: while
it upserts batch i, ingest reads, merges, chunks and embeds batch i+1. Chroma then sets the pace,
not the sum of both.

Each batch's writes keep the order that makes ingest safe (`rag.store.ingest`): chunk vectors first,
then the log segment that commits them, then the deletion of the chunks that segment tombstones.
The writer acknowledges a batch only when all three are done; ingest commits its local catalogue
for that batch only after the acknowledgement, so no reader ever sees a paper whose vectors and
log entry are not in Chroma yet, and a failure leaves nothing behind that a re-run cannot redo.
"""

from __future__ import annotations

import logging
import multiprocessing
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from rag.errors import StoreError
from rag.store.chroma import ChromaStore, StoreSpec
from rag.store.log import Segment

log = logging.getLogger(__name__)


@dataclass
class Writes:
    """One batch's writes, in the order they are made."""

    ids: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None
    metadatas: list[dict[str, Any]] = field(default_factory=list)
    segment: Segment | None = None
    garbage: list[str] = field(default_factory=list)


def apply_writes(store: ChromaStore, writes: Writes) -> None:
    if writes.ids and writes.vectors is not None:
        store.upsert_chunks(writes.ids, writes.vectors, writes.metadatas)
    if writes.segment is not None:
        store.write_segment(writes.segment)
    if writes.garbage:
        store.delete_chunks(writes.garbage)


class InlineWriter:
    """Writes at once, in this process (small ingests, removals: not worth a second process)."""

    def __init__(self, store: ChromaStore) -> None:
        self.store = store

    def submit(self, writes: Writes) -> None:
        apply_writes(self.store, writes)

    def wait(self) -> None:
        """Nothing is ever pending here."""

    def close(self) -> None:
        """Nothing to stop."""


def _die_with_parent() -> None:
    """A killed ingest must not leave its writer writing after the write lock is released."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the writer ends when the pipe closes, after the batch in hand


def _serve(conn: Connection, spec: StoreSpec) -> None:
    """The writer process: apply each batch it is sent, answer None or the error's message."""
    _die_with_parent()
    try:
        store = ChromaStore(*spec).open()
    except StoreError as err:
        conn.send(str(err))
        return
    conn.send(None)
    while True:
        try:
            writes = conn.recv()
        except EOFError:
            return
        if writes is None:
            return
        try:
            apply_writes(store, writes)
            conn.send(None)
        except StoreError as err:
            conn.send(str(err))
        except Exception as err:  # reported to the parent, which raises it as a StoreError
            conn.send(f"the store writer failed ({type(err).__name__}: {err})")


class ProcessWriter:
    """Writes in a child process, one batch in flight: `submit` hands a batch over and returns;
    `wait` returns when it is written (or raises the writer's error as a StoreError)."""

    def __init__(self, store: ChromaStore) -> None:
        context = multiprocessing.get_context("spawn")  # chromadb's threads do not survive a fork
        self._conn, child = context.Pipe()
        self._proc = context.Process(target=_serve, args=(child, store.spec), daemon=True, name="rag-store-writer")
        self._proc.start()
        child.close()
        self._pending = True  # the child's first answer says whether it reached the store
        self.wait()

    def submit(self, writes: Writes) -> None:
        self.wait()
        self._conn.send(writes)
        self._pending = True

    def wait(self) -> None:
        if not self._pending:
            return
        self._pending = False
        try:
            answer = self._conn.recv()
        except (EOFError, OSError) as err:
            raise StoreError(f"the store writer process ended unexpectedly (exit code {self._proc.exitcode})") from err
        if answer is not None:
            raise StoreError(answer)

    def close(self) -> None:
        try:
            if self._proc.is_alive():
                self._conn.send(None)
        except OSError:
            pass
        self._proc.join(timeout=60)
        if self._proc.is_alive():
            self._proc.kill()
        self._conn.close()


StoreWriter = InlineWriter | ProcessWriter
