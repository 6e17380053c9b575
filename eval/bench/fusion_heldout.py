"""Which rankers earn their place, and how to fuse them, on held-out splits.

    python -m eval.bench.fusion_heldout --home conf=DIR --home scifact=DIR [--cache FILE] [--test]

Each ranker runs once per answerable question without history (its top 50, with scores where it
has them) over the conference sources (writers' and mechanical sets) and SciFact's claims; the
rankings are cached, with each of the chosen fusion's first ten papers' best sentence cosine (for
the reranker, rag.search.rerank), so variants are compared in seconds. Prints nDCG@10 and Recall@5
per split: every ranker alone, the fusion, the fusion reordered by best sentence at several weights
and depths, and the other fusion variants.
Choices are made on `validation`; `--test` adds the test column once the choice is made."""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.heldout import split_items
from rag.evaluation import SPLITS, mean, ndcg_at_k, recall_at_k

DEPTH = 50  # the retriever's candidates per ranker (RAG_CANDIDATES)
RERANK_DEPTH = 10  # the fused ranking's first papers whose best sentence cosine is cached
# {"gold": [...], "split": str, "set": str, "rankings": {name: [[pid, score], ...]},
#  "sentence": [[pid, best sentence cosine], ...] for the chosen fusion's first RERANK_DEPTH papers}
Run = dict[str, Any]


def collect(index: str, home: Path) -> list[Run]:
    os.environ["RAG_HOME"] = str(home)
    from rag.app import App
    from rag.settings import Settings
    from rag.types import Mode

    app = App(Settings())
    loaded = app.index.load()
    reranker = app.retriever.reranker
    assert reranker is not None, "the sentence reranker needs the local embedding model"
    runs: list[Run] = []
    for source, item, _, split in split_items(index, loaded.catalog):
        if not item.answerable or not item.gold_ids or item.history:
            continue
        ranked = app.retriever.rankings(loaded, item.question, DEPTH, None, Mode.HYBRID)
        rankings = {r.name: [[p, r.scores[i] if r.scores else 0.0] for i, p in enumerate(r.papers)] for r in ranked}
        title_only = sorted(loaded.catalog.title_only({p for r in ranked for p in r.papers}))
        run = {"rankings": rankings, "title_only": title_only}
        # cosines of the first papers with the title-only lift and without it (its ablation)
        orders = [library(app.settings.dense_weight, lift)(run)[:RERANK_DEPTH] for lift in (LIFTED, 0.0)]
        first = list(dict.fromkeys(p for order in orders for p in order))
        papers = loaded.catalog.get_many(first)
        found = [papers[p] for p in first if p in papers]
        cosines = reranker.best_cosines(item.question, found)
        runs.append(
            {
                "gold": item.gold_ids,
                "split": split,
                "set": "scifact" if index == "scifact" else "conf",
                "source": source.name,
                "rankings": rankings,
                "title_only": title_only,
                "sentence": [[p.id, c] for p, c in zip(found, cosines)],
            }
        )
    return runs


Fusion = Callable[[Run], list[str]]  # a run -> its papers, best first


def rrf(weights: dict[str, float], k: float) -> Fusion:
    def fuse(run: Run) -> list[str]:
        scores: dict[str, float] = {}
        for name, ranked in run["rankings"].items():
            w = weights.get(name, 0.0)
            for rank, (pid, _) in enumerate(ranked, start=1):
                scores[pid] = scores.get(pid, 0.0) + w / (k + rank)
        return sorted(scores, key=lambda p: (-scores[p], p))

    return fuse


def convex(alpha: float, boosts: dict[str, float], k: float, norm: str = "max") -> Fusion:
    """alpha * dense cosine + (1 - alpha) * BM25 normalised within the candidates, plus
    reciprocal-rank boosts from the rankers that only order (names, mentions, authors, facets)."""

    def fuse(run: Run) -> list[str]:
        rankings = run["rankings"]
        scores: dict[str, float] = {}
        for name, weight in (("dense", alpha), ("keyword", 1 - alpha)):
            ranked = rankings.get(name, [])
            if not ranked:
                continue
            values = [s for _, s in ranked]
            top, low = max(values), min(values)
            for pid, s in ranked:
                if norm == "max":
                    x = s / top if top > 0 else 0.0
                else:  # min-max over the candidates
                    x = (s - low) / (top - low) if top > low else 0.0
                scores[pid] = scores.get(pid, 0.0) + weight * x
        for name, w in boosts.items():
            for rank, (pid, _) in enumerate(rankings.get(name, []), start=1):
                scores[pid] = scores.get(pid, 0.0) + w / (k + rank)
        return sorted(scores, key=lambda p: (-scores[p], p))

    return fuse


