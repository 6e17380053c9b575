"""A setting written in another form, as a class built from the conference:
`python -m eval.bench.setting_forms --home DIR --split S [--n 400] [--seed 2512] [--out FILE]`.

`Relevance.unheld_setting` turns a short yes/no question away when the paper an answer would lead
with does not name the setting asked about ("Has X been applied to power grid networks?"). Papers
write many settings either as an acronym or spelled out ("LLMs" / "large language models"), so a
setting asked in the other form than the paper's must still count as named. Built mechanically:

- pairs: every "spelled-out words (ACRONYM)" of the conference's abstracts, kept when at least
  `--min-papers` papers write the pair (common acronyms, not a paper's own coinage);
- *other form* (must be answered): for each paper of the split that writes one form of a pair and
  not the other, "Has <its title> been applied to <the other form>?";
- *absent* (must be turned away): the same question with a pair the paper writes in neither form.

Prints, for each class, how many the rule turns away. Why a class: the first form of the rule
(session 25) turned "Has MathCoder2 been applied to LLMs?" away from an abstract that says "large
language models"."""

from __future__ import annotations

import collections
import json
import random
import re
from typing import Any

from eval.bench.built_class import class_parser, open_home
from rag.evaluation.splits import split_of

PAIR = re.compile(r"((?:[A-Za-z][\w-]*\s+){1,4}[A-Za-z][\w-]*)\s+\(([A-Z][A-Za-z]*[A-Z]s?)\)")


def initials(words: str) -> str:
    return "".join(w[0] for w in re.findall(r"[^\W\d_]+", words)).upper()


def pairs_of(abstracts: list[str], min_papers: int) -> dict[str, str]:
    """Acronym (as most papers write it: "LLMs", "RL") -> its most written spelling out, of pairs in
    enough papers."""
    seen: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    written: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for text in abstracts:
        found = {}
        for words, acronym in PAIR.findall(text):
            short = re.sub(r"s$", "", acronym)
            run = re.findall(r"[^\W\d_]+", words)
            for start in range(len(run)):  # the shortest tail of the words whose initials make it
                tail = " ".join(run[start:])
                if initials(tail) == short.upper():
                    found[short] = tail.lower()
                    written[short][acronym] += 1
                    break
        for short, tail in found.items():
            seen[short][tail] += 1
    return {
        written[a].most_common(1)[0][0]: c.most_common(1)[0][0]
        for a, c in seen.items()
        if sum(c.values()) >= min_papers
    }


def writes(text: str, form: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(form)}s?(?![\w-])", text, re.I if " " in form else 0) is not None


def main() -> None:
    parser = class_parser(__doc__)
    parser.add_argument("--n", type=int, default=400, help="questions per class (seeded sample)")
    parser.add_argument("--seed", type=int, default=2512)
    parser.add_argument("--min-papers", type=int, default=5)
    args = parser.parse_args()
    app, catalog = open_home(args.home)
    relevance = app.pipeline.relevance
    papers = [p for _, p in catalog.iter_papers() if p.abstract and p.title]
    pairs = pairs_of([p.abstract for p in papers], args.min_papers)
    rng = random.Random(args.seed)
    chosen = [p for p in papers if split_of(p.id) == args.split]
    other: list[tuple[Any, str]] = []
    absent: list[tuple[Any, str]] = []
    for paper in chosen:
        text = f"{paper.title} {paper.abstract}"
        for short, spelled in sorted(pairs.items()):
            has_short, has_spelled = writes(text, re.sub(r"s$", "", short)), writes(text, spelled)
            if has_short != has_spelled:
                other.append((paper, spelled if has_short else short))
            elif not has_short and not any(w in text.lower() for w in spelled.split()):
                absent.append((paper, spelled if rng.random() < 0.5 else short))
    rows = []
    for name, items in (("other form", other), ("absent", absent)):
        sample = rng.sample(items, min(args.n, len(items)))
        turned = 0
        for paper, setting in sample:
            name_of = paper.title.split(":")[0]
            question = f"Has {name_of} been applied to {setting}?"
            if len(question.split()) > 16:
                question = f"Has {paper.label or ' '.join(name_of.split()[:4])} been applied to {setting}?"
            away = relevance.unheld_setting(question, [paper]) is not None
            turned += away
            rows.append({"class": name, "question": question, "paper": paper.id, "turned_away": away})
        print(f"{name}: {turned} of {len(sample)} turned away ({turned / max(len(sample), 1):.3f})")
    print(f"pairs: {len(pairs)} acronyms written by at least {args.min_papers} papers")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
