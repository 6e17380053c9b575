"""Plain data passed between the stages. No I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

# `Paper.authors_order` of a list sorted by name (by the source, or found so): the order carries
# no information, so no first author can be named from it.
ALPHABETICAL = "alphabetical"


@dataclass
class Paper:
    """One paper: a copy as read from one source, or the merged view of all its copies.

    `id` is the source's own id (OpenReview id, DOI, arXiv id, an `id` field) when `own_id` is
    true; otherwise an id derived from the content (`rag.papers.identity`). `position` is the line a copy
    starts on (for messages), `ordinal` its place among the file's records (for identity of
    id-less copies). `authors_order` is "" when the authors are in the order the source lists
    them, taken as the paper's, and ALPHABETICAL when the list is sorted by name (ICLR's lists
    are; `rag.papers.readers.authors`), so that nothing names a first author the data does not have."""

    id: str
    abstract: str = ""
    title: str = ""
    label: str = ""
    authors: list[str] = field(default_factory=list)
    authors_truncated: bool = False
    venue: str = ""
    year: int | None = None
    track: str = ""
    decision: str = ""
    url: str = ""
    source: str = ""
    position: int = 0
    ordinal: int = 0
    own_id: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    authors_order: str = ""

    @property
    def display_title(self) -> str:
        return self.title or self.label or self.id

    @property
    def has_abstract(self) -> bool:
        return bool(self.abstract)

    def to_dict(self) -> dict[str, Any]:
        """A shallow dict (`dataclasses.asdict` deep-copies `extra`, which made it the single
        largest cost of re-ingesting an unchanged list)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["authors"] = list(self.authors)
        if not self.authors_order:  # absent when known, so copies read before it existed keep their digest
            del data["authors_order"]
        return data

    @property
    def alphabetical(self) -> bool:
        """Whether the author list is in alphabetical order rather than the paper's."""
        return self.authors_order == ALPHABETICAL

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Paper:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)

    def public(self) -> dict[str, Any]:
        """The stable JSON contract for a paper (search adds `score`)."""
        return {
            "paper_id": self.id,
            "title": self.title,
            "label": self.label,
            "authors": self.authors,
            "authors_truncated": self.authors_truncated,
            "authors_order": self.authors_order or "listed",
            "venue": self.venue,
            "year": self.year,
            "track": self.track,
            "decision": self.decision,
            "url": self.url,
            "abstract": self.abstract,
            "has_abstract": self.has_abstract,
        }


@dataclass(frozen=True)
class ChunkId:
    """The id of one embedded piece of a paper: `paper_id#version#n`. `version` names the text
    it was cut from (a hash of the chunk texts), so vectors of an old text and a new one never
    share an id, and a writer can delete exactly the vectors it replaced."""

    paper_id: str
    version: str
    n: int

    def __str__(self) -> str:
        return f"{self.paper_id}#{self.version}#{self.n}"

    @classmethod
    def parse(cls, text: str) -> ChunkId:
        """The id Chroma stores, read back; ValueError for an id this format did not write."""
        paper_id, version, n = text.rsplit("#", 2)
        return cls(paper_id, version, int(n))

    @property
    def text_version(self) -> tuple[str, str]:
        """(paper id, version): the paper text this chunk was cut from."""
        return self.paper_id, self.version


@dataclass
class Chunk:
    """A piece of one paper's text as embedded and keyword-indexed. A paper without an abstract
    has one chunk: its title, so search by title and topic still finds it."""

    id: ChunkId
    text: str
    tokens: int


@dataclass
class Hit:
    """One paper found by retrieval, with the chunk that matched best."""

    paper: Paper
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # rank in each ranker that found it
    # each scoring ranker's own score for it (cosine for dense, BM25 for keyword): what the
    # relevance model reads, beside the fused rank
    signals: dict[str, float] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        return {**self.paper.public(), "score": round(self.score, 6), "ranks": self.ranks}


