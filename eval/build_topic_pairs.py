"""Questions that join two topics, built mechanically from an index: `python -m eval.build_topic_pairs
--home DIR [--out FILE]`.

The class: "Which papers combine graph neural networks with LLMs?" The answer must list papers on
*both* topics, and a ranking led by the more common topic lists papers on it alone (a user's
question of the 2026-12-02 review did: 4 of 5 plain GNN papers). The writers' list questions have
one gold paper each, so they cannot tell a list that honours the qualifier from one that does not.

Each topic below is a name a user would write and the forms abstracts write it in (acronyms,
plurals). For every pair of topics, the gold papers are those of the index whose title or abstract
names both; a pair is kept when 2 to 40 papers do and each topic alone is named by at least three
times as many, so that one topic's papers alone would fill a list. The question's wording and the
topic's surface form (its name or its acronym) are drawn with a fixed seed; its split is keyed by
the pair. Read through `eval.heldout` (family `conf-topic-pairs`), the report's `precision` is the
share of cited papers that name both topics (the qualifier held), `recall@5` the capped recall of
the search's top 5. Gold is lexical by construction: a paper on both topics that names one in
other words counts against the answer, so the figures are a floor.

The same topics give the unanswerable twin (`--absent-out`, family `conf-topic-absent`): pairs that
no title or abstract names together while each topic alone is named by at least `ABSENT_ALONE`
papers, asked in the same forms ("Which papers use spiking neural networks for knowledge
graphs?"). That is the writers' third sort of near miss (a real topic with a qualifier no paper
covers), which the search answers with papers on one topic each; a fixed-seed sample as large as
the answerable set keeps the two classes in balance."""

from __future__ import annotations

import argparse
import itertools
import os
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from eval.build_heldout import write
from rag.evaluation import split_of

SEED = 20261203
# (name, acronym or "", pattern over title + abstract)
TOPICS: tuple[tuple[str, str, str], ...] = (
    ("graph neural networks", "GNNs", r"\bgraph neural networks?\b|\bGNNs?\b"),
    ("large language models", "LLMs", r"\blarge language models?\b|\bLLMs?\b"),
    ("diffusion models", "", r"\bdiffusion models?\b"),
    ("reinforcement learning", "RL", r"\breinforcement learning\b|\bRL\b"),
    ("sparse autoencoders", "SAEs", r"\bsparse auto-?encoders?\b|\bSAEs?\b"),
    ("vision transformers", "ViTs", r"\bvision transformers?\b|\bViTs?\b"),
    ("federated learning", "", r"\bfederated learning\b"),
    ("contrastive learning", "", r"\bcontrastive learning\b"),
    ("knowledge distillation", "", r"\bknowledge distillation\b"),
    ("in-context learning", "", r"\bin-context learning\b"),
    ("mixture of experts", "MoE", r"\bmixture[- ]of[- ]experts?\b|\bMoEs?\b"),
    ("chain-of-thought reasoning", "", r"\bchain[- ]of[- ]thoughts?\b"),
    ("proteins", "", r"\bproteins?\b"),
    ("time series", "", r"\btime[- ]series\b"),
    ("molecules", "", r"\bmolecules?\b|\bmolecular\b"),
    ("robotics", "", r"\brobots?\b|\brobotics?\b"),
    ("differential privacy", "", r"\bdifferential(?:ly)? priva"),
    ("adversarial attacks", "", r"\badversarial attacks?\b"),
    ("knowledge graphs", "", r"\bknowledge graphs?\b"),
    ("retrieval-augmented generation", "RAG", r"\bretrieval[- ]augmented generation\b|\bRAG\b"),
    ("Gaussian splatting", "", r"\bgaussian splatting\b"),
    ("video generation", "", r"\bvideo generation\b"),
    ("text-to-image generation", "", r"\btext-to-image\b"),
    ("optimal transport", "", r"\boptimal transport\b"),
    ("Bayesian optimization", "", r"\bbayesian optimi[sz]ation\b"),
    ("quantization", "", r"\bquantiz(?:ation|ed|ing)\b"),
    ("pruning", "", r"\bprun(?:ing|ed)\b"),
    ("low-rank adaptation", "LoRA", r"\blow-rank adaptation\b|\bLoRA\b"),
    ("reward models", "", r"\breward models?\b"),
    ("hallucination", "", r"\bhallucinat"),
    ("speech", "", r"\bspeech\b"),
    ("multi-agent systems", "", r"\bmulti-agent\b"),
    ("code generation", "", r"\bcode generation\b"),
    ("mathematical reasoning", "", r"\bmath(?:ematical)? reasoning\b"),
    ("causal inference", "", r"\bcausal inference\b"),
    ("out-of-distribution detection", "OOD detection", r"\bout-of-distribution detection\b|\bOOD detection\b"),
    ("continual learning", "", r"\bcontinual learning\b"),
    ("vision-language models", "VLMs", r"\bvision[- ]language models?\b|\bVLMs?\b"),
    ("state space models", "SSMs", r"\bstate[- ]space models?\b|\bSSMs?\b"),
    ("neural operators", "", r"\bneural operators?\b"),
    ("watermarking", "", r"\bwatermark"),
    ("machine unlearning", "", r"\bunlearning\b"),
    ("tabular data", "", r"\btabular\b"),
    ("point clouds", "", r"\bpoint clouds?\b"),
    ("autonomous driving", "", r"\bautonomous driving\b"),
    ("spiking neural networks", "SNNs", r"\bspiking neural networks?\b|\bSNNs?\b"),
    ("transformers", "", r"\btransformers?\b"),
    ("meta-learning", "", r"\bmeta-learning\b"),
)
FORMS = (
    "Which papers combine {a} with {b}?",
    "Which papers use {a} for {b}?",
    "What work applies {a} to {b}?",
    "Are there papers on {a} in {b}?",
    "Which papers study {a} together with {b}?",
)
MIN_GOLD, MAX_GOLD, ALONE = 2, 40, 3
ABSENT_ALONE = 15


