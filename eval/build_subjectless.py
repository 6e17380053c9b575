"""Questions with no subject of their own, built mechanically: `python -m eval.build_subjectless [--out FILE]`.

The class: a first question that refers to a paper it never names ("What limitations does the
proposed method have?", "Which baselines does this work compare against?"). The collection cannot
tell which paper is meant, so the answer must be "the collection does not say". The 48 hand-written
phrasings of `datasets/generic_alone.jsonl` hold 9 test questions, so one question moves its figure
by 11% (the issue asks for sets where one question is under 1%): a candidate answerable model was
judged on that family at a one-question resolution (docs/benchmarks.md, 2026-12-04, session 15).

Each question joins an aspect a reader asks about (limitations, datasets, baselines, ...) in one of
its frames with a referring phrase that names nothing ("the paper", "the proposed method", "this
work"). The split is keyed by the aspect (`ASPECTS` in three fixed groups), so no aspect of a test
question is seen in train. A fixed-seed sample of `--per-aspect` questions per aspect is written.
Read through `eval.heldout` as families `conf-subjectless` and `sample-subjectless`."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

SEED = 20261204
SUBJECTS = (
    "the paper",
    "this paper",
    "this work",
    "the proposed method",
    "the approach",
    "the model",
    "the study",
    "the proposal",
    "the framework",
    "the new technique",
    "the method",
    "the submission",
)
# aspect -> frames, each with one {s} for a referring phrase; split by aspect group
ASPECTS: dict[str, dict[str, tuple[str, ...]]] = {
    "train": {
        "limitations": ("What limitations does {s} have?", "Which weaknesses of {s} are admitted?"),
        "datasets": ("Which datasets does {s} use?", "What data was {s} evaluated on?"),
        "results": ("What are the main results of {s}?", "What did {s} find?"),
        "contributions": ("What are the contributions of {s}?", "What does {s} contribute?"),
        "method": ("How does {s} work?", "What is the key idea behind {s}?"),
        "compute": ("How much compute does {s} need?", "How long does {s} take to train?"),
        "assumptions": ("What assumptions does {s} make?", "Which assumptions is {s} built on?"),
        "theory": ("What does {s} prove?", "Is there a theoretical guarantee for {s}?"),
        "code": ("Is the code of {s} released?", "Where can I find the implementation of {s}?"),
        "motivation": ("What problem does {s} address?", "Why was {s} needed?"),
        "scale": ("Does {s} scale to larger models?", "How does {s} behave at scale?"),
        "failure": ("When does {s} fail?", "In which cases does {s} break down?"),
    },
    "validation": {
        "baselines": ("Which baselines does {s} compare against?", "What is {s} compared to?"),
        "improvement": ("How large is the improvement of {s}?", "By how much does {s} beat prior work?"),
        "ablations": ("What did the ablations of {s} show?", "Which component of {s} matters most?"),
        "generalisation": ("Does {s} generalize to other domains?", "How well does {s} transfer?"),
    },
    "test": {
        "metrics": ("Which metrics does {s} report?", "How was {s} measured?"),
        "future": ("What future work does {s} suggest?", "What comes next after {s}?"),
        "backbones": ("Which backbone models does {s} use?", "What architecture is {s} built on?"),
        "prior": ("How does {s} differ from prior work?", "What is new in {s}?"),
    },
}


def build(per_aspect: int, seed: int = SEED) -> list[dict[str, object]]:
    """Every aspect's frames joined with every referring phrase, `per_aspect` of them sampled."""
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    for split, aspects in ASPECTS.items():
        for aspect, frames in aspects.items():
            pool = sorted({frame.format(s=s) for frame in frames for s in SUBJECTS})
            for n, question in enumerate(sorted(rng.sample(pool, min(per_aspect, len(pool))))):
                text = question[0].upper() + question[1:]
                out.append(
                    {
                        "id": f"subjectless-{aspect}-{n:02d}",
                        "kind": "subjectless",
                        "question": text,
                        "answerable": False,
                        "split": split,
                    }
                )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "datasets" / "subjectless.jsonl")
    parser.add_argument(
        "--per-aspect", type=int, default=24, help="questions drawn per aspect (24: every frame with every phrase)"
    )
    args = parser.parse_args()
    rows = build(args.per_aspect)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    counts = {s: sum(1 for r in rows if r["split"] == s) for s in ASPECTS}
    print(f"{len(rows)} questions -> {args.out} ({counts})")


if __name__ == "__main__":
    main()
