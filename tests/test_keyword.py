"""The segmented BM25 index: segments, deletions and merges give the scores of one index built
over the live documents, because statistics are global."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np

from rag.store.keyword import K1, TOKENIZE, B, KeywordIndex, SegmentBuilder

DOCS = {
    1: "Sparse autoencoders find interpretable features in language models",
    2: "Graph neural networks for molecules and proteins",
    3: "Language models learn arithmetic in phases",
    4: "Diffusion models for protein design",
    5: "Sparse attention makes transformers faster on long sequences",
    6: "Interpretable graph models with sparse rules",
}


def _build(folder: Path, groups: list[list[int]]) -> KeywordIndex:
    index = KeywordIndex(folder)
    for group in groups:
        builder = SegmentBuilder()
        for pno in group:
            builder.add(pno, 0, DOCS[pno])
        index.update(np.zeros(0, dtype=np.int64), [builder])
    return index


def _bm25(query: str, live: list[int]) -> dict[int, float]:
    """BM25 written out by hand over the live documents, as the reference."""
    tokens = {pno: [t for t, n in TOKENIZE.counts(DOCS[pno])[0].items() for _ in range(n)] for pno in live}
    avgdl = sum(len(t) for t in tokens.values()) / len(tokens)
    scores: dict[int, float] = {}
    for term in dict.fromkeys(TOKENIZE(query)):
        df = sum(1 for t in tokens.values() if term in t)
        idf = math.log(1 + (len(tokens) - df + 0.5) / (df + 0.5))
        for pno, t in tokens.items():
            tf = Counter(t)[term]
            if tf:
                scores[pno] = scores.get(pno, 0.0) + idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(t) / avgdl))
    return scores


def _scores(index: KeywordIndex, query: str, allowed: np.ndarray | None = None) -> dict[int, float]:
    return {m.pno: m.score for m in index.search(query, 10, allowed)}


def test_segments_score_like_one_index(tmp_path: Path) -> None:
    one = _build(tmp_path / "one", [[1, 2, 3, 4, 5, 6]])
    three = _build(tmp_path / "three", [[1, 2], [3, 4], [5, 6]])
    assert len(three.segments) == 3
    for query in ("sparse interpretable models", "protein", "language models arithmetic"):
        expected = _bm25(query, [1, 2, 3, 4, 5, 6])
        for index in (one, three):
            got = _scores(index, query)
            assert got.keys() == expected.keys()
            assert all(abs(got[p] - expected[p]) < 1e-4 for p in expected)


def test_deleted_documents_vanish_and_merging_keeps_the_scores(tmp_path: Path) -> None:
    index = _build(tmp_path / "k", [[1, 2], [3, 4], [5, 6]])
    index.update(np.asarray([1, 5]), [])
    assert 1 not in _scores(index, "sparse") and 5 not in _scores(index, "sparse")
    assert set(_scores(index, "sparse")) == {6}
    reopened = KeywordIndex(tmp_path / "k")  # another process sees the same deletions
    assert set(_scores(reopened, "sparse")) == {6}
    index.compact()
    assert len(index.segments) == 1 and len(index) == 4
    expected = _bm25("interpretable graph", [2, 3, 4, 6])
    got = _scores(index, "interpretable graph")
    assert got.keys() == expected.keys() and all(abs(got[p] - expected[p]) < 1e-4 for p in expected)


def test_allowed_mask_and_many_segments_merge_by_policy(tmp_path: Path) -> None:
    index = _build(tmp_path / "k", [[p] for p in DOCS] + [[1], [2], [3], [4]])
    assert len(index.segments) <= 8  # small segments were merged as they came
    allowed = np.zeros(10, dtype=bool)
    allowed[[2, 6]] = True
    assert set(_scores(index, "graph", allowed)) == {2, 6}
    assert _scores(index, "nothing matches xyzzy") == {}


def test_required_words_keep_only_the_documents_that_mention_them(tmp_path: Path) -> None:
    """A rare name the query asks about must not be outweighed by a common word another text
    repeats: with `required`, only documents holding every required word are scored."""
    index = KeywordIndex(tmp_path / "kw")
    builder = SegmentBuilder()
    texts = {
        1: "A speech recogniser trained on LibriSpeech.",
        2: "We train a model on a large text corpus; the paper releases the model and the corpus.",
        3: "Vision transformers for images.",
        4: "LibriSpeech and a corpus of audiobooks for speech.",
        **{5 + i: f"Filler text number {i} about graphs and images." for i in range(6)},
    }
    for pno, text in texts.items():
        builder.add(pno, 0, text)
    index.update(np.zeros(0, dtype=np.int64), [builder])
    query = "Which paper trains a model on the LibriSpeech corpus?"
    plain = [m.pno for m in index.search(query, 10)]
    assert plain.index(2) < plain.index(1)  # plain BM25: four common words outweigh the one name
    required = {m.pno: m.score for m in index.search(query, 10, required=["LibriSpeech"])}
    assert sorted(required) == [1, 4]
    full = {m.pno: m.score for m in index.search(query, 10)}
    assert all(math.isclose(score, full[pno], rel_tol=1e-6) for pno, score in required.items())  # same BM25
    assert index.search(query, 10, required=["Whisper"]) == []
    assert index.search(query, 10, required=["the"]) == []  # a stopword requires nothing findable
