"""Ingest throughput next to the raw embedding model on the same texts, in one run.

    python -m eval.bench.ingest_throughput [--data ../shared/data] [--limit N]

Prints abstracts/s for (a) the embedder alone on exactly the chunk texts ingest embeds and
(b) a full ingest into a fresh RAG_HOME, and the ratio. The fresh home is kept (its path is
printed) so the search-latency benchmark can reuse it."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rag.app import App
from rag.papers import Reading, ReadOptions
from rag.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def measure(name: str, paths: list[Path], home: Path, venue: str = "", year: int | None = None) -> None:
    app = App(Settings(home=home))
    options = ReadOptions(venue=venue, year=year)
    papers = list(Reading(paths, options))
    # The texts ingest will embed: one per chunk of each distinct paper (title-only papers: the title).
    from rag.papers import merge_papers

    texts = []
    seen: set[str] = set()
    for paper in papers:
        if paper.id not in seen:
            seen.add(paper.id)
            texts += [c.text for c in app.chunker.chunk(merge_papers([paper], paper.id))]
    embedder = app.embedder
    start = time.perf_counter()
    embedder.embed(texts[:32])  # warm-up, excluded below
    start = time.perf_counter()
    for i in range(0, len(texts), 32):
        embedder.embed(texts[i : i + 32])
    raw_s = time.perf_counter() - start
    start = time.perf_counter()
    report = app.ingest(paths, options, progress=False)
    ingest_s = time.perf_counter() - start
    n = report.chunks_embedded
    print(f"{name}: {len(papers)} records, {len(texts)} chunks to embed, {n} embedded")
    print(f"  raw model : {len(texts) / raw_s:7.1f} chunks/s ({raw_s:.1f} s)")
    print(f"  ingest    : {n / ingest_s:7.1f} chunks/s ({ingest_s:.1f} s, all stages)")
    print(f"  overhead  : {100 * (ingest_s / raw_s - 1):+.1f}% over the raw model   [home: {home}]")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--skip-shared", action="store_true")
    args = parser.parse_args()
    measure("sample", [ROOT / "data" / "sample"], Path(tempfile.mkdtemp(prefix="bench-sample-")), "ICML", 2025)
    jsonl = sorted(args.data.glob("*.jsonl"))
    if args.skip_shared or not jsonl:
        print(f"shared data: skipped ({args.data} has no *.jsonl)")
        return
    measure("shared " + "+".join(p.name for p in jsonl), jsonl, Path(tempfile.mkdtemp(prefix="bench-shared-")))


if __name__ == "__main__":
    main()
