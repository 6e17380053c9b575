"""The query-side rankers of hybrid retrieval on a small real index (real Chroma, keyword index
and catalogue; the stand-in hash embedder): which words of a query may name a paper, and and that
a ranking of the whole index is not thrown off by titles that style a common word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.search.retrieve import name_words
from tests.conftest import hash_app

PAPERS = (
    [
        {
            "id": "ae1",
            "title": "Diffusion Bridge AutoEncoders for Unsupervised Representation Learning",
            "abstract": "We train autoencoders with diffusion bridges for representation learning.",
            "venue": "ICLR",
            "year": 2025,
        },
        {
            "id": "ae2",
            "title": "Efficient Masked AutoEncoder for Video Counting",
            "abstract": "A masked autoencoder counts objects in video.",
            "venue": "ICLR",
            "year": 2025,
        },
        {
            "id": "sae",
            "title": "Scaling and evaluating sparse autoencoders",
            "abstract": "Sparse autoencoders extract interpretable features; we use sparse autoencoders at scale.",
            "venue": "ICLR",
            "year": 2025,
        },
        {
            "id": "cel",
            "title": "Celcomen: spatial causal disentanglement of cell communication",
            "abstract": "We introduce Celcomen, a generative graph neural network for tissues.",
            "venue": "ICLR",
            "year": 2025,
        },
        {
            "id": "gs",
            "title": "GradSurg: Gradient Surgery for Multi-Task Learning",
            "abstract": "We propose GradSurg, which projects conflicting gradients.",
            "venue": "ICML",
            "year": 2025,
        },
        {
            "id": "ot",
            "title": "FLOPS: Forward Learning with OPtimal Sampling",
            "abstract": "Sampling for forward gradient learning.",
            "venue": "ICML",
            "year": 2025,
        },
    ]
    + [
        {
            "id": f"ae-use{i}",
            "title": f"Interpreting vision models, part {i}",
            "abstract": f"We train sparse autoencoders on layer {i} of a vision model.",
            "venue": "ICML",
            "year": 2025,
        }
        for i in range(3)
    ]
    + [
        {
            "id": f"opt{i}",
            "title": f"Optimal transport study {i}",
            "abstract": f"Optimal transport between measures, case {i}.",
            "venue": "ICML",
            "year": 2025,
        }
        for i in range(6)
    ]
)


def _app(tmp_path: Path) -> object:
    data = tmp_path / "papers.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in PAPERS))
    app = hash_app(tmp_path / "home")
    app.ingest([data], progress=False)  # type: ignore[attr-defined]
    return app


@pytest.mark.slow
def test_only_coined_or_rare_words_of_a_query_name_papers(tmp_path: Path) -> None:
    app = _app(tmp_path)
    loaded = app.index.load()  # type: ignore[attr-defined]
    retriever = app.retriever  # type: ignore[attr-defined]
    assert retriever.names(loaded, "Which papers use sparse autoencoders?", None) == []  # not "AutoEncoders"
    assert retriever.names(loaded, "Which papers are about optimal transport?", None) == []  # not "OPtimal"
    assert retriever.names(loaded, "What is Celcomen?", None) == ["cel"]
    assert retriever.names(loaded, "how does gradsurg work", None) == ["gs"]  # a rare word, written in lower case
    hits = app.search("Which papers use sparse autoencoders?", k=3).hits  # type: ignore[attr-defined]
    assert hits[0].paper.id == "sae"


def test_name_words_keep_coined_and_rare_words() -> None:
    counts = {"celcomen": 1, "gradsurg": 2}
    words = name_words(
        "Which LLMs use NUCFL, TGB-Seq, Celcomen, gradsurg or Dynamic Range autoencoders?",
        lambda word: counts.get(word.lower(), 100),
    )
    assert words == ["NUCFL", "TGB-Seq", "Celcomen", "gradsurg"]
