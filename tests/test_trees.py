"""The answerable model's shape: gradient-boosted trees read from package data and walked with numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rag.answer.logistic import LogisticModel
from rag.answer.relevance import ANSWERABLE_FEATURES, FEATURES, QUESTION_FEATURES, answerable_row
from rag.answer.trees import Tree, TreeModel, from_sklearn


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# a stump on feature 0 (<= 0.5 goes left, a missing value goes left)
STUMP = Tree(
    (0, 0, 0), (0.5, 0.0, 0.0), (1, 0, 0), (2, 0, 0), (False, True, True), (0.0, -1.0, 2.0), (True, False, False)
)
# depth 2: feature 1 at 0.0, then feature 0 at 0.3 on the left and feature 1 at 1.0 on the right; missing goes right
DEEP = Tree(
    (1, 0, 0, 0, 1, 0, 0),
    (0.0, 0.3, 0.0, 0.0, 1.0, 0.0, 0.0),
    (1, 2, 0, 0, 5, 0, 0),
    (4, 3, 0, 0, 6, 0, 0),
    (False, False, True, True, False, True, True),
    (0.0, 0.0, 0.1, 0.2, 0.0, 0.3, 0.4),
    (False, False, False, False, False, False, False),
)


def test_each_row_reaches_the_leaf_its_values_lead_to_in_every_tree() -> None:
    model = TreeModel(("a", "b"), 0.5, (STUMP, DEEP))
    rows = np.array(
        [
            [0.2, -1.0],  # stump left (-1); deep: b <= 0 -> a <= 0.3 -> 0.1
            [0.9, -1.0],  # stump right (2); deep: b <= 0 -> a > 0.3 -> 0.2
            [0.5, 0.5],  # stump left at the threshold itself (-1); deep: b > 0 -> b <= 1 -> 0.3
            [np.nan, 2.0],  # stump: missing goes left (-1); deep: b > 1 -> 0.4
            [0.9, np.nan],  # stump right (2); deep: missing b goes right, then right again -> 0.4
        ]
    )
    expected = [sigmoid(0.5 - 1 + 0.1), sigmoid(0.5 + 2 + 0.2), sigmoid(0.5 - 1 + 0.3), sigmoid(0.5 - 1 + 0.4)]
    expected.append(sigmoid(0.5 + 2 + 0.4))
    assert model.probabilities(rows) == pytest.approx(expected)


def test_rows_of_the_wrong_width_are_refused_and_no_rows_give_no_probabilities() -> None:
    model = TreeModel(("a", "b"), 0.0, (STUMP,))
    with pytest.raises(ValueError, match="reads 2 features"):
        model.probabilities(np.zeros((1, 3)))
    assert len(model.probabilities(np.zeros((0, 2)))) == 0


def test_a_tree_model_saved_beside_a_logistic_one_reads_back_the_same(tmp_path) -> None:
    path = tmp_path / "models.json"
    logistic = LogisticModel(("x",), (1.0,), 0.0, (0.0,), (1.0,), {"keep": 0.7})
    trees = TreeModel(("a", "b"), -0.25, (STUMP, DEEP), {"abstain": 0.3}, {"auc": 0.9})
    logistic.save(path, "paper")
    trees.save(path, "answerable")
    assert LogisticModel.load(path, "paper") == logistic
    again = TreeModel.load(path, "answerable")
    assert (again.features, again.baseline, again.trees, again.thresholds) == (
        trees.features,
        trees.baseline,
        trees.trees,
        trees.thresholds,
    )
    rows = np.random.default_rng(3).normal(size=(20, 2))
    assert again.probabilities(rows) == pytest.approx(trees.probabilities(rows))


def test_a_fitted_scikit_learn_model_predicts_the_same_once_exported() -> None:
    ensemble = pytest.importorskip("sklearn.ensemble", reason="scikit-learn is a test and refit dependency")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    x[rng.random(x.shape) < 0.05] = np.nan  # missing values take the side the fit chose
    y = ((np.nan_to_num(x[:, 0]) + np.nan_to_num(x[:, 1]) * np.nan_to_num(x[:, 2])) > 0.2).astype(float)
    fitted = ensemble.HistGradientBoostingClassifier(max_depth=3, max_iter=30, early_stopping=False).fit(x, y)
    exported = from_sklearn(fitted, ("a", "b", "c"))
    assert exported.probabilities(x) == pytest.approx(fitted.predict_proba(x)[:, 1], abs=1e-9)


def test_the_answerable_row_reads_the_most_probable_paper_and_the_runner_up() -> None:
    question = np.arange(len(QUESTION_FEATURES), dtype=float)
    papers = np.vstack([np.full(len(FEATURES), 1.0), np.full(len(FEATURES), 2.0), np.full(len(FEATURES), 3.0)])
    row = answerable_row(question, papers, np.array([0.2, 0.9, 0.5]))
    assert len(row) == len(ANSWERABLE_FEATURES)
    assert list(row[: len(QUESTION_FEATURES)]) == list(question)
    assert row[len(QUESTION_FEATURES)] == 0.5  # the runner-up's probability
    assert set(row[len(QUESTION_FEATURES) + 1 :]) == {2.0}  # the second paper's features: it is the most probable
    alone = answerable_row(question, papers[:1], np.array([0.4]))
    assert alone[len(QUESTION_FEATURES)] == 0.0
