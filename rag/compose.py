"""The extractive answerer: compose an answer for the kind of question from quoted sentences.

Every quoted sentence is a claim citing its source; paper names and authors come from the
catalogue. Citation markers in a draft use the source numbers (`hits` order); the pipeline
renumbers them in order of appearance. Layout, one block per paper:

    **<title or label>** [n] (authors · venue year)      authors only where they matter
    - "<quoted sentence>"

- which-paper: the paper that introduces the subject (or answers the lookup) first, its
  introducing sentence first;
- list: one numbered line per paper, its most relevant sentence, up to k; "and N more";
- numeric: the sentence with the number first, the number in bold;
- what-is / how-it-works: the defining sentence, then how it works, from the defining paper;
- finding: the result sentences (negative ones too) of each paper, motivation left out;
- general: the best sentences, at most two per paper.
Retrieved papers that are relevant but not quoted become `related` ("Also relevant")."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.evidence import FINDING, MECHANISM, MOTIVATION, RESULT, Scored, source_sentences
from rag.gate import ABSTAIN_SENTINEL, Gate, also_relevant, defines, topic_words, words_of
from rag.question import Kind, Question
from rag.text import (
    bold_numbers,
    contains_term,
    end_sentence,
    format_authors,
    introduces,
    numbers_in,
    stated_numbers,
)
from rag.types import Claim, Hit, Paper

EXTRACTIVE_NOTE = "Extractive answer (sentences quoted from the abstracts; no language model was used)."


@dataclass
class Draft:
    """An answer before the checks: text with markers in source numbers, its claims, and the
    source numbers that are relevant but not quoted."""

    text: str
    claims: list[Claim] = field(default_factory=list)
    related: list[int] = field(default_factory=list)
    kind: str = ""


def name_of(paper: Paper) -> str:
    return paper.display_title


def names_line(head: str, papers: list[Paper]) -> str:
    """ "Also relevant: **A**; **B**." with one final period, never two (a label may end in "…")."""
    return end_sentence(f"{head}: " + "; ".join(f"**{name_of(p)}**" for p in papers))


def also_relevant_line(papers: list[Paper]) -> str:
    return names_line("Also relevant", papers)


def byline(paper: Paper, limit: int = 6) -> str:
    where = " ".join(str(x) for x in (paper.venue, paper.year) if x)
    authors = format_authors(paper.authors, paper.authors_truncated, limit, alphabetical=paper.alphabetical)
    return " · ".join(x for x in (authors, where) if x)


@dataclass
class Block:
    n: int
    sentences: list[str]
    with_byline: bool = False


def render(blocks: list[Block], hits: list[Hit], question: Question, head: str = "", numbered: bool = False) -> Draft:
    lines = [EXTRACTIVE_NOTE]
    if head:
        lines.append(head)
    claims: list[Claim] = []
    skip = sorted(numbers_in(question.text))
    for i, block in enumerate(blocks, start=1):
        paper = hits[block.n - 1].paper
        title = f"**{name_of(paper)}** [{block.n}]"
        meta = f" ({byline(paper)})" if block.with_byline and byline(paper) else ""
        if numbered:
            quote = block.sentences[0] if block.sentences else ""
            lines.append(f"{i}. {title}{meta}" + (f': "{_show(quote, question, skip)}"' if quote else ""))
        else:
            lines.append("")
            lines.append(f"{title}{meta}")
            lines += [f'- "{_show(s, question, skip)}"' for s in block.sentences]
        claims += [Claim(text=s, cites=[block.n]) for s in block.sentences]
    return Draft("\n".join(lines), claims)


def _show(sentence: str, question: Question, skip: list[str]) -> str:
    return bold_numbers(sentence, skip) if question.kind is Kind.NUMERIC else sentence


class ExtractiveAnswerer:
    mode = "extractive"

    def __init__(self, max_sentences: int = 3, per_source: int = 2, list_size: int = 5) -> None:
        self.max_sentences = max_sentences
        self.per_source = per_source
        self.list_size = list_size

    def generate(
        self, question: Question, hits: list[Hit], scored: list[Scored], gate: Gate, usage: object, on_token: object
    ) -> Draft:
        """The Answerer protocol: the draft, streamed by the pipeline once it is numbered."""
        return self.compose(question, hits, scored, gate)

    def compose(self, question: Question, hits: list[Hit], scored: list[Scored], gate: Gate) -> Draft:
        if not scored:  # nothing to quote (sources without text): say so rather than print nothing
            return Draft(ABSTAIN_SENTINEL)
        by_source: dict[int, list[Scored]] = {}
        for row in scored:
            by_source.setdefault(row.source, []).append(row)
        kind = question.kind
        if kind is Kind.LIST:
            draft = self._list(question, hits, scored, by_source)
        elif kind is Kind.WHICH_PAPER:
            draft = self._which(question, hits, scored, by_source, gate)
        elif kind in (Kind.DEFINITION, Kind.MECHANISM):
            draft = self._definition(question, hits, scored, by_source, gate)
        elif kind is Kind.FINDING:
            draft = self._finding(question, hits, scored, by_source)
        elif kind is Kind.NUMERIC:
            draft = self._numeric(question, hits, scored, by_source)
        else:
            draft = self._general(question, hits, scored)
        quoted = {c for claim in draft.claims for c in claim.cites}
        draft.related += also_relevant(question, scored, quoted | set(draft.related))
        draft.kind = kind.value
        return draft

    # -- kinds ---------------------------------------------------------------------------

    def _general(self, question: Question, hits: list[Hit], scored: list[Scored]) -> Draft:
        chosen: list[Scored] = []
        best = top_score(scored, hits)
        for row in scored:
            if len(chosen) == self.max_sentences or row.score < 0.75 * best:
                break
            if sum(1 for c in chosen if c.source == row.source) < self.per_source:
                chosen.append(row)
        return render(_group(chosen), hits, question)

    def _numeric(
        self, question: Question, hits: list[Hit], scored: list[Scored], by_source: dict[int, list[Scored]]
    ) -> Draft:
        asked = set(numbers_in(question.text))
        with_number = [r for r in scored if [v for v in stated_numbers(r.sentence) if v not in asked]]
        first = with_number[0] if with_number else scored[0]
        chosen = [first]
        for row in by_source[first.source]:
            if len(chosen) == 2 or row is first:
                continue
            if row.score >= 0.8 * first.score:
                chosen.append(row)
        for row in with_number[1:]:
            if len(chosen) >= self.max_sentences or row.score < 0.85 * first.score:
                break
            if row not in chosen and row.source != first.source:
                chosen.append(row)
        return render(_group(chosen), hits, question)

    def _which(
        self, question: Question, hits: list[Hit], scored: list[Scored], by_source: dict[int, list[Scored]], gate: Gate
    ) -> Draft:
        sources = [n for n in gate.focus if n in by_source] or [scored[0].source]
        sources = sorted(sources, key=lambda n: -by_source[n][0].score)[:3]
        subjects = question.subject_names if question.names_subject else []
        blocks = []
        for n in sources:
            rows = by_source[n]
            intro = first_introducing(source_sentences(hits[n - 1].paper), subjects)
            naming = next((r for r in rows if any(contains_term(r.sentence, s) for s in subjects)), rows[0])
            first = next((r for r in rows if r.sentence == intro), naming)
            rest = [
                r.sentence for r in rows if r is not first and r.sentence != intro and r.score >= 0.85 * first.score
            ]
            blocks.append(Block(n, [intro or first.sentence] + rest[:1], with_byline=True))
        if not gate.focus and len(scored) > 1:  # a lookup: the runner-up paper only if nearly as good
            runner = next((r for r in scored if r.source != sources[0]), None)
            if runner and runner.score >= 0.92 * scored[0].score:
                blocks.append(Block(runner.source, [runner.sentence], with_byline=True))
        return render(blocks, hits, question)

    def _definition(
        self, question: Question, hits: list[Hit], scored: list[Scored], by_source: dict[int, list[Scored]], gate: Gate
    ) -> Draft:
        """The defining sentence of the paper that defines the subject, then up to two sentences
        on how it works (in the abstract's order): what the method does and by what means
        (`MECHANISM`), never the motivation before the definition or the results after it."""
        subjects = question.subject_names if question.names_subject else []
        sources = [n for n in gate.focus if n in by_source] or [scored[0].source]
        n = max(sources, key=lambda s: by_source[s][0].score)
        order = source_sentences(hits[n - 1].paper)
        # The first sentence that introduces or defines the subject: where the abstract says what
        # it is ("we introduce Compress Then Explain (CTE), …"), not a later one that names it
        # again ("CTE is a simple plug-in …", "we propose a novel Iterative SRO algorithm").
        first = first_introducing(order, subjects, define=True) or by_source[n][0].sentence
        at = order.index(first) if first in order else 0
        how = [s for s in order[at + 1 :] if is_mechanism(s)]
        if not how:  # nothing after it says how: a mechanism sentence before it, about this work, will do
            ours = re.compile(r"\b(?:we|our)\b", re.I)
            how = [s for s in order[:at] if is_mechanism(s) and (ours.search(s) or any(n in s for n in subjects))]
        return render([Block(n, [first] + how[: self.max_sentences - 1])], hits, question)

    def _finding(
        self, question: Question, hits: list[Hit], scored: list[Scored], by_source: dict[int, list[Scored]]
    ) -> Draft:
        ranked = sorted(by_source, key=lambda n: -by_source[n][0].score)[:3]
        best = top_score(scored, hits)
        blocks = []
        for n in ranked:
            rows = [r for r in by_source[n] if FINDING.search(r.sentence) and not MOTIVATION.search(r.sentence)]
            rows = [r for r in rows if r.score >= 0.6 * best][: self.per_source]
            if rows:
                blocks.append(Block(n, [r.sentence for r in rows]))
        if not blocks:
            return self._general(question, hits, scored)
        return render(blocks, hits, question)

    def _list(
        self, question: Question, hits: list[Hit], scored: list[Scored], by_source: dict[int, list[Scored]]
    ) -> Draft:
        """One line per paper, in retrieval order, whose best sentence is close to the question
        (score within 0.7 of the best abstract sentence, some sentence at cosine >= 0.3), or that
        has a sentence with every word of the topic ("… then develop Shapley value to …" for
        "Which papers use Shapley values?"). When none matches the list is never empty: the
        nearest papers are shown and said to be the nearest."""
        best = top_score(scored, hits)
        closest = {n: max(r.cosine for r in rows) for n, rows in by_source.items()}
        topic = topic_words(question)
        naming = {
            n: next((r for r in rows if topic and topic <= words_of(r.sentence) and r.cosine >= 0.2), None)
            for n, rows in by_source.items()
        }
        ranked = sorted(by_source)  # in retrieval order: it weighs titles, names and both rankers
        close = {n for n in ranked if by_source[n][0].score >= 0.7 * best and closest[n] >= 0.3}
        matching = [n for n in ranked if n in close or naming[n] is not None]
        near = not matching
        if near:
            matching = [n for n in ranked if closest[n] >= 0.2][:3]
        if not matching:
            return Draft(ABSTAIN_SENTINEL)
        shown = matching[: self.list_size]
        more = matching[self.list_size :]
        scope = f" ({question.unmet_note})" if question.unmet_note else ""
        if near:
            head = f"No retrieved paper matches closely{scope}; the nearest {len(shown)}:"
        elif more:
            head = f"{len(matching)} of the retrieved papers match{scope}; the {len(shown)} most relevant:"
        else:
            head = f"{len(shown)} of the retrieved papers match{scope}:"
        quotes = [naming.get(n) or by_source[n][0] if n not in close else by_source[n][0] for n in shown]
        draft = render([Block(r.source, [r.sentence]) for r in quotes], hits, question, head=head, numbered=True)
        if more:
            draft.text += f"\n… and {len(more)} more (under Also relevant)."
            draft.related = more
        return draft


def top_score(scored: list[Scored], hits: list[Hit]) -> float:
    """The best score of a sentence from an abstract (else of any sentence): the yardstick of
    the relative cuts. A title-only paper's title is its one sentence and, dense with the topic's
    words, would outscore every abstract sentence and cut papers that answer from the list."""
    return max((r.score for r in scored if hits[r.source - 1].paper.abstract), default=scored[0].score)


def first_introducing(sentences: list[str], subjects: list[str], define: bool = False) -> str:
    """The first sentence, in the abstract's order, that introduces one of `subjects` (or, with
    `define`, defines it): where the abstract says what it is ("we introduce Sketching for
    Regularized Optimization (SRO), …"), not a later one that names it again ("we propose a novel
    Iterative SRO algorithm", "CTE is a simple plug-in …"). "" when none does."""
    for sentence in sentences:
        if any(introduces(sentence, name) or (define and defines(sentence, name)) for name in subjects):
            return sentence
    return ""


def is_mechanism(sentence: str) -> bool:
    """A sentence on how a method works: it says what is done and by what means ("we train …",
    "our method …"), and reports no result or motivation; one that opens with the means ("By
    modifying specific neurons …, FiNE improves …") is one even when it ends in a result."""
    if _BY_MEANS.match(sentence):
        return True
    return bool(
        (MECHANISM.search(sentence) or _OUR_METHOD.match(sentence))
        and not RESULT.search(sentence)
        and not MOTIVATION.search(sentence)
    )


_BY_MEANS = re.compile(r"^(?:by|through|via)\s+(?:\w+ly\s+)?\w+ing\b", re.I)


_OUR_METHOD = re.compile(
    r"^(?:(?:first|then|finally|specifically|concretely|building on this),?\s+)?(?:our|the|this)\s+(?:proposed\s+)?"
    r"(?:method|approach|framework|model|technique|algorithm|system|pipeline|procedure)\b",
    re.I,
)


def _group(rows: list[Scored]) -> list[Block]:
    """Rows -> one block per source, in order of each source's first row."""
    blocks: dict[int, Block] = {}
    for row in rows:
        blocks.setdefault(row.source, Block(row.source, [])).sentences.append(row.sentence)
    return list(blocks.values())
