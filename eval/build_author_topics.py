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
and on the topic, `cited` whether one is. Gold is lexical, so the figures are a floor.

The unanswerable twin (`--absent-out`, family `conf-author-absent`): the same authors with a topic
that none of their papers names while at least `MIN_TOPIC_PAPERS` papers of the collection do
("Which papers by Sergey Levine are about speech?"), as many as the answerable pairs, in the same
forms. Each should abstain: the author filter holds, the topic does not. It is what a decision that
trusts the filter too much would answer."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from typing import Any

from eval.build_topic_pairs import TOPICS, twins_command
from rag.evaluation import split_of

SEED = 20261204
MIN_PAPERS = 5
MIN_TOPIC_PAPERS = 15
Pair = tuple[str, str, str, list[str]]  # author, topic, its short name, the author's papers naming it
FORMS = (
    "Which papers by {author} are about {topic}?",
    "What has {author} published on {topic}?",
    "List {author}'s papers on {topic}.",
    "Which of {author}'s papers deal with {topic}?",
)


def build(papers: list[tuple[str, list[str], str]], n: int) -> tuple[list[dict], list[dict]]:
    """The answerable (author, topic) questions and their unanswerable twins."""
    by_author: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for pid, authors, text in papers:
        for author in dict.fromkeys(authors):
            by_author[author].append((pid, text))
    names = " | ".join(by_author)
    common = {
        name
        for name, _, pattern in TOPICS
        if sum(1 for *_, t in papers if re.search(pattern, t, re.I)) >= MIN_TOPIC_PAPERS
    }
    candidates: list[Pair] = []
    absent: list[Pair] = []
    for author, own in sorted(by_author.items()):
        if len(own) < MIN_PAPERS or len(author.split()) < 2:
            continue  # a one-word name ("Liu") is not an author a user names
        if names.count(author) > 1:
            continue  # "Bo Li" is part of "Bo Lin": the catalogue's author filter would take both
        for name, short, pattern in TOPICS:
            gold = sorted(pid for pid, text in own if re.search(pattern, text, re.I))
            if 1 <= len(gold) <= len(own) // 2:
                candidates.append((author, name, short, gold))
            elif not gold and name in common:
                absent.append((author, name, short, []))
    rng = random.Random(SEED)
    chosen = sorted(rng.sample(candidates, min(n, len(candidates))), key=lambda c: (c[0], c[1]))
    twins = random.Random(f"{SEED}:absent").sample(absent, min(len(chosen), len(absent)))
    return [_asked(c, "author-topic") for c in chosen], [_asked(c, "author-absent") for c in sorted(twins)]


def _asked(pair: Pair, kind: str) -> dict[str, Any]:
    author, name, short, gold = pair
    key = f"{kind}:{author}|{name}"
    pick = random.Random(f"{SEED}:{key}")
    topic = short if short and pick.random() < 0.5 else name
    item: dict[str, Any] = {"id": key, "kind": kind, "question": pick.choice(FORMS).format(author=author, topic=topic)}
    item.update({"gold_ids": gold} if gold else {"answerable": False})
    return {**item, "split": split_of(key)}


def main() -> None:
    twins_command(
        __doc__,
        build,
        ("conf_author_topics.jsonl", "conf_author_absent.jsonl"),
        ("for an author's papers on a topic", "for an author's papers on a topic none of them names"),
        "(author, topic) pairs to ask",
    )


if __name__ == "__main__":
    main()
