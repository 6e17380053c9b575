"""How fast the SQLite catalogue takes a long log, committing after every segment or in groups.

    python -m eval.bench.catalog_load [--n 1000000] [--segment 2000] [--every 1 --every 10] [--json]

A second machine's first sync applies the whole change log to an empty catalogue. This applies N
synthetic papers (the scale benchmark's generator, one copy each, `Catalog.apply` as the sync
calls it, with hints) in segments of 2,000, committing every `--every` segments, and prints the
seconds per 100,000 papers as the catalogue grows and the total. Only the catalogue is timed: no
Chroma, no keyword index. It shows why `Catalog.bulk_load` groups commits: a commit writes every
page the transaction dirtied, and new papers dirty pages all over the indexes of random keys.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any

from eval.bench.scale import synth
from rag.papers import copies_digest
from rag.store import Catalog
from rag.types import Paper


def load(data: Path, n: int, segment: int, every: int, folder: Path, cache_mib: int) -> dict[str, Any]:
    shutil.rmtree(folder, ignore_errors=True)
    catalog = Catalog(folder / "catalog.sqlite")
    if cache_mib:
        catalog.db.execute(f"PRAGMA cache_size=-{cache_mib * 1024}")
    marks: list[float] = []
    started = last = time.perf_counter()
    done = 0
    with data.open(encoding="utf-8") as handle, catalog.bulk_load(segments_per_commit=every) as flush:
        while done < n:
            records = [json.loads(line) for line in islice(handle, min(segment, n - done))]
            if not records:
                break
            copies = []
            hints = {}
            for i, r in enumerate(records):
                fields = {k: r[k] for k in ("title", "abstract", "authors", "venue", "year", "track", "decision")}
                data_ = Paper(id=r["id"], source="bench.jsonl", ordinal=done + i, **fields).to_dict()
                digest = str(done + i)
                copies.append(((1, "bench", done + i), f"bench|{r['id']}", r["id"], "bench.jsonl", digest, data_))
                hints[r["id"]] = (copies_digest([digest]), "", "v1", 1)
            catalog.apply(f"seg-{done:012d}", copies, [], lambda paper: ("v1", 1), hints=hints)
            flush()
            done += len(records)
            if done % 100_000 == 0:
                now = time.perf_counter()
                marks.append(round(now - last, 1))
                last = now
    total = time.perf_counter() - started
    size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "papers": done,
        "commit_every_segments": every,
        "seconds": round(total, 1),
        "seconds_per_100k": marks,
        "catalogue_mib": round(size),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--segment", type=int, default=2000)
    parser.add_argument("--every", type=int, action="append", help="commit every K segments (repeatable)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "rag-catalog-load")
    parser.add_argument("--cache-mib", type=int, default=0, help="SQLite page cache (default: the catalogue's)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = args.work / f"synthetic-{args.n}.jsonl"
    if not data.exists():
        args.work.mkdir(parents=True, exist_ok=True)
        synth(data, args.n)
    folder = args.work / "catalog"
    rows = [load(data, args.n, args.segment, every, folder, args.cache_mib) for every in args.every or [1, 10]]
    if args.json:
        print(json.dumps(rows))
        return
    for row in rows:
        print(
            f"commit every {row['commit_every_segments']:>3} segments: {row['papers']:,} papers in "
            f"{row['seconds']} s, {row['catalogue_mib']} MiB; s per 100k: {row['seconds_per_100k']}"
        )


if __name__ == "__main__":
    main()
