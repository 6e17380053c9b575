"""Search latency p50/p95 over a large index, per retriever, in one process.

    python -m eval.bench.search_latency [--home DIR] [--data ../shared/data] [--queries 300]

Without --home it ingests ../shared/data/*.jsonl into a fresh folder first (about ten minutes on
2 cores). Queries: paper titles (exact-name style) and the first words of abstracts (topic style),
drawn with a fixed seed."""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from rag.app import App
from rag.evaluation import percentile
from rag.settings import Settings
from rag.types import Filters

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    files = sorted(args.data.glob("*.jsonl"))
    if not files:
        raise SystemExit(f"skipped: no *.jsonl in {args.data}")
    home = args.home or Path(tempfile.mkdtemp(prefix="bench-latency-"))
    app = App(Settings(home=home))
    if not app.index.exists():
        print(f"ingesting {', '.join(f.name for f in files)} into {home} …")
        app.ingest(files, progress=True)
    status = app.index.status()
    print(f"index: {status['papers']} papers, {status['chunks_in_chroma']} chunks")
    records = [json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines()]
    rng = random.Random(7)
    picks = rng.sample([r for r in records if r.get("abstract")], args.queries)
    queries = [r["title"] if i % 2 else " ".join(r["abstract"].split()[:12]) for i, r in enumerate(picks)]
    app.search("warm up", k=10)
    for mode in ("keyword", "dense", "hybrid"):
        times = []
        for query in queries:
            start = time.perf_counter()
            app.search(query, k=10, mode=mode)
            times.append((time.perf_counter() - start) * 1000)
        print(
            f"{mode:>8}: p50 {percentile(times, 50):6.1f} ms   p95 {percentile(times, 95):6.1f} ms   "
            f"max {max(times):6.1f} ms   ({len(times)} queries)"
        )
    times = []
    for query in queries[:100]:
        start = time.perf_counter()
        app.search(query, k=10, filters=Filters(venue="ICML"))
        times.append((time.perf_counter() - start) * 1000)
    print(f"hybrid + venue filter: p50 {percentile(times, 50):6.1f} ms   p95 {percentile(times, 95):6.1f} ms")


if __name__ == "__main__":
    main()
