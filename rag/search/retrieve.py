"""Hybrid retrieval: a dense and a keyword ranker fused by their normalised scores.

Rankers, each a list of paper ids best first:
- `dense`: nearest chunks in Chroma, one entry per paper (chunks of a text version the log does
  not list as live are dropped, so leftovers of a killed or concurrent writer never surface);
- `keyword`: BM25 over chunk text plus title, label, authors, venue, track and decision;
In hybrid search the fused ranking's first papers are then reordered by their best sentence
(`rag.search.rerank`). Filters resolve to a mask over paper numbers that every ranker applies
while ranking, so a filtered search still returns k papers when k exist. Ties are broken by paper id, so the same
index and query give the same order every time.

Which rankers earn their place was measured on held-out splits (`python -m eval.bench.fusion_heldout`,
`Fusion` has the figures); four earlier rankers (`names`, `mentions`, `authors`, `facets`) added
nothing on validation and were removed: a question's authors and facets are applied as filters.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from rag.search.rerank import SentenceReranker
from rag.store import Index, Loaded
from rag.types import ChunkId, Filters, Hit, Mode

Scored = list[tuple[str, float]]  # (paper id, the ranker's score), best first


@dataclass(frozen=True)
class Ranking:
    """One ranker's papers, best first, with its own scores where it has them (cosine for
    `dense`, BM25 for `keyword`; empty for rankers that only order)."""

    name: str
    papers: list[str]
    scores: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, name: str, scored: Scored) -> Ranking:
        return cls(name, [p for p, _ in scored], [s for _, s in scored])


@dataclass(frozen=True)
class Fusion:
    """score(p) = dense · minmax(cosine) + (1 − dense) · minmax(BM25), each ranker's scores scaled to
    [0, 1] over its own candidates (a paper a ranker did not find gets 0 from it). Chosen on the
    validation splits of SciFact and of the lists' held-out questions (`python -m
    eval.bench.fusion_heldout --grid`), nDCG@10 train / validation / test: SciFact 0.870 / 0.928 /
    0.902 (BM25 alone 0.852 / 0.891 / 0.855, dense alone 0.810 / 0.867 / 0.841); lists 0.946 / 0.954
    / 0.919 (BM25 alone 0.935 / 0.948 / 0.890, dense alone 0.725 / 0.783 / 0.766). The previous
    wave's reciprocal-rank fusion of six rankers: 0.862 / 0.901 / 0.880 and 0.946 / 0.943 / 0.921.
    A `names` boost (papers whose title or coined name the query uses) changed neither validation
    figure (SciFact -0.001, lists 0.000) and was removed.

    `title_only` (`RAG_TITLE_ONLY_LIFT`, off) is added to the fused score of a paper with no abstract
    (31% of the conference's papers) that the dense ranker puts first. A title holds few of a
    question's words, so the keyword ranker, which holds 0.65 of the fusion, rarely ranks it:
    title-only papers fill 2.3% of BM25's first five places and 38% of dense's (writers' and
    mechanical questions, train and validation). The lift 0.25 was chosen on the train split
    (writers' recall@5 of the fused order 0.949 -> 0.956, nDCG@10 0.922 -> 0.930; lifting every
    title-only paper instead changed the first five of 94% of questions). On validation it found
    more (writers' recall@5 0.954 -> 0.965, title-only 0.792 -> 0.958), but the answers did not
    gain: the relevance models, fitted without it, cited one more gold paper and turned one more
    answerable question away, so it stays off until they are refitted on it (docs/benchmarks.md,
    session 29). A hit's `ranks["fused"]` stays its place before the lift, the signal those models
    were fitted on: fed the lifted place, they answered off-topic questions with the lifted title
    ("The transformer for my doorbell is buzzing" with a title holding "transformer"; validation
    off-topic abstained 62 -> 59 of 63)."""

    dense: float = 0.35
    title_only: float = 0.0


def _minmax(scores: list[float]) -> list[float]:
    if not scores:
        return []
    top, low = max(scores), min(scores)
    return [(s - low) / (top - low) if top > low else 1.0 for s in scores]


def fuse(rankings: list[Ranking], fusion: Fusion, title_only: Collection[str] = ()) -> dict[str, float]:
    """Fused scores by paper id (`Fusion`); `title_only` holds the candidates with no abstract (the
    dense ranker's first is lifted when it is one of them). A lone ranker keeps its own order."""
    fused = len(rankings) > 1
    weights = {"dense": fusion.dense, "keyword": 1.0 - fusion.dense} if fused else {}
    out: dict[str, float] = {}
    for ranking in rankings:
        weight = weights.get(ranking.name, 1.0)
        for paper, value in zip(ranking.papers, _minmax(ranking.scores)):
            out[paper] = out.get(paper, 0.0) + weight * value
    dense = next((r.papers for r in rankings if r.name == "dense"), [])
    if fused and fusion.title_only and dense and dense[0] in title_only:
        out[dense[0]] += fusion.title_only
    return out


@dataclass
class SearchResult:
    hits: list[Hit]
    timings_ms: dict[str, float] = field(default_factory=dict)


class Retriever:
    def __init__(
        self,
        index: Index,
        candidates: int = 50,
        mode: Mode = Mode.HYBRID,
        fusion: Fusion = Fusion(),
        reranker: SentenceReranker | None = None,
    ) -> None:
        self.index = index
        self.mode = Mode(mode)
        self.candidates = candidates
        self.fusion = fusion
        self.reranker = reranker  # hybrid search only: a chosen ranker alone is left as it ranks

    # -- rankers ----------------------------------------------------------------------------
    def dense(self, loaded: Loaded, vector: np.ndarray, n: int, allowed: np.ndarray | None) -> Scored:
        """Papers by their nearest chunk, with that chunk's cosine. With a filter: a broad one
        over-fetches and keeps the allowed papers; a narrow one scores exactly the allowed
        papers' vectors."""
        store, catalog = loaded.store, loaded.catalog
        if allowed is None:
            return self._papers_of(loaded, [(m.chunk_id, m.similarity) for m in store.query(vector, n * 2)], None)[:n]
        count = int(allowed.sum())
        if count == 0:
            return []
        share = count / len(allowed)  # the mask spans every paper number
        if share >= 0.02:  # over-fetching up to 5,000 chunks costs less than Chroma's `$in` over thousands of ids
            fetch = min(int(n / share * 2) + n, 5000)
            found = self._papers_of(loaded, [(m.chunk_id, m.similarity) for m in store.query(vector, fetch)], allowed)
            if len(found) >= n:
                return found[:n]
        pids = list(catalog.pids_of(np.flatnonzero(allowed).tolist()).values())
        if count <= 5000:
            current = catalog.current_versions(pids)
            ids = [str(ChunkId(pid, version, i)) for pid, (_, version, m) in current.items() for i in range(m)]
            vectors = store.vectors(ids)
            if not vectors:
                return []
            order = sorted(vectors)
            sims = np.vstack([vectors[i] for i in order]) @ vector
            ranked = [(order[i], float(sims[i])) for i in np.argsort(-sims, kind="stable")]
            return self._papers_of(loaded, ranked, None)[:n]
        matches = store.query(vector, n * 2, pids)
        return self._papers_of(loaded, [(m.chunk_id, m.similarity) for m in matches], None)[:n]

    @staticmethod
    def _papers_of(loaded: Loaded, chunks: list[tuple[str, float]], allowed: np.ndarray | None) -> Scored:
        """(paper id, score) of ranked (chunk id, score) pairs, one per paper (its best chunk),
        filtered by the mask, and only chunks of the paper's own text version (leftovers of a
        replaced text, a killed or a concurrent writer never surface). One catalogue query."""
        parsed = [(ChunkId.parse(cid), score) for cid, score in chunks]
        current = loaded.catalog.current_versions(list(dict.fromkeys(c.paper_id for c, _ in parsed)))
        out: dict[str, float] = {}
        for chunk, score in parsed:
            pid = chunk.paper_id
            found = current.get(pid)
            if found is None or found[1] != chunk.version or pid in out:
                continue
            if allowed is not None and (found[0] >= len(allowed) or not allowed[found[0]]):
                continue
            out[pid] = score
        return list(out.items())

    @staticmethod
    def keyword(loaded: Loaded, query: str, n: int, allowed: np.ndarray | None, required: Sequence[str] = ()) -> Scored:
        """Papers by their best BM25 chunk, with that score."""
        matches = loaded.keyword.search(query, n * 2, allowed, required)
        best: dict[int, float] = {}
        for match in matches:
            best.setdefault(match.pno, match.score)
        ids = loaded.catalog.pids_of(list(best))
        return [(ids[p], score) for p, score in best.items() if p in ids][:n]

    @staticmethod
    def _allowed_ids(loaded: Loaded, pids: list[str], allowed: np.ndarray | None) -> list[str]:
        if allowed is None or not pids:
            return pids
        numbers = loaded.catalog.pnos(pids)
        return [p for p in pids if p in numbers and numbers[p] < len(allowed) and allowed[numbers[p]]]

    def rankings(
        self,
        loaded: Loaded,
        query: str,
        n: int,
        allowed: np.ndarray | None,
        mode: Mode,
        lap: Callable[[str], None] = lambda _: None,
    ) -> list[Ranking]:
        """Every ranker's top `n` for the query (search fuses them; the fusion bench re-weighs the
        same rankings). `lap` records each ranker's time."""
        rankings: list[Ranking] = []
        if mode in (Mode.HYBRID, Mode.DENSE):
            vector = loaded.embedder.embed([query])[0]
            lap("embed_query")
            rankings.append(Ranking.of("dense", self.dense(loaded, vector, n, allowed)))
            lap("dense")
        if mode in (Mode.HYBRID, Mode.KEYWORD):
            rankings.append(Ranking.of("keyword", self.keyword(loaded, query, n, allowed)))
            lap("keyword")
        return rankings

    # -- search -----------------------------------------------------------------------------
    def search(
        self, query: str, k: int = 5, filters: Filters = Filters(), mode: Mode | str | None = None
    ) -> SearchResult:
        mode = Mode(mode or self.mode)
        loaded = self.index.load()
        timings: dict[str, float] = {}
        clock = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[name] = (now - clock) * 1000
            clock = now

        allowed = loaded.catalog.allowed(filters)
        lap("filters")
        if allowed is not None and not allowed.any():
            return SearchResult([], timings)
        rankings = self.rankings(loaded, query, max(self.candidates, k * 3), allowed, mode, lap)
        lift = self.fusion.title_only and len(rankings) > 1
        dense_first = {r.papers[0] for r in rankings if r.name == "dense" and r.papers} if lift else set()
        lifted = loaded.catalog.title_only(dense_first) if dense_first else set()
        scores = fuse(rankings, self.fusion, lifted)
        first = {r.name: {p: i for i, p in enumerate(r.papers, start=1)} for r in rankings}
        if lifted:  # the fused place the relevance models were fitted on: before the lift
            plain = fuse(rankings, self.fusion)
            first["fused"] = {p: i for i, p in enumerate(sorted(plain, key=lambda p: (-plain[p], p)), start=1)}
        signals = {r.name: dict(zip(r.papers, r.scores)) for r in rankings if r.scores}
        reranker = self.reranker if mode is Mode.HYBRID else None
        depth = max(k, reranker.rerank.depth) if reranker else k
        ordered = sorted(scores, key=lambda p: (-scores[p], p))[:depth]
        papers = loaded.catalog.get_many(ordered)
        ranked = [(papers[p], scores[p]) for p in ordered if p in papers]
        lap("fuse")
        if reranker is not None:
            if not lifted:
                first["fused"] = {p.id: i for i, (p, _) in enumerate(ranked, start=1)}  # the order before reordering
            reordered = reranker.reorder(query, ranked)
            ranked = [(p, s) for p, s, _ in reordered]
            signals["sentence"] = {p.id: cosine for p, _, cosine in reordered if cosine is not None}
            lap("rerank")
        hits = [
            Hit(
                paper,
                score,
                {name: ranks[paper.id] for name, ranks in first.items() if paper.id in ranks},
                {name: got[paper.id] for name, got in signals.items() if paper.id in got},
            )
            for paper, score in ranked[:k]
        ]
        return SearchResult(hits, timings)
