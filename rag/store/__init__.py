"""Storing and syncing: Chroma (vectors and the change log), the local catalogue and keyword
index derived from the log, snapshots for new machines, and the ingest that writes all of them in
the order that keeps a killed run safe.

Other parts import from here, never from the modules inside; names load on first use, so
importing the package costs nothing until a name is needed (`rag --help` imports no model,
no Chroma)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag.lazy import exports

if TYPE_CHECKING:
    from rag.store.catalog import Catalog
    from rag.store.chroma import ChromaStore
    from rag.store.index import Index, Loaded
    from rag.store.ingest import Ingester, IngestReport
    from rag.store.keyword import TOKENIZE
    from rag.store.writer import ProcessWriter, StoreWriter

_WHERE = {
    "Catalog": "rag.store.catalog",
    "ChromaStore": "rag.store.chroma",
    "Index": "rag.store.index",
    "IngestReport": "rag.store.ingest",
    "Ingester": "rag.store.ingest",
    "Loaded": "rag.store.index",
    "ProcessWriter": "rag.store.writer",
    "StoreWriter": "rag.store.writer",
    "TOKENIZE": "rag.store.keyword",
}
__all__ = [
    "Catalog",
    "ChromaStore",
    "Index",
    "IngestReport",
    "Ingester",
    "Loaded",
    "ProcessWriter",
    "StoreWriter",
    "TOKENIZE",
]

__getattr__ = exports(__name__, _WHERE)
