"""Hybrid retrieval as composable rankers, fused by one weighted reciprocal-rank fusion.

Rankers, each a list of paper ids best first:
- `dense`: nearest chunks in Chroma, one entry per paper (chunks of a text version the log does
  not list as live are dropped, so leftovers of a killed or concurrent writer never surface);
- `keyword`: BM25 over chunk text plus title, label, authors, venue, track and decision;
- `names`: papers the query names: a whole title (or a long title cut short with "…"), a label
  or the coined name a title opens with ("PLNL", "BrainOOD"), looked up only for the query's
  words that can be names: coined or rare ones (`name_words`), never common words a title
  happens to style ("AutoEncoders");
- `mentions`: BM25 over the papers that contain every coined word of the query, so a name the
  query asks about ("LibriSpeech", "COCO") is not outweighed by common words that other abstracts
  repeat ("corpus", "model");
- `authors`: papers by an author whose full name the query contains;
- `facets`: when the query names a venue, year, decision or track in words ("Robustness-track",
  "orals", "ICML 2025"), the dense and keyword candidates that have it, in their fused order (for
  a narrow facet all its papers): a soft filter, since a query may name a track without meaning
  to restrict to it.
Filters resolve to a mask over paper numbers that every ranker applies while ranking, so a
filtered search still returns k papers when k exist.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from rag.catalog import Filters
from rag.index import Index, Loaded
from rag.keyword import TOKENIZE
from rag.question import recognise_filters
from rag.text import COMMON_ACRONYMS, is_coined
from rag.types import ChunkId, Hit


class Mode(StrEnum):
    HYBRID = "hybrid"
    DENSE = "dense"
    KEYWORD = "keyword"


RARE = 3  # a word in at most this many indexed texts can be a name even when written like a plain word


def name_words(query: str, frequency: Callable[[str], int]) -> list[str]:
    """Words of a query that may name a paper: coined words ("NUCFL", "SAeUron", "TGB-Seq", not
    common acronyms such as "LLMs") and rare words (in at most `RARE` indexed texts: "Celcomen",
    "gradsurg"). A common word ("autoencoders", "Dynamic", "optimal") names no paper, however a
    title styles it."""
    words = re.findall(r"[\w][\w-]*[\w]|\w", query)
    return [
        w
        for w in dict.fromkeys(words)
        if w not in COMMON_ACRONYMS and w.rstrip("s") not in COMMON_ACRONYMS and (is_coined(w) or frequency(w) <= RARE)
    ]


def document_frequency(loaded: Loaded, word: str) -> int:
    """Indexed texts (chunks) that contain the word's stem, from the keyword index's postings; for
    a word of several tokens ("GPT-4o", "TGB-Seq") its rarest token's, an upper bound."""
    terms = TOKENIZE(word)
    if not terms:
        return 1 << 30  # a stopword
    return min(
        sum(len(found[0]) for segment in loaded.keyword.segments if (found := segment.postings(term)) is not None)
        for term in terms
    )


@dataclass(frozen=True)
class Ranking:
    name: str
    papers: list[str]
    weight: float = 1.0


