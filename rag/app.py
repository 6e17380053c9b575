"""Composition root: the only place that reads Settings and builds the parts from them."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from rag.catalog import Filters
from rag.chunk import Chunker
from rag.embed import Embedder, HashingEmbedder, LocalEmbedder
from rag.errors import NothingReadError
from rag.index import Index
from rag.ingest import Ingester, IngestReport
from rag.readers import read_paths
from rag.retrieve import Mode, Retriever, SearchResult
from rag.settings import Settings
from rag.store import ChromaStore

log = logging.getLogger(__name__)


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "hash":
        return HashingEmbedder()
    if settings.embedder == "openai":
        from rag.llm import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    return LocalEmbedder()


def fingerprint(embedder: Embedder, chunker: Chunker) -> str:
    """Names the collections, so vectors of different models or chunkings never mix."""
    safe = "".join(ch if ch.isalnum() else "-" for ch in embedder.name.lower()).strip("-")
    return f"{safe}-{chunker.fingerprint}"[:60]


@dataclass
class App:
    settings: Settings

    @cached_property
    def embedder(self) -> Embedder:
        return build_embedder(self.settings)

    @cached_property
    def chunker(self) -> Chunker:
        return Chunker(self.settings.chunk_tokens, self.settings.chunk_overlap)

    @cached_property
    def index(self) -> Index:
        s = self.settings
        store = ChromaStore(
            fingerprint(self.embedder, self.chunker),
            path=None if s.chroma_host else Path(s.home) / "chroma",
            host=s.chroma_host,
            port=s.chroma_port,
        )
        return Index(store, self.embedder, Path(s.home) / "cache")

    @cached_property
    def retriever(self) -> Retriever:
        return Retriever(self.index, self.settings.candidates, self.settings.rrf_k)

    def ingest(self, paths: list[Path], venue: str = "", year: int | None = None,
               progress: bool | None = None) -> IngestReport:
        read = read_paths(paths, venue=venue, year=year)
        if not read.papers:
            reasons = "; ".join(str(e) for e in read.errors[:5]) or "no files"
            raise NothingReadError(f"nothing could be read: {reasons}")
        report = Ingester(self.index, self.chunker, progress).run(read.papers, read.errors)
        report.files = read.files
        return report

    def ingest_sample(self, progress: bool | None = None) -> IngestReport:
        """The bundled sample. Its one file without a venue header (`004_…`) lists ICML 2025
        papers, so that is what fills the gap; the other files name ICLR 2025 themselves."""
        return self.ingest([Path(self.settings.sample_dir)], venue="ICML", year=2025, progress=progress)

    def search(self, query: str, k: int | None = None, filters: Filters = Filters(),
               mode: Mode | None = None) -> SearchResult:
        return self.retriever.search(query, k or self.settings.k, filters, mode or self.settings.mode)
