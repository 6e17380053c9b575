"""Draw the papers a question writer writes about: `RAG_HOME=<conf index> python -m eval.draw_papers
--out DIR --writers 8 9 10 [--seed 20261203] [--split train]`.

Papers are drawn at random with a fixed seed from the index's catalogue, leaving out every paper
that is already the gold paper of a hand-written held-out question (`datasets/heldout/*.jsonl`),
so a new writer's questions never share a paper with another writer's. Each writer gets
`--with-abstract` papers that have an abstract of more than 200 characters and `--title-only`
papers without one, written to `DIR/w<N>_papers.jsonl`; `DIR/corpus.jsonl` holds the whole
catalogue, for the writer's checks (a name absent from every title and abstract, a qualifier no
abstract pairs with a topic). The writer's instructions are `datasets/heldout/BRIEF.md`.

`--split` draws only papers whose own split (`rag.evaluation.split_of` of the id) is that one: a
writer who writes for one split then asks about papers every other family of questions puts in
the same split, so no paper is taught on in one family and measured on in another."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from rag.app import App
from rag.evaluation import SPLITS, split_of
from rag.settings import Settings
from rag.types import Paper

HELDOUT = Path(__file__).resolve().parent / "datasets" / "heldout"


def used_gold(writers: list[int]) -> set[str]:
    """Gold papers of the other writers' files (a writer's own file, once written, does not
    change the draw: the draw can be repeated)."""
    used: set[str] = set()
    own = tuple(f"_w{n}.jsonl" for n in writers)
    for path in sorted(HELDOUT.glob("*.jsonl")):
        if path.name.endswith(own):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                used |= set(json.loads(line).get("gold_ids") or [])
    return used


def record(paper: Paper, authors: int | None = None) -> dict[str, object]:
    return {
        "id": paper.id,
        "title": paper.title,
        "abstract": paper.abstract,
        "authors": list(paper.authors)[:authors],
        "venue": paper.venue,
        "year": paper.year,
        **({"decision": paper.decision} if authors is None else {}),
    }


def write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def drawable(papers: list[Paper], used: set[str], split: str | None = None) -> tuple[list[Paper], list[Paper]]:
    """The papers a writer may be given, in catalogue order: with an abstract of more than 200
    characters, and title-only; never one of `used`, and with `split`, only papers of that split."""
    free = [p for p in papers if p.id not in used and (split is None or split_of(p.id) == split)]
    return [p for p in free if len(p.abstract.strip()) > 200], [p for p in free if not p.abstract.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--writers", type=int, nargs="+", required=True)
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--with-abstract", type=int, default=60)
    parser.add_argument("--title-only", type=int, default=4)
    parser.add_argument("--split", choices=SPLITS, default=None, help="draw only papers of this split")
    args = parser.parse_args()
    papers = [p for _, p in App(Settings()).index.load().catalog.iter_papers()]
    args.out.mkdir(parents=True, exist_ok=True)
    write(args.out / "corpus.jsonl", [record(p) for p in papers])
    with_abstract, title_only = drawable(papers, used_gold(args.writers), args.split)
    rng = random.Random(args.seed)
    rng.shuffle(with_abstract)
    rng.shuffle(title_only)
    a, t = args.with_abstract, args.title_only
    for n, writer in enumerate(args.writers):
        drawn = with_abstract[n * a : (n + 1) * a] + title_only[n * t : (n + 1) * t]
        write(args.out / f"w{writer}_papers.jsonl", [record(p, authors=8) for p in drawn])
        print(f"writer {writer}: {len(drawn)} papers")


if __name__ == "__main__":
    main()