TITLE_ONLY = 0.0  # rag.search.Fusion.title_only as shipped (off)
LIFTED = 0.25  # the lift chosen on train and measured on validation (session 29), not shipped


def library_scores(run: Run, dense: float, title_only: float = TITLE_ONLY) -> dict[str, float]:
    """The retriever's own fusion (rag.search.retrieve.fuse) over a run's cached rankings, the dense
    ranker's first paper lifted by `title_only` when it has no abstract (runs cached before session
    29 know no title-only papers)."""
    from rag.search import Fusion as Weights
    from rag.search import Ranking, fuse

    built = [
        Ranking(name, [p for p, _ in r], [s for _, s in r])
        for name, r in run["rankings"].items()
        if name in ("dense", "keyword")
    ]
    return fuse(built, Weights(dense=dense, title_only=title_only), run.get("title_only", ()))


def library(dense: float, title_only: float = TITLE_ONLY) -> Fusion:
    def run(r: Run) -> list[str]:
        scores = library_scores(r, dense, title_only)
        return sorted(scores, key=lambda p: (-scores[p], p))

    return run


def reranked(dense: float, weight: float, depth: int, title_only: float = TITLE_ONLY) -> Fusion:
    """The retriever's fusion, its first `depth` papers reordered by fused score + weight x best
    sentence cosine (rag.search.rerank), from the cosines cached for the chosen fusion's first
    papers (so `dense` other than the chosen weight reads cosines of a slightly different list)."""

    def run(r: Run) -> list[str]:
        scores = library_scores(r, dense, title_only)
        cosines = {p: c for p, c in r.get("sentence", [])}
        order = sorted(scores, key=lambda p: (-scores[p], p))
        bonus = {p: scores[p] + weight * max(cosines.get(p, 0.0), 0.0) for p in order[:depth]}
        return sorted(bonus, key=lambda p: (-bonus[p], p)) + order[depth:]

    return run


def single(name: str) -> Fusion:
    return lambda run: [p for p, _ in run["rankings"].get(name, [])]


# The sets a figure is reported on. The lists' questions are split by family as well: the mechanical
# ones are built from the abstracts' own words, where BM25 alone sits near 0.99, and the writers'
# are in users' words, where a dense signal has something to add.
SETS = ("scifact", "conf", "conf-written", "conf-mechanical")


def in_set(run: Run, name: str) -> bool:
    if name in ("scifact", "conf"):
        return bool(run["set"] == name)
    return bool(run["set"] == "conf" and str(run.get("source", "")).startswith(name))


@dataclass
class Result:
    name: str
    figures: dict[tuple[str, str], tuple[float, float]]  # (set, split) -> (nDCG@10, R@5)


def evaluate(name: str, fusion: Fusion, runs: Sequence[Run], splits: Sequence[str]) -> Result:
    figures = {}
    for data in SETS:
        for split in splits:
            chosen = [r for r in runs if in_set(r, data) and r["split"] == split]
            if not chosen:
                figures[(data, split)] = (math.nan, math.nan)
                continue
            orders = [fusion(r) for r in chosen]
            figures[(data, split)] = (
                mean(ndcg_at_k(o, r["gold"], 10) for o, r in zip(orders, chosen)),
                mean(recall_at_k(o, r["gold"], 5) for o, r in zip(orders, chosen)),
            )
    return Result(name, figures)


def show(results: Sequence[Result], splits: Sequence[str]) -> None:
    head = " | ".join(f"{d} nDCG@10 {s[:2]}" for d in SETS for s in splits)
    print(f"| variant | {head} | conf R@5 {'/'.join(s[:2] for s in splits)} |")
    print("|---|" + "---|" * (len(SETS) * len(splits) + 1))
    for r in results:
        cells = " | ".join(f"{r.figures[(d, s)][0]:.3f}" for d in SETS for s in splits)
        recall = "/".join(f"{r.figures[('conf', s)][1]:.3f}" for s in splits)
        print(f"| {r.name} | {cells} | {recall} |")


