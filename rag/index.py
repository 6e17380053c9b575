"""An index: the Chroma store plus the two things derived from it, the catalogue and the BM25
index, cached on local disk and rebuilt whenever the store's generation says they are stale."""

from __future__ import annotations

import json
import logging
import shutil
import threading
from pathlib import Path

from rag.catalog import Catalog
from rag.embed import Embedder
from rag.errors import IndexMissingError
from rag.keyword import KeywordIndex
from rag.store import ChromaStore, PaperRecord
from rag.types import Paper

log = logging.getLogger(__name__)


def keyword_text(chunk_text: str, paper_authors: list[str], track: str) -> str:
    """What BM25 sees for a chunk: its text plus authors and track, so names are searchable."""
    return f"{chunk_text}\n{'; '.join(paper_authors)}\n{track}"


class Index:
    def __init__(self, store: ChromaStore, embedder: Embedder, cache_dir: Path) -> None:
        self.store = store
        self.embedder = embedder
        self.cache_dir = cache_dir / store.fingerprint
        self.catalog: Catalog | None = None
        self.keyword: KeywordIndex | None = None
        self.records: dict[str, PaperRecord] = {}
        self._generation: str | None = None
        self._lock = threading.Lock()  # UI sessions share one Index; rebuild it once, not per thread

    @property
    def fingerprint(self) -> str:
        return self.store.fingerprint

    def exists(self) -> bool:
        return self.store.exists()

    def require(self) -> None:
        if not self.exists():
            raise IndexMissingError(
                f"no index for {self.fingerprint} at {self.store.location}: run `rag ingest PATH` first "
                "(e.g. `rag ingest data/sample`)"
            )

    def load(self) -> "Index":
        """Load the catalogue and keyword index, rebuilding them from Chroma if stale."""
        with self._lock:
            return self._load()

    def _load(self) -> "Index":
        self.require()
        self.store.open()
        generation = self.store.generation()
        if self.catalog is not None and generation == self._generation:
            return self
        meta = self.cache_dir / "meta.json"
        try:
            if json.loads(meta.read_text()).get("generation") == generation and generation:
                self._load_cache()
                self._generation = generation
                return self
        except (OSError, ValueError, KeyError):
            pass
        self.rebuild(generation)
        return self

    def _load_cache(self) -> None:
        records = [
            PaperRecord(Paper.from_dict(r["paper"]), r["content_hash"], r["text_hash"], r["n_chunks"])
            for r in json.loads((self.cache_dir / "catalog.json").read_text())
        ]
        self._set_records(records)
        self.keyword = KeywordIndex.load(self.cache_dir / "keyword")

    def _set_records(self, records: list[PaperRecord]) -> None:
        self.records = {r.paper.id: r for r in records}
        self.catalog = Catalog([r.paper for r in records])

    def rebuild(self, generation: str | None = None, records: list[PaperRecord] | None = None) -> None:
        """Derive catalogue and BM25 from what the Chroma collections hold, and cache both.
        Ingest passes the records it has just written instead of reading them back."""
        generation = generation if generation is not None else self.store.generation()
        records = records if records is not None else self.store.papers()
        self._set_records(records)
        ids, texts = [], []
        for row in self.store.iter_chunks():
            record = self.records.get(row.paper_id)
            if record is None:
                continue
            ids.append(row.id)
            texts.append(keyword_text(row.text, record.paper.authors, record.paper.track))
        self.keyword = KeywordIndex.build(ids, texts)
        tmp = self.cache_dir.with_name(self.cache_dir.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        (tmp / "catalog.json").write_text(
            json.dumps(
                [
                    {"paper": r.paper.to_dict(), "content_hash": r.content_hash, "text_hash": r.text_hash, "n_chunks": r.n_chunks}
                    for r in records
                ],
                ensure_ascii=False,
            )
        )
        self.keyword.save(tmp / "keyword")
        (tmp / "meta.json").write_text(json.dumps({"generation": generation}))
        shutil.rmtree(self.cache_dir, ignore_errors=True)
        tmp.rename(self.cache_dir)
        self._generation = generation
        log.info("rebuilt catalogue (%d papers) and keyword index (%d chunks)", len(records), len(ids))

    def status(self) -> dict[str, object]:
        self.load()
        assert self.catalog is not None
        embedded = sum(1 for r in self.records.values() if r.n_chunks > 0)
        return {
            "papers": len(self.catalog),
            "embedded_papers": embedded,
            "catalogue_only_papers": len(self.catalog) - embedded,
            "chunks": self.store.count_chunks(),
            "embedding_model": self.embedder.name,
            "collection": self.store.chunks_name,
            "fingerprint": self.fingerprint,
            "store": self.store.location,
            "cache": str(self.cache_dir),
        }
