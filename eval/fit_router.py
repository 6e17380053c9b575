"""Refit the question router: `python -m eval.fit_router --home conf=DIR [--home sample=DIR]`.

Training rows (train split only):
- every held-out question of the train split: `intent` where the item has one (catalogue items
  are labelled by hand in the datasets), else `content`;
- generated phrasings of each catalogue intent and of content questions that use catalogue
  words ("What did the authors of X find?", "How many layers does X use?"), written in the
  placeholder form the router reads, with topics and names drawn from the lists' titles;
- content questions on topics that hold a field word ("decision trees", "positional encodings",
  "object tracking": `field_topics`, runs of the lists' titles and abstracts), four fifths of
  those topics; the other fifth is held out and the router's routing of its questions is
  written beside the weights (`field_topics_held_out`). Without them the router sent "Has the
  Decision Transformer been applied to robotics?" to the catalogue, which answered with a
  paper's decision (session 28: held-out topics routed to the abstracts 205 -> 240 of 240).
A decision or track placeholder is written as the reader writes it, with the word "papers" folded
in ("Which <decision> are there?"): the router had only seen "<decision> papers", which the reader
never writes (session 28: list questions with such filters routed right 59 -> 64 of 64).
The router's accuracy is then measured on the validation split's questions (same labelling) and
written beside the weights. Deterministic (fixed seed)."""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import zlib
from pathlib import Path

import numpy as np

from eval.heldout import split_items
from rag.answer import ROUTER_MODEL, Intent, Router, route_features
from rag.text import GENERIC_WORDS, STOPWORDS

SEED = 20261202
FILTERS = (
    "<venue> <year>",
    "<venue>",
    "<decision>",
    "<track>",
    "<venue> <year> <track>",
    "<venue> <year> <decision>",
    "<decision> <venue> <year>",
    "<track> <decision>",
    "<unmet>",
    "<venue> <year> <unmet>",
)
COUNT = (
    "how many {F} papers are there",
    "how many papers did {F} accept",
    "how many {F} papers",
    "number of {F} papers",
    "total {F} papers in the collection",
    "how many papers were accepted as <decision> at <venue> <year>",
    "count the {F} papers",
    "how many {F} papers are about {T}",
    "how many {F} papers mention {T}",
    "how many papers by <author>",
    "how many papers did <author> write at {F}",
    "of the {F} papers, how many were <decision>",
    "{F} papers - how many",
    "how many papers are in the collection",
    "how many papers does the collection have",
    "what is the number of {F} papers",
    "how many {F} papers got a <decision>",
    "how many {F} papers deal with {T}",
    "How many papers are there in total?",
    "how many <decision> did <venue> <year> have",
)
LIST = (
    "which papers did <author> write",
    "what did <author> publish at {F}",
    "papers by <author>",
    "list the {F} papers",
    "show me the <decision> papers",
    "which {F} papers are there",
    "which papers are in the <track>",
    "is <author> an author on anything here",
    "which {F} papers is <author> an author on",
    "<author>'s papers",
    "what has <author> worked on",
    "list all {F} papers",
    "which papers have <author> as an author",
    "give me the {F} papers",
    "what are the {F} papers",
    "show all papers by <author> and <author>",
    "which {F} papers are about {T}",
    "list <author>'s papers about {T}",
    "<decision> papers on {T}",
)
PAPER = (
    "the paper on {T}",
    "{N}",
    "the {T} paper",
    "{N}, the {T} method",
    "the {T} benchmark",
    "the work on {T}",
    "the paper proposing {T}",
)
AUTHORS_OF = (
    "who wrote {P}",
    "who are the authors of {P}",
    "authors of {P}",
    "who is behind {P}",
    "{P} - who wrote it",
    "who authored {P}",
    "list the authors of {P}",
    "who are its authors",
    "who wrote it",
    "who were the authors of {P} at <venue> <year>",
    "which people wrote {P}",
    "name the authors of {P}",
)
FIELD_OF = (
    "was {P} an <decision>",
    "was {P} a <decision> at <venue>",
    "what decision did {P} get",
    "{P} - <decision> or <decision>",
    "did {P} get a <decision> or a <decision>",
    "what track is {P} in",
    "which area is {P} filed under",
    "what area does {P} belong to",
    "where was {P} published",
    "which conference was {P} at",
    "is {P} a <track>",
    "was it an <decision>",
    "what was the decision on {P}",
    "was {P} accepted as <decision>",
    "in which <track> area is {P}",
    "was {P} an <unmet>",
)
CONTENT = (
    "what did the authors of {P} find",
    "how many {X} does {N} use",
    "how many {X} are in the {T} benchmark",
    "who proposed {N}",
    "who introduced {T}",
    "which paper proposes {T}",
    "how much does {N} improve over {T}",
    "how many parameters does {N} have",
    "what dataset did the authors of {P} use",
    "how does {N} work",
    "what is {N}",
    "which papers use {T}",
    "what are the main approaches to {T}",
    "how do papers reduce {T}",
    "which datasets exist for {T}",
    "by how much does {N} outperform {T}",
    "is there a paper about {T}",
    "what did they find about {T}",
    "how many tasks does {N} contain",
    "how many languages does {N} cover",
    "which authors argue that {T}",
    "what does the {T} paper propose",
    "papers that combine {T} with {T}",
    "how well does {N} generalize to {T}",
    "what was accepted as evidence for {T}",
    "which {X} do the authors of {P} compare against",
    "what do the authors of {P} propose",
    "according to the authors of {P}, why does {T} fail",
    "which baselines do the authors of {P} use",
    "on which {X} did the authors of {N} evaluate it",
    "what did the authors conclude about {T}",
)
THINGS = ("layers", "tasks", "languages", "datasets", "samples", "steps", "tokens", "agents", "images", "models")


