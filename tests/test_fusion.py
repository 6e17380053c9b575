"""The fusion of the dense and keyword rankers and the names boost (rag.search.retrieve.fuse): pure
arithmetic on rankings, no index."""

from __future__ import annotations

import pytest

from rag.search.retrieve import Fusion, Ranking, fuse


def test_each_scored_ranker_is_scaled_to_its_own_range_then_weighed() -> None:
    dense = Ranking("dense", ["a", "b", "c"], [0.9, 0.5, 0.1])
    keyword = Ranking("keyword", ["c", "a"], [30.0, 10.0])
    scores = fuse([dense, keyword], Fusion(dense=0.25, names=0.0))
    # dense: a 1.0, b 0.5, c 0.0; keyword: c 1.0, a 0.0
    assert scores == pytest.approx({"a": 0.25, "b": 0.125, "c": 0.75})


def test_the_weight_moves_the_order_between_the_two_rankers() -> None:
    dense = Ranking("dense", ["a", "b"], [0.9, 0.1])
    keyword = Ranking("keyword", ["b", "a"], [9.0, 1.0])
    by_dense = fuse([dense, keyword], Fusion(dense=0.8, names=0.0))
    by_keyword = fuse([dense, keyword], Fusion(dense=0.2, names=0.0))
    assert max(by_dense, key=by_dense.__getitem__) == "a" and max(by_keyword, key=by_keyword.__getitem__) == "b"


def test_a_named_paper_is_lifted_by_its_place_in_the_names_ranking() -> None:
    dense = Ranking("dense", ["a", "b"], [0.9, 0.8])
    keyword = Ranking("keyword", ["a", "b"], [9.0, 8.0])
    names = Ranking("names", ["b"])
    scores = fuse([dense, keyword, names], Fusion(dense=0.5, names=2.5))
    assert scores["a"] == pytest.approx(1.0) and scores["b"] == pytest.approx(2.5 / 2)


def test_a_lone_scored_ranker_keeps_its_order_and_a_single_score_is_not_zero() -> None:
    scores = fuse([Ranking("keyword", ["x", "y"], [4.0, 2.0])], Fusion())
    assert scores["x"] > scores["y"]
    assert fuse([Ranking("dense", ["only"], [0.3])], Fusion()) == {"only": 1.0}


def test_no_rankings_or_empty_ones_give_no_scores() -> None:
    assert fuse([], Fusion()) == {} and fuse([Ranking("dense", [], [])], Fusion()) == {}
