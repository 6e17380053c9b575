"""The only module that imports chromadb.

One index is two collections named by the same fingerprint (embedding model + chunking):
`chunks_<fp>` holds the chunk vectors with the paper metadata beside each chunk; `papers_<fp>`
holds every catalogue record (also title-only papers, which have no chunks) as JSON with a dummy
one-dimensional vector. Because both live in Chroma, a second machine pointed at the same Chroma
server can rebuild its keyword index and catalogue without re-ingesting. A `generation` value in
the chunks collection's metadata changes on every ingest, so local caches know when they are stale.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rag.errors import StoreError
from rag.types import Paper

log = logging.getLogger(__name__)


@dataclass
class PaperRecord:
    """A catalogue entry as stored: the paper plus what ingest needs to decide what changed."""

    paper: Paper
    content_hash: str
    text_hash: str
    n_chunks: int


@dataclass
class ChunkRow:
    id: str
    paper_id: str
    text: str


class ChromaStore:
    def __init__(
        self, fingerprint: str, path: Path | None = None, host: str | None = None, port: int = 8000
    ) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        try:
            if host:
                self.location = f"http://{host}:{port}"
                self._client = chromadb.HttpClient(host=host, port=port, settings=chroma_settings)
                self._client.heartbeat()
            else:
                assert path is not None
                path.mkdir(parents=True, exist_ok=True)
                self.location = str(path)
                self._client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
        except Exception as err:  # chromadb raises many unrelated types for "cannot connect"
            raise StoreError(f"cannot open the Chroma store at {host or path}:{port if host else ''} ({err})") from err
        self.fingerprint = fingerprint
        self.chunks_name = f"chunks_{fingerprint}"
        self.papers_name = f"papers_{fingerprint}"
        self._chunks: Any = None
        self._papers: Any = None
        self.batch_size = min(self._client.get_max_batch_size(), 2000)

    # -- collections ---------------------------------------------------------------------------
    def exists(self) -> bool:
        names = {getattr(c, "name", c) for c in self._client.list_collections()}
        return self.chunks_name in names and self.papers_name in names

    def _open(self, create: bool) -> None:
        if self._chunks is not None:
            return
        try:
            if create:
                self._chunks = self._client.get_or_create_collection(
                    self.chunks_name, metadata={"hnsw:space": "cosine"}, embedding_function=None
                )
                self._papers = self._client.get_or_create_collection(self.papers_name, embedding_function=None)
            else:
                self._chunks = self._client.get_collection(self.chunks_name, embedding_function=None)
                self._papers = self._client.get_collection(self.papers_name, embedding_function=None)
        except Exception as err:
            raise StoreError(f"cannot open collections {self.chunks_name}: {err}") from err

    def open(self, create: bool = False) -> "ChromaStore":
        self._open(create)
        return self

    def generation(self) -> str:
        self._chunks = None
        self._open(False)
        return str((self._chunks.metadata or {}).get("generation", ""))

    def bump_generation(self) -> str:
        value = uuid.uuid4().hex
        metadata = {k: v for k, v in (self._chunks.metadata or {}).items() if not k.startswith("hnsw:")}
        metadata["generation"] = value
        self._chunks.modify(metadata=metadata)
        return value

    # -- chunks --------------------------------------------------------------------------------
    def upsert_chunks(
        self, ids: list[str], vectors: np.ndarray, texts: list[str], metadatas: list[dict[str, Any]]
    ) -> None:
        for start in range(0, len(ids), self.batch_size):
            end = start + self.batch_size
            self._chunks.upsert(
                ids=ids[start:end],
                embeddings=vectors[start:end].tolist(),
                documents=texts[start:end],
                metadatas=metadatas[start:end],
            )

    def update_chunk_metadata(self, ids: list[str], metadatas: list[dict[str, Any]]) -> None:
        for start in range(0, len(ids), self.batch_size):
            self._chunks.update(ids=ids[start : start + self.batch_size], metadatas=metadatas[start : start + self.batch_size])

    def delete_chunks(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self.batch_size):
            self._chunks.delete(ids=list(ids[start : start + self.batch_size]))

    def chunk_ids(self) -> list[str]:
        return list(self._chunks.get(include=[])["ids"])

    def iter_chunks(self, page: int = 2000) -> Iterator[ChunkRow]:
        offset = 0
        while True:
            got = self._chunks.get(include=["documents", "metadatas"], limit=page, offset=offset)
            if not got["ids"]:
                return
            for cid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"]):
                yield ChunkRow(cid, str(meta.get("paper_id", "")), doc or "")
            offset += len(got["ids"])

    def count_chunks(self) -> int:
        return int(self._chunks.count())

    def query(
        self, vector: np.ndarray, n: int, paper_ids: Iterable[str] | None = None
    ) -> list[tuple[str, str, float]]:
        """(chunk id, paper id, cosine similarity), best first, restricted to `paper_ids` if given."""
        where = None
        if paper_ids is not None:
            ids = sorted(paper_ids)
            if not ids:
                return []
            where = {"paper_id": {"$in": ids}} if len(ids) > 1 else {"paper_id": ids[0]}
        total = self.count_chunks()
        if total == 0:
            return []
        got = self._chunks.query(
            query_embeddings=[vector.tolist()], n_results=min(n, total), where=where, include=["metadatas", "distances"]
        )
        return [
            (cid, str(meta["paper_id"]), 1.0 - float(dist))
            for cid, meta, dist in zip(got["ids"][0], got["metadatas"][0], got["distances"][0])
        ]

    # -- papers --------------------------------------------------------------------------------
    def upsert_papers(self, records: list[PaperRecord]) -> None:
        for start in range(0, len(records), self.batch_size):
            batch = records[start : start + self.batch_size]
            self._papers.upsert(
                ids=[r.paper.id for r in batch],
                embeddings=[[1.0] for _ in batch],
                documents=[json.dumps(r.paper.to_dict(), ensure_ascii=False) for r in batch],
                metadatas=[
                    {"key": r.paper.key, "content_hash": r.content_hash, "text_hash": r.text_hash, "n_chunks": r.n_chunks}
                    for r in batch
                ],
            )

    def delete_papers(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self.batch_size):
            self._papers.delete(ids=list(ids[start : start + self.batch_size]))

    def papers(self, page: int = 2000) -> list[PaperRecord]:
        out: list[PaperRecord] = []
        offset = 0
        while True:
            got = self._papers.get(include=["documents", "metadatas"], limit=page, offset=offset)
            if not got["ids"]:
                return out
            for doc, meta in zip(got["documents"], got["metadatas"]):
                out.append(
                    PaperRecord(
                        Paper.from_dict(json.loads(doc)),
                        str(meta.get("content_hash", "")),
                        str(meta.get("text_hash", "")),
                        int(meta.get("n_chunks", 0)),
                    )
                )
            offset += len(got["ids"])
