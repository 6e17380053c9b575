"""Refit the sentence scorer: `python -m eval.fit_sentences --home NAME=DIR ...`.

For every held-out item of the train split that names a fact (`answer_contains`) and its gold
papers, each sentence of each gold abstract is a row (`rag.answer.sentences.SENTENCE_FEATURES`), positive when it
states the fact. A standardised logistic regression is fitted on those rows (train split only)
and checked on the validation split: the share of items whose top-scored sentence, or top two,
state the fact. Weights go to `rag/models/sentences.json` with those figures."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

from eval.fit_relevance import fit
from eval.heldout import cached_rows, split_items
from rag.answer import SENTENCE_FEATURES, SENTENCE_MODEL, LogisticModel, idf


def states(sentence: str, facts: list[str]) -> bool:
    text = sentence.replace("**", "").lower()
    return any(f.strip("*").lower() in text for f in facts)


def collect(index: str, home: Path, splits: set[str]) -> list[dict]:
    os.environ["RAG_HOME"] = str(home)
    from rag.answer import SentenceScorer, source_sentences
    from rag.app import App
    from rag.settings import Settings
    from rag.store import TOKENIZE

    app = App(Settings())
    loaded = app.index.load()
    vectors = app.pipeline.checker.vectors
    blank = LogisticModel(
        SENTENCE_FEATURES,
        (0.0,) * len(SENTENCE_FEATURES),
        0.0,
        (0.0,) * len(SENTENCE_FEATURES),
        (1.0,) * len(SENTENCE_FEATURES),
    )
    scorer = SentenceScorer(blank, TOKENIZE)
    out = []
    for source, item, _, split in split_items(index, loaded.catalog):
        if split not in splits or not item.answer_contains or not item.gold_ids or not item.answerable:
            continue
        terms = list(dict.fromkeys(TOKENIZE(item.question)))
        df, total = loaded.keyword.frequencies(terms) if terms else ([], 1)
        weights = {t: idf(d, max(total, 1)) for t, d in zip(terms, df)}
        for pid in item.gold_ids[:3]:
            paper = loaded.catalog.get(pid)
            if paper is None or not paper.abstract:
                continue
            sentences = source_sentences(paper)[:14]
            labels = [states(s, item.answer_contains) for s in sentences]
            if not any(labels) or all(labels):
                continue
            matrix = vectors.embed([item.question, *sentences])
            cosines = matrix[1:] @ matrix[0]
            rows = scorer.features(item.question, sentences, cosines, weights)
            out.append(
                {
                    "source": source.name,
                    "id": item.id,
                    "kind": item.kind,
                    "split": split,
                    "labels": labels,
                    "features": rows.tolist(),
                }
            )
    return out


def top_hits(rows: list[dict], model: LogisticModel, take: int) -> float:
    hits = []
    for r in rows:
        p = model.probabilities(np.asarray(r["features"]))
        best = np.argsort(-p, kind="stable")[:take]
        hits.append(any(r["labels"][i] for i in best))
    return round(float(np.mean(hits)), 4) if hits else float("nan")


def baseline(rows: list[dict], take: int) -> float:
    """The same share when sentences are ranked by cosine alone."""
    hits = []
    for r in rows:
        cos = np.asarray(r["features"])[:, SENTENCE_FEATURES.index("cosine")]
        best = np.argsort(-cos, kind="stable")[:take]
        hits.append(any(r["labels"][i] for i in best))
    return round(float(np.mean(hits)), 4) if hits else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", action="append", default=[], help="NAME=DIR for each index")
    parser.add_argument("--features", type=Path, default=Path("eval/generated/sentence_features.json"))
    parser.add_argument("--refresh", action="store_true")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=SENTENCE_MODEL)
    args = parser.parse_args()
    homes = [h for h in args.home if "removed" not in h.partition("=")[0]]  # no facts to find there
    rows = cached_rows(args.features, args.refresh, homes, collect)
    train = [r for r in rows if r["split"] == "train"]
    validation = [r for r in rows if r["split"] == "validation"]
    x = np.asarray([f for r in train for f in r["features"]])
    y = np.asarray([lab for r in train for lab in r["labels"]], dtype=float)
    model = fit(x, y, args.l2, features=SENTENCE_FEATURES)
    figures = {
        "train_items": len(train),
        "validation_items": len(validation),
        "validation_top1": top_hits(validation, model, 1),
        "validation_top2": top_hits(validation, model, 2),
        "validation_top1_cosine_alone": baseline(validation, 1),
        "validation_top2_cosine_alone": baseline(validation, 2),
        "train_top1": top_hits(train, model, 1),
    }
    model = LogisticModel(SENTENCE_FEATURES, model.weights, model.bias, model.mean, model.scale, {}, figures)
    model.save(args.out)
    print(
        json.dumps({"weights": dict(zip(SENTENCE_FEATURES, [round(w, 3) for w in model.weights])), **figures}, indent=1)
    )


if __name__ == "__main__":
    main()
