"""Question -> kind -> catalogue or retrieved sources -> answer -> checked, renumbered citations.

One pipeline for every answerer:
1. read the question (rag.question): its kind, subject, and the filters it names;
2. catalogue questions (counts, lists by track/decision/venue, papers by an author, a paper's
   authors or track) are answered from catalogue fields (rag.catalog_answers), no LLM needed;
3. the others retrieve sources and pass the abstention gate (rag.gate): the sources must address
   the question, not merely mention its subject;
4. the answerer writes the answer: the extractive answerer (rag.compose, the offline default)
   quotes sentences composed for the kind of question; the LLM answerer (any OpenAI-compatible
   endpoint, prompts from `prompts/`) writes from numbered, fenced sources;
5. the same checks after: citations to numbers that were not sources are dropped, every claim is
   checked against what it cites, and citations are renumbered [1], [2], … in order of
   appearance (while streaming, too). Relevant sources not cited are listed as "Also relevant".
So both answerers abstain the same way and neither can cite a source it was not given."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from rag.catalog import Catalog, Filters
from rag.catalog_answers import CatalogueAnswerer, CatalogueDraft
from rag.chatmodel import ChatModel, Message, Usage
from rag.chunk import count_tokens, encoding
from rag.cite import (
    StreamRenumberer,
    SupportChecker,
    citations_for,
    parse_claims,
    renumber,
    strip_invalid,
)
from rag.compose import Draft, ExtractiveAnswerer, also_relevant_line, name_of
from rag.errors import LLMError, QuestionError
from rag.evidence import MAX_SOURCE_CHARS, Scored
from rag.examples import coined_name
from rag.gate import (
    ABSTAIN_SENTINEL,
    ABSTAIN_TEXT,
    NO_MATCH_TEXT,
    Gate,
    Relevance,
    also_relevant,
)
from rag.prompts import load
from rag.question import Kind, Question, parse
from rag.retrieve import Retriever
from rag.text import end_sentence, format_authors
from rag.types import Answer, Claim, Hit, Paper

OnToken = Callable[[str], None]
__all__ = [
    "ABSTAIN_SENTINEL",
    "ABSTAIN_TEXT",
    "NO_MATCH_TEXT",
    "AnswerPipeline",
    "Answerer",
    "ExtractiveAnswerer",
    "LLMAnswerer",
    "OnToken",
    "Verifier",
]


class Answerer(Protocol):
    mode: str

    def generate(
        self,
        question: Question,
        hits: list[Hit],
        scored: list[Scored],
        gate: Gate,
        usage: Usage,
        on_token: OnToken | None,
    ) -> Draft:
        """A draft answer. An answerer that streams calls `on_token` itself with the final
        numbering and sets `Draft.kind` to "streamed"; otherwise the pipeline streams the result."""
        ...


class LLMAnswerer:
    mode = "llm"

    def __init__(
        self, model: ChatModel, context_tokens: int, max_sentences: int = 6, min_source_tokens: int = 120
    ) -> None:
        self.model = model
        self.context_tokens = context_tokens
        self.max_sentences = max_sentences
        self.min_source_tokens = min_source_tokens
        self.system = load("answer_system", frozenset({"abstain_sentinel", "max_sentences"}))
        self.user = load("answer_user", frozenset({"sources", "question"}))

    def sources_block(self, hits: list[Hit]) -> str:
        """Numbered, fenced sources within the token budget, each source held to its fair share
        (the budget over the number of sources, more when others are shorter), so one huge
        abstract can neither crowd out the others nor slow the answer: text is cut by characters
        before tiktoken ever sees it. A source cannot close its own fence: any `<source`/`</source`
        inside an abstract is defused."""
        heads, bodies = [], []
        for n, hit in enumerate(hits, start=1):
            p = hit.paper
            authors = format_authors(p.authors, p.authors_truncated, 12, alphabetical=p.alphabetical) or "unknown"
            heads.append(
                f'<source id="{n}">\nTitle: {name_of(p)}\nAuthors: {authors}\n'
                f"Venue: {p.venue} {p.year or ''}\nAbstract: "
            )
            bodies.append(re.sub(r"</?\s*source", "‹source", p.abstract[:MAX_SOURCE_CHARS], flags=re.I))
        enc = encoding()
        tokens = [enc.encode(b, disallowed_special=()) for b in bodies]
        budget = self.context_tokens - sum(count_tokens(h) + 8 for h in heads)
        shares = _fair_shares([len(t) for t in tokens], max(budget, 0))
        blocks = []
        for head, body, toks, share in zip(heads, bodies, tokens, shares):
            if share < min(self.min_source_tokens, len(toks)):
                continue
            text = body if len(toks) <= share else enc.decode(toks[:share]) + " …"
            blocks.append(f"{head}{text}\n</source>")
        return "\n\n".join(blocks)

    def messages(self, question: str, hits: list[Hit]) -> list[Message]:
        return [
            {
                "role": "system",
                "content": self.system.render(abstain_sentinel=ABSTAIN_SENTINEL, max_sentences=self.max_sentences),
            },
            {"role": "user", "content": self.user.render(sources=self.sources_block(hits), question=question)},
        ]

    def generate(
        self,
        question: Question,
        hits: list[Hit],
        scored: list[Scored],
        gate: Gate,
        usage: Usage,
        on_token: OnToken | None,
    ) -> Draft:
        pieces: list[str] = []
        live = StreamRenumberer(set(range(1, len(hits) + 1)))
        emitted, opening = False, ""
        for piece in self.model.stream(self.messages(question.text, hits), usage):
            pieces.append(piece)
            if not on_token:
                continue
            if not emitted:  # hold the opening until it cannot be the abstain sentinel
                opening += piece
                stripped = opening.lstrip()
                if ABSTAIN_SENTINEL.startswith(stripped) or stripped.startswith(ABSTAIN_SENTINEL):
                    continue
                emitted, piece = True, opening
            out = live.feed(piece)
            if out:
                on_token(out)
        if emitted and on_token:
            rest = live.flush()
            if rest:
                on_token(rest)
        raw = "".join(pieces)
        if not raw.strip():
            raise LLMError("the LLM endpoint returned an empty answer: check RAG_LLM_MODEL and the server")
        return Draft(raw, [], kind="streamed" if emitted else "")


def _fair_shares(sizes: Sequence[int], budget: int) -> list[int]:
    """Water-filling: each item gets min(its size, an equal share of what the smaller ones leave)."""
    shares = [0] * len(sizes)
    left, todo = budget, sorted(range(len(sizes)), key=lambda i: sizes[i])
    for position, i in enumerate(todo):
        fair = left // max(len(todo) - position, 1)
        shares[i] = min(sizes[i], fair)
        left -= shares[i]
    return shares


class Verifier:
    """Optional second pass: the LLM judges each cited claim against its quote."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.prompt = load("verify", frozenset({"source", "claim"}))

    def verify(self, claim: Claim, usage: Usage) -> None:
        if not claim.supported or not claim.quote or claim.field:
            return
        reply = self.model.complete(
            [{"role": "user", "content": self.prompt.render(source=claim.quote, claim=claim.text)}], usage, max_tokens=5
        )
        if "UNSUPPORTED" in reply.upper():
            claim.supported, claim.reason = False, "the LLM verifier found no support"


