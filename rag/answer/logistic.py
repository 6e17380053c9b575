"""A standardised logistic regression as package data: the learned-model shape of paper relevance,
sentence scoring and the filtered question's decision (the answerable model may be trees:
`rag.answer.trees`). Weights are fitted by the scripts of `eval/` and saved as JSON beside the
thresholds chosen on validation and the figures behind them; `read_part` and `write_part` serve
both shapes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class LogisticModel:
    """Standardised logistic regression: p = sigmoid(bias + Σ w_i (x_i - mean_i) / scale_i)."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    thresholds: dict[str, float] = field(default_factory=dict)
    chosen_on: dict[str, Any] = field(default_factory=dict)  # the validation figures behind the thresholds

    @classmethod
    def load(cls, path: Path, part: str = "") -> LogisticModel:
        """The model saved in `path` (or its `part`, for a file that holds several)."""
        data = read_part(path, part)
        return cls(
            tuple(data["features"]),
            tuple(data["weights"]),
            float(data["bias"]),
            tuple(data["mean"]),
            tuple(data["scale"]),
            dict(data.get("thresholds", {})),
            dict(data.get("chosen_on", {})),
        )

    @classmethod
    def load_part(cls, path: Path, part: str) -> LogisticModel | None:
        """The model saved as `part` of `path`, or None when the file holds no such part (a model
        that is fitted only when its data exists, as `filtered` of the relevance file)."""
        whole = json.loads(path.read_text(encoding="utf-8"))
        return cls.load(path, part) if part in whole else None

    def save(self, path: Path, part: str = "") -> None:
        """Write the model to `path`, or into its `part` keeping the others."""
        body: dict[str, Any] = {
            "features": list(self.features),
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "mean": [round(m, 6) for m in self.mean],
            "scale": [round(s, 6) for s in self.scale],
            "thresholds": self.thresholds,
            "chosen_on": self.chosen_on,
        }
        write_part(path, part, body)

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        if not len(rows):
            return np.zeros(0)
        z = (rows - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = self.bias + z @ np.asarray(self.weights)
        return 1.0 / (1.0 + np.exp(-logits))


def read_part(path: Path, part: str = "") -> dict[str, Any]:
    """The model saved in `path`, or its `part` for a file that holds several."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data[part] if part else data


def write_part(path: Path, part: str, body: dict[str, Any]) -> None:
    """Write a model to `path`, or into its `part` keeping the other parts. Lists of numbers go on
    one line each (a tree model holds thousands)."""
    if part:
        whole = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        body = {**(whole if isinstance(whole, dict) and "features" not in whole else {}), part: body}
    _write(path, body)


def drop_part(path: Path, part: str) -> None:
    """Remove `part` from a file of several models (a refit in a shape that has no such part)."""
    whole = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if part in whole:
        del whole[part]
        _write(path, whole)


def _write(path: Path, body: dict[str, Any]) -> None:
    text = _NUMBER_LIST.sub(lambda m: "[" + re.sub(r"\s+", "", m.group(1)) + "]", json.dumps(body, indent=1))
    path.write_text(text + "\n", encoding="utf-8")


_NUMBER_LIST = re.compile(r"\[\s*([-+\d.eE,\s]+?)\s*\]")  # a list of numbers, written on one line
