"""Hybrid retrieval: dense (Chroma) and BM25 ranked lists, each collapsed to one entry per paper,
fused by reciprocal rank fusion. Filters become a set of allowed paper ids that both retrievers
apply while searching, so a filtered search still returns k papers when k exist."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from rag.catalog import Filters
from rag.index import Index
from rag.types import Hit

Mode = Literal["hybrid", "dense", "keyword"]


def paper_of(chunk_id: str) -> str:
    return chunk_id.rsplit("#", 1)[0]


def best_per_paper(ranked_chunks: list[str]) -> list[tuple[str, str]]:
    """(paper id, its best chunk id), in rank order, one entry per paper."""
    seen: dict[str, str] = {}
    for cid in ranked_chunks:
        seen.setdefault(paper_of(cid), cid)
    return list(seen.items())


def rrf(rankings: list[list[str]], k: int) -> dict[str, float]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return scores


@dataclass
class SearchResult:
    hits: list[Hit]
    timings_ms: dict[str, float] = field(default_factory=dict)


class Retriever:
    def __init__(self, index: Index, candidates: int = 50, rrf_k: int = 60, mode: Mode = "hybrid") -> None:
        self.index = index
        self.mode = mode
        self.candidates = candidates
        self.rrf_k = rrf_k

    def _dense(self, vector: np.ndarray, n: int, allowed: set[str] | None) -> list[tuple[str, str, float]]:
        """Dense candidates restricted to `allowed` papers. A broad filter (a quarter of the
        papers or more) over-fetches without a `where` and keeps the allowed ones, which is exact
        whenever n allowed chunks come back and far faster than Chroma's `$in` over thousands of
        ids; otherwise, or when too few come back, the filter goes to Chroma."""
        store, catalog = self.index.store, self.index.catalog
        if allowed is None or catalog is None:
            return store.query(vector, n)
        share = len(allowed) / max(len(catalog), 1)
        if share >= 0.25:
            total = store.count_chunks()
            fetch = min(total, int(n / share * 1.5) + n)
            found = [row for row in store.query(vector, fetch) if row[1] in allowed]
            if len(found) >= n or fetch >= total:
                return found[:n]
        return store.query(vector, n, allowed)

    def search(self, query: str, k: int = 5, filters: Filters = Filters(), mode: Mode | None = None) -> SearchResult:
        mode = mode or self.mode
        index = self.index.load()
        assert index.catalog is not None and index.keyword is not None
        timings: dict[str, float] = {}
        allowed = index.catalog.allowed(filters)
        if allowed is not None and not allowed:
            return SearchResult([], timings)
        n = max(self.candidates, k * 3)
        dense: list[tuple[str, str]] = []
        keyword: list[tuple[str, str]] = []
        if mode in ("hybrid", "dense"):
            start = time.perf_counter()
            vector = index.embedder.embed([query])[0]
            timings["embed_query"] = (time.perf_counter() - start) * 1000
            start = time.perf_counter()
            found = self._dense(vector, n, allowed)
            dense = best_per_paper([cid for cid, _, _ in found])
            timings["dense"] = (time.perf_counter() - start) * 1000
        if mode in ("hybrid", "keyword"):
            start = time.perf_counter()
            allowed_chunks = None
            if allowed is not None:
                allowed_chunks = {cid for cid in index.keyword.chunk_ids if paper_of(cid) in allowed}
            found_kw = index.keyword.search(query, n, allowed_chunks)
            keyword = best_per_paper([cid for cid, _ in found_kw])
            timings["keyword"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        dense_rank = {pid: r for r, (pid, _) in enumerate(dense, start=1)}
        kw_rank = {pid: r for r, (pid, _) in enumerate(keyword, start=1)}
        rankings = [[p for p, _ in dense], [p for p, _ in keyword]]
        if mode == "hybrid":
            rankings.append([p for p in index.catalog.named_authors(query) if allowed is None or p in allowed])
        scores = rrf(rankings, self.rrf_k)
        ordered = sorted(scores, key=lambda p: (-scores[p], dense_rank.get(p, 10**6), p))[:k]
        hits = []
        for pid in ordered:
            paper = index.catalog.get(pid)
            if paper is None:
                continue
            hits.append(Hit(paper, scores[pid], dense_rank.get(pid), kw_rank.get(pid)))
        timings["fuse"] = (time.perf_counter() - start) * 1000
        return SearchResult(hits, timings)
