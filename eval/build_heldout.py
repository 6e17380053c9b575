"""Build the mechanical held-out sets from public data: `python -m eval.build_heldout [--out DIR]`.

Deterministic (fixed seed, salted split keys), so the sets are rebuilt rather than committed: they
quote the shared lists, which stay out of the repository. Written to `eval/generated/` by default:

- `conf_mechanical.jsonl` (index: seeds + both lists), from papers drawn at random:
  - `masked-proposal`: "Which paper proposes <its proposal sentence, coined name masked>?";
  - `number-cloze`: a sentence of the abstract with one number blanked, asked for that number;
  - `title-words`: for title-only papers, "Which paper is about <the title's content words>?";
- `conf_removed.jsonl` + `conf_removed_ids.txt`: the same masked-proposal and number questions,
  to be asked of the same index with those papers removed (`rag remove`): each must abstain;
- `conf_conversations.jsonl` (index: `conf-removed`), two-turn conversations that open with a
  masked-proposal question about a paper the index keeps, then ask one of:
  - `generic-follow-up`: a question in the wording of `FOLLOW_UPS`, with no word that points back
    and no subject of its own ("What were the main results?"): it must cite the first paper;
  - `switch`: another kept paper's masked-proposal question: it must cite that paper, not the first;
  - `switch-removed`: a removed paper's question: it must abstain, not answer from the first paper;
- `scifact.jsonl`: the 505 SciFact train claims with their gold abstracts;
- `scifact_removed.jsonl` + `scifact_removed_ids.txt`: the same claims over the corpus with every
  claim's gold abstracts removed: each must abstain;
- `conf_offtopic.jsonl` (index: seeds + both lists): the same claims asked of the machine-learning
  conference, off-topic by construction (biomedical findings no ML abstract states): each must
  abstain. Hundreds of off-topic questions, where the writers wrote 30.

Every item carries its split (`rag.evaluation.splits.split_of`, keyed by the gold paper). The rules below
build questions; they are not the assistant's rules and nothing in `rag/` imports them."""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path
from typing import Any

from rag.evaluation import split_of

SEED = 20261203
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
PROPOSE = re.compile(
    r"\b(?:we|this\s+(?:paper|work))\s+(?:further\s+|also\s+|first\s+)?(propose|introduce|present|develop)s?\s+(.*)",
    re.I,
)
NUMBER = re.compile(r"(?<![\w.$\\^_{-])(\d+(?:[.,]\d+)?)(\s?%|×|x\b)?(?![\w^_}])")
STOP = set(
    "a an the of for and or in on with to by from via into over under at as is are be we our its their this that "
    "towards toward using based through beyond without can do does how what when why which new novel".split()
)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z$\\(])", text) if s.strip()]


def coined(word: str) -> bool:
    word = word.strip(".,;:()[]{}\"'$*\\")
    return len(word) > 1 and (
        sum(c.isupper() for c in word[1:]) >= 1 or (word[:1].isupper() and any(c.isdigit() for c in word))
    )


def masked_proposal(paper: dict[str, Any]) -> tuple[str, str] | None:
    """(verb, what is proposed) with the coined names masked, or None when the abstract states no
    proposal or its name cannot be masked."""
    title_names = {w.strip(":,").lower() for w in paper["title"].split() if coined(w)}
    head = paper["title"].split(":", 1)[0].strip().lower() if ":" in paper["title"] else ""
    for sentence in sentences(paper["abstract"]):
        match = PROPOSE.search(sentence)
        if not match:
            continue
        rest = match.group(2)
        rest = re.sub(r"\\\w+\{([^{}]*)\}", r"\1", rest).replace("$", "").replace("*", "")
        rest = re.sub(r"\s*\([^()]*\)", "", rest)  # "(NUCFL)", "(see Sec. 3)"
        rest = re.sub(r"^[\w-]+(?:\s[\w-]+)?\s*(?:,|:|—|–)\s*", "", rest) if coined(rest.split()[0]) else rest
        rest = re.sub(r",?\s*(?:called|named|termed|dubbed)\s+[\w-]+(?:\s+[A-Z][\w-]*)*", "", rest)
        words = rest.split()
        if any(coined(w) or w.strip(",.;:").lower() in title_names for w in words):
            continue  # a name inside the description: masking it would break the sentence
        if head and head in rest.lower():
            continue
        capitalised = re.findall(r"(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+", rest)
        if any(c.lower() in paper["title"].lower() for c in capitalised):
            continue  # "Flow Matching", a title's name written as words
        words = words[:30]
        text = " ".join(words).rstrip(".,;:")
        if len(words) < 6:
            continue
        return match.group(1).lower(), text
    return None


