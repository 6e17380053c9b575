"""Weighted reciprocal-rank fusion (rag.retrieve.fuse): pure arithmetic, no index, no I/O.
score(p) = sum over rankings of weight / (k + rank), rank counted from 1."""

from __future__ import annotations

import pytest

from rag.retrieve import Ranking, fuse


def test_one_ranking_scores_each_paper_by_its_rank() -> None:
    scores = fuse([Ranking("dense", ["a", "b", "c"])], k=10)
    assert scores == pytest.approx({"a": 1 / 11, "b": 1 / 12, "c": 1 / 13})


def test_a_paper_in_several_rankings_adds_up() -> None:
    scores = fuse([Ranking("dense", ["a", "b"]), Ranking("keyword", ["b", "c"])], k=10)
    assert scores == pytest.approx({"a": 1 / 11, "b": 1 / 12 + 1 / 11, "c": 1 / 12})
    assert max(scores, key=scores.__getitem__) == "b"  # second and first beats first alone


def test_weights_scale_a_rankings_share() -> None:
    plain = fuse([Ranking("dense", ["a"]), Ranking("names", ["b"])], k=10)
    assert plain["a"] == plain["b"]
    weighted = fuse([Ranking("dense", ["a"]), Ranking("names", ["b"], weight=2.0)], k=10)
    assert weighted == pytest.approx({"a": 1 / 11, "b": 2 / 11})
    silent = fuse([Ranking("dense", ["a"]), Ranking("facets", ["b"], weight=0.0)], k=10)
    assert silent["b"] == 0.0 < silent["a"]


def test_mirrored_ranks_tie_exactly() -> None:
    scores = fuse([Ranking("dense", ["a", "b"]), Ranking("keyword", ["b", "a"])], k=10)
    assert scores["a"] == scores["b"]  # the retriever breaks such ties by dense rank, then id


def test_k_decides_between_one_lists_top_and_both_lists_middle() -> None:
    # "top" is first in one ranking only; "middle" is fourth in both.
    rankings = [Ranking("dense", ["top", "x", "y", "middle"]), Ranking("keyword", ["p", "q", "r", "middle"])]
    small = fuse(rankings, k=1)  # top: 1/2 = 0.5; middle: 2/5 = 0.4
    assert small["top"] > small["middle"]
    large = fuse(rankings, k=60)  # top: 1/61 ~ 0.016; middle: 2/64 ~ 0.031
    assert large["middle"] > large["top"]
    assert small["top"] == pytest.approx(0.5) and large["middle"] == pytest.approx(2 / 64)


def test_no_rankings_or_empty_ones_give_no_scores() -> None:
    assert fuse([], k=10) == {}
    assert fuse([Ranking("dense", []), Ranking("keyword", [])], k=10) == {}
