"""Question -> sources -> answer -> checked, renumbered citations. Deciding is kept apart from
writing, and each is done by what does it best.

Offline (no LLM, the default):
1. read the question once (rag.answer.query): filters, authors, topic;
2. a classifier (rag.answer.route) sends catalogue questions (counts, lists by venue/author/decision, a
   paper's authors or decision) to rag.answer.catalogue; everything else is a content question;
3. search (rag.search.retrieve) with the filters the question named applied, then one calibrated
   relevance model (rag.answer.relevance) gives each found paper the probability that it answers;
   below `abstain` for all of them, the answer is "the collection does not say"; papers below
   `keep` are left out. Before it, five rules that a
   validation figure keeps: a coined name the question asks about that no paper of the collection
   mentions is a question the collection cannot answer (`Relevance.unknown_names`), and so is a
   detail asked of the paper the question names that its abstract does not mention
   (`Relevance.unheld_detail`: "What AUROC does BoxLM reach on MIMIC-IV?"), a pretrained model or
   training setting asked of it that it names no instance of (`Relevance.unnamed_kind`: "Which base
   LLM does ChartMoE build on?"), a second name the question gives that its abstract writes in no
   form (`Relevance.unheld_name`: "How well does AlphaEdit work when editing Mistral-7B?") and a
   number asked of it that no sentence sharing the question's words states, or a score on a
   benchmark it names that no sentence measuring something writes (`Relevance.unstated_value`:
   "How many experts does MENTOR use?", "What mAP does Open-YOLO 3D reach on Replica?");
4. the kept papers lead in the search's order, each with the sentences that answer this question
   (rag.answer.sentences, rag.answer.compose); when the question named filters, the papers come
   from a search of its other words among the filtered ones (`_topical`), and when those words
   hold a topic, that search decides whether to answer, against a threshold of its own. A yes/no
   question whether a method was carried to a setting is not answered when the leading paper does
   not mention the setting or the method (`Relevance.unheld_setting`: "Has graph domain adaptation
   been applied to power grid networks?"), a sixth rule a validation figure keeps.

With an LLM: search, then the model reads the numbered sources and decides for itself, abstaining
with a sentinel when they do not answer. No rule stands between the search and the model beyond
"nothing found". It may call tools (OpenAI function calling: search, look up, count and list by
filter: rag.tools) to answer catalogue questions or search again; an endpoint without tool support
gets the sources alone.

Both end in the same checks: citations to numbers that were not sources are dropped, every
claim is checked against what it cites (rag.answer.cite), and citations are renumbered [1], [2], … in
order of appearance (while streaming, too)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from rag.answer.catalogue import CatalogueAnswerer, CatalogueDraft
from rag.answer.chatmodel import ChatModel, Message, ToolCall, ToolsUnsupported, Usage
from rag.answer.cite import StreamRenumberer, SupportChecker, citations_for, parse_claims, renumber, strip_invalid
from rag.answer.compose import Draft, ExtractiveAnswerer, also_relevant_line, name_of
from rag.answer.cues import MANY
from rag.answer.evidence import MAX_SOURCE_CHARS
from rag.answer.prompts import load
from rag.answer.query import Query, read
from rag.answer.relevance import Assessment, Relevance
from rag.answer.route import Intent, Router
from rag.errors import LLMError, QuestionError, RagError
from rag.search import Retriever
from rag.store import Catalog
from rag.text import end_sentence, format_authors, printable, without_markup
from rag.tokens import count_tokens, encoding
from rag.types import Answer, Claim, Filters, Hit, Paper

OnToken = Callable[[str], None]
ABSTAIN_SENTINEL = "INSUFFICIENT_EVIDENCE"
ABSTAIN_TEXT = "The collection does not say: none of the retrieved abstracts answers this question."
NO_MATCH_TEXT = "Nothing found: no paper in the collection matches this question and these filters."
MAX_TOOL_ROUNDS = 4


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


class ToolBox(Protocol):
    """What the LLM may call: tool specifications in OpenAI's function format, and their execution
    (JSON-ready results; papers carry an `id`)."""

    def specs(self) -> list[dict[str, Any]]: ...

    def run(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | str: ...

    def paper(self, paper_id: str) -> Paper | None: ...


@dataclass
class Sources:
    """The numbered sources of one LLM answer: the retrieved papers first, then papers the model's
    tool calls returned (numbered on first sight), so it can cite them too."""

    hits: list[Hit]
    numbers: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.numbers = {h.paper.id: n for n, h in enumerate(self.hits, start=1)}

    def number(self, paper: Paper) -> int:
        if paper.id not in self.numbers:
            self.hits.append(Hit(paper, 0.0))
            self.numbers[paper.id] = len(self.hits)
        return self.numbers[paper.id]


class LLMAnswerer:
    mode = "llm"

    def __init__(
        self,
        model: ChatModel,
        context_tokens: int,
        tools: ToolBox | None = None,
        max_sentences: int = 6,
        min_source_tokens: int = 120,
    ) -> None:
        self.model = model
        self.context_tokens = context_tokens
        self.tools = tools
        self.tools_refused = False  # the endpoint refused tools once: not offered again
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
                f"Venue: {p.venue} {p.year or ''}\nDecision: {p.decision or 'unknown'}\nAbstract: "
            )
            bodies.append(_defuse(p.abstract[:MAX_SOURCE_CHARS] or "(none: the collection has only the title)"))
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

    def generate(self, question: str, sources: Sources, usage: Usage, on_token: OnToken | None) -> Draft:
        """The model's answer. Tool rounds first (their results are appended as tool messages and
        the papers in them numbered as sources); the text of the last round is the answer,
        streamed with the final numbering."""
        messages = self.messages(question, list(sources.hits))
        offer = self.tools is not None and not self.tools_refused
        for _ in range(MAX_TOOL_ROUNDS):
            specs = self.tools.specs() if offer and self.tools is not None else []
            try:
                text, calls, streamed = self._turn(messages, specs, sources, usage, on_token)
            except ToolsUnsupported:
                self.tools_refused, offer = True, False
                text, calls, streamed = self._turn(messages, [], sources, usage, on_token)
            if not calls:
                if not text.strip():
                    raise LLMError("the LLM endpoint returned an empty answer: check RAG_LLM_MODEL and the server")
                return Draft(text, [], kind="streamed" if streamed else "")
            messages.append({"role": "assistant", "content": text or None, "tool_calls": [c.message() for c in calls]})
            for call in calls:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": self._run(call, sources)})
        # the model kept calling tools: ask once more without them, for the answer
        text, _, streamed = self._turn(messages, [], sources, usage, on_token)
        return Draft(text, [], kind="streamed" if streamed else "")

    def _turn(
        self,
        messages: list[Message],
        specs: list[dict[str, Any]],
        sources: Sources,
        usage: Usage,
        on_token: OnToken | None,
    ) -> tuple[str, list[ToolCall], bool]:
        pieces: list[str] = []
        calls: list[ToolCall] = []
        live: StreamRenumberer | None = None
        emitted, opening = False, ""
        events = self.model.stream_turn(messages, specs, usage) if specs else self.model.stream(messages, usage)
        for piece in events:
            if isinstance(piece, ToolCall):
                calls.append(piece)
                continue
            pieces.append(piece)
            if not on_token:
                continue
            if not emitted:  # hold the opening until it cannot be the abstain sentinel or a tool round
                opening += piece
                stripped = opening.lstrip()
                if ABSTAIN_SENTINEL.startswith(stripped) or stripped.startswith(ABSTAIN_SENTINEL):
                    continue
                if specs and len(stripped) < 40:
                    continue
                emitted, piece = True, opening
                live = StreamRenumberer(set(range(1, len(sources.hits) + 1)))
            assert live is not None
            out = live.feed(piece)
            if out:
                on_token(out)
        if calls:
            return "".join(pieces), calls, False
        if on_token and not emitted and opening.strip() and not opening.lstrip().startswith(ABSTAIN_SENTINEL):
            live = StreamRenumberer(set(range(1, len(sources.hits) + 1)))  # a short answer held back whole
            out = live.feed(opening)
            if out:
                on_token(out)
            emitted = True
        if emitted and on_token and live is not None:
            rest = live.flush()
            if rest:
                on_token(rest)
        return "".join(pieces), [], emitted

    def _run(self, call: ToolCall, sources: Sources) -> str:
        """A tool's result as JSON for the model, each paper given the source number to cite it by;
        a bad call comes back as an error the model can read and fix."""
        assert self.tools is not None
        try:
            arguments = json.loads(call.arguments or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be a JSON object")
            result = self.tools.run(call.name, arguments)
        except (ValueError, RagError) as err:
            return json.dumps({"error": str(err)[:500]})
        if isinstance(result, dict):
            for entry in result.get("papers", []):
                paper = self.tools.paper(str(entry.get("paper_id", "")))
                if paper is not None:
                    entry["cite_as"] = f"[{sources.number(paper)}]"
        return json.dumps(result, ensure_ascii=False, default=str)


def _defuse(text: str) -> str:
    return re.sub(r"</?\s*source", "‹source", text, flags=re.I)


def _fair_shares(sizes: Sequence[int], budget: int) -> list[int]:
    """Water-filling: each item gets min(its size, an equal share of what the smaller ones leave)."""
    shares = [0] * len(sizes)
    left, todo = budget, sorted(range(len(sizes)), key=lambda i: sizes[i])
    for position, i in enumerate(todo):
        fair = left // max(len(todo) - position, 1)
        shares[i] = min(sizes[i], fair)
        left -= shares[i]
    return shares


def merge_filters(explicit: Filters, q: Query) -> Filters:
    """Filters given by the caller win; the question's own fill the fields left empty (an author
    the question names is a filter only when it names exactly one)."""
    read_from = q.named_filters
    values = {k: v if v not in (None, "", ()) else getattr(read_from, k) for k, v in explicit.__dict__.items()}
    return Filters(**values)


def _unmet_line(q: Query) -> str:
    """The closing note when the question names a filter the collection cannot apply."""
    return f"\n\nNote: {end_sentence(q.unmet_note)}" if q.unmet else ""


class AnswerPipeline:
    def __init__(
        self,
        retriever: Retriever,
        relevance: Relevance,
        checker: SupportChecker,
        router: Router,
        catalogue: CatalogueAnswerer,
        extractive: ExtractiveAnswerer,
        llm: LLMAnswerer | None = None,
        k: int = 5,
        max_question_chars: int = 2000,
        verifier: Verifier | None = None,
        catalog: Callable[[], Catalog | None] | None = None,
        list_k: int = 8,
        scope: Callable[[], AbstractContextManager[Any]] = nullcontext,
    ) -> None:
        self.retriever = retriever
        self.relevance = relevance
        self.checker = checker
        self.router = router
        self.catalogue = catalogue
        self.extractive = extractive
        self.llm = llm
        self.k = k
        self.list_k = list_k
        self.max_question_chars = max_question_chars
        self.verifier = verifier
        self.catalog = catalog or (lambda: None)
        self.scope = scope  # one view of the index per request (`Index.reading`)

    @property
    def mode(self) -> str:
        return self.llm.mode if self.llm else self.extractive.mode

    def validate(self, question: str) -> str:
        """The question as read: its words, without the terminal escape codes (`printable`) and the
        HTML (`without_markup`) it may have been pasted with, or an error that says why there is
        none to read. An escape code left in became a word: "\x1b[31mDirichlet" read as the
        unknown name "31mDirichlet", and the question was abstained on."""
        question = (question or "").strip()
        if len(question) > self.max_question_chars:
            raise QuestionError(
                f"the question is {len(question)} characters long; "
                f"the limit is {self.max_question_chars} (RAG_MAX_QUESTION_CHARS)"
            )
        question = without_markup(printable(question)).strip()
        if not question:
            raise QuestionError("the question is empty")
        return question

    def read(self, question: str) -> Query:
        return read(question, self.catalog())

    def answer(
        self,
        question: str,
        query: str | None = None,
        filters: Filters = Filters(),
        k: int | None = None,
        on_token: OnToken | None = None,
        context: Sequence[Paper] = (),
        q: Query | None = None,
        later_turn: bool = False,
    ) -> Answer:
        """Answer `question`. `query` is what retrieval sees (a condensed follow-up); `context` the
        papers the conversation was last about (for "Who are its authors?"); `q` the question
        already read (the chat session reads it once); `later_turn` a conversation's turn read as
        a follow-up (with its history), decided by the relevance file's `fallback` model when it
        holds one (`Relevance.deciding`); a later turn read as asked is decided like a first question."""
        with self.scope():
            return self._answer(question, query, filters, k, on_token, context, q, later_turn)

    def _answer(
        self,
        question: str,
        query: str | None,
        filters: Filters,
        k: int | None,
        on_token: OnToken | None,
        context: Sequence[Paper],
        q: Query | None,
        later_turn: bool = False,
    ) -> Answer:
        question = self.validate(question)
        query = query or question
        k = k or self.k
        timings: dict[str, float] = {}
        usage = Usage()
        start = time.perf_counter()
        catalog = self.catalog()
        q = q or read(question, catalog)
        filters = merge_filters(filters, q)
        result = Answer(question=question, query=query, text="", mode=self.mode, abstained=False)
        result.filters = filters.public()
        if self.llm is None:
            intent = self.router.intent(q.placeholders())
            result.kind = intent.value
            if intent is not Intent.CONTENT and catalog is not None:
                locate = lambda text, f: self._locate(text, f, k)  # noqa: E731
                drafted = self.catalogue.answer(intent, q, catalog, filters, context, locate)
                if drafted is not None:
                    timings["retrieve"] = (time.perf_counter() - start) * 1000
                    return self._finish_catalogue(result, drafted, q, timings, usage, on_token)
            k = self.depth(question, intent, k)
        else:
            result.kind = "llm"
        hits = self.retriever.search(query, k, filters).hits
        timings["retrieve"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        result.sources = hits
        if not hits:
            self._abstain(result, NO_MATCH_TEXT, "nothing retrieved", q, on_token)
        elif self.llm is not None:
            sources = Sources(list(hits))
            draft = self.llm.generate(question, sources, usage, on_token)
            result.sources = sources.hits
            if ABSTAIN_SENTINEL in draft.text:
                result.raw_text = draft.text
                self._abstain(result, ABSTAIN_TEXT, "the LLM found no answer in the sources", q, on_token)
            else:
                self._finish(result, draft, q, on_token)
        elif unknown := self.relevance.unknown_names_read(q, hits):
            names = ", ".join(f"“{n}”" for n in unknown)
            text = (
                f"The collection does not say: no paper in it mentions {names} "
                "(spelt otherwise in the papers? ask with their spelling)."
            )
            self._abstain(result, text, f"no paper of the collection mentions {names}", q, on_token)
        elif not q.spans and (  # no filter named
            unheld := self.relevance.unheld_detail(question, hits)
            or self.relevance.unnamed_kind(question, hits)
            or self.relevance.unheld_name(question, hits)
        ):
            paper, detail = unheld
            where = (
                f"the abstract of “{paper.display_title}”"
                if paper.abstract
                else f"“{paper.display_title}” (no abstract)"
            )
            text = f"The collection does not say: {where} does not mention {detail}."
            self._abstain(result, text, f"the paper the question names does not mention {detail}", q, on_token)
        elif not q.spans and (unstated := self.relevance.unstated_value(question, hits)):
            paper, value = unstated
            text = f"The collection does not say: the abstract of “{paper.display_title}” does not state {value}."
            self._abstain(result, text, f"the paper the question names does not state {value}", q, on_token)
        else:
            topical = self._topical(q, k, filters) if query == question else None
            if topical is not None and q.has_topic:  # decided on its topic among the filtered papers
                decides, filtered = topical, True
                confidence = self.relevance.filtered_confidence(topical)
            else:
                asked = question if query == question else f"{question} {query}"
                decides = self.relevance.assess(asked, hits, held=q.applied_words(filters), later_turn=later_turn)
                filtered, confidence = False, decides.confidence
            floor = self.relevance.floor(later_turn, filtered)
            result.confidence, result.threshold = round(confidence, 4), round(floor, 4)
            result.margin = confidence - self.relevance.own_floor(later_turn, filtered)
            if confidence < floor:
                reason = f"no retrieved paper is likely to answer (best {confidence:.2f})"
                self._abstain(result, ABSTAIN_TEXT, reason, q, on_token)
            else:
                chosen = topical or decides
                if topical is not None:
                    result.sources = [p.hit for p in topical.papers]
                draft = self._extract(question, chosen)
                if not self._abstain_on_setting(result, question, q, chosen, draft, on_token):
                    self._finish(result, draft, q, on_token)
        timings["generate"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        if not result.abstained:
            self._check(result, usage)
        timings["check"] = (time.perf_counter() - start) * 1000
        result.timings_ms, result.usage = timings, usage.public()
        return result

    # -- the parts of an answer -------------------------------------------------------------

    def _extract(self, question: str, assessment: Assessment) -> Draft:
        """The kept papers in the search's order (`Relevance.listed`) and the not-kept papers that
        may still bear on it as related."""
        numbered = list(enumerate(assessment.papers, start=1))
        many = bool(MANY.pattern.search(question))
        keep = self.relevance.keep_below(many)
        places = self.relevance.listed(question, assessment.papers, many)
        kept = [numbered[i] for i in places]
        draft = self.extractive.compose(question, kept, self.relevance.weights(question))
        chosen = {n for n, _ in kept}
        draft.related = [n for n, p in numbered if n not in chosen and p.probability >= keep / 2]
        return draft

    def depth(self, question: str, intent: Intent, k: int | None = None) -> int:
        """How many papers an offline answer searches for: `k` (the pipeline's by default), and at
        least `list_k` for a list or a question in the plural, whose answer quotes several."""
        k = k or self.k
        return max(k, self.list_k) if intent is Intent.LIST or MANY.pattern.search(question) else k

    def _topical(self, q: Query, k: int, filters: Filters) -> Assessment | None:
        """For a question that named filters the search applies ("Which papers by Sergey Levine are
        about diffusion?"), the papers to list: a search of its other words (`Query.searched`)
        among the filtered papers, assessed on those words. The keyword index reads authors,
        venue and year, so with the author's name in the query the author's shortest (title-only)
        papers led whatever their topic.

        It also decides whether to answer when the question has a topic of its own: every paper
        of a filtered search holds the filter, so the question is answered when one of them holds
        the topic. The answerable model was fitted on whole questions and rates a bare topic as
        weakly answered, so the decision has a small model of its own
        (`Relevance.filtered_confidence`). The whole question's decision answered nearly every
        twin on a topic none of the author's papers names (validation: 1 of 55 abstained). None
        when the question named no such filter or the second search finds nothing."""
        searched = q.searched(filters)
        if searched == q.text:
            return None
        hits = self.retriever.search(searched, k, filters).hits
        return self.relevance.assess(searched, hits) if hits else None

    def _locate(self, text: str, filters: Filters, k: int) -> list[Paper]:
        """The paper a catalogue question describes ("Who wrote the paper on cryptic crosswords?"):
        when the question is answered at all (the same confidence as a question about the
        abstracts), the papers the answer would quote (`Relevance.kept`: the most probable one
        always), in the search's order, as an answer quotes them: by probability, described-paper
        field questions were answered right 144 of 190 times on validation, in the search's order 146
        (`eval.bench.described_fields`, session 32, docs/benchmarks.md). Each paper's own
        probability is not held to the answerable model's threshold, a threshold of another model:
        on described-paper field questions built from the writers' validation questions that
        abstained on 29 of 77 answerable ones (docs/benchmarks.md)."""
        hits = self.retriever.search(text, k, filters).hits
        if not hits:
            return []
        assessment = self.relevance.assess(text, hits)
        if assessment.confidence < self.relevance.abstain_below:
            return []
        probabilities = [p.probability for p in assessment.papers]
        return [assessment.papers[i].hit.paper for i in self.relevance.kept(probabilities)]

    def _abstain_on_setting(
        self, result: Answer, question: str, q: Query, chosen: Assessment, draft: Draft, on_token: OnToken | None
    ) -> bool:
        """Abstain when the question asks whether a method was carried to a setting and the paper
        the draft leads with does not name the setting or the method (`Relevance.unheld_setting`,
        which reads the cited papers in the draft's order); a question naming a filter is left
        alone, since its filter ("at ICML 2025") is no setting. The paper named leads the sources,
        so that a follow-up ("What data did it use?") reads it."""
        cited = [
            chosen.papers[n - 1].hit.paper for n in dict.fromkeys(c for claim in draft.claims for c in claim.cites)
        ]
        unheld = self.relevance.unheld_setting(question, cited) if cited and not q.spans else None
        if unheld is None:
            return False
        lead, setting = unheld
        text = f"The collection does not say: “{lead.display_title}”, the closest paper, does not mention {setting}."
        result.sources = sorted(result.sources, key=lambda h: h.paper.id != lead.id)
        self._abstain(result, text, f"the closest paper does not mention {setting}", q, on_token)
        return True

    def _abstain(self, result: Answer, text: str, reason: str, q: Query, on_token: OnToken | None) -> None:
        text += _unmet_line(q)
        result.text, result.abstained, result.reason = text, True, reason
        result.raw_text = result.raw_text or text
        result.citations, result.claims = [], []
        if on_token:
            on_token(text)

    def _finish(self, result: Answer, draft: Draft, q: Query, on_token: OnToken | None) -> None:
        hits = result.sources
        removed: list[int] = []
        if draft.claims:
            text, claims = draft.text, draft.claims
        else:  # the LLM's text: drop citations to numbers that were not sources, then read claims
            text, removed = strip_invalid(draft.text, set(range(1, len(hits) + 1)))
            claims = parse_claims(text)
        result.raw_text = result.raw_text or draft.text
        text, sources, mapping = renumber(text, claims, hits)
        result.related = [hits[n - 1].paper for n in draft.related if 1 <= n <= len(hits) and n not in mapping]
        tail = ("\n\n" + also_relevant_line(result.related) if result.related else "") + _unmet_line(q)
        result.text, result.claims, result.removed_citations, result.sources = text + tail, claims, removed, sources
        if on_token and draft.kind != "streamed":
            for i, line in enumerate(result.text.split("\n")):
                on_token(line if i == 0 else "\n" + line)
        elif on_token and tail:
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
        q: Query,
        timings: dict[str, float],
        usage: Usage,
        on_token: OnToken | None,
    ) -> Answer:
        start = time.perf_counter()
        result.mode = "catalogue"
        text, sources, _ = renumber(draft.text, draft.claims, draft.hits())
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
