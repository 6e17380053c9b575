"""Exact-title search: how often a paper's own title puts it first, for title-only papers and for
papers with abstracts, over the two shared lists (7,034 papers, 2,198 without abstract).

    python -m eval.bench.title_search [--home DIR] [--embedder local|hash] [--limit N] [--json]

Without --home it ingests ../shared/data/*.jsonl into a fresh folder first (with `--embedder
hash`, the stand-in, in about a minute; with `local`, the real model, in about ten). A hit counts
when the first result is the paper or carries exactly the same title (a few titles occur twice).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from rag.app import App
from rag.settings import Settings
from rag.text import fold

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--embedder", choices=["local", "hash"], default="hash")
    parser.add_argument("--limit", type=int, default=0, help="titles per group (0: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    files = sorted(args.data.glob("*2025.jsonl"))
    if not files:
        raise SystemExit(f"skipped: no ICLR/ICML lists in {args.data}")
    home = args.home or Path(tempfile.mkdtemp(prefix="bench-titles-"))
    app = App(Settings(home=home, embedder=args.embedder))
    if not app.index.exists():
        app.ingest(files, progress=False)
    records = [json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines()]
    groups = {
        "title-only": [r for r in records if not r["abstract"]],
        "with abstract": [r for r in records if r["abstract"]],
    }
    out: dict[str, dict[str, float]] = {}
    for name, group in groups.items():
        if args.limit:
            group = group[: args.limit]
        first = top5 = 0
        misses: list[str] = []
        start = time.perf_counter()
        for record in group:
            hits = app.search(record["title"], k=5).hits
            same = [h.paper.id == record["id"] or fold(h.paper.title) == fold(record["title"]) for h in hits]
            first += bool(same and same[0])
            top5 += any(same)
            if not (same and same[0]) and len(misses) < 5:
                misses.append(record["title"][:70])
        seconds = time.perf_counter() - start
        out[name] = {
            "papers": len(group),
            "first": round(first / len(group), 4),
            "top5": round(top5 / len(group), 4),
            "ms_per_search": round(1000 * seconds / len(group), 1),
        }
        if not args.json:
            print(
                f"{name:>14}: first {first}/{len(group)} = {first / len(group):.1%}, top 5 {top5 / len(group):.1%}, "
                f"{1000 * seconds / len(group):.1f} ms per search; misses e.g. {misses[:3]}"
            )
    if args.json:
        print(json.dumps({"embedder": args.embedder, "home": str(home), **out}))


if __name__ == "__main__":
    main()
