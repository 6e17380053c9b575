"""Retrieval quality on SciFact: nDCG@10 and Recall@10 for BM25 alone, dense alone and hybrid.

    python -m eval.bench.scifact [--home DIR] [--data ../shared/data/scifact] [--limit N]

The corpus (5,183 abstracts) is ingested into --home (or a fresh folder) on first use; the
505 training claims are the queries, `gold_ids` the relevant abstracts."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rag.app import App
from rag.evaluation import load_items, mean, ndcg_at_k, percentile, recall_at_k
from rag.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    corpus, queries = args.data / "corpus.jsonl", args.data / "queries_train.jsonl"
    if not corpus.exists():
        raise SystemExit(f"skipped: {corpus} is absent")
    home = args.home or Path(tempfile.mkdtemp(prefix="bench-scifact-"))
    app = App(Settings(home=home))
    if not app.index.exists():
        start = time.perf_counter()
        report = app.ingest([corpus], progress=True)
        print(f"ingested {report.chunks_embedded} chunks in {time.perf_counter() - start:.0f} s into {home}")
    catalog = app.index.load().catalog
    assert catalog is not None
    items, skipped = load_items(queries, catalog)  # SciFact's query file is already a dataset
    items = items[: args.limit] if args.limit else items
    print(f"SciFact train claims: {len(items)} ({len(skipped)} skipped); corpus: {len(catalog)} abstracts")
    print(f"{'retriever':>9} | nDCG@10 | Recall@10 | MRR    | p50 ms")
    for mode in ("keyword", "dense", "hybrid"):
        ndcg, recall, rr, times = [], [], [], []
        for item in items:
            start = time.perf_counter()
            hits = app.search(item.question, k=10, mode=mode).hits
            times.append((time.perf_counter() - start) * 1000)
            ranked = [h.paper.id for h in hits]
            ndcg.append(ndcg_at_k(ranked, item.gold_ids, 10))
            recall.append(recall_at_k(ranked, item.gold_ids, 10))
            rr.append(next((1 / r for r, pid in enumerate(ranked, 1) if pid in item.gold_ids), 0.0))
        print(f"{mode:>9} | {mean(ndcg):.4f}  | {mean(recall):.4f}    | {mean(rr):.4f} | {percentile(times, 50):.1f}")


if __name__ == "__main__":
    main()
