"""Time the offline answerer: per question, the pipeline's stages and the sentences it embedded.

    python -m eval.bench.answer_latency [--home DIR] [--dataset eval/datasets/dev.jsonl] [--limit N] [--json]

The embedding cache is kept between questions, as a running UI or `rag eval` keeps it (every
question is asked once, in dataset order, so papers recur only as they do for a user), or with
`--cold` emptied before each question, as for `rag ask` or a collection too large for papers to
recur. The count
of sentences sent to the model is the figure that does not depend on how busy the machine is
(the model embeds about 30-90 sentences a second on 2 cores, depending on load); milliseconds are
reported with the load average beside them."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from rag.app import App
from rag.evaluation import load_items, percentile
from rag.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path)
    parser.add_argument("--dataset", type=Path, default=ROOT / "eval" / "datasets" / "dev.jsonl")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--cold", action="store_true", help="Empty the embedding cache before each question (as `rag ask` starts)."
    )
    args = parser.parse_args()
    app = App(Settings(home=args.home) if args.home else Settings())
    catalog = app.index.load().catalog
    items, _ = load_items(args.dataset, catalog)
    items = [i for i in items if not i.history][: args.limit or None]
    pipeline = app.pipeline
    embedder = pipeline.checker.embedder
    model_embed = embedder.embed
    sent = [0]

    def counting(texts: list[str]) -> np.ndarray:  # counts what reaches the model, in any version of the code
        sent[0] += len(texts)
        return model_embed(texts)

    embedder.embed = counting  # type: ignore[method-assign]
    pipeline.answer("warm-up: load the model")
    rows: list[dict[str, Any]] = []
    cache = getattr(getattr(pipeline.checker, "vectors", pipeline.checker), "_cache", {})
    for item in items:
        if args.cold:
            cache.clear()
        before = sent[0]
        start = time.perf_counter()
        answer = pipeline.answer(item.question)
        rows.append(
            {
                "id": item.id,
                "kind": answer.kind,
                "generate_ms": answer.timings_ms.get("generate", 0.0),
                "check_ms": answer.timings_ms.get("check", 0.0),
                "total_ms": (time.perf_counter() - start) * 1000,
                "embedded": sent[0] - before,
            }
        )
    summary = {
        "questions": len(rows),
        "load_average": os.getloadavg()[0],
        **{
            f"{key}_p{p}": round(percentile([r[key] for r in rows], p), 1)
            for key in ("generate_ms", "check_ms", "total_ms", "embedded")
            for p in (50, 95)
        },
        "embedded_mean": round(sum(r["embedded"] for r in rows) / max(len(rows), 1), 1),
    }
    if args.json:
        print(json.dumps({"summary": summary, "rows": rows}))
        return
    for key, value in summary.items():
        print(f"{key:>20}: {value}")


if __name__ == "__main__":
    main()
