"""Question -> retrieved sources -> answer -> checked citations.

Two answerers share one pipeline: the LLM answerer (any OpenAI-compatible endpoint, prompts from
`prompts/`) and the extractive answerer, the offline default, which quotes the sentences of the
retrieved abstracts that best answer the question. Both pass the same gate before answering (the
question's key names and numbers must occur in the sources, and some sentence must be close to the
question) and the same checks after; so both abstain the same way and neither can cite a source
it was not given."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


from rag.catalog import Filters
from rag.chunk import count_tokens, encoding
from rag.cite import SupportChecker, citations_for, parse_claims, strip_invalid
from rag.text import content_words, format_authors, names_in, numbers_in, split_sentences
from rag.errors import QuestionError
from rag.chatmodel import ChatModel, Message, Usage
from rag.prompts import load
from rag.retrieve import Retriever
from rag.types import Answer, Claim, Hit

ABSTAIN_SENTINEL = "INSUFFICIENT_EVIDENCE"
ABSTAIN_TEXT = "The collection does not say: none of the retrieved abstracts answers this question."
NO_MATCH_TEXT = "Nothing found: no paper in the collection matches this question and these filters."
EXTRACTIVE_NOTE = "Extractive answer (sentences quoted from the abstracts; no language model was used):"
_NUMERIC_Q = re.compile(r"\b(how (many|much|often|large|fast)|what (accuracy|percentage|score|number|rate)|accuracy|"
                        r"percent|%|score|reach|achieve|improve|by how)\b", re.I)
OnToken = Callable[[str], None]


@dataclass
class Gate:
    """Why a question can or cannot be answered from these sources."""

    answerable: bool
    reason: str
    best_similarity: float


def key_terms(question: str) -> set[str]:
    """Names, acronyms and numbers in a question: things the sources must literally contain."""
    return names_in(question) | {n for n in numbers_in(question) if len(n) > 1}


def _contains(text: str, term: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(term.lower())}(?![A-Za-z0-9])", text.lower()) is not None


def mentions_author(question: str, hit: Hit) -> bool:
    """The question names an author of this paper (full name, or a surname of 4+ letters)."""
    for name in hit.paper.authors:
        surname = name.split()[-1] if name.split() else ""
        if name in question or (len(surname) >= 4 and re.search(rf"\b{re.escape(surname)}\b", question)):
            return True
    return False


class Relevance:
    """Sentence-level relevance of sources to a question, shared by the gate and the extractor."""

    def __init__(self, checker: SupportChecker, min_similarity: float = 0.35) -> None:
        self.checker = checker
        self.min_similarity = min_similarity

    def sentences(self, question: str, hits: list[Hit]) -> list[tuple[float, float, int, str]]:
        """(score, cosine, source number, sentence) for every sentence of every source."""
        rows = [(n, s) for n, hit in enumerate(hits, start=1) for s in split_sentences(hit.paper.abstract)]
        if not rows:
            return []
        vectors = self.checker.embed([question] + [s for _, s in rows])
        by_author = {n for n, hit in enumerate(hits, start=1) if mentions_author(question, hit)}
        cos = vectors[1:] @ vectors[0]
        words = content_words(question)
        terms = key_terms(question)
        numeric = bool(_NUMERIC_Q.search(question))
        scored = []
        for (n, sentence), sim in zip(rows, cos):
            overlap = len(words & content_words(sentence)) / len(words) if words else 0.0
            score = 0.55 * float(sim) + 0.3 * overlap
            if terms and any(_contains(sentence, t) for t in terms):
                score += 0.15
            if numeric and re.search(r"\d", sentence):
                score += 0.15
            if n in by_author:
                score += 0.2
            if sentence.rstrip().endswith("?"):
                score -= 0.3  # a question the abstract asks is not an answer to ours
            scored.append((score, float(sim), n, sentence))
        scored.sort(key=lambda row: -row[0])
        return scored

    def gate(self, question: str, hits: list[Hit], scored: list[tuple[float, float, int, str]]) -> Gate:
        if not hits:
            return Gate(False, "no paper matched", 0.0)
        corpus = " ".join(f"{p.title} {p.label} {p.abstract} {' '.join(p.authors)} {p.track} {p.venue}"
                          for p in (h.paper for h in hits))
        missing = sorted(t for t in key_terms(question) if not _contains(corpus, t))
        best = max((sim for _, sim, _, _ in scored), default=0.0)
        if any(mentions_author(question, h) for h in hits):
            return Gate(True, "an author named in the question wrote a retrieved paper", best)
        if missing:
            return Gate(False, f"the sources never mention {', '.join(missing)}", best)
        if best < self.min_similarity:
            return Gate(False, f"no sentence is close to the question (best {best:.2f})", best)
        return Gate(True, "", best)


class Answerer(Protocol):
    mode: str

    def generate(self, question: str, hits: list[Hit], scored: list[tuple[float, float, int, str]],
                 usage: Usage, on_token: OnToken | None) -> tuple[str, list[Claim] | None]:
        """Raw answer text, and the claims when the answerer builds them itself."""
        ...


class ExtractiveAnswerer:
    mode = "extractive"

    def __init__(self, max_sentences: int = 3, per_source: int = 2) -> None:
        self.max_sentences = max_sentences
        self.per_source = per_source

    def generate(self, question: str, hits: list[Hit], scored: list[tuple[float, float, int, str]],
                 usage: Usage, on_token: OnToken | None) -> tuple[str, list[Claim] | None]:
        chosen: list[tuple[float, float, int, str]] = []
        best = scored[0][0]
        for row in scored:
            if len(chosen) == self.max_sentences or row[0] < 0.75 * best:
                break
            if sum(1 for c in chosen if c[2] == row[2]) < self.per_source:
                chosen.append(row)
        lines = [EXTRACTIVE_NOTE]
        claims = []
        for _, _, n, sentence in chosen:
            paper = hits[n - 1].paper
            lines.append(f'- {paper.display_title} [{n}]: "{sentence}"')
            claims.append(Claim(text=sentence, cites=[n]))
        if on_token:  # one line at a time, so a chat shows the answer arriving
            for i, line in enumerate(lines):
                on_token(line if i == 0 else "\n" + line)
        return "\n".join(lines), claims


class LLMAnswerer:
    mode = "llm"

    def __init__(self, model: ChatModel, context_tokens: int, max_sentences: int = 6) -> None:
        self.model = model
        self.context_tokens = context_tokens
        self.max_sentences = max_sentences
        self.system = load("answer_system", frozenset({"abstain_sentinel", "max_sentences"}))
        self.user = load("answer_user", frozenset({"sources", "question"}))

    def sources_block(self, hits: list[Hit]) -> str:
        """Numbered, fenced sources, trimmed to the token budget. A source cannot close its own
        fence: any `<source`/`</source` inside an abstract is defused."""
        blocks: list[str] = []
        used = 0
        for n, hit in enumerate(hits, start=1):
            p = hit.paper
            abstract = re.sub(r"</?\s*source", "‹source", p.abstract, flags=re.I)
            head = (f'<source id="{n}">\nTitle: {p.display_title}\nAuthors: {format_authors(p.authors, p.authors_truncated) or "unknown"}'
                    f'\nVenue: {p.venue} {p.year or ""}\nAbstract: ')
            budget = self.context_tokens - used - count_tokens(head) - 8
            if budget < 50:
                break
            tokens = encoding().encode(abstract, disallowed_special=())
            if len(tokens) > budget:
                abstract = encoding().decode(tokens[:budget]) + " …"
            block = f"{head}{abstract}\n</source>"
            used += count_tokens(block)
            blocks.append(block)
        return "\n\n".join(blocks)

    def messages(self, question: str, hits: list[Hit]) -> list[Message]:
        return [
            {"role": "system", "content": self.system.render(abstain_sentinel=ABSTAIN_SENTINEL, max_sentences=self.max_sentences)},
            {"role": "user", "content": self.user.render(sources=self.sources_block(hits), question=question)},
        ]

    def generate(self, question: str, hits: list[Hit], scored: list[tuple[float, float, int, str]],
                 usage: Usage, on_token: OnToken | None) -> tuple[str, list[Claim] | None]:
        pieces = []
        for piece in self.model.stream(self.messages(question, hits), usage):
            pieces.append(piece)
            if on_token:
                on_token(piece)
        return "".join(pieces), None


class Verifier:
    """Optional second pass: the LLM judges each cited claim against its quote."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.prompt = load("verify", frozenset({"source", "claim"}))

    def verify(self, claim: Claim, usage: Usage) -> None:
        if not claim.supported or not claim.quote:
            return
        reply = self.model.complete(
            [{"role": "user", "content": self.prompt.render(source=claim.quote, claim=claim.text)}], usage, max_tokens=5
        )
        if "UNSUPPORTED" in reply.upper():
            claim.supported, claim.reason = False, "the LLM verifier found no support"


