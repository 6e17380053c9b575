"""Questions about a topic in one named paper, built mechanically from an index:
`python -m eval.build_named_details --home DIR [--out FILE] [--absent-out FILE]`.

The class: the writers' first sort of near miss, a paper the collection holds asked about a detail
its abstract does not give ("How many subjects are in the BrainOOD benchmark?", "Did the Black-
Litterman paper test on crypto portfolios?"). The search finds the named paper at once, so every
signal of the answerable model says "answer"; the writers' sets hold a few dozen such questions,
too few to measure the class.

A paper is named when its title opens with a coined name ("BrainOOD: ...") that no other title or
abstract of the index contains. For a fixed-seed sample of `--n` named papers, the answerable
question asks about one topic of `eval.build_topic_pairs.TOPICS` that the paper's title or abstract
names (gold: that paper); its twin (`--absent-out`) asks the same paper about a topic that at least
`MIN_TOPIC_PAPERS` papers of the collection name and this one does not, so the collection does not
say, and it should abstain. The forms are drawn per question with a fixed seed; the split is keyed
by the paper, so a question and its twin share a split. Read through `eval.heldout` (families
`conf-named-detail`, `conf-named-absent`), measured only. Gold is lexical: a paper that treats the
twin's topic in other words makes the twin answerable, so its abstention figure is a floor of the
right one."""

from __future__ import annotations

import random
import re
from typing import Any

from eval.build_topic_pairs import TOPICS, twins_command
from rag.evaluation import split_of
from rag.text import names_in

SEED = 20261205
MIN_TOPIC_PAPERS = 15
FORMS = (
    "Does {name} use {topic}?",
    "What does the {name} paper say about {topic}?",
    "How does {name} relate to {topic}?",
    "Is {topic} part of the {name} approach?",
)


def coined_name(title: str) -> str | None:
    """The coined name a title opens with ("BrainOOD" of "BrainOOD: Out-of-distribution ..."), or None."""
    head, sep, _ = title.partition(":")
    head = head.strip()
    if not sep or " " in head or len(head) < 3:
        return None
    return head if head in names_in(head) else None


def named_papers(papers: list[tuple[str, list[str], str]]) -> list[tuple[str, str, str]]:
    """(id, coined name, text) of the papers with an abstract whose title opens with a coined name
    that no other title or abstract holds: a question naming it names one paper."""
    texts = [text for _, _, text in papers]
    out = []
    for pid, _, text in papers:
        name = coined_name(text.split("\n", 1)[0])
        if name is None or "\n" not in text or not text.split("\n", 1)[1].strip():
            continue  # no coined name, or a title-only paper: nothing to ask of its abstract
        word = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        if sum(1 for t in texts if word.search(t)) == 1:  # else another paper names it too
            out.append((pid, name, text))
    return out


def build(papers: list[tuple[str, list[str], str]], n: int) -> tuple[list[dict], list[dict]]:
    """The answerable (named paper, topic it names) questions and their twins (a topic it does not)."""
    texts = [text for _, _, text in papers]
    common = [
        (name, short, pattern)
        for name, short, pattern in TOPICS
        if sum(1 for t in texts if re.search(pattern, t, re.I)) >= MIN_TOPIC_PAPERS
    ]
    named = []
    for pid, name, text in named_papers(papers):
        held = [t for t in TOPICS if re.search(t[2], text, re.I)]
        lacked = [t for t in common if not re.search(t[2], text, re.I)]
        if held and lacked:
            named.append((pid, name, held, lacked))
    chosen = sorted(random.Random(SEED).sample(named, min(n, len(named))))
    items, absent = [], []
    for pid, name, held, lacked in chosen:
        pick = random.Random(f"{SEED}:{pid}")
        items.append(_asked(pid, name, pick.choice(held), "named-detail", pick, [pid]))
        absent.append(_asked(pid, name, pick.choice(lacked), "named-absent", pick, []))
    return items, absent


def _asked(
    pid: str, name: str, topic: tuple[str, str, str], kind: str, pick: random.Random, gold: list[str]
) -> dict[str, Any]:
    full, short, _ = topic
    asked = short if short and pick.random() < 0.5 else full
    item: dict[str, Any] = {
        "id": f"{kind}:{pid}|{full}",
        "kind": kind,
        "question": pick.choice(FORMS).format(name=name, topic=asked),
    }
    item.update({"gold_ids": gold} if gold else {"answerable": False})
    return {**item, "split": split_of(pid)}


def main() -> None:
    twins_command(
        __doc__,
        build,
        ("conf_named_details.jsonl", "conf_named_absent.jsonl"),
        ("about a topic a named paper's abstract names", "about a topic a named paper's abstract does not name"),
        "named papers to ask about",
    )


if __name__ == "__main__":
    main()
