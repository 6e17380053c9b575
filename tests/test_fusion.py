"""The fusion of the dense and keyword rankers (rag.search.retrieve.fuse): pure arithmetic on
rankings, no index."""

from __future__ import annotations

import pytest

from rag.search.retrieve import Fusion, Ranking, fuse


def test_each_ranker_is_scaled_to_its_own_range_then_weighed() -> None:
    dense = Ranking("dense", ["a", "b", "c"], [0.9, 0.5, 0.1])
    keyword = Ranking("keyword", ["c", "a"], [30.0, 10.0])
    scores = fuse([dense, keyword], Fusion(dense=0.25))
    # dense: a 1.0, b 0.5, c 0.0; keyword: c 1.0, a 0.0
    assert scores == pytest.approx({"a": 0.25, "b": 0.125, "c": 0.75})


def test_the_weight_moves_the_order_between_the_two_rankers() -> None:
    dense = Ranking("dense", ["a", "b"], [0.9, 0.1])
    keyword = Ranking("keyword", ["b", "a"], [9.0, 1.0])
    by_dense = fuse([dense, keyword], Fusion(dense=0.8))
    by_keyword = fuse([dense, keyword], Fusion(dense=0.2))
    assert max(by_dense, key=by_dense.__getitem__) == "a" and max(by_keyword, key=by_keyword.__getitem__) == "b"


def test_a_paper_one_ranker_missed_gets_nothing_from_it() -> None:
    dense = Ranking("dense", ["a", "b"], [0.9, 0.8])
    keyword = Ranking("keyword", ["b"], [5.0])
    scores = fuse([dense, keyword], Fusion(dense=0.5))
    assert scores == pytest.approx({"a": 0.5, "b": 0.5})


def test_a_lone_ranker_keeps_its_order_and_a_single_score_is_not_zero() -> None:
    scores = fuse([Ranking("keyword", ["x", "y"], [4.0, 2.0])], Fusion())
    assert scores["x"] > scores["y"]
    assert fuse([Ranking("dense", ["only"], [0.3])], Fusion()) == {"only": 1.0}


def test_no_rankings_or_empty_ones_give_no_scores() -> None:
    assert fuse([], Fusion()) == {} and fuse([Ranking("dense", [], [])], Fusion()) == {}


def test_a_paper_with_no_abstract_that_the_dense_ranker_puts_first_is_lifted() -> None:
    """The dense ranker's first paper, when it has no abstract, gets `Fusion.title_only` on top of
    its fused score: BM25 rarely finds a title, so the keyword share of the fusion is one it cannot
    earn. A title-only paper further down the dense ranking is not lifted, nor is any paper when
    one ranker ranks alone."""
    dense = Ranking("dense", ["titled", "abstract", "other"], [0.9, 0.7, 0.5])
    keyword = Ranking("keyword", ["abstract", "other"], [12.0, 2.0])
    lifted = fuse([dense, keyword], Fusion(dense=0.35, title_only=0.25), {"titled", "other"})
    assert lifted == pytest.approx({"titled": 0.6, "abstract": 0.825, "other": 0.0})
    assert fuse([dense, keyword], Fusion(dense=0.35, title_only=0.0), {"titled"})["titled"] == pytest.approx(0.35)
    assert fuse([dense], Fusion(title_only=0.25), {"titled"}) == pytest.approx(
        {"titled": 1.0, "abstract": 0.5, "other": 0.0}
    )
