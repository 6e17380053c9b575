"""Which sentences of a paper answer this question: a scorer that weighs a sentence's closeness to
the question with its role in the abstract.

An abstract moves from background and problem ("X remains a challenge") to what the paper proposes,
how, on which data, and what it found. A question is answered by the latter, so each sentence gets
its role from a small table of named cues (`rag.answer.cues.ROLES`), and a
logistic model (`rag/models/sentences.json`, refitted by `python -m eval.fit_sentences` on the
train split: a sentence is positive when it states the fact a question asks for) weighs role,
cosine, shared rare words and position together. Question cues (`cues.ASKS`) let the weights differ by
what is asked: a number, a method, a data set."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.answer.cues import ASKS, ROLES, cues
from rag.answer.logistic import LogisticModel

SENTENCE_MODEL = Path(__file__).parents[1] / "models" / "sentences.json"
Tokens = Callable[[str], list[int]]  # text -> its term ids (stems), as the keyword index reads it


SENTENCE_FEATURES = (
    "cosine",
    "overlap",
    "rare",
    "first",
    "position",
    "length",
    *(c.name for c in ROLES),
    "number",
    "number_asked",
    "method_asked",
    "data_asked",
)
NUMBER = re.compile(r"\d")


@dataclass
class SentenceScorer:
    model: LogisticModel
    tokens: Tokens

    def features(
        self, question: str, sentences: Sequence[str], cosines: np.ndarray, weights: dict[int, float]
    ) -> np.ndarray:
        """One row per sentence. `weights` gives each question term its inverse document
        frequency; terms with a weight of at least `rare` count as the question's rare words."""
        asked = cues(question, ASKS)
        total = sum(weights.values()) or 1.0
        rare = {t for t, w in weights.items() if w >= max(weights.values(), default=0.0) * 0.75}
        rows = []
        for i, (sentence, cosine) in enumerate(zip(sentences, cosines)):
            held = set(self.tokens(sentence))
            roles = cues(sentence, ROLES)
            has_number = 1.0 if NUMBER.search(sentence) else 0.0
            rows.append(
                [
                    float(cosine),
                    sum(w for t, w in weights.items() if t in held) / total,
                    1.0 if held & rare else 0.0,
                    1.0 if i == 0 else 0.0,
                    i / max(len(sentences) - 1, 1),
                    math.log(1 + len(sentence.split())),
                    *roles,
                    has_number,
                    has_number * asked[0],
                    roles[1] * asked[1] + roles[0] * asked[1],
                    roles[3] * asked[2],
                ]
            )
        return np.asarray(rows, dtype=np.float64).reshape(len(sentences), len(SENTENCE_FEATURES))

    def scores(
        self, question: str, sentences: Sequence[str], cosines: np.ndarray, weights: dict[int, float]
    ) -> np.ndarray:
        return self.model.probabilities(self.features(question, sentences, cosines, weights))
