"""Write `dev_big.jsonl`: the dev set's questions with gold for the seeds plus both shared lists
(`rag ingest` and `rag ingest ../shared/data/iclr2025.jsonl ../shared/data/icml2025.jsonl`).

    python eval/datasets/build_dev_big.py [--data ../shared/data] [--out eval/datasets/dev_big.jsonl]

Gold comes from the data files and the rules below, never from the code under test (no retrieval,
no answerer):

- a question about one paper keeps its gold quote (the seed abstract is in the big index too);
- a topic question ("Which papers use sparse autoencoders?") gets every paper whose title or
  abstract matches the topic's patterns (`TOPICS`, written as `gold_pattern`: the loader resolves
  it over the index, so a seed that did not merge with its list record counts as well).
  Retrieval is then scored with capped Recall@5 (eval/metrics.py: over min(5, |gold|));
- a question about authors gets every paper with those authors (exact names, `gold_authors`);
- counts and catalogue lists get the figures of the lists (`CATALOGUE`): the seeds are all in
  the lists, so e.g. ICML 2025 has 3,330 papers, whatever the index holds;
- off-topic questions that the big lists do answer become answerable with their papers as gold
  (`NOW_ANSWERABLE`); questions that name no one paper among 7,000 are left out (`DROPPED`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# id -> (pattern on title + abstract, all must match)
TOPICS: dict[str, list[str]] = {
    "multi-01": [r"sparse autoencoder|\bSAEs?\b"],
    "multi-02": [r"Kolmogorov[- –]Arnold|\bKANs?\b"],
    "multi-03": [r"knowledge edit"],
    "multi-04": [r"explain|explanation|interpretab", r"graph neural|\bGNNs?\b"],
    "multi-05": [r"calibrat"],
    "list-01": [r"hallucinat", r"language model|\bL?LMs?\b|\bLVLMs?\b|\bMLLMs?\b|\bVLMs?\b"],
    "list-02": [r"optimal transport"],
    "list-03": [r"\b(?:LLM|LM|language[- ]model)[- ](?:based[- ])?agents?\b", r"evaluat|benchmark"],
    "list-04": [r"data valu"],
    "list-05": [r"Shapley"],
    "list-06": [r"graph neural|\bGNNs?\b"],
}
# id -> author names that must all be on the paper
AUTHORS: dict[str, list[str]] = {
    "auth-01": ["Aaron Mueller"],
    "auth-02": ["Jake Snell", "Thomas Griffiths"],
    "auth-03": ["Martin Andrews"],
    "auth-04": ["Bartosz Cywiński"],
    "auth-05": ["Stuart Russell", "Jacob Steinhardt"],
    "cat-06": ["Jacob Steinhardt"],
    "cat-08": ["Jake Snell"],
    "cat-14": ["Percy Liang"],
    "cat-15": ["Jacob Steinhardt"],
}
# id -> replacement fields (figures counted in the lists below, see `counts`)
CATALOGUE: dict[str, dict[str, object]] = {
    "cat-01": {"answer_contains": ["**3,330**", "**3330**", "3,330 papers", "3330 papers"]},
    "cat-02": {"answer_contains": ["**3,704**", "**3704**", "3,704 papers", "3704 papers"]},
    "cat-03": {"track": "position"},
    "cat-08": {"answer_contains": ["1 paper"]},
    "cat-11": {"answer_contains": ["**73**", "73 papers"]},
    "cat-15": {"answer_contains": ["10 papers"]},
}
# id -> (patterns that all must match): off-topic on the sample, answered by the big lists
NOW_ANSWERABLE: dict[str, list[str]] = {
    "none-05": [r"ResNet-50", r"ImageNet", r"top-1"],
    "none-07": [r"LibriSpeech"],
    "none-11": [r"\bCOCO\b", r"detect"],
}
# Questions that single out a paper only among the 96 seeds.
DROPPED = {
    "cat-12": "'the paper on inverse problems': many of the 7,034 papers are",
}


def build(data: Path) -> tuple[list[dict[str, object]], dict[str, int]]:
    """The items, and the list figures the catalogue answers are checked against."""
    rows = [
        json.loads(line)
        for name in ("iclr2025.jsonl", "icml2025.jsonl")
        for line in (data / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    counts = {
        "ICML 2025": sum(r["venue"] == "ICML" for r in rows),
        "ICLR 2025": sum(r["venue"] == "ICLR" for r in rows),
        "position": sum(r["track"] == "position" for r in rows),
    }
    items = [json.loads(line) for line in (HERE / "dev.jsonl").read_text(encoding="utf-8").splitlines() if line]
    out = []
    for item in items:
        key = str(item["id"])
        if key in DROPPED:
            continue
        if key in TOPICS or key in NOW_ANSWERABLE:
            for field in ("gold_quotes", "gold_ids"):
                item.pop(field, None)
            item["gold_pattern"] = TOPICS.get(key) or NOW_ANSWERABLE[key]
            if key in NOW_ANSWERABLE:
                item["answerable"], item["kind"] = True, "answered-by-the-lists"
        if key in AUTHORS:
            for field in ("gold_quotes", "gold_ids"):
                item.pop(field, None)
            item["gold_authors"] = AUTHORS[key]
        if key in CATALOGUE:
            fields = dict(CATALOGUE[key])
            track = fields.pop("track", None)
            if track:
                item.pop("gold_quotes", None)
                item["gold_track"] = track
            item.update(fields)
        out.append(item)
    return out, counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=HERE / "dev_big.jsonl")
    args = parser.parse_args()
    items, counts = build(args.data)
    args.out.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    print(f"{len(items)} items -> {args.out}; list counts {counts}")


if __name__ == "__main__":
    main()