@dataclass
class Citation:
    """A numbered source that the answer cites, with the sentence that best supports it."""

    n: int
    paper: Paper
    quote: str = ""
    support: float = 0.0
    supported: bool = True

    def public(self) -> dict[str, Any]:
        return {
            "n": self.n,
            **self.paper.public(),
            "quote": self.quote,
            "support": round(self.support, 4),
            "supported": self.supported,
        }


@dataclass
class Claim:
    """One sentence of an answer, the source numbers it cites, and the check's verdict."""

    text: str
    cites: list[int]
    support: float = 0.0
    supported: bool = True
    quote: str = ""
    reason: str = ""
    # A catalogue field the claim states ("authors", "track", "venue", "decision", "year"):
    # checked against that field of the cited paper, not against its abstract.
    field: str = ""

    def public(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "cites": self.cites,
            "support": round(self.support, 4),
            "supported": self.supported,
            "quote": self.quote,
            "reason": self.reason,
            "field": self.field,
        }


@dataclass
class Answer:
    question: str
    text: str
    mode: str
    abstained: bool
    citations: list[Citation] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    sources: list[Hit] = field(default_factory=list)
    removed_citations: list[int] = field(default_factory=list)
    raw_text: str = ""
    query: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    # How the question was routed ("content", "count", "list", "authors-of", "field-of"; "llm"
    # when the model decides), the filters read in the question, and papers that may bear on it
    # but are not quoted ("Also relevant").
    kind: str = ""
    filters: dict[str, Any] = field(default_factory=dict)
    related: list[Paper] = field(default_factory=list)
    reason: str = ""  # why the answer abstained, "" when it answered
    # the relevance model's probability that the best retrieved paper answers (offline content
    # answers; None otherwise): the answer abstains below the model's threshold
    confidence: float | None = None
    # the threshold that confidence was compared with (the deciding model's own, or a user's
    # RAG_ABSTAIN_THRESHOLD: a follow-up reading and a question read as asked may be decided by
    # different models)
    threshold: float | None = None
    # how far that confidence clears the deciding model's own threshold (not a user's): two readings
    # of a conversation's turn, decided by different models, are compared by it (`rag.answer.chat`)
    margin: float | None = None

    def public(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "query": self.query or self.question,
            "answer": self.text,
            "abstained": self.abstained,
            "mode": self.mode,
            "kind": self.kind,
            "filters": self.filters,
            "citations": [c.public() for c in self.citations],
            "related": [{k: v for k, v in p.public().items() if k != "abstract"} for p in self.related],
            "reason": self.reason,
            "confidence": self.confidence,
            "threshold": self.threshold,
            "claims": [c.public() for c in self.claims],
            "unsupported_claims": sum(1 for c in self.claims if not c.supported),
            "removed_citations": self.removed_citations,
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
            "usage": self.usage,
        }


class Mode(StrEnum):
    """Which rankers a search uses."""

    HYBRID = "hybrid"
    DENSE = "dense"
    KEYWORD = "keyword"


@dataclass(frozen=True)
class Filters:
    """Catalogue fields a search, a count or a list is restricted to (None: any), and facet values
    it leaves out (`excluded`, e.g. (("track", "position"),) for "not counting position papers")."""

    venue: str | None = None
    year: int | None = None
    track: str | None = None
    decision: str | None = None
    author: str | None = None
    excluded: tuple[tuple[str, str], ...] = ()  # (facet, value): venue, year, track or decision

    def active(self) -> bool:
        values = (self.venue, self.year, self.track, self.decision, self.author)
        return bool(self.excluded) or any(v not in (None, "") for v in values)

    def public(self) -> dict[str, object]:
        shown: dict[str, object] = {k: v for k, v in self.__dict__.items() if k != "excluded" and v not in (None, "")}
        left_out: dict[str, list[str]] = {}
        for facet, value in self.excluded:
            left_out.setdefault(facet, []).append(value)
        return {**shown, "excluded": left_out} if left_out else shown
