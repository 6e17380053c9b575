"""Composition root: the only place that reads Settings and builds the parts from them. Its public
methods are the facade the CLI, the UI and the MCP server use."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.answer import (
    RELEVANCE_MODEL,
    SENTENCE_MODEL,
    AnswerPipeline,
    CatalogueAnswerer,
    ChatSession,
    ExtractiveAnswerer,
    LLMAnswerer,
    LogisticModel,
    Relevance,
    Router,
    SentenceScorer,
    SupportChecker,
    Verifier,
    leading_sentences,
    matching,
    question_models,
)
from rag.embed import Embedder, EmbedPool, HashEmbedder, LocalEmbedder
from rag.errors import NothingReadError, SettingsError
from rag.papers import Chunker, Reading, ReadOptions, estimate_records
from rag.progress import Progress
from rag.search import Fusion, Rerank, Retriever, SearchResult, SentenceReranker
from rag.settings import Settings
from rag.store import TOKENIZE, ChromaStore, Index, Ingester, IngestReport, ProcessWriter, StoreWriter
from rag.types import Answer, Filters, Mode, Paper

if TYPE_CHECKING:
    import numpy as np

    from rag.answer import ChatModel
    from rag.search import PaperMap

log = logging.getLogger(__name__)
# From about this many papers a writer process pays for its start (~2 s): Chroma's upserts then
# run beside ingest's own work instead of after it.
WRITER_PROCESS_PAPERS = 5000


def build_embedder(settings: Settings, threads: int | None = None) -> Embedder:
    if settings.embedder == "openai":
        from rag.answer import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    if settings.embedder == "hash":
        return HashEmbedder()
    return LocalEmbedder(settings.embed_threads if threads is None else threads, settings.embed_batch)


def embedder_name(settings: Settings) -> str:
    """The embedding model's name, known without loading the model."""
    if settings.embedder == "openai":
        return settings.openai_embedding_model
    return HashEmbedder.name if settings.embedder == "hash" else LocalEmbedder.name


def fingerprint(model: str, chunker: Chunker) -> str:
    """Names the collections, so vectors of different models or chunkings never mix."""
    safe = "".join(ch if ch.isalnum() else "-" for ch in model.lower()).strip("-")
    return f"{safe}-{chunker.fingerprint}"[:60]


