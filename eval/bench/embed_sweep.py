"""The local model's speed by batch size, intra-op threads and ingest workers, measured, not
assumed.

    python -m eval.bench.embed_sweep [--texts 240] [--batches 4 8 16 32] [--threads 1 2]

Texts are real abstracts (the shared lists, else the sample), title-headed as ingest embeds them.
Each configuration embeds the same texts after a warm-up; figures are abstracts per second."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rag.embed import EmbedPool, LocalEmbedder
from rag.papers import read_paths

ROOT = Path(__file__).resolve().parents[2]


def texts(n: int) -> list[str]:
    shared = ROOT.parent / "shared" / "data" / "iclr2025.jsonl"
    if shared.exists():
        records = [json.loads(line) for line in shared.read_text(encoding="utf-8").splitlines()]
        found = [f"{r['title']}\n{r['abstract']}" for r in records if r["abstract"]]
    else:
        found = [p.abstract for p in read_paths([ROOT / "data" / "sample"]).papers]
    return (found * (n // max(len(found), 1) + 1))[:n]


def rate(embed: object, items: list[str]) -> float:
    embed(items[:16])  # type: ignore[operator]
    start = time.perf_counter()
    for i in range(0, len(items), 64):
        embed(items[i : i + 64])  # type: ignore[operator]
    return len(items) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=240)
    parser.add_argument("--batches", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    items = texts(args.texts)
    for threads in args.threads:
        for batch in args.batches:
            model = LocalEmbedder(threads, batch)
            print(f"threads {threads}, batch {batch:>2}: {rate(model.embed, items):6.1f} abstracts/s", flush=True)
    import functools

    from rag.app import build_embedder
    from rag.settings import Settings

    settings = Settings(embed_batch=8)
    one = EmbedPool(build_embedder(settings, 2))
    two = EmbedPool(build_embedder(settings, 1), functools.partial(build_embedder, settings, 1), workers=2)
    single, double = rate(one, items), rate(two, items)
    two.close()
    print(
        f"ingest workers 1 (2 threads): {single:6.1f} abstracts/s; workers 2 (1 thread each): {double:6.1f}; "
        f"ratio {double / single:.2f}"
    )


if __name__ == "__main__":
    main()
