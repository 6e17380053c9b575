"""Questions whose only subject is one paper's coined name, built mechanically from an index:
`python -m eval.build_named_subject --home DIR [--out FILE] [--n N]`.

The class: the first thing a reader asks of a paper they have heard of ("What does ZETA propose?",
"How does TimeMCL work?"). The search finds the paper at once, but the question holds no word but
the name for the models to match, and over the conference the shipped answer layer abstained on
about three in ten of them (train split, 2026-12-05: 35 of 120). A paper is named as in
`eval.build_named_details` (its title opens with a coined name no other title or abstract holds);
for a fixed-seed sample of `--n` of them, one question in a form drawn per paper with a fixed seed,
gold that paper, split keyed by the paper. Every form asks what an abstract states (what the
paper proposes, how, what for, what it found). Read through `eval.heldout` (family
`conf-named-subject`), measured only."""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

from eval.build_named_details import named_papers
from eval.build_topic_pairs import papers_of, write_set
from rag.evaluation import split_of

SEED = 20261206
FORMS = (
    "What does {name} propose?",
    "What is {name}?",
    "How does {name} work?",
    "What problem does {name} address?",
    "Summarize the {name} paper.",
    "What are the main results of {name}?",
    "What is the key idea behind {name}?",
    "Tell me about {name}.",
)


def build(papers: list[tuple[str, list[str], str]], n: int) -> list[dict[str, Any]]:
    named = named_papers(papers)
    chosen = sorted(random.Random(SEED).sample(named, min(n, len(named))))
    items = []
    for pid, name, _ in chosen:
        form = random.Random(f"{SEED}:{pid}").choice(FORMS)
        items.append(
            {
                "id": f"named-subject:{pid}",
                "kind": "named-subject",
                "question": form.format(name=name),
                "gold_ids": [pid],
                "split": split_of(pid),
            }
        )
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="the conference index (seeds + both lists)")
    parser.add_argument("--n", type=int, default=600, help="named papers to ask about")
    default = Path(__file__).resolve().parent / "generated" / "conf_named_subject.jsonl"
    parser.add_argument("--out", type=Path, default=default)
    args = parser.parse_args()
    write_set(args.out, build(papers_of(args.home), args.n), "whose only subject is a paper's coined name")


if __name__ == "__main__":
    main()
