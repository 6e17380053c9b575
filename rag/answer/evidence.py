"""What the answerers and the citation check read in a source, and how one sentence is scored
against a text: what the relevance model, the composer and the citation check (rag.answer.cite) share,
in one place so they cannot drift apart.

- `source_text`: a source's readable text: its abstract (cut at `MAX_SOURCE_CHARS`, so a 1 MB
  abstract cannot make an answer take minutes), or, for a title-only paper, its title: the only
  text such a paper has, so a claim restating the title is supported by it;
- `sentence_score`: the one sentence scorer, a blend of embedding cosine and content-word
  overlap; the citation check uses it;
- `Vectors`: sentence embeddings with a bounded cache (answering and checking look at the same
  sentences and each should be embedded once);
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rag.embed import Embedder
from rag.text import content_words, split_sentences
from rag.types import Paper

MAX_SOURCE_CHARS = 20_000
# The blend: cosine counts more than shared words, but a sentence that shares most of the
# words of the text it is compared with scores well even when the embedding disagrees.
COSINE_WEIGHT = 0.6
OVERLAP_WEIGHT = 0.4


def source_text(paper: Paper) -> str:
    """The text answering and checking read: the abstract up to `MAX_SOURCE_CHARS`, else the
    title (a title-only paper's only text)."""
    if paper.abstract:
        return paper.abstract[:MAX_SOURCE_CHARS]
    return paper.title


def source_sentences(paper: Paper) -> list[str]:
    text = source_text(paper)
    return split_sentences(text) or ([text] if text else [])


MAX_SENTENCES = 14  # of a paper's sentences the relevance model and the search's reranker compare


def leading_sentences(paper: Paper) -> list[str]:
    """The sentences of a source that are compared with a question: the relevance model and the
    search's reranker read the same ones, so through the shared cache each is embedded once."""
    return source_sentences(paper)[:MAX_SENTENCES]


def overlap(words: set[str], sentence: str) -> float:
    """Share of `words` (content words of a question or claim) that the sentence contains."""
    return len(words & content_words(sentence)) / len(words) if words else 0.0


def sentence_score(cosine: float, shared: float) -> float:
    """The one sentence score: cosine (negatives count as 0) blended with word overlap."""
    return COSINE_WEIGHT * max(cosine, 0.0) + OVERLAP_WEIGHT * shared


@dataclass(frozen=True)
class Support:
    """The sentence of a source that supports a claim best, and its score."""

    sentence: str
    score: float


@dataclass
class Vectors:
    """Embeddings with a bounded per-process cache."""

    embedder: Embedder
    limit: int = 20_000
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    embedded: int = 0  # texts sent to the model so far (a benchmark reads it)

    def embed(self, texts: list[str]) -> np.ndarray:
        known = {t: self._cache[t] for t in set(texts) if t in self._cache}
        todo = [t for t in dict.fromkeys(texts) if t not in known]
        if todo:
            known.update(zip(todo, self.embedder.embed(todo)))
            self.embedded += len(todo)
            if len(self._cache) > self.limit:  # bounded; several UI sessions may share this cache
                self._cache.clear()
            self._cache.update((t, known[t]) for t in todo)
        return np.vstack([known[t] for t in texts]) if texts else np.zeros((0, 1), dtype=np.float32)
