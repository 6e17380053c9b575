"""The abstention trade-off on claims whose evidence was removed:
`python -m eval.bench.tradeoff --home DIR --removed-home DIR [--split test] [--source scifact]`.

For each claim of the split, asked of the full index and of the index without the claims' gold
abstracts, the pipeline's own decision is replayed (search, relevance model, the papers it would
cite; a claim naming a name no abstract mentions abstains at every threshold, as in the
pipeline); then, for every abstention threshold, two figures: answerable claims answered citing
their evidence, and evidence-removed claims abstained. Beside it the curve of one threshold on
the best sentence's MiniLM cosine over the top three papers (the signal before this model), and
the area under each curve (AUC: the chance that an answerable claim outranks a removed one)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from eval.heldout import SOURCES, item_split, raw_records
from rag.evaluation import load_items

THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.05, 0.96, 0.05))


def replay(home: Path, source_name: str, split: str) -> list[tuple[float, float, bool, bool]]:
    """(model confidence, best-sentence cosine of the top three, answerable, would cite gold)."""
    os.environ["RAG_HOME"] = str(home)
    from rag.answer import read
    from rag.app import App
    from rag.settings import Settings

    app = App(Settings())
    loaded = app.index.load()
    pipeline = app.pipeline
    source = next(s for s in SOURCES if s.name == source_name)
    items, _ = load_items(source.path, loaded.catalog)
    raw = raw_records(source.path)
    out = []
    for item in items:
        if item_split(item, raw.get(item.id, {}), source) != split:
            continue
        hits = app.retriever.search(item.question, pipeline.k).hits
        if not hits:
            out.append((0.0, 0.0, item.answerable, False))
            continue
        assessment = pipeline.relevance.assess(item.question, hits)
        papers = assessment.papers
        kept = [papers[i] for i in pipeline.relevance.kept([p.probability for p in papers])]
        cites = bool({p.hit.paper.id for p in kept} & set(item.gold_ids))
        cosine = max(float(np.max(np.append(p.cosines, -1.0))) for p in papers[:3])
        unknown = pipeline.relevance.unknown_names_read(read(item.question, loaded.catalog), hits)
        out.append((0.0 if unknown else assessment.confidence, cosine, item.answerable, cites))
    return out


def curve(rows: list[tuple[float, bool, bool]], thresholds: list[float]) -> list[tuple[float, float, float]]:
    answerable = [(s, c) for s, a, c in rows if a]
    removed = [s for s, a, _ in rows if not a]
    return [
        (
            t,
            float(np.mean([s >= t and c for s, c in answerable])),
            float(np.mean([s < t for s in removed])),
        )
        for t in thresholds
    ]


def auc(rows: list[tuple[float, bool, bool]]) -> float:
    pos = [s for s, a, _ in rows if a]
    neg = [s for s, a, _ in rows if not a]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="the full index")
    parser.add_argument("--removed-home", type=Path, required=True, help="the index without the gold abstracts")
    parser.add_argument("--source", default="scifact", help="scifact (its twin is scifact-removed)")
    parser.add_argument("--split", default="validation")
    args = parser.parse_args()
    rows = replay(args.home, args.source, args.split) + replay(args.removed_home, f"{args.source}-removed", args.split)
    model = [(conf, a, c) for conf, _, a, c in rows]
    cosine = [(cos, a, c) for _, cos, a, c in rows]
    print(
        f"{args.source}, {args.split} split: {sum(a for *_, a, _ in rows)} answerable, "
        f"{sum(not a for *_, a, _ in rows)} evidence removed"
    )
    print(f"AUC: relevance model {auc(model):.3f}; best-sentence cosine of the top 3 {auc(cosine):.3f}")
    cos_range = sorted({round(c, 2) for c, _, _ in cosine})
    cos_thresholds = [float(t) for t in np.quantile(cos_range, np.linspace(0.05, 0.95, len(THRESHOLDS)))]
    print("| threshold | answered citing evidence | removed abstained | cosine threshold | answered | abstained |")
    print("|---|---|---|---|---|---|")
    for (t, a, r), (ct, ca, cr) in zip(curve(model, list(THRESHOLDS)), curve(cosine, cos_thresholds)):
        print(f"| {t:.2f} | {a:.3f} | {r:.3f} | {ct:.3f} | {ca:.3f} | {cr:.3f} |")


if __name__ == "__main__":
    main()
