"""Train / validation / test: which split an evaluation item belongs to, decided once and for all.

Every tuned choice of the answer layer (fusion weights, thresholds, the relevance model's weights,
any rule) is fitted on `train`, compared on `validation`, and reported on `test`, which nobody
reads question by question (`rag eval` prints only its aggregates). The split is a pure function
of a key, so it never moves when a dataset grows: the gold paper's id for questions about one
paper (every question about a paper lands in the same split, so a paper seen in training is never
used to measure), else the item's own id. Salted sha256, 60 / 20 / 20."""

from __future__ import annotations

import hashlib

SPLITS = ("train", "validation", "test")
SALT = "paper-rag-heldout-2026"


def split_of(key: str) -> str:
    """The split of an item keyed by `key` (a gold paper id, or the item's id)."""
    bucket = int(hashlib.sha256(f"{SALT}:{key}".encode()).hexdigest(), 16) % 10
    return "train" if bucket < 6 else "validation" if bucket < 8 else "test"