def title_pool(shared: Path) -> tuple[list[str], list[str]]:
    """Topics (runs of 1-4 lower-case title words) and names (coined words of titles)."""
    topics, names = [], []
    for name in ("iclr2025.jsonl", "icml2025.jsonl"):
        path = shared / name
        if not path.exists():
            continue
        for line in path.open(encoding="utf-8"):
            title = json.loads(line)["title"]
            head, _, rest = title.partition(":")
            if rest and len(head.split()) == 1:
                names.append(head.strip())
            words = re.findall(r"[A-Za-z][\w-]*", rest or title)
            if len(words) >= 2:
                start = len(words) // 3
                topics.append(" ".join(words[start : start + 3]).lower())
    return topics or ["graph neural networks"], names or ["GraphEval"]


# Words that name a catalogue field (`rag.answer.route.FIELD_WORDS`) and also run through topics:
# "decision trees", "Markov decision processes", "positional encodings", "multi-object tracking".
FIELD_TOPIC_WORDS = frozenset(
    "decision decisions oral spotlight poster track tracking area session position positional conference".split()
)


def field_topics(shared: Path) -> tuple[list[str], list[str]]:
    """Runs of two or three lower-case title or abstract words holding a field word ("markov
    decision processes", "rotary position embeddings"), split by a hash of the run: four fifths
    to fit on, one fifth held out to measure the class (`held_out_class`)."""
    seen: dict[str, int] = {}
    for name in ("iclr2025.jsonl", "icml2025.jsonl"):
        path = shared / name
        if not path.exists():
            continue
        for line in path.open(encoding="utf-8"):
            record = json.loads(line)
            text = f"{record['title']}. {record.get('abstract') or ''}"
            for clause in re.split(r"[.:;,()\[\]?!]", text):  # "Position: Stop …" is a track, not a topic
                words = re.findall(r"[a-z][a-z-]+", clause.lower())
                for i, word in enumerate(words):
                    if word not in FIELD_TOPIC_WORDS:
                        continue
                    for run in (words[max(i - 1, 0) : i + 2], words[i : i + 2], words[max(i - 1, 0) : i + 1]):
                        if len(run) >= 2 and not set(run) & _NOT_TOPIC:
                            topic = " ".join(run)
                            seen[topic] = seen.get(topic, 0) + 1
    topics = sorted(t for t, n in seen.items() if n >= 2)  # a run two texts use: a topic, not a phrase
    held = {t for t in topics if zlib.crc32(t.encode()) % 5 == 0}
    return [t for t in topics if t not in held], sorted(held)


_NOT_TOPIC = STOPWORDS | GENERIC_WORDS | frozenset("but has they their our we its it as".split())


def fill(
    rng: random.Random, template: str, topics: list[str], names: list[str], filters: bool = True, styled: bool = True
) -> str:
    """The template with its slots drawn: filters, topics, names, things counted, papers; `styled`
    capitalises half of them."""
    out = template
    while "{" in out:
        if filters:
            out = out.replace("{F}", rng.choice(FILTERS), 1)
        out = (
            out.replace("{T}", rng.choice(topics), 1)
            .replace("{N}", rng.choice(names), 1)
            .replace("{X}", rng.choice(THINGS), 1)
            .replace("{P}", rng.choice(PAPER), 1)
        )
    # the reader's placeholder for a decision or a track takes the word "papers" with it ("oral
    # papers", "position papers" -> "<decision>", "<track>"): the router must learn that form
    out = re.sub(r"(<decision>|<track>) papers\b", r"\1", out)
    if styled and rng.random() < 0.5:
        out = out[0].upper() + out[1:]
    return out + rng.choice(("?", "?", "", "."))


def generated(rng: random.Random, topics: list[str], names: list[str], per: int) -> list[tuple[str, str]]:
    rows = []
    for intent, templates in (
        (Intent.COUNT, COUNT),
        (Intent.LIST, LIST),
        (Intent.AUTHORS_OF, AUTHORS_OF),
        (Intent.FIELD_OF, FIELD_OF),
        (Intent.CONTENT, CONTENT),
    ):
        for _ in range(per):
            rows.append((fill(rng, rng.choice(templates), topics, names), intent.value))
    return rows


