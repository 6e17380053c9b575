"""Choose the fusion weights and the RRF constant by measurement, on two sets at once: SciFact's
train claims (nDCG@10 over 5,183 biomedical abstracts) and a dev set over a whole conference (the
seeds plus both shared lists: Recall@5 and MRR).

    python -m eval.bench.fusion_sweep --dev-home DIR [--dev eval/datasets/dev_big.jsonl]
                                      [--scifact-home DIR] [--json]

Each ranker runs once per question (its top 100); the grid then fuses the stored rankings, so a
grid of a few hundred settings costs seconds. Items with a conversation history are left out
(retrieval would see the condensed question, not this one). The settings maximising the mean of
the three figures are printed first, with the current defaults beside them."""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from eval.dataset import load_items
from eval.metrics import mean, ndcg_at_k, recall_at_k, reciprocal_rank
from rag.app import App
from rag.retrieve import Mode, Ranking, Retriever, Weights, fuse
from rag.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DEPTH = 100


def rankings(home: Path, dataset: Path) -> list[tuple[list[str], dict[str, list[str]]]]:
    """(gold ids, {ranker: paper ids}) per answerable item without history."""
    app = App(Settings(home=home))
    loaded = app.index.load()
    items, _ = load_items(dataset, loaded.catalog)
    retriever: Retriever = app.retriever
    out = []
    for item in items:
        if not item.answerable or not item.gold_ids or item.history:
            continue
        ranked = retriever.rankings(loaded, item.question, DEPTH, None, Mode.HYBRID)
        out.append((item.gold_ids, {r.name: r.papers for r in ranked}))
    return out


def score(runs: list[tuple[list[str], dict[str, list[str]]]], weights: Weights, rrf_k: int) -> dict[str, float]:
    recall, rr, ndcg = [], [], []
    for gold, ranked in runs:
        facets = min(weights.facets, weights.facets_when_named) if ranked["names"] else weights.facets
        fused = fuse(
            [
                Ranking(name, papers, facets if name == "facets" else getattr(weights, name))
                for name, papers in ranked.items()
            ],
            rrf_k,
        )
        order = sorted(fused, key=lambda p: -fused[p])
        recall.append(recall_at_k(order, gold, 5))
        rr.append(reciprocal_rank(order, gold))
        ndcg.append(ndcg_at_k(order, gold, 10))
    return {"recall@5": mean(recall), "mrr": mean(rr), "ndcg@10": mean(ndcg)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dev-home", type=Path, required=True)
    parser.add_argument("--dev", type=Path, default=ROOT / "eval" / "datasets" / "dev_big.jsonl")
    parser.add_argument("--scifact-home", type=Path)
    parser.add_argument(
        "--scifact", type=Path, default=ROOT.parent / "shared" / "data" / "scifact" / "queries_train.jsonl"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    dev = rankings(args.dev_home, args.dev)
    sci = rankings(args.scifact_home, args.scifact) if args.scifact_home else []
    grid = itertools.product(
        (5, 10, 20, 60), (0.5, 0.75, 1.0, 1.5, 2.0), (0.5, 1.0, 1.5), (1.0, 2.0, 4.0), (0.0, 1.0, 2.0), (0.0, 1.0, 2.0)
    )
    rows = []
    for rrf_k, dense, keyword, names, facets, mentions in grid:
        weights = Weights(dense=dense, keyword=keyword, names=names, mentions=mentions, authors=1.0, facets=facets)
        d = score(dev, weights, rrf_k)
        s = score(sci, weights, rrf_k) if sci else {"ndcg@10": float("nan")}
        figures = [d["recall@5"], d["mrr"]] + ([s["ndcg@10"]] if sci else [])
        rows.append(
            {
                "rrf_k": rrf_k,
                "dense": dense,
                "keyword": keyword,
                "names": names,
                "facets": facets,
                "mentions": mentions,
                "dev_recall@5": round(d["recall@5"], 4),
                "dev_mrr": round(d["mrr"], 4),
                "scifact_ndcg@10": round(s["ndcg@10"], 4),
                "mean": round(mean(figures), 4),
            }
        )
    rows.sort(key=lambda r: -r["mean"])
    current = Weights()
    now = next(
        r
        for r in rows
        if (r["rrf_k"], r["dense"], r["keyword"], r["names"], r["facets"], r["mentions"])
        == (Settings().rrf_k, current.dense, current.keyword, current.names, current.facets, current.mentions)
    )
    if args.json:
        print(json.dumps({"best": rows[:10], "current": now, "dev_items": len(dev), "scifact_items": len(sci)}))
        return
    print(f"dev items {len(dev)}, SciFact items {len(sci)}")
    print("rrf_k dense keyword names facets mentions | dev R@5  dev MRR  SciFact nDCG@10 | mean")
    for row in [*rows[:10], now]:
        print(
            f"{row['rrf_k']:>5} {row['dense']:>5} {row['keyword']:>7} {row['names']:>5} {row['facets']:>6} "
            f"{row['mentions']:>8} | "
            f"{row['dev_recall@5']:.3f}    "
            f"{row['dev_mrr']:.3f}    {row['scifact_ndcg@10']:.3f}           | {row['mean']:.3f}"
            + ("   <- current" if row is now else "")
        )


if __name__ == "__main__":
    main()