def papers_of(home: Path) -> list[tuple[str, list[str], str]]:
    """(id, authors, title + abstract) of every paper of the index at `home` (also read by
    `eval.build_author_topics`)."""
    os.environ["RAG_HOME"] = str(home)
    from rag.app import App
    from rag.settings import Settings

    catalog = App(Settings()).index.load().catalog
    return [(p.id, list(p.authors), f"{p.title}\n{p.abstract}") for _, p in catalog.iter_papers()]


def build(papers: list[tuple[str, str]]) -> tuple[list[dict], list[dict]]:
    """The answerable pairs and their unanswerable twins (pairs no paper names together)."""
    named = {name: {pid for pid, text in papers if re.search(pattern, text, re.I)} for name, _, pattern in TOPICS}
    items, absent = [], []
    for (a, a_short, _), (b, b_short, _) in itertools.combinations(TOPICS, 2):
        both = named[a] & named[b]
        key = f"pair:{a}|{b}"
        if not both and min(len(named[a]), len(named[b])) >= ABSENT_ALONE:
            absent.append({**_asked(key, (a, a_short), (b, b_short)), "kind": "topic-absent", "answerable": False})
            continue
        if not MIN_GOLD <= len(both) <= MAX_GOLD:
            continue
        if min(len(named[a]), len(named[b])) < ALONE * len(both):
            continue
        items.append({**_asked(key, (a, a_short), (b, b_short)), "kind": "topic-pair", "gold_ids": sorted(both)})
    absent = sorted(random.Random(SEED).sample(absent, min(len(items), len(absent))), key=lambda i: i["id"])
    return items, absent


def _asked(key: str, a: tuple[str, str], b: tuple[str, str]) -> dict:
    """The pair's id, question and split. Its wording depends on the pair alone, not on which
    other pairs are kept."""
    rng = random.Random(f"{SEED}:{key}")
    first, second = (a, b) if rng.random() < 0.5 else (b, a)
    surface = [s if s and rng.random() < 0.5 else n for n, s in (first, second)]
    return {"id": key, "question": rng.choice(FORMS).format(a=surface[0], b=surface[1]), "split": split_of(key)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="the conference index (seeds + both lists)")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "generated" / "conf_topic_pairs.jsonl"
    )
    parser.add_argument(
        "--absent-out", type=Path, default=Path(__file__).resolve().parent / "generated" / "conf_topic_absent.jsonl"
    )
    args = parser.parse_args()
    items, absent = build([(pid, text) for pid, _, text in papers_of(args.home)])
    write_set(args.out, items, "joining two topics")
    write_set(args.absent_out, absent, "no paper joins")


Builder = Callable[[list[tuple[str, list[str], str]], int], tuple[list[dict], list[dict]]]


def twins_command(doc: str, build: Builder, files: tuple[str, str], what: tuple[str, str], n_help: str) -> None:
    """The command line of a builder of a measured family and its unanswerable twins from the conf
    index (`eval.build_author_topics`, `eval.build_named_details`): `--home`, `--n`, and the two
    files, written under `eval/generated/` by default."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="the conference index (seeds + both lists)")
    parser.add_argument("--n", type=int, default=300, help=n_help)
    generated = Path(__file__).resolve().parent / "generated"
    parser.add_argument("--out", type=Path, default=generated / files[0])
    parser.add_argument("--absent-out", type=Path, default=generated / files[1])
    args = parser.parse_args()
    items, absent = build(papers_of(args.home), args.n)
    write_set(args.out, items, what[0])
    write_set(args.absent_out, absent, what[1])


def write_set(path: Path, items: list[dict], what: str) -> None:
    """Write one generated set and say how many questions each split got."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write(path, items)
    by = Counter(item["split"] for item in items)
    print(f"{len(items)} questions {what} -> {path}: {dict(sorted(by.items()))}")


if __name__ == "__main__":
    main()
