"""Gradient-boosted decision trees as package data: the answerable model's shape. Whether the
retrieved papers answer a question depends on its signals together (a low word coverage is
harmless when the best sentence is close and the paper model is sure; a missing rare word matters
when the question asks for a number), which a logistic model over the same signals cannot
express. The trees are fitted by `eval.fit_relevance` (scikit-learn's histogram gradient
boosting, a fitting-time dependency only) and evaluated here with numpy alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag.answer.logistic import LogisticModel, read_part, write_part


@dataclass(frozen=True)
class Tree:
    """One tree, its nodes numbered from 0 (the root). An inner node sends a row left when
    `row[feature] <= threshold` (a missing value goes where `missing_left` says); a leaf adds
    its `value` to the log-odds."""

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    leaf: tuple[bool, ...]
    value: tuple[float, ...]
    missing_left: tuple[bool, ...]

    def body(self) -> dict[str, list]:
        return {
            "feature": list(self.feature),
            "threshold": list(self.threshold),
            "left": list(self.left),
            "right": list(self.right),
            "leaf": [int(v) for v in self.leaf],
            "value": list(self.value),
            "missing_left": [int(v) for v in self.missing_left],
        }

    @classmethod
    def read(cls, data: dict[str, list]) -> Tree:
        return cls(
            tuple(int(v) for v in data["feature"]),
            tuple(float(v) for v in data["threshold"]),
            tuple(int(v) for v in data["left"]),
            tuple(int(v) for v in data["right"]),
            tuple(bool(v) for v in data["leaf"]),
            tuple(float(v) for v in data["value"]),
            tuple(bool(v) for v in data["missing_left"]),
        )


@dataclass(frozen=True)
class TreeModel:
    """p = sigmoid(baseline + the sum over trees of the leaf each row reaches)."""

    features: tuple[str, ...]
    baseline: float
    trees: tuple[Tree, ...]
    thresholds: dict[str, float] = field(default_factory=dict)
    chosen_on: dict[str, Any] = field(default_factory=dict)  # the validation figures behind the thresholds

    @classmethod
    def load(cls, path: Path, part: str = "") -> TreeModel:
        data = read_part(path, part)
        return cls(
            tuple(data["features"]),
            float(data["baseline"]),
            tuple(Tree.read(t) for t in data["trees"]),
            dict(data.get("thresholds", {})),
            dict(data.get("chosen_on", {})),
        )

    def save(self, path: Path, part: str = "") -> None:
        write_part(
            path,
            part,
            {
                "features": list(self.features),
                "baseline": self.baseline,
                "thresholds": self.thresholds,
                "chosen_on": self.chosen_on,
                "trees": [t.body() for t in self.trees],
            },
        )

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.float64)
        if not len(rows):
            return np.zeros(0)
        if rows.shape[1] != len(self.features):
            raise ValueError(f"the model reads {len(self.features)} features, the rows have {rows.shape[1]}")
        return 1.0 / (1.0 + np.exp(-(self.baseline + self._leaves(rows).sum(axis=1))))

    def _leaves(self, rows: np.ndarray) -> np.ndarray:
        """The leaf value each row reaches in each tree, all trees walked at once: (rows, trees)."""
        nodes = self._flat
        at = np.tile(nodes["roots"], (len(rows), 1))
        line = np.arange(len(rows))[:, None]
        for _ in range(nodes["depth"]):
            x = rows[line, nodes["feature"][at]]
            left = np.where(np.isnan(x), nodes["missing_left"][at], x <= nodes["threshold"][at])
            step = np.where(left, nodes["left"][at], nodes["right"][at])
            at = np.where(nodes["leaf"][at], at, step)
        return nodes["value"][at]

    @property
    def _flat(self) -> dict[str, Any]:
        """Every tree's nodes in one array each, child numbers made absolute (computed once)."""
        cached = self.__dict__.get("_flat_nodes")
        if cached is not None:
            return cached
        offsets = np.cumsum([0] + [len(t.feature) for t in self.trees])
        flat: dict[str, Any] = {
            "roots": offsets[:-1],
            "feature": np.concatenate([t.feature for t in self.trees]).astype(np.int64),
            "threshold": np.concatenate([t.threshold for t in self.trees]).astype(np.float64),
            "left": np.concatenate([np.asarray(t.left) + o for t, o in zip(self.trees, offsets)]),
            "right": np.concatenate([np.asarray(t.right) + o for t, o in zip(self.trees, offsets)]),
            "leaf": np.concatenate([t.leaf for t in self.trees]).astype(bool),
            "value": np.concatenate([t.value for t in self.trees]).astype(np.float64),
            "missing_left": np.concatenate([t.missing_left for t in self.trees]).astype(bool),
            "depth": max((_depth(t) for t in self.trees), default=0),
        }
        object.__setattr__(self, "_flat_nodes", flat)
        return flat


def _depth(tree: Tree, node: int = 0) -> int:
    if tree.leaf[node]:
        return 0
    return 1 + max(_depth(tree, tree.left[node]), _depth(tree, tree.right[node]))


def from_sklearn(model: Any, features: tuple[str, ...]) -> TreeModel:
    """A fitted binary `HistGradientBoostingClassifier` as a TreeModel (numerical features only)."""
    trees = []
    for (predictor,) in model._predictors:
        n = predictor.nodes
        trees.append(
            Tree(
                tuple(int(v) for v in n["feature_idx"]),
                tuple(float(v) for v in n["num_threshold"]),
                tuple(int(v) for v in n["left"]),
                tuple(int(v) for v in n["right"]),
                tuple(bool(v) for v in n["is_leaf"]),
                tuple(float(v) if leaf else 0.0 for v, leaf in zip(n["value"], n["is_leaf"])),
                tuple(bool(v) for v in n["missing_go_to_left"]),
            )
        )
    return TreeModel(features, float(np.asarray(model._baseline_prediction).ravel()[0]), tuple(trees))


def load_model(path: Path, part: str) -> LogisticModel | TreeModel:
    """The question model saved as `part` of `path`, in the shape it was saved in: trees when the
    part holds trees, else a logistic regression (a file refitted by an older script still loads)."""
    return TreeModel.load(path, part) if "trees" in read_part(path, part) else LogisticModel.load(path, part)


def question_models(path: Path, embedder: str) -> tuple[LogisticModel | TreeModel, LogisticModel | None]:
    """The answerable model of `path` and its `fallback` (a logistic model, saved beside trees).
    The trees decide only inputs like those they were fitted on: questions asked first, their
    cosines read by the local MiniLM. The fallback decides a conversation's later turn read as
    a follow-up (`Relevance.deciding`), and with another embedder (OpenAI's, the tests' hash) everything, as the
    best-sentence reranker is on only with the local model: the cosines of other embedders sit on
    another scale, which a logistic model extrapolates monotonically and trees flat."""
    answerable = load_model(path, "answerable")
    fallback = LogisticModel.load_part(path, "fallback")
    if fallback is not None and embedder != "local":
        return fallback, None
    return answerable, fallback