def with_subject_of(q: Question, context: Sequence[Paper]) -> Question:
    """ "How does it work?" after an answer about CTE asks how CTE works: a what-is, how-it-works
    or does-it-work question whose subject is a pronoun takes the name the conversation's paper
    coined (rag.examples.coined_name), so the gate and the composer look for its definition."""
    if q.pronoun and not q.subject and context and q.kind in (Kind.DEFINITION, Kind.MECHANISM, Kind.FINDING):
        q.subject = coined_name(context[0])
    return q


def _unmet_line(q: Question) -> str:
    """The closing note when the question names a filter the collection cannot apply."""
    return f"\n\nNote: {end_sentence(q.unmet_note)}" if q.unmet else ""


def merge_filters(explicit: Filters, read: Filters) -> Filters:
    """Filters given by the caller win; the question's own fill the fields left empty."""
    values = {k: v if v not in (None, "") else getattr(read, k) for k, v in explicit.__dict__.items()}
    return Filters(**values)


class AnswerPipeline:
    def __init__(
        self,
        retriever: Retriever,
        answerer: Answerer,
        checker: SupportChecker,
        k: int = 5,
        max_question_chars: int = 2000,
        verifier: Verifier | None = None,
        catalog: Callable[[], Catalog | None] | None = None,
        min_similarity: float = 0.35,
    ) -> None:
        self.retriever = retriever
        self.answerer = answerer
        self.checker = checker
        self.relevance = Relevance(checker.vectors, min_similarity)
        self.k = k
        self.max_question_chars = max_question_chars
        self.verifier = verifier
        self.catalog = catalog or (lambda: None)
        self.catalogue = CatalogueAnswerer()

    def validate(self, question: str) -> str:
        question = (question or "").strip()
        if not question:
            raise QuestionError("the question is empty")
        if len(question) > self.max_question_chars:
            raise QuestionError(
                f"the question is {len(question)} characters long; "
                f"the limit is {self.max_question_chars} (RAG_MAX_QUESTION_CHARS)"
            )
        return question

    def read(self, question: str) -> Question:
        return parse(question, self.catalog())

    def answer(
        self,
        question: str,
        query: str | None = None,
        filters: Filters = Filters(),
        k: int | None = None,
        on_token: OnToken | None = None,
        context: Sequence[Paper] = (),
    ) -> Answer:
        """Answer `question`. `query` is what retrieval sees (a condensed follow-up); `context`
        the papers the conversation was last about (for "Who are its authors?")."""
        question = self.validate(question)
        query = query or question
        k = k or self.k
        timings: dict[str, float] = {}
        usage = Usage()
        start = time.perf_counter()
        catalog = self.catalog()
        q = with_subject_of(parse(question, catalog), context)
        filters = merge_filters(filters, q.filters)
        result = Answer(
            question=question,
            query=query,
            text="",
            mode=self.answerer.mode,
            abstained=False,
            kind=q.kind.value,
            filters=filters.public(),
        )
        if q.kind.catalogue and catalog is not None:
            catalogued = self.catalogue.answer(
                q,
                catalog,
                filters,
                list(context),
                lambda text, f: self._locate(text, f, k),
                lambda text, paper: self.checker.best_sentence(text, paper).sentence,
            )
            if catalogued is not None:
                timings["retrieve"] = (time.perf_counter() - start) * 1000
                return self._finish_catalogue(result, catalogued, q, timings, usage, on_token)
        text = question if query == question else f"{question} {query}"
        want = k * 2 if q.kind is Kind.LIST else k
        hits = self.retriever.search(query, want, filters).hits
        timings["retrieve"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        scored, gate = self.relevance.assess(q, text, hits)
        result.sources = hits
        if not gate.answerable:
            self._abstain(result, hits, gate, q, on_token)
            timings["generate"] = (time.perf_counter() - start) * 1000
            timings["check"] = 0.0
            result.timings_ms, result.usage = timings, usage.public()
            return result
        draft = self.answerer.generate(q, hits, scored, gate, usage, on_token)
        timings["generate"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        result.raw_text = draft.text
        if ABSTAIN_SENTINEL in draft.text:
            self._abstain(
                result, hits, Gate(False, "the LLM found no answer in the sources", gate.best_similarity), q, on_token
            )
        else:
            self._finish(result, draft, q, hits, scored, usage, on_token)
        timings["check"] = (time.perf_counter() - start) * 1000
        result.timings_ms, result.usage = timings, usage.public()
        return result

    # -- the parts of an answer -------------------------------------------------------------

    def _locate(self, text: str, filters: Filters, k: int) -> list[Paper]:
        """The paper a catalogue question describes ("the paper on cryptic crosswords"): the best
        source, if the gate finds that the sources address the description."""
        described = parse(text, None)
        hits = self.retriever.search(text, k, filters).hits
        scored, gate = self.relevance.assess(described, text, hits)
        if not gate.answerable or not scored:
            return []
        order = gate.focus or [scored[0].source]
        return [hits[n - 1].paper for n in order]

    def _abstain(self, result: Answer, hits: list[Hit], gate: Gate, q: Question, on_token: OnToken | None) -> None:
        text = ABSTAIN_TEXT if hits else NO_MATCH_TEXT
        related = [hits[n - 1].paper for n in gate.related if 1 <= n <= len(hits)]
        if related:
            subject = (q.subject_names or [q.subject])[0]
            text += (
                f"\n\nRelated, not answering (they mention {subject} but do not "
                f"{'introduce' if q.introduce else 'define'} it): "
                + end_sentence("; ".join(f"**{name_of(p)}**" for p in related))
            )
        text += _unmet_line(q)
        result.text, result.abstained, result.related, result.reason = text, True, related, gate.reason
        result.raw_text = result.raw_text or text
        result.citations, result.claims = [], []
        if on_token:
            on_token(text)

    def _finish(
        self,
        result: Answer,
        draft: Draft,
        q: Question,
        hits: list[Hit],
        scored: list[Scored],
        usage: Usage,
        on_token: OnToken | None,
    ) -> None:
        removed: list[int] = []
        if draft.claims:
            text, claims = draft.text, draft.claims
        else:  # the LLM's text: drop citations to numbers that were not sources, then read claims
            text, removed = strip_invalid(draft.text, set(range(1, len(hits) + 1)))
            claims = parse_claims(text)
        text, sources, mapping = renumber(text, claims, hits)
        related = draft.related if draft.claims else also_relevant(q, scored, set(mapping))
        result.related = [hits[n - 1].paper for n in related if 1 <= n <= len(hits) and n not in mapping]
        if result.related:
            text += "\n\n" + also_relevant_line(result.related)
        text += _unmet_line(q)
        result.text, result.claims, result.removed_citations, result.sources = text, claims, removed, sources
        self._check(result, usage)
        if on_token and draft.kind != "streamed":
            for i, line in enumerate(text.split("\n")):
                on_token(line if i == 0 else "\n" + line)
        elif on_token:
            tail = ("\n\n" + also_relevant_line(result.related) if result.related else "") + _unmet_line(q)
            if tail:
                on_token(tail)

    def _check(self, result: Answer, usage: Usage) -> None:
        sources = {n: h.paper for n, h in enumerate(result.sources, start=1)}
        for claim in result.claims:
            self.checker.check(claim, sources)
            if self.verifier is not None:
                self.verifier.verify(claim, usage)
        result.citations = citations_for(result.claims, result.sources)

    def _finish_catalogue(
        self,
        result: Answer,
        draft: CatalogueDraft,
        q: Question,
        timings: dict[str, float],
        usage: Usage,
        on_token: OnToken | None,
    ) -> Answer:
        start = time.perf_counter()
        result.mode = "catalogue"
        hits = draft.hits()
        text, sources, _ = renumber(draft.text, draft.claims, hits)
        if q.unmet and "cannot say" not in text:
            text += _unmet_line(q)
        result.text = result.raw_text = text
        result.sources, result.claims, result.abstained = sources, draft.claims, draft.abstained
        result.related = draft.related
        self._check(result, usage)
        if on_token:
            for i, line in enumerate(text.split("\n")):
                on_token(line if i == 0 else "\n" + line)
        timings["generate"] = 0.0
        timings["check"] = (time.perf_counter() - start) * 1000
        result.timings_ms, result.usage = timings, usage.public()
        return result
