"""Does a question ask about the catalogue (a count, a list by venue/decision/track/author, a paper's
authors or decision), or about what the abstracts say? A classifier decides, not the first keyword
that matches.

The classifier is a multinomial logistic regression over the words and word pairs of the question
as `Query.placeholders` writes it ("how many <decision> papers at <venue> <year>"), so it learns
the shape of a catalogue question rather than the names in it. Its weights are package data
(`rag/models/router.json`), refitted by `python -m eval.fit_router` from the train split of the
held-out sets plus generated phrasings of each kind, and checked on the validation split.

Which field a field question asks for (decision, track, venue, year) is read from the words that
name a field (`FIELD_WORDS`), a table rather than a cascade."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

ROUTER_MODEL = Path(__file__).parents[1] / "models" / "router.json"


class Intent(StrEnum):
    CONTENT = "content"  # what the abstracts say: answered from retrieved sources
    COUNT = "count"  # "How many ICML 2025 position papers are there?"
    LIST = "list"  # "Which papers did Jane Doe write?", "List the orals of ICLR 2025"
    AUTHORS_OF = "authors-of"  # "Who wrote the paper on cryptic crosswords?"
    FIELD_OF = "field-of"  # "Was REGENT an oral?", "What area is the Hessian paper in?"


# The field a field question asks for, by the word that names it.
FIELD_WORDS = {
    "decision": ("oral", "orals", "spotlight", "spotlights", "poster", "posters", "decision", "accepted"),
    "track": ("track", "area", "subarea", "category", "session", "position"),
    "venue": ("venue", "conference", "where"),
    "year": ("year", "when"),
}


def route_features(text: str) -> list[str]:
    """Lower-case words, word pairs, and the first two words marked as openings."""
    words = re.findall(r"<\w+>|[a-z0-9]+(?:'[a-z]+)?", text.lower())
    out = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
    out += [f"^{w}" for w in words[:2]]
    return out


@dataclass(frozen=True)
class Router:
    classes: tuple[str, ...]
    bias: tuple[float, ...]
    weights: dict[str, tuple[float, ...]]

    @classmethod
    def load(cls, path: Path = ROUTER_MODEL) -> Router:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            tuple(data["classes"]),
            tuple(data["bias"]),
            {k: tuple(v) for k, v in data["weights"].items()},
        )

    def save(self, path: Path, chosen_on: dict[str, object]) -> None:
        body = {
            "classes": list(self.classes),
            "bias": [round(b, 5) for b in self.bias],
            "chosen_on": chosen_on,
            "weights": {k: [round(x, 5) for x in v] for k, v in sorted(self.weights.items())},
        }
        path.write_text(json.dumps(body, indent=0) + "\n", encoding="utf-8")

    def probabilities(self, placeholders: str) -> dict[str, float]:
        logits = list(self.bias)
        for token in set(route_features(placeholders)):
            for i, w in enumerate(self.weights.get(token, ())):
                logits[i] += w
        top = max(logits)
        exp = [math.exp(v - top) for v in logits]
        total = sum(exp)
        return {c: e / total for c, e in zip(self.classes, exp)}

    def intent(self, placeholders: str) -> Intent:
        p = self.probabilities(placeholders)
        return Intent(max(p, key=lambda c: p[c]))


def asked_field(text: str) -> str:
    """The catalogue field a field question asks for (`FIELD_WORDS`); decision by default."""
    words = set(re.findall(r"[a-z]+", text.lower()))
    return next((name for name, cues in FIELD_WORDS.items() if words & set(cues)), "decision")
