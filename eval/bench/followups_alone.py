"""Subject-less follow-ups after a question about one paper, per phrasing:

    python -m eval.bench.followups_alone --home DIR [--model FILE] [--papers 20] [--split train] [--json]

A chat opens with "What does <name> propose?" for papers named by a coined name (their label), kept
when that answer cites the paper; then one phrasing of `datasets/generic_alone.jsonl` ("What were
the main results?", "What problem does this solve?") is asked with no word naming the paper.
Printed per phrasing: how many follow-ups abstained and how many cite the paper. Not every phrasing
is answerable from an abstract ("What was the error rate?" of a paper that reports none), so this
is a measure of the class, not a held-out family with gold: it shows which phrasings a model turns
away after a paper is under discussion. `--model` swaps the answerable model (and the model of a
conversation's follow-up readings, when the file holds one) for those saved by `eval.fit_relevance --out`
(the trees candidates of docs/benchmarks.md, sessions 15 and 16). Only the phrasings of `--split`
are asked (train by default)."""

from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path

from rag.app import App
from rag.settings import Settings

PHRASINGS = Path(__file__).resolve().parents[1] / "datasets" / "generic_alone.jsonl"
SEED = 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--model", type=Path, help="a relevance model file whose answerable part to use")
    parser.add_argument("--papers", type=int, default=20, help="named papers to open a chat about")
    parser.add_argument("--split", default="train", help="the phrasings' split")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ["RAG_HOME"] = str(args.home)
    from rag.answer import question_models
    from rag.types import Filters

    app = App(Settings())
    if args.model:
        relevance = app.pipeline.relevance
        relevance.answerable, relevance.fallback = question_models(args.model, app.settings.embedder)
    catalog = app.index.load().catalog
    named = sorted(
        (p for p in catalog.select(Filters(), 100_000) if p.abstract and p.label and "…" not in p.label),
        key=lambda p: p.id,
    )
    papers = random.Random(SEED).sample(named, min(args.papers, len(named)))
    records = [json.loads(line) for line in PHRASINGS.read_text(encoding="utf-8").splitlines() if line.strip()]
    phrasings = [r["question"] for r in records if r.get("split") == args.split]
    counts: dict[str, dict[str, int]] = {q: {"asked": 0, "abstained": 0, "cite_the_paper": 0} for q in phrasings}
    for paper in papers:
        for question in phrasings:
            chat = app.chat()
            first = chat.ask(f"What does {paper.label} propose?")
            if first.abstained or not first.citations or first.citations[0].paper.id != paper.id:
                continue
            answer = chat.ask(question)
            row = counts[question]
            row["asked"] += 1
            row["abstained"] += int(answer.abstained)
            row["cite_the_paper"] += int(bool(answer.citations) and answer.citations[0].paper.id == paper.id)
    total = {k: sum(r[k] for r in counts.values()) for k in ("asked", "abstained", "cite_the_paper")}
    if args.json:
        print(json.dumps({"total": total, "phrasings": counts}, indent=1))
        return
    print(f"{total['asked']} follow-ups: {total['abstained']} abstained, {total['cite_the_paper']} cite the paper")
    for question, row in sorted(counts.items(), key=lambda kv: kv[1]["abstained"] / max(kv[1]["asked"], 1)):
        print(f"{row['abstained']:3d} / {row['asked']:3d} abstained  {row['cite_the_paper']:3d} cite  {question}")


if __name__ == "__main__":
    main()