CURRENT = {"dense": 0.75, "keyword": 1.0, "names": 1.0, "mentions": 1.0, "authors": 1.0, "facets": 2.0}


def grid(runs: Sequence[Run]) -> None:
    """The convex fusion's grid, ranked by the smaller of its two validation margins over the best
    single ranker (the criterion: beat it on both sets)."""
    splits = ["train", "validation"]
    singles = [evaluate(n, single(n), runs, splits) for n in ("dense", "keyword")]
    best = {d: max(s.figures[(d, "validation")][0] for s in singles) for d in ("scifact", "conf")}
    rows = []
    for alpha in (0.3, 0.35, 0.4, 0.45, 0.5):
        for names in (0.0, 0.1, 0.2, 0.4):
            for mentions in (0.0, 0.1, 0.2):
                for facets in (0.0, 0.1, 0.2):
                    for authors in (0.0, 0.2):
                        boosts = {"names": names, "mentions": mentions, "facets": facets, "authors": authors}
                        result = evaluate(f"a={alpha} {boosts}", convex(alpha, boosts, 1, "minmax"), runs, splits)
                        margin = min(result.figures[(d, "validation")][0] - best[d] for d in best)
                        rows.append((margin, result))
    rows.sort(key=lambda r: -r[0])
    show([r for _, r in rows[:15]], splits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", action="append", default=[], help="conf=DIR, scifact=DIR")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/fusion_runs.json"))
    parser.add_argument("--test", action="store_true", help="add the test split (once the choice is made)")
    parser.add_argument("--grid", action="store_true", help="search the convex fusion's weights")
    args = parser.parse_args()
    if args.cache.exists():
        runs = json.loads(args.cache.read_text())
    else:
        runs = []
        for spec in args.home:
            index, _, path = spec.partition("=")
            runs += collect(index, Path(path))
        args.cache.write_text(json.dumps(runs))
    if args.grid:
        grid(runs)
        return
    splits = [s for s in SPLITS if args.test or s != "test"]
    results = [evaluate(f"{name} alone", single(name), runs, splits) for name in ("dense", "keyword")]
    results.append(evaluate("fusion alone: rag.search.retrieve.fuse", library(0.35), runs, splits))
    for lift in (0.2, LIFTED, 0.3):
        results.append(evaluate(f"fusion alone, title-only lift {lift}", library(0.35, lift), runs, splits))
    if any("sentence" in r for r in runs):  # cached before the sentence reranker
        results.append(
            evaluate("chosen: fusion, first 5 reordered by best sentence (0.8)", reranked(0.35, 0.8, 5), runs, splits)
        )
        for weight, depth in ((0.3, 5), (0.5, 5), (1.0, 5), (1.5, 5), (3.0, 5), (0.8, 3), (0.8, 10)):
            results.append(
                evaluate(f"reordered, weight {weight}, first {depth}", reranked(0.35, weight, depth), runs, splits)
            )
        for lift in (0.2, LIFTED, 0.3):
            name = f"chosen, title-only lift {lift}"
            results.append(evaluate(name, reranked(0.35, 0.8, 5, lift), runs, splits))
    if any("names" in r["rankings"] for r in runs):  # cached before the names boost was dropped
        results.append(evaluate("chosen + names boost 0.2", convex(0.35, {"names": 0.2}, 1, "minmax"), runs, splits))
    if any("mentions" in r["rankings"] for r in runs):  # rankings cached by the previous wave's code
        results.append(evaluate("rrf of six rankers (previous wave)", rrf(CURRENT, 5), runs, splits))
        for left in CURRENT:
            results.append(evaluate(f"rrf without {left}", rrf({**CURRENT, left: 0.0}, 5), runs, splits))
    for alpha in (0.3, 0.4, 0.5, 0.6):
        results.append(evaluate(f"convex a={alpha} (minmax)", convex(alpha, {}, 5, "minmax"), runs, splits))
    show(results, splits)


if __name__ == "__main__":
    main()