def number_cloze(paper: dict[str, Any], rng: random.Random) -> tuple[str, str] | None:
    """("left ___ right", the number as written) from a sentence stating a number that is not a
    year, a citation or part of a name."""
    options = []
    for sentence in sentences(paper["abstract"]):
        if PROPOSE.search(sentence):
            continue
        for match in NUMBER.finditer(sentence):
            value = match.group(1)
            if re.fullmatch(r"(19|20)\d\d", value) or value in {"0", "1", "2"}:
                continue
            if value in paper["title"]:
                continue
            options.append((sentence, match))
    if not options:
        return None
    sentence, match = rng.choice(options)
    left = sentence[: match.start()].split()[-9:]
    right = sentence[match.end() :].split()[:9]
    if len(left) + len(right) < 6:
        return None
    shown = match.group(0).strip()
    return f"{' '.join(left)} ___ {' '.join(right)}".strip(), shown


def title_words(title: str) -> str:
    words = [w.strip(":,.?!()") for w in title.split()]
    return " ".join(w for w in words if w and w.lower() not in STOP)


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def seed_texts(sample: Path) -> str:
    return " ".join(re.sub(r"\s+", " ", p.read_text(encoding="utf-8")) for p in sorted(sample.glob("*.txt")))


def conference(
    shared: Path, sample: Path, n_abstract: int, n_title: int
) -> tuple[list[dict], list[dict], list[str], list[dict]]:
    papers = load_jsonl(shared / "iclr2025.jsonl") + load_jsonl(shared / "icml2025.jsonl")
    papers.sort(key=lambda p: p["id"])
    rng = random.Random(SEED)
    rng.shuffle(papers)
    seeds = seed_texts(sample)
    counts: dict[str, int] = {}
    for p in papers:
        key = re.sub(r"\s+", " ", p.get("abstract") or "")[:200]
        counts[key] = counts.get(key, 0) + 1
    items: list[dict] = []
    removed: list[dict] = []
    removed_ids: list[str] = []
    with_abstract = [p for p in papers if (p.get("abstract") or "").strip()]
    title_only = [p for p in papers if not (p.get("abstract") or "").strip()]
    for p in with_abstract[:n_abstract]:
        opening = re.sub(r"\s+", " ", p["abstract"])[:200]
        if counts[opening] > 1 or opening[:120] in seeds:
            continue  # another copy (a duplicate record, a seed that may not merge) would still answer
        split = split_of(p["id"])
        made = []
        proposal = masked_proposal(p)
        if proposal:
            verb, what = proposal
            made.append({"kind": "masked-proposal", "question": f"Which paper {verb}s {what}?", "gold_ids": [p["id"]]})
        cloze = number_cloze(p, rng)
        if cloze and proposal:
            text, value = cloze
            made.append(
                {
                    "kind": "number-cloze",
                    "question": f"In the paper that {proposal[0]}s {proposal[1]}, "
                    f'what number fills the blank: "{text}"?',
                    "gold_ids": [p["id"]],
                    "answer_contains": [value],
                }
            )
        for n, item in enumerate(made):
            item.update(id=f"m-{p['id']}-{n}", split=split)
            items.append(item)
            twin = {k: v for k, v in item.items() if k not in ("gold_ids", "answer_contains")}
            removed.append(
                {**twin, "id": f"{item['id']}-removed", "kind": f"{item['kind']}-removed", "answerable": False}
            )
        if made:
            removed_ids.append(p["id"])
    for p in title_only[:n_title]:
        words = title_words(p["title"])
        if len(words.split()) < 3:
            continue
        items.append(
            {
                "id": f"t-{p['id']}",
                "kind": "title-words",
                "question": f"Which paper is about {words.lower()}?",
                "gold_ids": [p["id"]],
                "split": split_of(p["id"]),
            }
        )
    kept = []  # papers the removed index keeps, with no second copy that could answer instead
    for p in with_abstract[n_abstract:]:
        opening = re.sub(r"\s+", " ", p["abstract"])[:200]
        if counts[opening] == 1 and opening[:120] not in seeds:
            kept.append(p)
    return items, removed, removed_ids, kept


def scifact(shared: Path) -> tuple[list[dict], list[dict], list[dict], list[str]]:
    claims = load_jsonl(shared / "scifact" / "queries_train.jsonl")
    items, removed, offtopic, gone = [], [], [], set()
    for claim in claims:
        gold = [str(g) for g in claim["gold_ids"]]
        split = split_of(f"scifact:{sorted(gold)[0]}")
        items.append(
            {"id": f"sf-{claim['id']}", "kind": "claim", "question": claim["query"], "gold_ids": gold, "split": split}
        )
        removed.append(
            {
                "id": f"sf-{claim['id']}-removed",
                "kind": "claim-removed",
                "question": claim["query"],
                "answerable": False,
                "split": split,
            }
        )
        offtopic.append(
            {
                "id": f"sf-{claim['id']}-offtopic",
                "kind": "biomedical-claim",
                "question": claim["query"],
                "answerable": False,
                "split": split,
            }
        )
        gone.update(gold)
    return items, removed, offtopic, sorted(gone)


