"""Composition root: the only place that reads Settings and builds the parts from them. Its public
methods are the facade the CLI, the UI and the MCP server use."""

from __future__ import annotations

import functools
import logging
import os
import shutil
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from rag.answer import AnswerPipeline, Answerer, ExtractiveAnswerer, LLMAnswerer, Verifier
from rag.catalog import Filters
from rag.chat import ChatSession
from rag.chunk import Chunker
from rag.cite import SupportChecker
from rag.embed import EmbedPool, Embedder, HashEmbedder, LocalEmbedder
from rag.errors import NothingReadError
from rag.index import Index
from rag.ingest import Ingester, IngestReport
from rag.progress import Progress
from rag.readers import Reading, ReadOptions
from rag.retrieve import Mode, Retriever, SearchResult
from rag.settings import Settings
from rag.store import ChromaStore
from rag.types import Answer, Paper

if TYPE_CHECKING:
    from rag.chatmodel import ChatModel

log = logging.getLogger(__name__)


def build_embedder(settings: Settings, threads: int | None = None) -> Embedder:
    if settings.embedder == "openai":
        from rag.llm import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    if settings.embedder == "hash":
        return HashEmbedder()
    return LocalEmbedder(settings.embed_threads if threads is None else threads, settings.embed_batch)


def fingerprint(embedder: Embedder, chunker: Chunker) -> str:
    """Names the collections, so vectors of different models or chunkings never mix."""
    safe = "".join(ch if ch.isalnum() else "-" for ch in embedder.name.lower()).strip("-")
    return f"{safe}-{chunker.fingerprint}"[:60]


def estimate_papers(paths: list[Path]) -> int | None:
    """Lines of the JSON Lines files given (a cheap total for progress), None for anything else."""
    total = 0
    for path in paths:
        if path.is_file() and path.suffix.lower() in (".jsonl", ".ndjson"):
            with path.open("rb") as handle:
                total += sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))
        else:
            return None
    return total or None


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
    def store(self) -> ChromaStore:
        s = self.settings
        return ChromaStore(fingerprint(self.embedder, self.chunker),
                           path=None if s.chroma_host else Path(s.home) / "chroma", host=s.chroma_host, port=s.chroma_port)

    @cached_property
    def index(self) -> Index:
        return Index(self.store, self.embedder, self.chunker, Path(self.settings.home))

    @cached_property
    def retriever(self) -> Retriever:
        return Retriever(self.index, self.settings.candidates, self.settings.rrf_k, Mode(self.settings.mode))

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
        return AnswerPipeline(self.retriever, answerer, checker, s.k, s.max_question_chars, verifier)

    def chat(self) -> ChatSession:
        """A new conversation (one per terminal session or browser tab)."""
        loaded = self.index.load()
        return ChatSession(self.pipeline, loaded.catalog, self.chat_model, self.settings.history_turns)

    @property
    def mode_line(self) -> str:
        if self.settings.answer_mode == "llm":
            return f"LLM answers ({self.settings.llm_model} at {self.settings.openai_base_url or 'api.openai.com'})"
        return "extractive answers (no LLM configured: set OPENAI_API_KEY to use one)"

    # -- writing ----------------------------------------------------------------------------
    def _embed_pool(self, workers: int) -> EmbedPool:
        if workers <= 1 or self.settings.embedder != "local":
            return EmbedPool(self.embedder)
        threads = max(1, (os.cpu_count() or 1) // workers)
        factory = functools.partial(build_embedder, self.settings, threads)
        return EmbedPool(self.embedder, factory, workers)

    def ingest(self, paths: list[Path], options: ReadOptions = ReadOptions(), progress: bool | None = None,
               workers: int | None = None) -> IngestReport:
        reading = Reading(paths, options)
        total = estimate_papers([p for p in paths])
        if total and options.shard:
            total = -(-total // options.shard[1])
        meter = Progress("ingest", total, every_s=self.settings.progress_seconds, enabled=progress is not False)
        pool = self._embed_pool(workers or self.settings.workers)
        try:
            report = Ingester(self.index, self.chunker, pool, meter).run(reading)
        finally:
            pool.close()
            meter.close()
        if not report.papers_read and not report.merges and not report.removed:
            reasons = "; ".join(str(e) for e in report.skipped[:5]) or "no files"
            raise NothingReadError(f"nothing could be read: {reasons}")
        return report

    def ingest_sample(self, progress: bool | None = None) -> IngestReport:
        """The bundled sample. Its one file without a venue header (`004_…`) lists ICML 2025
        papers, so that is what fills the gap; the other files name ICLR 2025 themselves."""
        return self.ingest([Path(self.settings.sample_dir)], ReadOptions(venue="ICML", year=2025), progress)

    def remove(self, paper_ids: list[str] | None = None, source: Path | None = None) -> IngestReport:
        self.index.require()
        ingester = Ingester(self.index, self.chunker, EmbedPool(self.embedder))
        return ingester.remove(paper_ids, str(source.resolve()) if source else None)

    def reset(self) -> None:
        """Delete this index: its Chroma collections and this machine's cache."""
        with self.index.lock.held():
            self.store.reset()
            shutil.rmtree(self.index.folder, ignore_errors=True)

    def compact(self) -> None:
        self.index.compact()

    # -- reading ----------------------------------------------------------------------------
    def search(self, query: str, k: int | None = None, filters: Filters = Filters(),
               mode: Mode | str | None = None) -> SearchResult:
        return self.retriever.search(query, k or self.settings.k, filters, mode)

    def ask(self, question: str, filters: Filters = Filters(), k: int | None = None) -> Answer:
        """One question without a conversation."""
        self.index.load()
        return self.pipeline.answer(question, filters=filters, k=k)

    def lookup(self, query: str = "", filters: Filters = Filters(), limit: int = 50) -> list[Paper]:
        """Catalogue entries matching a title, label, author or method name, most relevant first."""
        return self.index.load().catalog.lookup(query, filters, limit)

    def paper(self, paper_id: str) -> Paper | None:
        return self.index.load().catalog.get(paper_id)

    def facets(self) -> dict[str, list[str]]:
        """Distinct venues, years, tracks and decisions, for filter menus."""
        catalog = self.index.load().catalog
        return {field: catalog.facet_values(field) for field in ("venue", "year", "track", "decision")}

    def status(self) -> dict[str, object]:
        return self.index.status()