class AnswerPipeline:
    def __init__(self, retriever: Retriever, answerer: Answerer, checker: SupportChecker, k: int = 5,
                 max_question_chars: int = 2000, verifier: Verifier | None = None) -> None:
        self.retriever = retriever
        self.answerer = answerer
        self.checker = checker
        self.relevance = Relevance(checker)
        self.k = k
        self.max_question_chars = max_question_chars
        self.verifier = verifier

    def validate(self, question: str) -> str:
        question = (question or "").strip()
        if not question:
            raise QuestionError("the question is empty")
        if len(question) > self.max_question_chars:
            raise QuestionError(
                f"the question is {len(question)} characters long; the limit is {self.max_question_chars} (RAG_MAX_QUESTION_CHARS)"
            )
        return question

    def answer(self, question: str, query: str | None = None, filters: Filters = Filters(), k: int | None = None,
               on_token: OnToken | None = None) -> Answer:
        question = self.validate(question)
        query = query or question
        timings: dict[str, float] = {}
        usage = Usage()
        start = time.perf_counter()
        hits = self.retriever.search(query, k or self.k, filters).hits
        timings["retrieve"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        scored = self.relevance.sentences(question, hits)
        gate = self.relevance.gate(question if query == question else f"{question} {query}", hits, scored)
        result = Answer(question=question, query=query, text="", mode=self.answerer.mode, abstained=False, sources=hits)
        if not gate.answerable:
            text = ABSTAIN_TEXT if hits else NO_MATCH_TEXT
            result.text, result.raw_text, result.abstained = text, text, True
            if on_token:
                on_token(text)
            timings["generate"] = (time.perf_counter() - start) * 1000
            timings["check"] = 0.0
            result.timings_ms, result.usage = timings, usage.public()
            return result
        raw, claims = self.answerer.generate(question, hits, scored, usage, on_token)
        timings["generate"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        result.raw_text = raw
        if ABSTAIN_SENTINEL in raw:
            result.text, result.abstained = ABSTAIN_TEXT, True
        else:
            text, removed = strip_invalid(raw, set(range(1, len(hits) + 1)))
            result.text, result.removed_citations = text, removed
            result.claims = claims if claims is not None else parse_claims(text)
            sources = {n: h.paper for n, h in enumerate(hits, start=1)}
            for claim in result.claims:
                self.checker.check(claim, sources)
                if self.verifier is not None:
                    self.verifier.verify(claim, usage)
            result.citations = citations_for(result.claims, hits)
        timings["check"] = (time.perf_counter() - start) * 1000
        result.timings_ms, result.usage = timings, usage.public()
        return result