@dataclass
class App:
    settings: Settings
    _loading: Future[Embedder] | None = field(default=None, init=False, repr=False)

    def preload(self) -> None:
        """Start loading the embedding model on a thread, for a command that will search: opening
        Chroma (mostly importing chromadb, GIL-bound Python) and loading the model (ONNX, which
        leaves the GIL) then overlap, about 0.2 s of a `rag ask` that takes 1.5."""
        if self._loading is None and "embedder" not in self.__dict__ and self.settings.embedder == "local":
            future: Future[Embedder] = Future()

            def load() -> None:
                try:
                    future.set_result(build_embedder(self.settings))
                except BaseException as err:  # handed to whoever needs the model
                    future.set_exception(err)

            threading.Thread(target=load, name="load-model", daemon=True).start()
            self._loading = future

    @cached_property
    def embedder(self) -> Embedder:
        return self._loading.result() if self._loading is not None else build_embedder(self.settings)

    @cached_property
    def chunker(self) -> Chunker:
        return Chunker(self.settings.chunk_tokens, self.settings.chunk_overlap)

    @cached_property
    def home(self) -> Path:
        """The data folder, checked: a path through a file (RAG_HOME set to a file by mistake)
        is a settings error naming RAG_HOME, not Chroma's NotADirectoryError."""
        home = Path(self.settings.home)
        for part in (home, *home.parents):
            if part.exists():
                if not part.is_dir():
                    raise SettingsError(
                        f"RAG_HOME ({home}) cannot be a data folder: {part} is a file; set RAG_HOME to a folder "
                        "(it is created if missing)"
                    )
                break
        return home

    @cached_property
    def store(self) -> ChromaStore:
        s = self.settings
        return ChromaStore(
            fingerprint(embedder_name(self.settings), self.chunker),
            path=None if s.chroma_host else self.home / "chroma",
            host=s.chroma_host,
            port=s.chroma_port,
        )

    @cached_property
    def index(self) -> Index:
        return Index(self.store, self.embedder, self.chunker, self.home, self.settings.snapshot_every)

    @cached_property
    def checker(self) -> SupportChecker:
        """The citation check; its sentence-embedding cache is shared by the search's reranker
        and the relevance model, so the sentences of the papers an answer reads are embedded once."""
        return SupportChecker(self.embedder, self.settings.support_threshold)

    @cached_property
    def retriever(self) -> Retriever:
        s = self.settings
        reranker = (  # its weight was chosen on the local model's cosines; other embedders differ in scale
            SentenceReranker(self.checker.embed, leading_sentences, Rerank(s.rerank_weight, s.rerank_depth))
            if s.rerank_depth > 0 and s.embedder == "local"
            else None
        )
        return Retriever(self.index, s.candidates, s.mode, Fusion(s.dense_weight, s.title_only_lift), reranker)

    @cached_property
    def chat_model(self) -> ChatModel | None:
        if self.settings.answer_mode != "llm":
            return None
        from rag.answer import OpenAIChat

        return OpenAIChat(self.settings)

    @cached_property
    def pipeline(self) -> AnswerPipeline:
        from rag.tools import PaperTools

        s = self.settings
        model = self.chat_model
        llm = LLMAnswerer(model, s.context_tokens, PaperTools(self)) if model else None
        verifier = Verifier(model) if model and s.llm_verify else None
        checker = self.checker
        answerable, fallback = question_models(RELEVANCE_MODEL, s.embedder)
        frequencies = lambda terms: self.index.load().keyword.frequencies(terms)  # noqa: E731
        relevance = Relevance(
            checker.vectors,
            LogisticModel.load(RELEVANCE_MODEL, "paper"),
            answerable,
            TOKENIZE,
            frequencies,
            s.abstain_threshold,
            s.abstain_on_unknown_names,
            LogisticModel.load_part(RELEVANCE_MODEL, "filtered"),
            fallback,
        )
        return AnswerPipeline(
            self.retriever,
            relevance,
            checker,
            Router.load(),
            CatalogueAnswerer(TOKENIZE, frequencies),
            ExtractiveAnswerer(SentenceScorer(LogisticModel.load(SENTENCE_MODEL), TOKENIZE)),
            llm,
            s.k,
            s.max_question_chars,
            verifier,
            catalog=lambda: self.index.load().catalog,
            scope=self.index.reading,
        )

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

    def ingest(
        self,
        paths: list[Path],
        options: ReadOptions = ReadOptions(),
        progress: bool | None = None,
        workers: int | None = None,
        writer_process: bool | None = None,
    ) -> IngestReport:
        """Read, embed and write `paths`. Chroma writes go to a writer process beside this one
        (`rag.store.writer`) when `writer_process` says so, or by default for big inputs."""
        reading = Reading(paths, options)
        total = estimate_records(paths, options)
        if total and options.shard:
            total = -(-total // options.shard[1])
        meter = Progress("ingest", total, every_s=self.settings.progress_seconds, enabled=progress is not False)
        pool = self._embed_pool(workers or self.settings.workers)
        writer: StoreWriter | None = None
        try:
            if writer_process or (writer_process is None and (total or 0) >= WRITER_PROCESS_PAPERS):
                self.store.open(create=True)
                writer = ProcessWriter(self.store)
            ingester = Ingester(self.index, self.chunker, pool, meter, self.settings.ingest_batch, writer)
            report = ingester.run(reading)
        finally:
            if writer is not None:
                writer.close()
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
            self.index.forget()
            self.index.remove_old_caches(everything=True)

    def compact(self, rebuild: bool = False) -> dict[str, int]:
        return self.index.compact(rebuild)

    def snapshot(self) -> dict[str, Any]:
        """Publish this machine's cache to Chroma for new machines to start from."""
        self.index.require()
        with self.index.lock.held():
            self.index.store.open()
            self.index.sync()
            return self.index.publish_snapshot()

    # -- reading ----------------------------------------------------------------------------
    def search(
        self, query: str, k: int | None = None, filters: Filters = Filters(), mode: Mode | str | None = None
    ) -> SearchResult:
        return self.retriever.search(query, k or self.settings.k, filters, mode)

    def ask(self, question: str, filters: Filters = Filters(), k: int | None = None) -> Answer:
        """One question without a conversation (the pipeline reads the index once for it)."""
        return self.pipeline.answer(question, filters=filters, k=k)

    def lookup(self, query: str = "", filters: Filters = Filters(), limit: int = 50) -> list[Paper]:
        """Catalogue entries matching a title, label, author or method name, most relevant first:
        the whole title, then title, label and author words, then abstracts that hold every word
        of the query (BM25 order). Without a query: the papers passing the filters.

        Abstracts must hold every word, as titles and authors must: plain BM25 filled the list
        with any abstract sharing one word ("bag of heuristics" gave 50 rows, most about
        heuristics, none else about a bag)."""
        loaded = self.index.load()
        found = loaded.catalog.lookup(query, filters, limit)
        if query.strip() and len(found) < limit:
            allowed = loaded.catalog.allowed(filters)
            mentions = [pid for pid, _ in Retriever.keyword(loaded, query, limit, allowed, required=_words(query))]
            seen = {p.id for p in found}
            extra = loaded.catalog.get_many([pid for pid in mentions if pid not in seen])
            found += [extra[pid] for pid in mentions if pid in extra][: limit - len(found)]
        return found

    def lookup_total(self, query: str = "", filters: Filters = Filters()) -> int:
        """How many papers `lookup` would give without a limit: the count a lookup shows ("3 papers
        match"), not the length of a page of results."""
        loaded = self.index.load()
        catalog = loaded.catalog
        if not query.strip():
            return catalog.count(filters)
        allowed = catalog.allowed(filters)
        found = catalog.named_pnos(query)
        words = _words(query)
        if words:
            found |= {m.pno for m in loaded.keyword.search(query, catalog.count() * 4 + 10, allowed, words)}
        return sum(1 for p in found if allowed is None or (p < len(allowed) and allowed[p]))

    def paper(self, paper_id: str) -> Paper | None:
        return self.index.load().catalog.get(paper_id)

    def papers_matching(self, filters: Filters = Filters(), topic: str = "") -> tuple[list[Paper], int]:
        """Papers passing the filters that mention every topic word, and how many pass the filters."""
        return matching(self.index.load().catalog, filters, topic, TOKENIZE)

    def facets(self) -> dict[str, list[str]]:
        """Distinct venues, years, tracks and decisions, for filter menus."""
        catalog = self.index.load().catalog
        return {field: catalog.facet_values(field) for field in ("venue", "year", "track", "decision")}

    def status(self) -> dict[str, object]:
        return self.index.status()

    # -- the map and the examples (UI facade) ---------------------------------------------------
    # Bodies written over today's store (chunk vectors read from the Chroma collection); the
    # signatures and return types are the contract.
    def paper_vectors(self) -> tuple[list[str], np.ndarray]:
        """(paper ids, unit vectors): one row per paper with vectors in Chroma (title-only
        papers included: their vector is their title's), the normalised mean of its chunk
        vectors; ids in catalogue order."""
        import numpy as np

        from rag.types import ChunkId

        loaded = self.index.load()
        pids = [p.id for _, p in loaded.catalog.iter_papers()]
        live = loaded.catalog.live_vectors(pids)
        chunk_ids = {pid: [str(ChunkId(pid, version, i)) for i in range(n)] for (pid, version), n in live.items()}
        vectors = loaded.store.vectors([c for ids in chunk_ids.values() for c in ids])
        ids, rows = [], []
        for pid in pids:
            found = [vectors[c] for c in chunk_ids.get(pid, []) if c in vectors]
            if found:
                ids.append(pid)
                rows.append(np.mean(found, axis=0))
        if not ids:
            return [], np.zeros((0, self.embedder.dim), dtype=np.float32)
        matrix = np.vstack(rows).astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        return ids, matrix

    def paper_map(self) -> PaperMap:
        """The 2-D map of every catalogued paper (rag.search.paper_map), computed once per catalogue
        generation and cached as `paper_map.npz` in the index's cache folder. A paper whose
        vectors are missing is placed by its title, embedded now (`PaperMap.embedded` False)."""
        import numpy as np

        from rag.search import PaperMap, compute_map

        catalog = self.index.load().catalog
        generation = str(catalog.generation)
        path = self.index.folder / "paper_map.npz"
        with self._map_lock:
            try:
                cached = PaperMap.load(path)
                if cached.generation == generation and len(cached) == len(catalog):
                    return cached
            except (OSError, ValueError, KeyError):
                pass
            ids, vectors = self.paper_vectors()
            papers = {p.id: p for _, p in catalog.iter_papers()}
            have = set(ids)
            rest = [pid for pid in papers if pid not in have]
            if rest:
                titles = [papers[pid].display_title for pid in rest]
                vectors = np.vstack([vectors, self.embedder.embed(titles)]) if ids else self.embedder.embed(titles)
            ordered = [papers[pid] for pid in ids + rest]
            embedded = np.array([True] * len(ids) + [False] * len(rest), dtype=bool)
            built = compute_map(
                ids + rest, vectors, [f"{p.title}. {p.abstract}" for p in ordered], embedded, generation=generation
            )
            with contextlib.suppress(OSError):  # a read-only data folder: computed again next time
                path.parent.mkdir(parents=True, exist_ok=True)
                built.save(path)
            return built

    @cached_property
    def _map_lock(self) -> threading.Lock:
        import threading

        return threading.Lock()

    def example_questions(self, limit: int = 4) -> list[str]:
        """Questions the loaded collection can answer, named after its own coined names and a
        topic its titles share (rag.answer.examples). Without an LLM each candidate is asked once and
        kept only if it does not abstain; the result is cached per index generation
        (`examples.json` in the index's cache folder). With an LLM the candidates are returned
        unchecked (checking would spend tokens)."""
        import json

        from rag.answer import example_questions

        catalog = self.index.load().catalog
        sample = [p for _, p in islice(catalog.iter_papers(), 20000)]  # enough to find names and topics
        candidates = example_questions(sample, limit + 3)
        if self.settings.answer_mode == "llm":
            return candidates[:limit]
        generation = str(catalog.generation)
        path = self.index.folder / "examples.json"
        try:
            cached = json.loads(path.read_text())
            if cached.get("generation") == generation and cached.get("limit") == limit:
                return [str(q) for q in cached["questions"]]
        except (OSError, ValueError, KeyError):
            pass
        kept: list[str] = []
        for question in candidates:
            if not self.ask(question).abstained:
                kept.append(question)
            if len(kept) == limit:
                break
        with contextlib.suppress(OSError):  # a read-only data folder: asked again next time
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"generation": generation, "limit": limit, "questions": kept}))
        return kept


def _words(query: str) -> list[str]:
    """The words a lookup's matches must all hold."""
    return re.findall(r"\w+", query)
