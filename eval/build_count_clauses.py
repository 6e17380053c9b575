"""Count questions whose clause leaves a facet value out or adds one back, built mechanically:
`python -m eval.build_count_clauses [--out FILE]` (default `eval/generated/conf_count_clauses.jsonl`).

The class: "How many ICML 2025 orals, not counting position papers?", "How many 2025 spotlights,
ICLR excluded?", "How many ICML 2025 orals, including the position track?", "How many ICLR 2025
papers were orals or spotlights?", beside plain counts of the same facets, so that a reader that
ignores the clause and one that over-reads it are both caught, and two counts asked in one
question ("How many orals vs posters at ICLR 2025?", gold one of the two). Every gold number is counted here
from the shared lists (`../shared/data/iclr2025.jsonl`, `icml2025.jsonl`), never by the assistant.

All items are `train`: the clause cues (`rag.answer.cues.EXCLUDED`, `WIDENED`) were written with
these templates in view. Validation and test are a blind writer's questions
(`datasets/heldout/conf_clauses.jsonl`, written without reading the code)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
OUT = Path(__file__).resolve().parent / "generated" / "conf_count_clauses.jsonl"
DECISIONS = ("oral", "spotlight", "poster")
VENUES = ("ICLR", "ICML")
YEAR = 2025

Paper = dict[str, str]
Test = Callable[[Paper], bool]


def papers() -> list[Paper]:
    """venue, track and decision word ("oral") of every paper of both lists."""
    out = []
    for name in ("iclr2025.jsonl", "icml2025.jsonl"):
        for line in (SHARED / name).read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r.get("year") == YEAR:
                decision = (r.get("decision") or "").lower()
                word = next((d for d in DECISIONS if d in decision), "")
                out.append({"venue": r["venue"], "track": r.get("track") or "", "decision": word})
    return out


def where(
    venue: str | None = None,
    decisions: tuple[str, ...] = DECISIONS,
    track: str | None = None,
    not_track: str | None = None,
) -> Test:
    """The papers a question counts: of `venue` (None: both), with one of `decisions`, in `track`
    and not in `not_track` (None: any)."""

    def test(p: Paper) -> bool:
        return (
            (venue is None or p["venue"] == venue)
            and p["decision"] in decisions
            and (track is None or p["track"] == track)
            and (not_track is None or p["track"] != not_track)
        )

    return test


def templates() -> list[tuple[str, str, Test]]:
    """(kind, question, which papers it counts), every venue and decision in every template."""
    out: list[tuple[str, str, Test]] = []
    for v in VENUES:
        other = next(o for o in VENUES if o != v)
        for d in DECISIONS:
            rest = tuple(x for x in DECISIONS if x != d)
            out += [
                ("plain", f"How many {d}s were there at {v} {YEAR}?", where(v, (d,))),
                ("excluded-decision", f"How many {v} {YEAR} papers were not {d}s?", where(v, rest)),
                ("excluded-decision", f"How many {v} {YEAR} papers, excluding the {d}s?", where(v, rest)),
                ("excluded-decision", f"Number of non-{d} papers at {v} {YEAR}", where(v, rest)),
                ("excluded-decision", f"{v} {YEAR} papers with the {d}s left out: how many?", where(v, rest)),
                ("excluded-venue", f"How many {YEAR} {d}s are there, not counting {other}?", where(v, (d,))),
                ("excluded-venue", f"How many {d}s in {YEAR} besides those at {other}?", where(v, (d,))),
                ("widened-venue", f"How many {d}s at {v} {YEAR}, counting {other} as well?", where(None, (d,))),
            ]
            for d2 in DECISIONS:
                if d2 > d:
                    third = tuple(x for x in DECISIONS if x not in (d, d2))
                    out += [
                        ("union-decision", f"How many {v} {YEAR} papers were {d}s or {d2}s?", where(v, (d, d2))),
                        ("union-decision", f"How many {d}s and {d2}s did {v} {YEAR} have in total?", where(v, (d, d2))),
                        (
                            "excluded-decision",
                            f"How many {v} {YEAR} papers were neither {d}s nor {d2}s?",
                            where(v, third),
                        ),
                    ]
    for d in DECISIONS:
        main = where("ICML", (d,), not_track="position")
        out += [
            ("plain", f"How many ICML {YEAR} position {d}s are there?", where("ICML", (d,), track="position")),
            ("excluded-track", f"How many ICML {YEAR} {d}s are outside the position track?", main),
            ("excluded-track", f"How many ICML {YEAR} {d}s, position papers excluded?", main),
            ("excluded-track", f"ICML {YEAR} {d}s without the position papers: how many?", main),
            ("excluded-track", f"How many non-position ICML {YEAR} {d}s?", main),
            ("widened-track", f"How many ICML {YEAR} {d}s, including the position track?", where("ICML", (d,))),
            ("widened-track", f"How many ICML {YEAR} {d}s, position papers too?", where("ICML", (d,))),
            ("widened-track", f"How many ICML {YEAR} main-track {d}s plus position {d}s?", where("ICML", (d,))),
        ]
    for v in VENUES:  # two counts in one question: the answer must give each (the gold is one of them)
        for d, d2 in (("oral", "poster"), ("spotlight", "oral")):
            out += [
                ("each-decision", f"How many {d}s vs {d2}s at {v} {YEAR}?", where(v, (d,))),
                ("each-decision", f"How many {d}s and how many {d2}s did {v} {YEAR} have?", where(v, (d2,))),
            ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    every = papers()
    items = []
    for n, (kind, question, test) in enumerate(templates(), start=1):
        count = sum(1 for p in every if test(p))
        if not count:
            continue  # no position spotlights: a count of 0 asks nothing the template means
        forms = [str(count)] + ([f"{count:,}"] if count >= 1000 else [])
        items.append(
            {
                "id": f"cc-{n:03d}",
                "kind": f"count-{kind}",
                "intent": "count",
                "question": question,
                "answer_contains": forms,
                "answerable": True,
                "split": "train",
            }
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    print(f"{len(items)} questions -> {args.out}")


if __name__ == "__main__":
    main()
