"""Fit the decision of a filtered question: `python -m eval.fit_filtered --home DIR [--write]`.

A question that names a filter the search applies and a topic of its own ("Which papers by Sergey
Levine are about diffusion?") is decided on its topic among the filtered papers
(`AnswerPipeline._topical`): every paper of the filtered search holds the filter, so the question
is answered when one of them holds the topic. The answerable model, fitted on whole questions,
reads a bare topic as weakly answered, and more so a one-word topic ("diffusion"), so this decision
has a model of its own: a logistic regression over `FEATURES` of that topical assessment (part
`filtered` of `rag/models/relevance.json`, read by `Relevance.filtered_confidence`).

It is fitted on the TRAIN split of `conf-author-topic` (an author's papers on a topic: answer) and
`conf-author-absent` (the same authors, a topic none of their papers names: abstain), its threshold
chosen there by Youden's J (most of (1 - false abstention) + twins abstained) over a grid of 0.01;
the validation figures are printed beside it. The test split is never read. Run it again after
`eval.fit_relevance`, whose paper model gives `paper_best`."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from eval.fit_relevance import fit
from eval.heldout import split_items
from rag.answer import QUESTION_FEATURES, RELEVANCE_MODEL, LogisticModel

FAMILIES = ("conf-author-topic", "conf-author-absent")
# the best paper's probability; one sentence both close to the topic and holding its words
FEATURES = ("paper_best", "address")
GRID = np.round(np.arange(0.01, 1.0, 0.01), 2)


def collect(home: Path, splits: set[str]) -> list[dict[str, Any]]:
    """Per question of the two families: its split, whether it is answerable, and the topical
    assessment's question features, asked as `AnswerPipeline.answer` asks it."""
    os.environ["RAG_HOME"] = str(home)
    from rag.answer import read
    from rag.answer.pipeline import merge_filters
    from rag.app import App
    from rag.settings import Settings
    from rag.types import Filters

    app = App(Settings())
    catalog = app.index.load().catalog
    pipeline = app.pipeline
    out = []
    for source, item, _, split in split_items("conf", catalog, measured=True):
        if source.name not in FAMILIES or split not in splits:
            continue
        q = read(item.question, catalog)
        filters = merge_filters(Filters(), q)
        k = pipeline.depth(item.question, pipeline.router.intent(q.placeholders()))
        topical = pipeline._topical(q, k, filters) if q.has_topic else None
        if topical is None:
            continue  # decided on the whole question, as any other
        features = dict(zip(QUESTION_FEATURES, topical.question_features.tolist()))
        out.append({"id": item.id, "split": split, "answerable": item.answerable, "features": features})
    return out


def matrix(rows: list[dict[str, Any]]) -> np.ndarray:
    return np.array([[r["features"][name] for name in FEATURES] for r in rows], dtype=np.float64)


def rates(rows: list[dict[str, Any]], threshold: float) -> dict[str, float]:
    """False abstention and twins abstained when questions of `confidence` below `threshold` abstain."""
    answerable = [r["confidence"] for r in rows if r["answerable"]]
    twins = [r["confidence"] for r in rows if not r["answerable"]]
    fa = float(np.mean([c < threshold for c in answerable])) if answerable else 0.0
    abstained = float(np.mean([c < threshold for c in twins])) if twins else 0.0
    return {"false_abstention": round(fa, 4), "twins_abstained": round(abstained, 4), "questions": len(rows)}


def choose(rows: list[dict[str, Any]]) -> float:
    """The grid threshold of most (1 - false abstention) + twins abstained on `rows` (lowest on ties)."""
    scores = [(1 - rates(rows, t)["false_abstention"]) + rates(rows, t)["twins_abstained"] for t in GRID]
    return float(GRID[int(np.argmax(scores))])


def fitted(train: list[dict[str, Any]]) -> LogisticModel:
    """The model and its threshold, both from the train rows alone."""
    model = fit(matrix(train), np.array([r["answerable"] for r in train], dtype=np.float64), features=FEATURES)
    scored = [{**r, "confidence": p} for r, p in zip(train, model.probabilities(matrix(train)))]
    return LogisticModel(
        model.features, model.weights, model.bias, model.mean, model.scale, {"abstain": choose(scored)}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="the conference index (seeds + both lists)")
    parser.add_argument("--write", action="store_true", help=f"store the model as part `filtered` of {RELEVANCE_MODEL}")
    args = parser.parse_args()
    rows = collect(args.home, {"train", "validation"})
    train = [r for r in rows if r["split"] == "train"]
    model = fitted(train)
    threshold = model.thresholds["abstain"]
    figures = {}
    for split in ("train", "validation"):
        part = [r for r in rows if r["split"] == split]
        scored = [{**r, "confidence": p} for r, p in zip(part, model.probabilities(matrix(part)))]
        figures[split] = rates(scored, threshold)
    print(json.dumps({"features": FEATURES, "abstain": threshold, **figures}, indent=1))
    if args.write:
        chosen = {"families": list(FAMILIES), "rule": "Youden J on train", **figures}
        LogisticModel(
            model.features, model.weights, model.bias, model.mean, model.scale, model.thresholds, chosen
        ).save(RELEVANCE_MODEL, "filtered")


if __name__ == "__main__":
    main()
