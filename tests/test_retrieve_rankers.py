"""Hybrid retrieval on a small real index (real Chroma, keyword index and catalogue; the stand-in
hash embedder): a name the query uses finds its paper, and titles that style a common word do not
throw the ranking off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
def test_a_coined_or_rare_name_finds_its_paper_and_a_styled_common_word_does_not(tmp_path: Path) -> None:
    """Hybrid search finds the paper a query names by a coined or rare word, in any case, and a
    title that styles a common word ("AutoEncoders", "OPtimal") does not outrank papers about it."""
    app = _app(tmp_path)
    top = lambda q: [h.paper.id for h in app.search(q, k=3).hits]  # type: ignore[attr-defined]  # noqa: E731
    assert top("What is Celcomen?")[0] == "cel"
    assert top("how does gradsurg work")[0] == "gs"  # a rare word, written in lower case
    assert {"sae", "ae-use0", "ae-use1", "ae-use2"} >= set(top("Which papers use sparse autoencoders?"))
    assert top("Which papers are about optimal transport?")[0].startswith("opt")
