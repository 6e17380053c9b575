"""Composition root: the only place that reads Settings and builds the parts from them."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from rag.answer import AnswerPipeline, Answerer, ExtractiveAnswerer, LLMAnswerer, Verifier
from rag.catalog import Filters
from rag.chat import ChatSession
from rag.cite import SupportChecker
from rag.chunk import Chunker
from rag.embed import Embedder, HashEmbedder, LocalEmbedder
from rag.errors import NothingReadError
from rag.index import Index
from rag.ingest import Ingester, IngestReport
from rag.readers import read_paths
from rag.retrieve import Mode, Retriever, SearchResult
from rag.settings import Settings
from rag.store import ChromaStore
from rag.types import Answer, Paper

if TYPE_CHECKING:
    from rag.chatmodel import ChatModel

log = logging.getLogger(__name__)


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "openai":
        from rag.llm import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    if settings.embedder == "hash":
        return HashEmbedder()
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
        return Retriever(self.index, self.settings.candidates, self.settings.rrf_k, self.settings.mode)

    @cached_property
    def chat_model(self) -> "ChatModel | None":
        if self.settings.answer_mode != "llm":
            return None
        from rag.llm import OpenAIChat

        return OpenAIChat(self.settings)

    @cached_property
    def pipeline(self) -> AnswerPipeline:
        s = self.settings
        model = self.chat_model
        answerer: Answerer = LLMAnswerer(model, s.context_tokens) if model else ExtractiveAnswerer()
        verifier = Verifier(model) if model and s.llm_verify else None
        checker = SupportChecker(self.embedder, s.support_threshold)
        return AnswerPipeline(self.retriever, answerer, checker, s.k, s.max_question_chars, verifier,
                              catalog=lambda: self.index.load().catalog)

    def chat(self) -> ChatSession:
        """A new conversation (one per terminal session or browser tab)."""
        self.index.load()
        assert self.index.catalog is not None
        return ChatSession(self.pipeline, self.index.catalog, self.chat_model, self.settings.history_turns)

    @property
    def mode_line(self) -> str:
        if self.settings.answer_mode == "llm":
            return f"LLM answers ({self.settings.llm_model} at {self.settings.openai_base_url or 'api.openai.com'})"
        return "extractive answers (no LLM configured: set OPENAI_API_KEY to use one)"

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
        return self.retriever.search(query, k or self.settings.k, filters, mode)

    # -- the facade the UI, the MCP server and the CLI use (stable names) --------------------
    def ask(self, question: str, filters: Filters = Filters(), k: int | None = None) -> "Answer":
        """One question without a conversation."""
        self.index.load()
        return self.pipeline.answer(question, filters=filters, k=k)

    def lookup(self, query: str = "", filters: Filters = Filters(), limit: int = 50) -> list[Paper]:
        """Catalogue entries matching a title, label, author or method name, best first."""
        catalog = self.index.load().catalog
        assert catalog is not None
        return catalog.lookup(query, filters, limit)

    def paper(self, paper_id: str) -> Paper | None:
        catalog = self.index.load().catalog
        assert catalog is not None
        return catalog.get(paper_id)

    def facets(self) -> dict[str, list[str]]:
        """Distinct venues, years, tracks and decisions, for filter menus."""
        catalog = self.index.load().catalog
        assert catalog is not None
        papers = list(catalog.papers.values())
        return {
            "venue": sorted({p.venue for p in papers if p.venue}),
            "year": sorted({str(p.year) for p in papers if p.year}),
            "track": sorted({p.track for p in papers if p.track}),
            "decision": sorted({p.decision for p in papers if p.decision}),
        }

    def status(self) -> dict[str, object]:
        return self.index.status()
