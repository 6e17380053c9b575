"""Compare two held-out runs in questions, not rates: `python -m eval.compare_runs BASE CAND [--split S]`.

BASE and CAND are `--out` folders of `eval.heldout` (or their `results.json`). A candidate is
judged on criteria written before its run ("false abstention does not rise by more than one
question"); rates hide that arithmetic, since a denominator moves too (four more papers found and
one more cited lowers "cited when found"). So per family this prints the counts the criteria
name, base -> candidate, and how many abstention decisions turned right and turned wrong item by
item. Where a run stores no items for the split (the test split without `--show-test`, read once
and as aggregates only), it prints the families' table figures instead. `--json` for scripts."""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from eval.heldout import cited_gold, family, found_top5, wrong_decision
from rag.evaluation.results import ItemResult

COUNTS = (
    "answerable abstained",
    "unanswerable answered",
    "found in the first five",
    "found, not cited",
    "fact missed",
    "wrong",
)


def load_run(path: Path) -> dict[str, Any]:
    """A run's `results.json`, given the file or the folder holding it."""
    file = path / "results.json" if path.is_dir() else path
    if not file.exists():
        raise SystemExit(f"{file}: no results.json (write one with `python -m eval.heldout ... --out DIR`)")
    return dict(json.loads(file.read_text(encoding="utf-8")))


def items_of(run: dict[str, Any], split: str) -> dict[tuple[str, str], tuple[str, ItemResult]]:
    """The answered items of `split` by (source, id), each with its family."""
    out: dict[tuple[str, str], tuple[str, ItemResult]] = {}
    for item in run["items"]:
        if item["split"] != split or item.get("answer") is None:
            continue
        fields = {k: v for k, v in item.items() if k not in ("source", "split")}
        out[(item["source"], item["id"])] = (family(item["source"]), ItemResult(**fields))
    return out


def item_counts(result: ItemResult) -> Counter[str]:
    """The criterion counts one item adds to its family (`COUNTS`)."""
    c: Counter[str] = Counter()
    wrong = wrong_decision(result)
    c["wrong"] += wrong
    if not result.answerable:
        c["unanswerable answered"] += wrong
        return c
    c["answerable abstained"] += wrong
    if result.gold_ids and found_top5(result):
        c["found in the first five"] += 1
        c["found, not cited"] += not cited_gold(result)
    c["fact missed"] += result.fact_hit is False
    return c


def compare_items(base: dict[str, Any], cand: dict[str, Any], split: str) -> dict[str, dict[str, Any]]:
    """Per family (and `every family`): each count base and candidate, and the decisions turned
    right / wrong among the items both runs answered."""
    b, c = items_of(base, split), items_of(cand, split)
    out: dict[str, dict[str, Any]] = {}

    def cell(name: str) -> dict[str, Any]:
        return out.setdefault(name, {"base": Counter(), "candidate": Counter(), "turned right": 0, "turned wrong": 0})

    for side, items in (("base", b), ("candidate", c)):
        for fam, result in items.values():
            counts = item_counts(result)
            for name in (fam, "every family"):
                cell(name)[side].update(counts)
                cell(name)[side]["items"] += 1
    for key in b.keys() & c.keys():
        fam, before = b[key]
        was, now = item_counts(before)["wrong"], item_counts(c[key][1])["wrong"]
        for name in (fam, "every family"):
            cell(name)["turned right"] += was and not now
            cell(name)["turned wrong"] += now and not was
    return out


def compare_tables(base: dict[str, Any], cand: dict[str, Any], split: str) -> dict[str, dict[str, Any]]:
    """The families' aggregate figures (kind ALL), base and candidate, that differ."""

    def rows(run: dict[str, Any]) -> dict[str, dict[str, float]]:
        return {r["family"]: r.get(split, {}) for r in run["table"] if r["kind"] == "ALL"}

    b, c = rows(base), rows(cand)
    out: dict[str, dict[str, Any]] = {}
    for fam in sorted(b.keys() | c.keys()):
        for metric in sorted(b.get(fam, {}).keys() | c.get(fam, {}).keys()):
            x, y = b.get(fam, {}).get(metric, math.nan), c.get(fam, {}).get(metric, math.nan)
            if (math.isnan(x) and math.isnan(y)) or x == y:
                continue
            out.setdefault(fam, {})[metric] = {"base": x, "candidate": y}
    return out


def render_items(cells: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'family':24s} {'count':26s} {'base':>6s} {'cand':>6s} {'change':>7s}"]
    for fam in sorted(cells, key=lambda f: (f == "every family", f)):
        cell = cells[fam]
        lines.append(f"{fam:24s} {'items':26s} {cell['base']['items']:6d} {cell['candidate']['items']:6d}")
        for name in COUNTS:
            x, y = cell["base"][name], cell["candidate"][name]
            if x or y:
                lines.append(f"{'':24s} {name:26s} {x:6d} {y:6d} {y - x:+7d}")
        lines.append(f"{'':24s} {'turned right / wrong':26s} {cell['turned right']:6d} {cell['turned wrong']:6d}")
    return "\n".join(lines)


def render_tables(cells: dict[str, dict[str, Any]]) -> str:
    lines = ["(no items stored for this split: the families' aggregate figures that differ)"]
    for fam, metrics in cells.items():
        shown = "; ".join(f"{m} {v['base']:.3f} -> {v['candidate']:.3f}" for m, v in metrics.items())
        lines.append(f"{fam}: {shown}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base", type=Path, help="the baseline run's --out folder or results.json")
    parser.add_argument("candidate", type=Path, help="the candidate run's --out folder or results.json")
    parser.add_argument("--split", default="validation", choices=("train", "validation", "test"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    base, cand = load_run(args.base), load_run(args.candidate)
    if items_of(base, args.split) and items_of(cand, args.split):
        cells = compare_items(base, cand, args.split)
        print(json.dumps(cells, indent=1) if args.json else render_items(cells))
    else:
        tables = compare_tables(base, cand, args.split)
        print(json.dumps(tables, indent=1) if args.json else render_tables(tables))


if __name__ == "__main__":
    main()
