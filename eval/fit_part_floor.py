"""Fit the floor a listed paper's weakest topic must reach: `python -m eval.fit_part_floor --home
conf=DIR --home sample=DIR [--rows FILE] [--refresh]`.

A plural question joining two topics ("Which papers combine GNNs with LLMs?") is answered with every
paper the relevance model keeps at `keep_many`; that model reads the question whole, so a paper
strong on one topic passes it. `Relevance.listed` leaves out a paper (never the most probable)
whose weakest part falls short of the floor (`part_weakest`).

1. For every plural question (cue MANY) without history of the train and validation splits, fitted
   sources and the measured-only two-topic pairs alike, that the answer sends to the abstracts,
   has two topic parts or more, a gold paper, and is not abstained on: the papers the answer
   searches (`list_k`), their probabilities, the papers `kept` at `keep_many` and each one's part
   cosines (`Relevance.part_cosines`). Cached in `--rows`.
2. Two forms, absolute (`part_floor` on the lowest part cosine) and relative (the same less the
   best retrieved paper's on each part); each one's floor from a grid maximising F1 of the listed
   papers against the gold papers over the TRAIN questions, and the form with the higher train F1
   is chosen.
3. Print the validation figures without and with the floor (the screen: both F1 and precision must
   rise), and with `--write` store `part_floor`, `part_relative` and the figures in the paper part
   of `rag/models/relevance.json`. The test split is never read.
Run it again after `eval.fit_relevance`: the floor applies to the papers that model keeps."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from eval.fit_relevance import f_beta
from eval.heldout import cached_rows, split_items
from rag.answer import RELEVANCE_MODEL, LogisticModel
from rag.answer.relevance import part_weakest

FLOORS = {False: np.round(np.arange(0.20, 0.601, 0.01), 2), True: np.round(np.arange(-0.40, 0.001, 0.01), 2)}


def collect(index: str, home: Path, splits: set[str]) -> list[dict[str, Any]]:
    """The rows of step 1 for one index, asked as `AnswerPipeline.answer` asks them."""
    os.environ["RAG_HOME"] = str(home)
    from rag.answer import read
    from rag.answer.cues import MANY
    from rag.answer.pipeline import merge_filters
    from rag.answer.route import Intent
    from rag.app import App
    from rag.settings import Settings
    from rag.types import Filters

    app = App(Settings())
    loaded = app.index.load()
    pipeline, relevance = app.pipeline, app.pipeline.relevance
    out = []
    for source, item, _, split in split_items(index, loaded.catalog, measured=True):
        question = item.question
        if item.history or split not in splits or not item.answerable or not MANY.pattern.search(question):
            continue
        q = read(question, loaded.catalog)
        if pipeline.router.intent(q.placeholders()) not in (Intent.CONTENT, Intent.LIST):
            continue
        hits = app.retriever.search(question, max(pipeline.k, pipeline.list_k), merge_filters(Filters(), q)).hits
        if not hits or relevance.unknown_names_read(q, hits):
            continue
        assessment = relevance.assess(question, hits)
        cosines = relevance.part_cosines(question, assessment.papers)
        if cosines is None or assessment.confidence < relevance.abstain_below:
            continue
        probabilities = [p.probability for p in assessment.papers]
        out.append(
            {
                "source": source.name,
                "id": item.id,
                "split": split,
                "gold": sorted(item.gold_ids),
                "papers": [p.hit.paper.id for p in assessment.papers],
                "kept": relevance.kept(probabilities, many=True),
                "best": int(np.argmax(probabilities)),
                "cosines": cosines.tolist(),
            }
        )
        if len(out) % 50 == 0:
            print(f"  {index}: {len(out)}", file=sys.stderr)
    return out


def listed(row: dict[str, Any], floor: float | None, relative: bool) -> set[str]:
    """The papers `Relevance.listed` lists for the row at `floor` (None: no floor)."""
    places = row["kept"]
    if floor is not None and len(places) > 1:
        weakest = part_weakest(np.asarray(row["cosines"]), relative)
        places = [i for i in places if i == row["best"] or weakest[i] >= floor]
    return {row["papers"][i] for i in places}


def figures(rows: list[dict[str, Any]], floor: float | None, relative: bool) -> dict[str, float]:
    """Precision, recall (of the gold papers retrieved) and F1 of the listed papers, pooled."""
    tp = fp = fn = 0
    for row in rows:
        shown, gold = listed(row, floor, relative), set(row["gold"])
        tp += len(shown & gold)
        fp += len(shown - gold)
        fn += len(gold & set(row["papers"]) - shown)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = f_beta(precision, recall)
    return {"questions": len(rows), "precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", action="append", default=[], help="NAME=DIR for each index (conf, sample)")
    parser.add_argument("--rows", type=Path, default=Path("eval/generated/part_floor_rows.json"))
    parser.add_argument("--refresh", action="store_true", help="recompute the cached rows")
    parser.add_argument("--write", action="store_true", help="store the chosen floor in the model file")
    parser.add_argument("--out", type=Path, default=RELEVANCE_MODEL)
    args = parser.parse_args()
    rows = cached_rows(args.rows, args.refresh, args.home, collect)
    train = [r for r in rows if r["split"] == "train"]
    validation = [r for r in rows if r["split"] == "validation"]
    options = [
        (figures(train, float(floor), relative)["f1"], relative, float(floor))
        for relative, floors in FLOORS.items()
        for floor in floors
    ]
    f1, relative, floor = max(options, key=lambda o: (o[0], -abs(o[2])))
    chosen = {
        "form": "relative" if relative else "absolute",
        "floor": floor,
        "train without": figures(train, None, relative),
        "train with": figures(train, floor, relative),
        "validation without": figures(validation, None, relative),
        "validation with": figures(validation, floor, relative),
        "best absolute on train": max((o for o in options if not o[1]), key=lambda o: o[0])[::2],
        "best relative on train": max((o for o in options if o[1]), key=lambda o: o[0])[::2],
    }
    print(json.dumps(chosen, indent=1))
    if args.write:
        paper = LogisticModel.load(args.out, "paper")
        thresholds = {**paper.thresholds, "part_floor": floor, "part_relative": float(relative)}
        chosen_on = {**paper.chosen_on, "part_floor (plural questions with two topics or more)": chosen}
        LogisticModel(paper.features, paper.weights, paper.bias, paper.mean, paper.scale, thresholds, chosen_on).save(
            args.out, "paper"
        )


if __name__ == "__main__":
    main()