# Follow-ups with no word that points back ("it", "they", "this ...", "the paper") and no subject of
# their own: what a user asks next about the paper just found.
FOLLOW_UPS = (
    "What were the main results?",
    "How large was the improvement over the baselines?",
    "Which datasets were used for evaluation?",
    "How was the proposal evaluated?",
    "What experiments were run?",
    "What limitations are mentioned?",
    "What was shown empirically?",
    "What are the main findings?",
)


def conversations(kept: list[dict[str, Any]], removed: list[dict], n: int) -> list[dict]:
    """Two-turn conversations over the index without the removed papers: each opens with a
    masked-proposal question about a kept paper; the second turn is a generic follow-up, a switch
    to another kept paper or a switch to a removed one, all three in the first paper's split."""
    rng = random.Random(SEED + 1)
    by_split: dict[str, list[tuple[dict, str]]] = {}
    for paper in kept:
        proposal = masked_proposal(paper)
        if proposal:
            question = f"Which paper {proposal[0]}s {proposal[1]}?"
            by_split.setdefault(split_of(paper["id"]), []).append((paper, question))
    gone: dict[str, list[dict]] = {}
    for item in removed:
        if item["kind"] == "masked-proposal-removed":
            gone.setdefault(item["split"], []).append(item)
    out: list[dict] = []
    total = sum(len(pairs) for pairs in by_split.values())
    for split, pairs in sorted(by_split.items()):
        share = max(1, round(n * len(pairs) / total))
        for (paper, opening), (other, other_question) in zip(pairs[:share], pairs[share : 2 * share]):
            base = {"history": [opening], "split": split}
            out.append(
                {
                    **base,
                    "id": f"c-{paper['id']}-follow",
                    "kind": "generic-follow-up",
                    "question": rng.choice(FOLLOW_UPS),
                    "gold_ids": [paper["id"]],
                }
            )
            out.append(
                {
                    **base,
                    "id": f"c-{paper['id']}-switch",
                    "kind": "switch",
                    "question": other_question,
                    "gold_ids": [other["id"]],
                }
            )
            if gone.get(split):
                target = gone[split].pop(rng.randrange(len(gone[split])))
                out.append(
                    {
                        **base,
                        "id": f"c-{paper['id']}-switch-removed",
                        "kind": "switch-removed",
                        "question": target["question"],
                        "answerable": False,
                    }
                )
    return out


def write(path: Path, rows: list[dict] | list[str]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write((row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--sample", type=Path, default=Path(__file__).resolve().parents[1] / "data" / "sample")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "generated")
    parser.add_argument("--papers", type=int, default=1500, help="papers with an abstract to draw")
    parser.add_argument("--title-only", type=int, default=250, help="title-only papers to draw")
    parser.add_argument("--conversations", type=int, default=200, help="conversations of each kind")
    args = parser.parse_args()
    if not (args.shared / "iclr2025.jsonl").exists():
        raise SystemExit(f"no shared data at {args.shared}: pass --shared")
    args.out.mkdir(parents=True, exist_ok=True)
    items, removed, removed_ids, kept = conference(args.shared, args.sample, args.papers, args.title_only)
    talks = conversations(kept, removed, args.conversations)
    write(args.out / "conf_conversations.jsonl", talks)
    write(args.out / "conf_mechanical.jsonl", items)
    write(args.out / "conf_removed.jsonl", removed)
    write(args.out / "conf_removed_ids.txt", removed_ids)
    sf, sf_removed, offtopic, sf_ids = scifact(args.shared)
    write(args.out / "scifact.jsonl", sf)
    write(args.out / "scifact_removed.jsonl", sf_removed)
    write(args.out / "conf_offtopic.jsonl", offtopic)
    write(args.out / "scifact_removed_ids.txt", sf_ids)
    for name, rows in (
        ("conf_mechanical", items),
        ("conf_removed", removed),
        ("conf_conversations", talks),
        ("scifact", sf),
    ):
        by: dict[str, int] = {}
        for row in rows:
            by[f"{row['kind']}/{row['split']}"] = by.get(f"{row['kind']}/{row['split']}", 0) + 1
        print(name, len(rows), dict(sorted(by.items())))
    print("removed papers:", len(removed_ids), "scifact removed:", len(sf_ids))


if __name__ == "__main__":
    main()