# Content questions a user asks of a topic, in the placeholder form the router reads.
TOPIC_QUESTIONS = (
    "are there papers on {T}",
    "how do papers improve {T}",
    "what are the main approaches to {T}",
    "has {T} been applied to robotics",
    "is there work on {T} for graphs",
    "what does the collection say about {T}",
    "any recent work on {T}",
    "how is {T} evaluated",
)


def field_content(rng: random.Random, topics: list[str], names: list[str], per: int) -> list[tuple[str, str]]:
    """Content questions on topics that hold a field word, from `CONTENT`'s and `TOPIC_QUESTIONS`'s
    templates: a bag-of-words router otherwise reads "decision" in "decision trees" as a question
    about a paper's decision."""
    templates = [t for t in CONTENT if "{T}" in t] + list(TOPIC_QUESTIONS)
    return [
        (fill(rng, rng.choice(templates), topics, names, filters=False, styled=False), Intent.CONTENT.value)
        for _ in range(per)
    ]


def held_out_class(topics: list[str]) -> list[tuple[str, str]]:
    """Every `TOPIC_QUESTIONS` template over the held-out field-word topics: content questions the
    router must not send to the catalogue."""
    return [(t.format(T=topic) + "?", Intent.CONTENT.value) for topic in topics for t in TOPIC_QUESTIONS]


def labelled(homes: dict[str, str], splits: set[str]) -> list[tuple[str, str]]:
    """(placeholder text, intent) of the held-out questions of the given splits."""
    from rag.answer import read
    from rag.app import App
    from rag.settings import Settings

    rows = []
    for index, home in homes.items():
        os.environ["RAG_HOME"] = home
        catalog = App(Settings()).index.load().catalog
        for _, item, record, split in split_items(index, catalog):
            if split not in splits:
                continue
            if record.get("kind") == "catalogue" and "intent" not in record:
                continue  # not labelled (test, or an old set's catalogue item)
            rows.append((read(item.question, catalog).placeholders(), record.get("intent", "content")))
    return rows


def fit(rows: list[tuple[str, str]], l2: float, epochs: int = 400) -> Router:
    """Multinomial logistic regression by gradient descent over sparse 0/1 route_features, classes
    weighed to balance."""
    classes = [i.value for i in Intent]
    vocab = sorted({t for text, _ in rows for t in route_features(text)})
    index = {t: i for i, t in enumerate(vocab)}
    active = [sorted({index[t] for t in route_features(text)}) for text, _ in rows]
    flat = np.array([i for a in active for i in a], dtype=np.int64)
    row_of = np.repeat(np.arange(len(rows)), [len(a) for a in active])
    starts = np.cumsum([0] + [len(a) for a in active[:-1]])
    y = np.array([classes.index(label) for _, label in rows])
    onehot = np.eye(len(classes))[y]
    counts = onehot.sum(axis=0)
    sample = (len(rows) / (len(classes) * np.maximum(counts, 1)))[y]  # balanced classes
    w = np.zeros((len(vocab), len(classes)))
    b = np.zeros(len(classes))
    lr = 2.0
    for _ in range(epochs):
        logits = np.add.reduceat(w[flat], starts, axis=0) + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        err = (p - onehot) * sample[:, None] / len(rows)
        grad = np.zeros_like(w)
        np.add.at(grad, flat, err[row_of])
        w -= lr * (grad + l2 * w / len(rows))
        b -= lr * err.sum(axis=0)
    weights = {t: tuple(float(v) for v in w[i]) for t, i in index.items() if np.abs(w[i]).max() > 1e-3}
    return Router(tuple(classes), tuple(float(v) for v in b), weights)


def accuracy(router: Router, rows: list[tuple[str, str]]) -> dict[str, object]:
    hits = [router.intent(text).value == label for text, label in rows]
    by: dict[str, list[bool]] = {}
    for (_, label), ok in zip(rows, hits):
        by.setdefault(label, []).append(ok)
    return {
        "accuracy": round(float(np.mean(hits)), 4) if hits else None,
        "by_intent": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", action="append", default=[], help="NAME=DIR (conf, sample)")
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--per-intent", type=int, default=400)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--field-topics", type=int, default=400, help="content rows on topics holding a field word")
    parser.add_argument("--out", type=Path, default=ROUTER_MODEL)
    args = parser.parse_args()
    homes = dict(h.split("=", 1) for h in args.home)
    rng = random.Random(SEED)
    topics, names = title_pool(args.shared)
    train = labelled(homes, {"train"}) + generated(rng, topics, names, args.per_intent)
    fit_on, held = field_topics(args.shared)
    if args.field_topics and fit_on:
        train += field_content(rng, fit_on, names, args.field_topics)
    validation = labelled(homes, {"validation"})
    router = fit(train, args.l2)
    chosen = {
        "train_rows": len(train),
        "train": accuracy(router, train),
        "validation": accuracy(router, validation),
        "field_topics_held_out": accuracy(router, held_out_class(held)),
    }
    router.save(args.out, chosen)
    print(json.dumps(chosen, indent=1))
    for text, label in validation:
        got = router.intent(text).value
        if got != label:
            print(f"  validation miss: {label} -> {got}: {text}")


if __name__ == "__main__":
    main()