def fuse(rankings: list[Ranking], k: int) -> dict[str, float]:
    """Weighted reciprocal-rank fusion: score(p) = Σ weight / (k + rank)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, paper in enumerate(ranking.papers, start=1):
            scores[paper] = scores.get(paper, 0.0) + ranking.weight / (k + rank)
    return scores


@dataclass
class SearchResult:
    hits: list[Hit]
    timings_ms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Weights:
    """Fusion weights per ranker, chosen with `python -m eval.bench.fusion_sweep` on SciFact's 505
    train claims and the dev set over the seeds plus both shared lists together:
    dense 0.75 (its MiniLM ranking is the weakest of the two over 7k papers, where short titles of
    title-only papers sit close to short questions), a facet the query names counts twice, once
    when the query also names a paper ("Was GETS an oral?": big.jsonl MRR 0.945 -> 0.970).
    Before (1, 1, 2, 1, 1): dev Recall@5 0.929, MRR 0.897, SciFact nDCG@10 0.848; after: 0.950,
    0.910, 0.864. The `mentions` ranker at weight 1 with rrf_k 5 (from 10): dev Recall@5 0.950 ->
    0.961, MRR 0.910 -> 0.922, SciFact nDCG@10 0.864 -> 0.875 (the sample's dev set and big.jsonl
    unchanged: 0.995/0.987 and 0.985/0.970)."""

    dense: float = 0.75
    keyword: float = 1.0
    names: float = 1.0
    mentions: float = 1.0
    authors: float = 1.0
    facets: float = 2.0
    facets_when_named: float = 1.0  # the facet weight when the query names a paper


class Retriever:
    def __init__(
        self,
        index: Index,
        candidates: int = 50,
        rrf_k: int = 5,
        mode: Mode = Mode.HYBRID,
        weights: Weights = Weights(),
    ) -> None:
        self.index = index
        self.mode = Mode(mode)
        self.candidates = candidates
        self.rrf_k = rrf_k
        self.weights = weights

    # -- rankers ----------------------------------------------------------------------------
    def dense(self, loaded: Loaded, vector: np.ndarray, n: int, allowed: np.ndarray | None) -> list[str]:
        """Papers by their nearest chunk. With a filter: a broad one over-fetches and keeps the
        allowed papers; a narrow one scores exactly the allowed papers' vectors."""
        store, catalog = loaded.store, loaded.catalog
        if allowed is None:
            return self._papers_of(loaded, [m.chunk_id for m in store.query(vector, n * 2)], None)[:n]
        count = int(allowed.sum())
        if count == 0:
            return []
        share = count / len(allowed)  # the mask spans every paper number
        if share >= 0.02:  # over-fetching up to 5,000 chunks costs less than Chroma's `$in` over thousands of ids
            fetch = min(int(n / share * 2) + n, 5000)
            found = self._papers_of(loaded, [m.chunk_id for m in store.query(vector, fetch)], allowed)
            if len(found) >= n:
                return found[:n]
        pids = list(catalog.pids_of(np.flatnonzero(allowed).tolist()).values())
        if count <= 5000:
            current = catalog.current_versions(pids)
            ids = [str(ChunkId(pid, version, i)) for pid, (_, version, m) in current.items() for i in range(m)]
            vectors = store.vectors(ids)
            if not vectors:
                return []
            order = list(vectors)
            sims = np.vstack([vectors[i] for i in order]) @ vector
            ranked = [cid for _, cid in sorted(zip((-sims).tolist(), order))]  # ties in id order
            return self._papers_of(loaded, ranked, None)[:n]
        return self._papers_of(loaded, [m.chunk_id for m in store.query(vector, n * 2, pids)], None)[:n]

    @staticmethod
    def _papers_of(loaded: Loaded, chunk_ids: list[str], allowed: np.ndarray | None) -> list[str]:
        """Paper ids of ranked chunk ids, one per paper, filtered by the mask, and only chunks of
        the paper's own text version (leftovers of a replaced text, a killed or a concurrent
        writer never surface). One catalogue query for all of them."""
        parsed = [ChunkId.parse(cid) for cid in chunk_ids]
        current = loaded.catalog.current_versions(list(dict.fromkeys(c.paper_id for c in parsed)))
        out: list[str] = []
        for chunk in parsed:
            pid = chunk.paper_id
            found = current.get(pid)
            if found is None or found[1] != chunk.version:
                continue
            if allowed is not None and (found[0] >= len(allowed) or not allowed[found[0]]):
                continue
            out.append(pid)
        return list(dict.fromkeys(out))

    @staticmethod
    def keyword(
        loaded: Loaded, query: str, n: int, allowed: np.ndarray | None, required: Sequence[str] = ()
    ) -> list[str]:
        matches = loaded.keyword.search(query, n * 2, allowed, required)
        pnos = list(dict.fromkeys(m.pno for m in matches))
        ids = loaded.catalog.pids_of(pnos)
        return [ids[p] for p in pnos if p in ids][:n]

    @staticmethod
    def _allowed_ids(loaded: Loaded, pids: list[str], allowed: np.ndarray | None) -> list[str]:
        if allowed is None or not pids:
            return pids
        numbers = loaded.catalog.pnos(pids)
        return [p for p in pids if p in numbers and numbers[p] < len(allowed) and allowed[numbers[p]]]

    def names(
        self, loaded: Loaded, query: str, allowed: np.ndarray | None, words: list[str] | None = None
    ) -> list[str]:
        """Papers the query names: a whole title first, then papers named by the words of the query
        that can be names (`name_words`). Only those words are looked up, so "autoencoders"
        never finds a title styled "AutoEncoders", nor "optimal" one styled "OPtimal"."""
        catalog = loaded.catalog
        whole = catalog.titles_in(query) or catalog.title_matches(query.strip(" \"'“”"))
        if words is None:
            words = self.name_words(loaded, query)
        named = catalog.papers_named_in(" ".join(words)) if words else []
        return self._allowed_ids(loaded, list(dict.fromkeys(whole + named)), allowed)

    def mentions(self, loaded: Loaded, query: str, words: list[str], n: int, allowed: np.ndarray | None) -> list[str]:
        """BM25 over the papers that contain every coined word of the query ("COCO",
        "LibriSpeech"), each as written: the keyword index folds case, so "GETS" would find every
        "gets" until the paper's own text is checked. Left out: rare plain words ("gradsurg"; the
        names and keyword rankers find them, and in a small collection every word is rare), words
        no text contains, and coined words whose folded form is common ("FiNE": 710 texts say
        "fine"), whose BM25 top cannot be checked and whose paper the names ranker finds. When no
        text holds all the words ("Compare FooNet and BarNet"), the rarest one alone."""
        frequency = {w: document_frequency(loaded, w) for w in words if is_coined(w)}
        words = [w for w, df in frequency.items() if 0 < df <= 2 * n]
        if not words:
            return []
        ranked = self.keyword(loaded, query, n, allowed, words)
        if not ranked and len(words) > 1:
            words = [min(words, key=lambda w: frequency[w])]
            ranked = self.keyword(loaded, query, n, allowed, words)
        coined = [re.compile(rf"(?<!\w){re.escape(w)}s?(?!\w)") for w in words]  # "MS-COCO" holds "COCO"
        if not ranked:
            return ranked
        papers = loaded.catalog.get_many(ranked)
        return [
            pid
            for pid in ranked
            if pid in papers
            and all(c.search(f"{papers[pid].title}\n{papers[pid].label}\n{papers[pid].abstract}") for c in coined)
        ]

    @staticmethod
    def name_words(loaded: Loaded, query: str) -> list[str]:
        return name_words(query, lambda word: document_frequency(loaded, word))

    def facets(
        self, loaded: Loaded, query: str, candidates: list[Ranking], vector: np.ndarray | None = None, n: int = 50
    ) -> list[str]:
        """The candidates that have the facet the query names, in their fused order; for a narrow
        facet (at most `n` papers: "the Causality area") all of its papers, the others after the
        candidates by their dense order, since few of them are among the candidates."""
        catalog = loaded.catalog
        named, _ = recognise_filters(
            query, {f: catalog.facet_values(f) for f in ("venue", "year", "track", "decision")}
        )
        mask = catalog.allowed(named)
        if mask is None:
            return []
        fused = fuse(candidates, self.rrf_k)
        order = sorted(fused, key=lambda p: -fused[p])
        ranked = self._allowed_ids(loaded, order, mask)
        if vector is not None and int(mask.sum()) <= n:
            ranked += [p for p in self.dense(loaded, vector, n, mask) if p not in ranked]
        return ranked

    def authors(self, loaded: Loaded, query: str, allowed: np.ndarray | None) -> list[str]:
        names = loaded.catalog.authors_named_in(query)
        return self._allowed_ids(loaded, loaded.catalog.pids_by_authors(names), allowed) if names else []

    def rankings(
        self,
        loaded: Loaded,
        query: str,
        n: int,
        allowed: np.ndarray | None,
        mode: Mode,
        lap: Callable[[str], None] = lambda _: None,
    ) -> list[Ranking]:
        """Every ranker's top `n` for the query, weighted (search fuses them; the fusion sweep
        re-weights the same rankings). `lap` records each ranker's time."""
        rankings: list[Ranking] = []
        vector = None
        if mode in (Mode.HYBRID, Mode.DENSE):
            vector = loaded.embedder.embed([query])[0]
            lap("embed_query")
            rankings.append(Ranking("dense", self.dense(loaded, vector, n, allowed), self.weights.dense))
            lap("dense")
        if mode in (Mode.HYBRID, Mode.KEYWORD):
            rankings.append(Ranking("keyword", self.keyword(loaded, query, n, allowed), self.weights.keyword))
            lap("keyword")
        if mode == Mode.HYBRID:
            words = self.name_words(loaded, query)
            named = self.names(loaded, query, allowed, words)
            # "Was GETS an oral?" asks about the paper it names: the facet must not outrank it
            facet_weight = min(self.weights.facets, self.weights.facets_when_named) if named else self.weights.facets
            rankings.append(Ranking("facets", self.facets(loaded, query, list(rankings), vector, n), facet_weight))
            rankings.append(Ranking("names", named, self.weights.names))
            if words:
                rankings.append(
                    Ranking("mentions", self.mentions(loaded, query, words, n, allowed), self.weights.mentions)
                )
            rankings.append(Ranking("authors", self.authors(loaded, query, allowed), self.weights.authors))
            lap("names")
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
        scores = fuse(rankings, self.rrf_k)
        first = {r.name: {p: i for i, p in enumerate(r.papers, start=1)} for r in rankings}
        dense_rank = first.get("dense", {})
        ordered = sorted(scores, key=lambda p: (-scores[p], dense_rank.get(p, 10**6), p))[:k]
        papers = loaded.catalog.get_many(ordered)
        hits = [
            Hit(papers[p], scores[p], {name: ranks[p] for name, ranks in first.items() if p in ranks})
            for p in ordered
            if p in papers
        ]
        lap("fuse")
        return SearchResult(hits, timings)
