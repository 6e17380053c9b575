"""Refit the relevance models: `python -m eval.fit_relevance --home NAME=DIR ... [--features FILE]`.

1. For every held-out item in the train and validation splits that the router sends to the
   abstracts (not to the catalogue), search (the answer's k papers) and compute
   each paper's features (`rag.answer.relevance.FEATURES`) and the question's (`QUESTION_FEATURES`).
   A paper is positive when it is one of the item's gold papers; every paper of an unanswerable
   item is negative (the gold-removed twins give those for free); a question is positive when
   it is answerable. Cached in `--features`, so refits take seconds. The measured-only sources
   are computed too, marked `fitted: false`, for `eval.bench.answerable_features --train-on`; the
   fit leaves them out (`fitted_rows`). An item with history (a conversation's second turn) is
   collected as the chat reads it when it reads it as a follow-up (`ChatSession.readings`): searched
   with the condensed query, assessed on the question and that query together, as the pipeline
   does; measured-only, as `<source>-followed`.
2. Fit the paper model (standardised logistic regression, Newton's method, L2) on the train rows
   (`--answerable-only` keeps the saved one), then the answerable model on the train questions, its
   first feature being the paper model's best probability. The writers' questions (users' words)
   weigh `--human-weight` times a generated one in the answerable model: the generated sets
   outnumber them three to one and are more lexical, so unweighted the model learns word overlap.
   The weight was chosen on validation from 1, 2, 3, 4, 6 (pooled unanswerable abstained at 2.9%
   false abstention: 0.408, 0.404, 0.422, 0.448, 0.412; the writers' AUC 0.683, 0.722, 0.747,
   0.761, 0.785). `--shape trees` fits gradient-boosted trees instead (`rag.answer.trees`, with
   scikit-learn from the `fit` extra; 2 deep, 400 trees, rate 0.05, chosen by 5-fold CV on train)
   over `ANSWERABLE_FEATURES` (the question's signals, the runner-up paper's probability and the
   most probable paper's own signals); `--generic-weight` and `--train-on FAMILY=WEIGHT` (a
   measured-only family joining its train rows) build the candidates of docs/benchmarks.md. The
   shipped model (R2a, adopted 2026-12-05, session 17) is `--answerable-only --shape trees
   --generic-weight 4 --train-on conf-offtopic=0.5 --train-on conf-subjectless=2 --train-on
   sample-subjectless=2 --train-on conf-named-subject --train-on conf-named-absent=0.5 --train-on
   conf-named-detail=0.5 --train-on conf-topic-absent=0.5 --train-on conf-topic-pairs=0.5
   --threshold-on conf-offtopic --threshold-on conf-subjectless --threshold-on sample-subjectless
   --threshold-on conf-named-subject`: the named and topic near-miss twins teach the trees, while
   the false-abstention rate the threshold keeps is stated on the same questions as before them
   (`--threshold-on`, `pooled_threshold`). A trees fit carries the file's logistic model over as
   its `fallback` (`carried_fallback`). The feature cache is rebuilt from the indexes, whose dense
   search is not bit-for-bit reproducible across builds: a refit on a new build moves the trees
   (the shipped recipe on session 17's build chose 0.26 where session 16's chose 0.265).
3. Choose the thresholds on the validation split only:
   - `abstain`: the highest threshold on the answerable probability whose false-abstention rate
     on the answerable validation questions stays within `--max-false`;
   - `keep`: the threshold on a paper's probability that maximises F1 of the papers kept against
     the gold papers, over the answerable validation questions with one gold paper; `keep_many`
     the lowest threshold whose precision reaches `--list-precision` (0.8) over those with several
     (lists, synthesis), applied to plural questions: every paper listed must answer;
   - `keep_share`: the share of the best paper's probability at which another paper is quoted
     beside it, maximising F2 (recall weighed twice) over the same one-gold questions.
   The validation figures per family at the chosen and nearby thresholds are printed.
4. Write `rag/models/relevance.json` with the figures each choice was made on (the part floor of
   `eval.fit_part_floor` is carried over: rerun that script after a refit).
The test split is never read here."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from eval.heldout import cached_rows, family, split_items
from rag.answer import ANSWERABLE_FEATURES, FEATURES, RELEVANCE_MODEL, LogisticModel, TreeModel
from rag.answer.logistic import drop_part, read_part
from rag.answer.relevance import LOGISTIC_FEATURES, answerable_row, kept_papers
from rag.answer.trees import from_sklearn

K = 5  # the papers an answer reads (RAG_K)
# A conversation's follow-up is collected in the reading the chat scores for it (the question, then
# the question condensed with the previous turn's subject), under its source's name with this suffix,
# measured-only: `--train-on conf-conversations-followed` joins it to the answerable model's fit.
FOLLOWED = "-followed"


def collect(index: str, home: Path, splits: set[str]) -> list[dict]:
    os.environ["RAG_HOME"] = str(home)
    from rag.answer import Usage, read
    from rag.app import App
    from rag.settings import Settings

    app = App(Settings())
    loaded = app.index.load()
    relevance = app.pipeline.relevance
    out = []
    done: dict[str, int] = {}
    for source, item, _, split in split_items(index, loaded.catalog, measured=True):
        if split not in splits:
            continue
        name, fitted, asked, query = source.name, source.fitted, item.question, item.question
        if item.history:  # the follow-up reading the chat scores, if it reads the item as one
            session = app.chat()
            for earlier in item.history:
                session.ask(earlier)
            if not any(session.readings(item.question, read(item.question, loaded.catalog))):
                continue
            query = session.condense(item.question, Usage())
            name, fitted, asked = f"{source.name}{FOLLOWED}", False, f"{item.question} {query}"
        hits = app.retriever.search(query, K).hits
        assessment = relevance.assess(asked, hits)
        route = app.pipeline.router.intent(read(item.question, loaded.catalog).placeholders()).value
        gold = set(item.gold_ids) if item.answerable else set()
        out.append(
            {
                "source": name,
                "id": item.id,
                "kind": item.kind,
                "split": split,
                "answerable": item.answerable,
                "gold": sorted(gold),
                "papers": [p.hit.paper.id for p in assessment.papers],
                "labels": [p.hit.paper.id in gold for p in assessment.papers],
                "features": [p.features.tolist() for p in assessment.papers],
                "question": assessment.question_features.tolist(),
                "route": route,
                "fitted": fitted,
            }
        )
        done[source.name] = n = done.get(source.name, 0) + 1
        if n % 100 == 0:
            print(f"  {source.name}: {n}", file=sys.stderr)
    return out


def fit(
    x: np.ndarray,
    y: np.ndarray,
    l2: float = 1.0,
    weights: np.ndarray | None = None,
    features: tuple[str, ...] = FEATURES,
) -> LogisticModel:
    """Standardised L2 logistic regression by Newton's method (a dozen features: exact and fast)."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    sample = np.ones(len(y)) if weights is None else weights
    penalty = np.eye(z.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-z @ w))
        gradient = z.T @ (sample * (p - y)) + penalty @ w
        hessian = (z * (sample * p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return LogisticModel(features, tuple(w[1:]), float(w[0]), tuple(mean), tuple(scale))


WRITTEN = ("conf-written", "sample-written")  # the writers' questions, in users' words


def fitted_rows(rows: list[dict], measured: bool = False) -> list[dict]:
    """What the relevance model sees: questions the router sends to the abstracts, from the sources
    models are fitted on (`measured` adds the measured-only ones, for benchmarks)."""
    return [
        r
        for r in rows
        if r["features"] and r.get("route", "content") in ("content", "list") and (measured or r.get("fitted", True))
    ]


def stacked(rows: list[dict], paper: LogisticModel, features: tuple[str, ...] = LOGISTIC_FEATURES) -> np.ndarray:
    """The question rows (`answerable_row`, read down to `features`), the question's first feature
    the paper model's best probability."""
    at = [ANSWERABLE_FEATURES.index(name) for name in features]
    out = []
    for r in rows:
        papers = np.asarray(r["features"], dtype=np.float64).reshape(len(r["features"]), len(FEATURES))
        probabilities = paper.probabilities(papers) if len(papers) else np.zeros(0)
        q = np.asarray(r["question"], dtype=np.float64)
        q[0] = float(probabilities.max()) if len(probabilities) else 0.0
        out.append(answerable_row(q, papers, probabilities)[at])
    return np.asarray(out)


TREES = (2, 400, 0.05)  # depth, trees, learning rate: chosen by 5-fold CV on train (docs/benchmarks.md)


def fit_trees(
    x: np.ndarray, y: np.ndarray, weights: np.ndarray, features: tuple[str, ...], shape: tuple[int, int, float] = TREES
) -> TreeModel:
    """Gradient-boosted trees (scikit-learn, needed to refit only: `pip install -e '.[fit]'`)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    depth, trees, rate = shape
    model = HistGradientBoostingClassifier(
        max_depth=depth,
        max_iter=trees,
        learning_rate=rate,
        l2_regularization=1.0,
        min_samples_leaf=20,
        early_stopping=False,
        random_state=0,
    )
    model.fit(x, y, sample_weight=weights)
    return from_sklearn(model, features)


GENERIC = ("conf-generic", "sample-generic")  # hand-written: "How well does it work?" asked first


def question_weights(
    rows: list[dict], human_weight: float, generic_weight: float = 1.0, extra: dict[str, float] | None = None
) -> np.ndarray:
    """A writer's question weighs `human_weight` (users' words, outnumbered by generated ones), a
    hand-written subject-less one `generic_weight`, a row of a measured-only family joined by
    `--train-on` its own weight (`extra`), any other question 1."""

    def weight(row: dict) -> float:
        if family(row["source"]) in WRITTEN:
            return human_weight
        if row["source"] in GENERIC:
            return generic_weight
        return (extra or {}).get(row["source"], 1.0)

    return np.asarray([weight(r) for r in rows])


def joined(spec: list[str]) -> dict[str, float]:
    """`--train-on FAMILY[=WEIGHT]` as {family: weight}."""
    out = {}
    for item in spec:
        name, _, weight = item.partition("=")
        out[name] = float(weight) if weight else 1.0
    return out


def abstention_table(rows: list[dict], scores: np.ndarray, thresholds: list[float]) -> dict[float, dict]:
    """Per threshold: false abstention per family (answerable) and abstention per family (not)."""
    table = {}
    for t in thresholds:
        by: dict[str, list[bool]] = {}
        for r, s in zip(rows, scores):
            key = f"{family(r['source'])}:{'FA' if r['answerable'] else 'abstained'}"
            by.setdefault(key, []).append(bool(s < t))
        answerable = [bool(s < t) for r, s in zip(rows, scores) if r["answerable"]]
        unanswerable = [bool(s < t) for r, s in zip(rows, scores) if not r["answerable"]]
        table[t] = {
            "false_abstention": round(float(np.mean(answerable)), 4) if answerable else None,
            "unanswerable_abstained": round(float(np.mean(unanswerable)), 4) if unanswerable else None,
            **{k: f"{np.mean(v):.2f} of {len(v)}" for k, v in sorted(by.items())},
        }
    return table


def choose_abstain(rows: list[dict], scores: np.ndarray, max_false: float) -> float:
    answerable = np.asarray([s for r, s in zip(rows, scores) if r["answerable"]])
    chosen = 0.0
    for t in np.round(np.linspace(0.0, 0.95, 191), 4):
        if float(np.mean(answerable < t)) > max_false:
            break
        chosen = float(t)
    return chosen


def pooled_threshold(rows: list[dict], scores: np.ndarray, pool: set[str] | None, max_false: float) -> float:
    """`choose_abstain` over the rows of the fitted sources and of the measured families in `pool`
    (None: every row): the false-abstention rate the threshold keeps is stated on those."""
    counted = [r.get("fitted", True) or pool is None or r["source"] in pool for r in rows]
    kept = [(r, s) for r, s, c in zip(rows, scores, counted) if c]
    return choose_abstain([r for r, _ in kept], np.asarray([s for _, s in kept]), max_false)


def kept_figures(scored: list[tuple[dict, np.ndarray]], keep: float, share: float = 1.0) -> tuple[float, float]:
    """Precision and recall of the papers `kept_papers` keeps against the gold papers retrieved."""
    tp = fp = fn = 0
    for r, p in scored:
        kept = {r["papers"][i] for i in kept_papers(p.tolist(), keep, share)}
        gold = set(r["gold"])
        tp += len(kept & gold)
        fp += len(kept - gold)
        fn += len(gold & set(r["papers"]) - kept)
    return (tp / (tp + fp) if tp + fp else 0.0), (tp / (tp + fn) if tp + fn else 0.0)


def f_beta(precision: float, recall: float, beta: float = 1.0) -> float:
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall) if precision + recall else 0.0


def scored_rows(rows: list[dict], paper: LogisticModel) -> list[tuple[dict, np.ndarray]]:
    return [(r, paper.probabilities(np.asarray(r["features"]))) for r in rows if r["answerable"] and r["features"]]


def choose_keep(rows: list[dict], paper: LogisticModel, min_precision: float = 0.0) -> tuple[float, dict[str, Any]]:
    """The threshold on a paper's probability that maximises F1 of the papers kept against the
    gold papers; with `min_precision`, the lowest threshold (the most papers kept) whose precision
    reaches it: a list must hold only papers that satisfy the question's qualifiers."""
    scored = scored_rows(rows, paper)
    options = []
    for t in np.round(np.linspace(0.02, 0.95, 94), 4):
        precision, recall = kept_figures(scored, float(t))
        options.append((float(t), precision, recall, f_beta(precision, recall)))
    if min_precision:
        passing = [o for o in options if o[1] >= min_precision]
        chosen = passing[0] if passing else max(options, key=lambda o: o[1])
    else:
        chosen = max(options, key=lambda o: o[3])
    t, precision, recall, f1 = chosen
    figures: dict[str, Any] = {"questions": len(scored), "precision": round(precision, 4), "recall": round(recall, 4)}
    figures["f1"] = round(f1, 4)
    return t, figures


def choose_share(
    rows: list[dict], paper: LogisticModel, keep: float, beta: float = 2.0
) -> tuple[float, dict[str, Any]]:
    """The share of the best paper's probability at which another paper is quoted beside it
    (`kept_papers`), maximising F-beta with recall weighed `beta` times: the right paper missing
    from an answer loses the answer, an extra paper costs the reader a glance. 1.0 quotes the
    best paper alone when none reaches `keep`."""
    scored = scored_rows(rows, paper)
    options = []
    for share in np.round(np.linspace(1.0, 0.2, 17), 4):
        precision, recall = kept_figures(scored, keep, float(share))
        options.append((f_beta(precision, recall, beta), float(share), precision, recall))
    chosen = max(options, key=lambda o: (o[0], o[1]))
    share = chosen[1]
    alone = next(o for o in options if o[1] == 1.0)

    def figures(o: tuple[float, float, float, float]) -> dict[str, float]:
        return {f"f{beta:g}": round(o[0], 4), "precision": round(o[2], 4), "recall": round(o[3], 4)}

    return share, {"questions": len(scored), **figures(chosen), "share 1.0 (best paper alone)": figures(alone)}


def auc(positive: list[float], negative: list[float]) -> float:
    if not positive or not negative:
        return float("nan")
    pos, neg = np.asarray(positive)[:, None], np.asarray(negative)[None, :]
    return float(((pos > neg).sum() + 0.5 * (pos == neg).sum()) / (pos.size * neg.size))


def carried_floor(path: Path) -> dict[str, float]:
    """The part floor of the model file (`eval.fit_part_floor`), kept across a refit of the paper
    model: rerun that script afterwards, since it applies to the papers this model keeps."""
    if not path.exists():
        return {}
    thresholds = LogisticModel.load(path, "paper").thresholds
    return {k: v for k, v in thresholds.items() if k in ("part_floor", "part_relative")}


def carried_fallback(path: Path) -> LogisticModel | None:
    """For trees: the logistic model that decides what the trees were not fitted on (a
    conversation's follow-up readings, another embedder's cosines: `rag.answer.trees.question_models`),
    carried over from `path`: its `fallback` part, else its logistic answerable part (the shipped
    model the trees replace for questions asked first)."""
    if not path.exists():
        return None
    return LogisticModel.load_part(path, "fallback") or (
        None if "trees" in read_part(path, "answerable") else LogisticModel.load(path, "answerable")
    )


def fit_paper(
    train: list[dict], validation: list[dict], l2: float, list_precision: float, carried: dict[str, float]
) -> LogisticModel:
    """The paper model fitted on the train rows, its thresholds (`keep`, `keep_many`, `keep_share`)
    chosen on the validation rows, with the figures each was chosen on."""
    x = np.asarray([f for r in train for f in r["features"]])
    y = np.asarray([lab for r in train for lab in r["labels"]], dtype=float)
    paper = fit(x, y, l2)
    keep, keep_figures = choose_keep([r for r in validation if len(r["gold"]) <= 1], paper)
    keep_many, many_figures = choose_keep(
        [r for r in validation if len(r["gold"]) > 1], paper, min_precision=list_precision
    )
    share, share_figures = choose_share([r for r in validation if len(r["gold"]) <= 1], paper, keep)
    return LogisticModel(
        paper.features,
        paper.weights,
        paper.bias,
        paper.mean,
        paper.scale,
        {"keep": round(keep, 4), "keep_many": round(keep_many, 4), "keep_share": share, **carried},
        {
            "train_rows": len(y),
            "keep": keep_figures,
            "keep_many (several gold papers)": many_figures,
            "keep_share": share_figures,
        },
    )


def fit_answerable(
    shape: str,
    train: list[dict],
    validation: list[dict],
    measured: list[dict],
    paper: LogisticModel,
    human_weight: float,
    generic_weight: float,
    extra: dict[str, float],
    args: argparse.Namespace,
    pool: set[str] | None = None,
) -> tuple[LogisticModel | TreeModel, dict[float, dict]]:
    """The answerable model of `shape` on the train questions (plus the train rows of the families
    `extra` joins), its threshold chosen on validation for `--max-false` false abstention, with the
    validation figures per family at and near it. The joined families' validation rows are reported
    beside the others; those of the families in `pool` (default: all joined) also count in the
    false-abstention rate the threshold is chosen for, so that a family joined to teach the model
    does not redefine the rate a user is promised (`--threshold-on`)."""
    train = train + [r for r in measured if r["split"] == "train"]
    validation = validation + [r for r in measured if r["split"] == "validation"]
    names = ANSWERABLE_FEATURES if shape == "trees" else LOGISTIC_FEATURES
    x, v = stacked(train, paper, names), stacked(validation, paper, names)
    y = np.asarray([float(r["answerable"]) for r in train])
    weights = question_weights(train, human_weight, generic_weight, extra)
    model: LogisticModel | TreeModel = (
        fit_trees(x, y, weights, names) if shape == "trees" else fit(x, y, args.l2, weights=weights, features=names)
    )
    scores = model.probabilities(v)
    abstain = pooled_threshold(validation, scores, pool, args.max_false)
    positive = [float(s) for r, s in zip(validation, scores) if r["answerable"]]
    negative = [float(s) for r, s in zip(validation, scores) if not r["answerable"]]
    written = [r["answerable"] for r in validation if family(r["source"]) in WRITTEN]
    writers = [float(s) for r, s in zip(validation, scores) if family(r["source"]) in WRITTEN]
    nearby = sorted({round(abstain + d, 3) for d in (-0.1, -0.05, 0.0, 0.05, 0.1, 0.2) if 0 <= abstain + d <= 1})
    table = abstention_table(validation, scores, nearby)
    chosen_on = {
        "train_questions": len(train),
        "validation_questions": len(validation),
        "auc_validation": round(auc(positive, negative), 4),
        "auc_validation_writers": round(
            auc([s for s, a in zip(writers, written) if a], [s for s, a in zip(writers, written) if not a]), 4
        ),
        "max_false_abstention": args.max_false,
        "human_weight": human_weight,
        "generic_weight": generic_weight,
        "train_on": extra,
        **({"threshold_on": sorted(pool)} if pool is not None else {}),
        "at_threshold": table.get(round(abstain, 3), {}),
    }
    if isinstance(model, TreeModel):
        answerable: LogisticModel | TreeModel = TreeModel(
            model.features,
            model.baseline,
            model.trees,
            {"abstain": round(abstain, 4)},
            {"trees (depth, count, learning rate)": list(TREES), **chosen_on},
        )
    else:
        answerable = LogisticModel(
            model.features,
            model.weights,
            model.bias,
            model.mean,
            model.scale,
            {"abstain": round(abstain, 4)},
            chosen_on,
        )
    return answerable, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", action="append", default=[], help="NAME=DIR for each index")
    parser.add_argument("--features", type=Path, default=Path("eval/generated/relevance_features.json"))
    parser.add_argument("--refresh", action="store_true", help="recompute the cached features")
    parser.add_argument("--max-false", type=float, default=0.03, help="false abstentions allowed on validation")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument(
        "--human-weight", type=float, default=4.0, help="weight of a writer's question in the answerable model"
    )
    parser.add_argument(
        "--list-precision", type=float, default=0.8, help="precision a plural question's kept papers must reach"
    )
    parser.add_argument("--out", type=Path, default=RELEVANCE_MODEL)
    parser.add_argument(
        "--answerable-only",
        action="store_true",
        help="refit the answerable model alone, the paper model and its thresholds as saved in --out",
    )
    parser.add_argument(
        "--shape",
        choices=("logistic", "trees"),
        default="logistic",
        help="the answerable model: a logistic regression over LOGISTIC_FEATURES, or trees over "
        "ANSWERABLE_FEATURES (shipped since 2026-12-05: docs/benchmarks.md)",
    )
    parser.add_argument(
        "--generic-weight", type=float, default=1.0, help="weight of a hand-written subject-less question"
    )
    parser.add_argument(
        "--train-on",
        action="append",
        default=[],
        metavar="FAMILY[=WEIGHT]",
        help="a measured-only family whose train rows join the answerable model's (conf-offtopic=0.5)",
    )
    parser.add_argument(
        "--threshold-on",
        action="append",
        default=None,
        metavar="FAMILY",
        help="the joined families whose validation rows count in the false-abstention rate the "
        "threshold is chosen for (default: every --train-on family)",
    )
    args = parser.parse_args()
    extra = joined(args.train_on)
    rows = cached_rows(args.features, args.refresh, args.home, collect)
    # only what the relevance model sees: questions the router sends to the abstracts
    measured = [r for r in fitted_rows(rows, measured=True) if r["source"] in extra]
    rows = fitted_rows(rows)
    train = [r for r in rows if r["split"] == "train"]
    validation = [r for r in rows if r["split"] == "validation"]
    if args.answerable_only:
        paper = LogisticModel.load(args.out, "paper")
    else:
        paper = fit_paper(train, validation, args.l2, args.list_precision, carried_floor(args.out))
    answerable, table = fit_answerable(
        args.shape,
        train,
        validation,
        measured,
        paper,
        args.human_weight,
        args.generic_weight,
        extra,
        args,
        None if args.threshold_on is None else set(args.threshold_on),
    )
    fallback = carried_fallback(args.out) if args.shape == "trees" else None
    if not args.answerable_only:
        paper.save(args.out, "paper")
    answerable.save(args.out, "answerable")
    drop_part(args.out, "fallback")
    if fallback is not None:
        fallback.save(args.out, "fallback")
    print(json.dumps({"paper_weights": dict(zip(FEATURES, [round(w, 3) for w in paper.weights]))}, indent=None))
    if isinstance(answerable, LogisticModel):
        weights_by_name = dict(zip(answerable.features, [round(w, 3) for w in answerable.weights]))
        print(json.dumps({"answerable_weights": weights_by_name}))
    print(json.dumps({"paper_thresholds": paper.thresholds, **paper.chosen_on}))
    print(
        json.dumps({**answerable.thresholds, **{k: v for k, v in answerable.chosen_on.items() if k != "at_threshold"}})
    )
    for t, figures in table.items():
        print(t, json.dumps(figures))


if __name__ == "__main__":
    main()
