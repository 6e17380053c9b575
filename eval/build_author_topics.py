"""Questions for an author's papers on one topic, built mechanically from an index:
`python -m eval.build_author_topics --home DIR [--out FILE]`.

The class: "Which papers by Sergey Levine are about diffusion?" The author is a filter the
catalogue applies; the topic is a qualifier every paper listed must honour. The issue that opened
this work saw all 17 of an author's papers listed for "about diffusion"; a list led by the author's
other papers shows up here as cited papers that are not gold.

For every author with at least `MIN_PAPERS` papers in the index and every topic of
`eval.build_topic_pairs.TOPICS` that names between one paper and half of them (so that the
author's papers alone would not answer), gold is the author's papers whose title or abstract names
the topic. A fixed-seed sample of `--n` (author, topic) pairs is asked in the forms below, the
topic in its name or acronym; the split is keyed by the pair. Read through `eval.heldout` (family
`conf-author-topic`, measured only): `precision` is the share of cited papers that are the author's
and on the topic, `cited` whether one is. Gold is lexical, so the figures are a floor."""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

from eval.build_heldout import write
from eval.build_topic_pairs import TOPICS, papers_of
from rag.evaluation import split_of

SEED = 20261204
MIN_PAPERS = 5
FORMS = (
    "Which papers by {author} are about {topic}?",
    "What has {author} published on {topic}?",
    "List {author}'s papers on {topic}.",
    "Which of {author}'s papers deal with {topic}?",
)


def build(papers: list[tuple[str, list[str], str]], n: int) -> list[dict]:
    by_author: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for pid, authors, text in papers:
        for author in dict.fromkeys(authors):
            by_author[author].append((pid, text))
    names = " | ".join(by_author)
    candidates = []
    for author, own in sorted(by_author.items()):
        if len(own) < MIN_PAPERS or len(author.split()) < 2:
            continue  # a one-word name ("Liu") is not an author a user names
        if names.count(author) > 1:
            continue  # "Bo Li" is part of "Bo Lin": the catalogue's author filter would take both
        for name, short, pattern in TOPICS:
            gold = sorted(pid for pid, text in own if re.search(pattern, text, re.I))
            if 1 <= len(gold) <= len(own) // 2:
                candidates.append((author, name, short, gold))
    rng = random.Random(SEED)
    chosen = sorted(rng.sample(candidates, min(n, len(candidates))), key=lambda c: (c[0], c[1]))
    items = []
    for author, name, short, gold in chosen:
        key = f"author-topic:{author}|{name}"
        pick = random.Random(f"{SEED}:{key}")
        topic = short if short and pick.random() < 0.5 else name
        items.append(
            {
                "id": key,
                "kind": "author-topic",
                "question": pick.choice(FORMS).format(author=author, topic=topic),
                "gold_ids": gold,
                "split": split_of(key),
            }
        )
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="the conference index (seeds + both lists)")
    parser.add_argument("--n", type=int, default=300, help="(author, topic) pairs to ask")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "generated" / "conf_author_topics.jsonl"
    )
    args = parser.parse_args()
    items = build(papers_of(args.home), args.n)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write(args.out, items)
    by = Counter(item["split"] for item in items)
    print(f"{len(items)} questions for an author's papers on a topic -> {args.out}: {dict(sorted(by.items()))}")


if __name__ == "__main__":
    main()
