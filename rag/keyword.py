"""BM25 keyword index over the chunks (bm25s with an English Snowball stemmer).

Dense vectors blur exact method names and acronyms ("PLNL", "SAeUron"); BM25 keeps them. Chroma
has no local keyword search, so the index is built here, from the same chunk texts Chroma holds
(plus the authors and track, so names are findable), and saved beside the Chroma data."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

_STEMMER = Stemmer.Stemmer("english")
# bm25s sets its own logger to DEBUG, which would print through any root handler.
logging.getLogger("bm25s").setLevel(logging.WARNING)


def _tokenize(texts: list[str]) -> list[list[str]]:
    return bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False)


class KeywordIndex:
    def __init__(self, chunk_ids: list[str], retriever: bm25s.BM25 | None) -> None:
        self.chunk_ids = chunk_ids
        self._position = {cid: i for i, cid in enumerate(chunk_ids)}
        self._retriever = retriever

    @classmethod
    def build(cls, chunk_ids: list[str], texts: list[str]) -> "KeywordIndex":
        if not chunk_ids:
            return cls([], None)
        retriever = bm25s.BM25()
        retriever.index(_tokenize(texts), show_progress=False)
        return cls(chunk_ids, retriever)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "chunk_ids.json").write_text(json.dumps(self.chunk_ids))
        if self._retriever is not None:
            self._retriever.save(str(folder / "bm25"))

    @classmethod
    def load(cls, folder: Path) -> "KeywordIndex":
        ids = json.loads((folder / "chunk_ids.json").read_text())
        retriever = bm25s.BM25.load(str(folder / "bm25")) if ids else None
        return cls(ids, retriever)

    def search(self, query: str, n: int, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        """(chunk id, score) with a positive score, best first; `allowed` restricts chunk ids."""
        if self._retriever is None or not self.chunk_ids:
            return []
        tokens = _tokenize([query])
        if not tokens or not tokens[0]:
            return []
        mask = None
        if allowed is not None:
            mask = np.zeros(len(self.chunk_ids), dtype=np.float32)
            for cid in allowed:
                if cid in self._position:
                    mask[self._position[cid]] = 1.0
            if not mask.any():
                return []
        n = min(n, len(self.chunk_ids))
        docs, scores = self._retriever.retrieve(tokens, k=n, show_progress=False, weight_mask=mask, n_threads=1)
        return [
            (self.chunk_ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0]) if float(s) > 0
        ]
