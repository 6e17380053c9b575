"""Deterministic, honest stand-ins for the answer-side unit tests, in one place.

- `FakeChatModel`: a ChatModel that replies from a queue, streamed word by word (with an
  optional split inside citation markers), recording every request. It implements the same
  protocol as rag.answer.llm.OpenAIChat; the real client is tested against tests/openai_server.py.
- `KeywordRetriever`: ranks a fixed list of papers by shared words with the query, honouring
  filters through the real Catalog; returns real Hit objects.
- `corpus()`: a few papers written for these tests, with names, numbers and catalogue fields;
  `paper()` writes one more in a line."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from rag.answer.catalogue import CatalogueAnswerer
from rag.answer.chatmodel import Message, ToolCall, Usage
from rag.answer.cite import SupportChecker
from rag.answer.compose import ExtractiveAnswerer
from rag.answer.logistic import LogisticModel
from rag.answer.pipeline import AnswerPipeline, LLMAnswerer
from rag.answer.relevance import RELEVANCE_MODEL as RELEVANCE
from rag.answer.relevance import Relevance
from rag.answer.route import Router
from rag.answer.sentences import SENTENCE_MODEL as SENTENCES
from rag.answer.sentences import SentenceScorer
from rag.answer.trees import question_models
from rag.embed import HashEmbedder
from rag.search.retrieve import SearchResult
from rag.store.catalog import Catalog
from rag.store.keyword import TOKENIZE
from rag.types import Filters, Hit, Paper


@dataclass
class FakeChatModel:
    replies: deque[str] = field(default_factory=deque)
    name: str = "fake"
    default: str = "INSUFFICIENT_EVIDENCE"
    requests: list[list[Message]] = field(default_factory=list)
    split_markers: bool = True

    def stream(self, messages: list[Message], usage: Usage, max_tokens: int | None = None) -> Iterator[str]:
        self.requests.append(messages)
        usage.calls += 1
        text = self.replies.popleft() if self.replies else self.default
        for piece in re.split(r"(?<= )", text):
            if self.split_markers and "[" in piece and len(piece) > 2:  # "[1" then "2]": a marker cut in two
                cut = piece.index("[") + 2
                yield piece[:cut]
                yield piece[cut:]
            else:
                yield piece

    def complete(self, messages: list[Message], usage: Usage, max_tokens: int | None = None) -> str:
        return "".join(self.stream(messages, usage, max_tokens))

    def stream_turn(
        self, messages: list[Message], tools: list[dict[str, object]], usage: Usage, max_tokens: int | None = None
    ) -> Iterator[str | ToolCall]:
        yield from self.stream(messages, usage, max_tokens)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


class KeywordRetriever:
    def __init__(self, papers: list[Paper]) -> None:
        self.catalog = Catalog.of(papers)
        self.papers = list(papers)

    def search(self, query: str, k: int = 5, filters: Filters = Filters(), mode: object = None) -> SearchResult:
        allowed = None if not filters.active() else {p.id for p in self.catalog.select(filters, -1)}
        wanted = _words(query)
        scored = []
        for paper in self.papers:
            if allowed is not None and paper.id not in allowed:
                continue
            text = f"{paper.title} {paper.label} {paper.abstract} {' '.join(paper.authors)}"
            score = len(wanted & _words(text))
            if score:
                scored.append((score, paper.id, paper))
        scored.sort(key=lambda row: (-row[0], row[1]))
        return SearchResult([Hit(p, float(s)) for s, _, p in scored[:k]])


def paper(pid: str, title: str, author: str, abstract: str, **catalogue: object) -> Paper:
    """One paper for a test: its id, title, one author, abstract and any catalogue fields."""
    return Paper(id=pid, title=title, authors=[author], abstract=abstract, **catalogue)  # type: ignore[arg-type]


def corpus() -> list[Paper]:
    return [
        Paper(
            id="p1",
            title="GradSurg: Gradient Surgery for Multi-Task Learning",
            authors=["Ada Lovelace", "Alan Turing"],
            venue="ICLR",
            year=2025,
            track="main",
            decision="Accept (Oral)",
            abstract="Multi-task learning suffers from conflicting gradients between tasks. We propose GradSurg, a "
            "method that projects conflicting gradients onto the normal plane of each other. GradSurg improves "
            "average accuracy by 4.2% on NYUv2 and reduces training time by 1.5x. We find that projection does "
            "not help when tasks are unrelated.",
        ),
        Paper(
            id="p2",
            title="On the Limits of Gradient Projection",
            authors=["Grace Hopper"],
            venue="ICML",
            year=2025,
            track="main",
            decision="Accept (Poster)",
            abstract="Gradient projection methods such as GradSurg are widely used in multi-task learning. We study "
            "when projection helps and show that it fails on 12 of 20 benchmarks. Our results indicate that "
            "loss weighting is a stronger baseline.",
        ),
        Paper(
            id="p3",
            title="Position: Benchmarks Should Report Variance",
            authors=["Alan Turing", "Grace Hopper"],
            venue="ICML",
            year=2025,
            track="position",
            decision="Accept (Oral)",
            abstract="This position paper argues that benchmark results should report variance over seeds. We "
            "survey 100 papers and find that 63% report a single run.",
        ),
        Paper(
            id="p4",
            title="",
            label="TabNet2",
            authors=[],
            venue="ICLR",
            year=2025,
            abstract="Tabular data remains hard for deep networks. We introduce TabNet2, a sparse attention model for "
            "tables, which reaches 91.5% accuracy on the Adult dataset.",
        ),
    ]


def frequencies(papers: list[Paper]) -> Callable[[Sequence[int]], tuple[list[int], int]]:
    """Document frequencies of term ids over the papers, as the keyword index gives them."""
    held = [set(TOKENIZE(f"{p.title} {p.label} {p.abstract}")) for p in papers]
    return lambda terms: ([sum(1 for h in held if t in h) for t in terms], len(held))


def pipeline(
    papers: list[Paper] | None = None, llm: LLMAnswerer | None = None, abstain_threshold: float | None = None
) -> tuple[AnswerPipeline, KeywordRetriever]:
    """A real AnswerPipeline over `papers` with the hashing embedder and the shipped models."""
    papers = papers or corpus()
    retriever = KeywordRetriever(papers)
    checker = SupportChecker(HashEmbedder(), threshold=0.3)
    relevance = Relevance(
        checker.vectors,
        LogisticModel.load(RELEVANCE, "paper"),
        question_models(RELEVANCE, "hash")[0],  # the hashing embedder: never the trees
        TOKENIZE,
        frequencies(papers),
        abstain_threshold,
        filtered=LogisticModel.load_part(RELEVANCE, "filtered"),
    )
    pipe = AnswerPipeline(
        retriever,  # type: ignore[arg-type]  # the Retriever's search, over a fixed list
        relevance,
        checker,
        Router.load(),
        CatalogueAnswerer(TOKENIZE, frequencies(papers)),
        ExtractiveAnswerer(SentenceScorer(LogisticModel.load(SENTENCES), TOKENIZE)),
        llm,
        k=4,
        catalog=lambda: retriever.catalog,
    )
    return pipe, retriever
