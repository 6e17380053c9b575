"""Which sentences of a paper answer this question: a scorer that weighs a sentence's closeness to
the question with its role in the abstract.

An abstract moves from background and problem ("X remains a challenge") to what the paper proposes,
how, on which data, and what it found. A question is answered by the latter, so each sentence gets
its role from a small table of named cues (`ROLES`, rules as data: each with examples), and a
logistic model (`rag/models/sentences.json`, refitted by `python -m eval.fit_sentences` on the
train split: a sentence is positive when it states the fact a question asks for) weighs role,
cosine, shared rare words and position together. Question cues (`ASKS`) let the weights differ by
what is asked: a number, a method, a data set."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.answer.logistic import LogisticModel

SENTENCE_MODEL = Path(__file__).parents[1] / "models" / "sentences.json"
Tokens = Callable[[str], list[int]]  # text -> its term ids (stems), as the keyword index reads it


@dataclass(frozen=True)
class Cue:
    """A named pattern with sentences it is meant to match (checked by the tests)."""

    name: str
    pattern: re.Pattern[str]
    examples: tuple[str, ...]


def _cue(name: str, pattern: str, *examples: str) -> Cue:
    return Cue(name, re.compile(pattern, re.I), examples)


ROLES = (
    _cue(
        "proposal",
        r"\b(?:we|this\s+(?:paper|work))\s+(?:\w+\s+)?(?:propose|introduce|present|develop|design|build)s?\b|"
        r"\b(?:called|named|dubbed)\s|,\s+an?\s+(?:new|novel)\b",
        "We propose SAeUron, a method that uses sparse autoencoders.",
        "In this work we introduce a benchmark for persuasion.",
    ),
    _cue(
        "method",
        r"\b(?:by|via|through|using|leverag\w+|based\s+on|consists?\s+of|first\s+\w+s?\s+then|"
        r"learns?|trains?|computes?|maps?|encodes?|decompos\w+|optimi[sz]\w+|estimat\w+)\b",
        "It learns a mapping by decomposing the activations.",
        "Our method works via kernel thinning.",
    ),
    _cue(
        "result",
        r"\b(?:outperform\w*|surpass\w*|achiev\w+|improv\w+|reduc\w+|show(?:s|ed)?\s+that|find\s+that|"
        r"results?\s+(?:show|demonstrate|indicate)|state-of-the-art|speed-?up|faster|better)\b|\d\s?(?:%|×|x\b)",
        "Experiments show that it outperforms the baselines by 8.5%.",
        "We find that larger models are more robust.",
    ),
    _cue(
        "data",
        r"\b(?:datasets?|benchmarks?|corpus|corpora|trained\s+on|evaluat\w+\s+on|tasks?|suite)\b",
        "We evaluate on ImageNet and COCO.",
        "The benchmark contains 8,316 tasks.",
    ),
    _cue(
        "background",
        r"^(?:however|while|although|despite|recent(?:ly)?|existing|prior|traditional(?:ly)?|current(?:ly)?|"
        r"many|most|in\s+recent\s+years)\b|\b(?:remains?\s+(?:a\s+)?(?:challenge|challenging|open|unclear)|"
        r"(?:is|are)\s+(?:a\s+)?(?:fundamental|crucial|critical|important)|suffer\w*\s+from|limited\s+by)\b",
        "However, existing methods suffer from high cost.",
        "Hallucination remains a challenge for vision-language models.",
    ),
)
ASKS = (
    _cue(
        "asks_number",
        r"\bhow\s+(?:many|much|fast|large|big|long|often|accurate)\b|\bby\s+how\s+much\b|\bwhat\s+(?:\w+\s+){0,2}"
        r"(?:accuracy|percentage|rate|score|speed-?up|improvement|size|number|value|error)\b|\bwhat\s+number\b",
        "How many tasks does PaperBench contain?",
        "What accuracy does it reach?",
    ),
    _cue(
        "asks_method",
        r"^\s*how\b(?!\s+(?:many|much|well|fast|large|long|often))|\bwhat\s+(?:method|approach|technique|mechanism)s?\b|"
        r"\bapproaches\b",
        "How does CTE work?",
        "What are the main approaches to detecting hallucinations?",
    ),
    _cue(
        "asks_data",
        r"\b(?:datasets?|benchmarks?|data|corpus|evaluat\w+\s+on|tested\s+on)\b",
        "Which datasets exist for multimodal hallucination?",
        "What data did they test it on?",
    ),
)
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


def cues(text: str, table: Sequence[Cue]) -> list[float]:
    return [1.0 if c.pattern.search(text) else 0.0 for c in table]


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
