"""Would query-performance-prediction signals help the answerable model? Validation figures of the
model refitted with each candidate added: `python -m eval.bench.answerable_features [--features FILE]
[--human-weight W]`; or, with `--model FILE` (repeated), each saved model scored as it is.

Reads the features `eval.fit_relevance` cached (no search is run, so it takes seconds). Each
candidate is computed from the retrieved papers' own feature rows: whether the dense and BM25
scores (or the best sentence and BM25) pick the same paper, whether the paper model's favourite is
the search's first, the gap between the best dense or BM25 score and the mean of the rest (as in
query-performance prediction), the paper model's margin and sum, the first paper's cosine. For the
shipped features alone, each candidate added, and all together, the answerable model is refitted on
train and its threshold chosen on validation for 3% false abstention (as `eval.fit_relevance`
does); printed: validation AUC (all, and the writers' questions alone), the threshold, the share of
unanswerable questions abstained, and per family. Only train and validation are read.

`--model` is the screen a candidate model passes before its full validation run (docs/benchmarks.md):
each file's paper and answerable models score the cached validation rows, the threshold is chosen
again for 3% false abstention over the shipped model's pool (the fitted sources and the families it
names in `threshold_on`), so candidates are compared at one rule on one set of questions; printed,
the wrong decisions over every family and per family (an answerable question abstained on, an
unanswerable one answered)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from eval.fit_relevance import FOLLOWED, WRITTEN, abstention_table, auc, choose_abstain, fit, fitted_rows, stacked
from eval.heldout import family
from rag.answer import FEATURES, RELEVANCE_MODEL, LogisticModel, TreeModel, load_model
from rag.answer.relevance import LOGISTIC_FEATURES

AT = {name: i for i, name in enumerate(FEATURES)}


def _gap(values: np.ndarray) -> float:
    ordered = np.sort(values)[::-1]
    return float(ordered[0] - ordered[1:].mean()) if len(ordered) > 1 else 0.0


def _margin(values: np.ndarray) -> float:
    ordered = np.sort(values)[::-1]
    return float(ordered[0] - ordered[1]) if len(ordered) > 1 else float(ordered[0])


CANDIDATES: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "dense_bm25_agree": lambda f, p: float(np.argmax(f[:, AT["dense"]]) == np.argmax(f[:, AT["bm25"]])),
    "sentence_bm25_agree": lambda f, p: float(np.argmax(f[:, AT["cos_best"]]) == np.argmax(f[:, AT["bm25"]])),
    "model_picks_first": lambda f, p: float(np.argmax(p) == 0),
    "dense_gap": lambda f, p: _gap(f[:, AT["dense"]]),
    "bm25_gap": lambda f, p: _gap(f[:, AT["bm25"]]),
    "probability_margin": lambda f, p: _margin(p),
    "probability_sum": lambda f, p: float(p.sum()),
    "first_paper_cosine": lambda f, p: float(f[0, AT["cos_best"]]),
    # joint coverage: does ONE paper hold what the question asks, not just all of them together?
    # (a named paper's detail it does not give, a topic with a qualifier no paper covers)
    "rare_joint": lambda f, p: float(f[:, AT["rare_coverage"]].max()),
    "names_joint": lambda f, p: float(f[:, AT["names_missing"]].min()),
    "least_missing": lambda f, p: float(f[:, AT["missing_rarity"]].min()),
}
JOINT = ("rare_joint", "names_joint", "least_missing")


def matrix(rows: list[dict], paper: LogisticModel, names: list[str]) -> np.ndarray:
    base = stacked(rows, paper)
    extra = []
    for r in rows:
        f = np.asarray(r["features"])
        p = paper.probabilities(f)
        extra.append([CANDIDATES[n](f, p) for n in names])
    return np.hstack([base, np.asarray(extra).reshape(len(rows), len(names))])


def evaluate(
    train: list[dict],
    validation: list[dict],
    paper: LogisticModel,
    names: list[str],
    weight: float,
    shipped: LogisticModel | TreeModel | None = None,
    label: str = "",
) -> str:
    """The answerable model refitted on `train` with `names` added (or `shipped` as it is), its
    threshold chosen for 3% false abstention over the validation rows of the fitted sources; the
    measured-only families are scored at that threshold and shown apart."""
    if shipped is not None:
        scores = shipped.probabilities(stacked(validation, paper, shipped.features))
    else:
        y = np.asarray([float(r["answerable"]) for r in train])
        w = np.asarray([weight if family(r["source"]) in WRITTEN else 1.0 for r in train])
        model = fit(matrix(train, paper, names), y, 1.0, weights=w, features=(*LOGISTIC_FEATURES, *names))
        scores = model.probabilities(matrix(validation, paper, names))
    chosen = [(r, s) for r, s in zip(validation, scores) if r.get("fitted", True)]
    rows, values = [r for r, _ in chosen], np.asarray([s for _, s in chosen])
    t = choose_abstain(rows, values, 0.03)

    def split(keep: Callable[[dict], bool]) -> tuple[list[float], list[float]]:
        pos = [float(s) for r, s in zip(rows, values) if keep(r) and r["answerable"]]
        neg = [float(s) for r, s in zip(rows, values) if keep(r) and not r["answerable"]]
        return pos, neg

    pos, neg = split(lambda r: True)
    written = split(lambda r: family(r["source"]) in WRITTEN)
    conf = split(lambda r: family(r["source"]) == "conf-written")
    sample = split(lambda r: family(r["source"]) == "sample-written")
    near = [s < t for r, s in zip(rows, values) if r["kind"] == "near-miss" and family(r["source"]) == "conf-written"]
    figures = abstention_table(rows, values, [t])[t]
    abstained, _ = figures.pop("unanswerable_abstained"), figures.pop("false_abstention")
    families = " ".join(f"{k} {v.split(' of ')[0]}" for k, v in figures.items())
    apart_rows = [(r, s) for r, s in zip(validation, scores) if not r.get("fitted", True)]
    measured = abstention_table([r for r, _ in apart_rows], np.asarray([s for _, s in apart_rows]), [t])[t]
    apart = " ".join(f"{k} {v}" for k, v in measured.items() if ":" in k)
    return (
        f"{label or '+'.join(names) or '(shipped features)':34s} AUC {auc(pos, neg):.3f} writers {auc(*written):.3f}"
        f" (conf {auc(*conf):.3f}, sample {auc(*sample):.3f}) threshold {t:.3f} abstained {abstained:.3f}"
        f" conf near-miss {np.mean(near):.3f} | {families} || {apart}"
    )


def screen(validation: list[dict], model_file: Path, pool: set[str]) -> str:
    """Wrong decisions per family of the model saved in `model_file` on the `validation` rows, at
    the threshold that keeps 3% false abstention over the rows of the fitted sources and `pool`."""
    paper = LogisticModel.load(model_file, "paper")
    answerable = load_model(model_file, "answerable")
    scores = answerable.probabilities(stacked(validation, paper, answerable.features))
    chosen = [(r, s) for r, s in zip(validation, scores) if r.get("fitted", True) or family(r["source"]) in pool]
    t = choose_abstain([r for r, _ in chosen], np.asarray([s for _, s in chosen]), 0.03)
    wrong: dict[str, int] = {}
    for r, s in zip(validation, scores):
        key = f"{family(r['source'])}:{'ans' if r['answerable'] else 'un'}"
        wrong[key] = wrong.get(key, 0) + int(bool(s < t) == r["answerable"])
    per_family = " ".join(f"{k}={v}" for k, v in sorted(wrong.items()))
    return f"{model_file.name}: threshold {t:.3f}, wrong {sum(wrong.values())} | {per_family}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--features", type=Path, default=Path("eval/generated/relevance_features.json"))
    parser.add_argument("--human-weight", type=float, default=None, help="default: the shipped model's")
    parser.add_argument(
        "--train-on",
        action="append",
        default=[],
        help="a measured-only family to add to the train rows (conf-topic-pairs, conf-topic-absent)",
    )
    parser.add_argument("--only", action="append", default=[], help="candidates to try (default: all)")
    parser.add_argument(
        "--model", type=Path, action="append", default=[], help="a saved model file to screen (see above)"
    )
    args = parser.parse_args()
    paper = LogisticModel.load(RELEVANCE_MODEL, "paper")
    answerable = load_model(RELEVANCE_MODEL, "answerable")
    if args.model:
        cached = fitted_rows(json.loads(args.features.read_text()), measured=True)
        validation = [r for r in cached if r["split"] == "validation" and not r["source"].endswith(FOLLOWED)]
        pool = set(answerable.chosen_on.get("threshold_on", []))
        for model_file in args.model:
            print(screen(validation, model_file, pool))
        return
    weight = args.human_weight or float(answerable.chosen_on["human_weight"])
    rows = fitted_rows(json.loads(args.features.read_text()), measured=True)
    chosen = {*args.train_on}
    train = [r for r in rows if r["split"] == "train" and (r.get("fitted", True) or family(r["source"]) in chosen)]
    validation = [r for r in rows if r["split"] == "validation"]
    names = args.only or list(CANDIDATES)
    print(
        f"train {len(train)}, validation {len(validation)} questions; writer's weight {weight}; "
        f"trained on measured families: {args.train_on or 'none'}"
    )
    print(evaluate(train, validation, paper, [], weight, shipped=answerable, label="shipped model"))
    print(evaluate(train, validation, paper, [], weight))
    for name in names:
        print(evaluate(train, validation, paper, [name], weight))
    if len(names) > 1:
        print(evaluate(train, validation, paper, names, weight))


if __name__ == "__main__":
    main()
