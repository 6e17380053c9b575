"""Answers from the catalogue's fields, for the questions the router sends here: counts, lists by
venue/year/decision/track/author, and a paper's authors or decision/track/venue/year.

The catalogue's fields are the facts: each paper named is cited, each stated field is a claim
checked against that paper's field, a cut list says how many more matched. A count with a topic
("How many ICML 2025 position papers are about safety?") counts the papers of the filters whose
title or abstract holds every topic word (stemmed), and says that this is what it counted, so the
figure can be checked. Which paper a field question is about comes from the conversation (a
question that refers back) or from the search and the relevance model (`Locate`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from rag.answer.cite import field_value
from rag.answer.compose import name_of
from rag.answer.query import Query
from rag.answer.relevance import Frequencies
from rag.answer.route import Intent, asked_field
from rag.answer.sentences import Tokens
from rag.store import Catalog
from rag.text import end_sentence, format_authors
from rag.types import Claim, Filters, Hit, Paper

# The papers a description points at, in the search's order ([] when none answers): search + relevance.
Locate = Callable[[str, Filters], list[Paper]]
# A word written in another case than a paper's coined name names that paper only when at most this
# many texts of the collection hold it: the "shared by more than three papers names none" rule of
# `Catalog.papers_named_in`, applied to the word's plain uses.
NAMED_ANY_CASE_MAX_TEXTS = 3
LIST_SIZE = 10
TOPIC_SCAN = 20_000  # a count with a topic reads at most this many papers of its filters


@dataclass
class CatalogueDraft:
    text: str
    papers: list[Paper] = field(default_factory=list)  # cited, in the order first cited ([n] = papers[n-1])
    claims: list[Claim] = field(default_factory=list)
    abstained: bool = False
    related: list[Paper] = field(default_factory=list)

    def hits(self) -> list[Hit]:
        return [Hit(p, 0.0) for p in self.papers]

    def cite(self, paper: Paper) -> int:
        self.papers.append(paper)
        return len(self.papers)


def describe(filters: Filters) -> str:
    """ "from ICML 2025, in track/area "position", with decision Oral, by Jane Doe, not from ICLR" ("" if
    none)."""
    parts = []
    where = " ".join(str(x) for x in (filters.venue, filters.year) if x)
    if where:
        parts.append(f"from {where}")
    if filters.track:
        parts.append(f'in track/area "{filters.track}"')
    if filters.decision:
        parts.append(f"with decision {filters.decision}")
    if filters.author:
        parts.append(f"by {filters.author}")
    for facet, value in filters.excluded:
        parts.append(f'not in track/area "{value}"' if facet == "track" else f"not {_EXCLUDED[facet]} {value}")
    return ", ".join(parts)


_EXCLUDED = {"venue": "from", "year": "from", "decision": "with decision"}


def count_text(with_id: int, without_id: int, files: list[str], scope: str, shown: int = 3) -> str:
    """ "The collection has **3,333** papers from ICML 2025 (catalogue count): **3,330** with their
    own id and 3 without one (from 004.txt), which may repeat …". A paper without an id is merged
    with a listed one only on proof (rag.papers.identity), so when a count mixes the two, the part with
    ids is the list's own figure and the rest is said to be possibly the same papers again."""
    total = with_id + without_id
    text = f"The collection has **{total:,}** {_papers(total)}{' ' + scope if scope else ''} (catalogue count)"
    if not (with_id and without_id):
        return text + "."
    names = list(dict.fromkeys(Path(f).name for f in files[:shown])) + (["…"] if len(files) > shown else [])
    where = f" (from {', '.join(names)})" if names else ""
    one = without_id == 1
    return (
        f"{text}: **{with_id:,}** with {'its' if with_id == 1 else 'their'} own id (such as an OpenReview id or "
        f"DOI) and {without_id:,} without one{where}. {'That paper' if one else 'Those papers'} could not be "
        f"matched to a paper with an id (no shared abstract or coined title), so {'it' if one else 'some'} may "
        f"repeat {'a paper' if one else 'papers'} counted among the {with_id:,}."
    )


def alternatives(topic: str) -> list[str]:
    """The alternatives a counted topic names, split at "or" ("benchmarks or evaluation"): what
    `matching` counts and what the count's answer says it counted."""
    return [part for part in re.split(r"\s+or\s+", topic.strip()) if part]


def matching(catalog: Catalog, filters: Filters, topic: str, tokens: Tokens) -> tuple[list[Paper], int]:
    """The papers of the filters whose title or abstract holds every word (stemmed) of `topic`,
    or of one of its alternatives ("benchmarks or evaluation"), all of them without a topic, and how
    many papers the filters hold. One rule for counts in answers and for the agents' count and
    list tools, so both give the same figure."""
    papers = catalog.select(filters, TOPIC_SCAN)
    wanted = [w for w in (set(tokens(a)) for a in alternatives(topic)) if w]
    if not wanted:
        return papers, len(papers)
    return [p for p in papers if any(w <= set(tokens(f"{p.title} {p.abstract}")) for w in wanted)], len(papers)


def _papers(n: int) -> str:
    return "paper" if n == 1 else "papers"


class CatalogueAnswerer:
    def __init__(self, tokens: Tokens, frequencies: Frequencies | None = None, list_size: int = LIST_SIZE) -> None:
        self.tokens = tokens
        self.frequencies = frequencies
        self.list_size = list_size

    def rare(self, word: str) -> bool:
        """Whether a word is rare enough in the collection to name a paper in any case: one of its
        terms is held by at most `NAMED_ANY_CASE_MAX_TEXTS` texts ("gradsurg", the "tgb" of
        "tgb-seq"), unlike "attention" or "real-world" however a title capitalises them."""
        terms = self.tokens(word)
        if self.frequencies is None or not terms:
            return True
        return min(self.frequencies(terms)[0]) <= NAMED_ANY_CASE_MAX_TEXTS

    def answer(
        self, intent: Intent, q: Query, catalog: Catalog, filters: Filters, context: Sequence[Paper], locate: Locate
    ) -> CatalogueDraft | None:
        """The catalogue's answer, or None when the catalogue cannot settle the question (a list
        with a topic is a search within the filters: the pipeline answers it from the abstracts)."""
        if q.unmet and intent in (Intent.COUNT, Intent.LIST):  # "How many orals?" without decisions
            why = "; ".join(f"{reason}, so it cannot tell which papers are {words}" for words, reason in q.unmet)
            return CatalogueDraft(f"The collection cannot say: {why}.", abstained=True)
        if intent is Intent.COUNT:
            return self._count(q, catalog, filters)
        if intent is Intent.LIST:
            return None if self._topic(q) else self._list(catalog, filters)
        asked = "authors" if intent is Intent.AUTHORS_OF else asked_field(q.text)
        # The value a field question asks about is no filter: "Was the paper on X an oral?" reads
        # decision=Oral, and searched among orals the paper was not found when it was a poster.
        unasked = (
            replace(filters, **{asked: None}, excluded=tuple(p for p in filters.excluded if p[0] != asked))
            if asked in {f.name for f in fields(Filters)}
            else filters
        )
        papers = self._target(q, catalog, unasked, context, locate)
        if not papers:
            return CatalogueDraft(
                "The collection does not say: no paper in the collection matches this description.", abstained=True
            )
        return self._fields(papers, asked)

    def _target(
        self, q: Query, catalog: Catalog, filters: Filters, context: Sequence[Paper], locate: Locate
    ) -> list[Paper]:
        """The paper a field question is about: the conversation's (for "its authors"), the one the
        question names by its whole title as typed, or by a coined name outside the words that named
        a filter ("What track is MIB in?"; "that ICLR 2025 paper" names no paper called "ICLR", while
        "Who wrote Oral Cancer Screening from Photographs?" still names that poster), else the first paper the
        search and the relevance model find for its description, searched as typed (the
        relevance model was fitted on whole questions, not on a topic's bare words)."""
        if q.refers_back and context:
            return list(context[:1])
        named = catalog.papers_named_in(q.text, self.rare, names_from=q.searched(filters))
        if len(named) == 1:
            return [p for p in (catalog.get(named[0]),) if p is not None]
        return locate(q.text, filters)[:1]

    def _topic(self, q: Query) -> str:
        """The words of the question's topic that a paper's text must hold: those the keyword
        index keeps. "How many ICML 2025 papers were accepted as orals?" leaves "as", which names
        nothing: counted with it, every oral matched and the answer said all 120 "mention 'as'"."""
        topics = [" ".join(w for w in t.split() if self.tokens(w)) for t in q.alternatives or [q.topic]]
        return " or ".join(t for t in topics if t)

    def _count(self, q: Query, catalog: Catalog, filters: Filters) -> CatalogueDraft:
        scope = describe(filters)
        topic = self._topic(q)
        each = self._each(q, catalog, filters, topic)
        if not topic:
            return CatalogueDraft(
                count_text(*catalog.count_by_identity(filters), scope) + (f"\nBy {each}." if each else "")
            )
        found, scanned = matching(catalog, filters, topic, self.tokens)
        named = alternatives(topic)
        every = "every word of one of them" if len(named) > 1 else "every word"
        head = (
            f"**{len(found):,}** of the {scanned:,} papers{' ' + scope if scope else ''} mention "
            + " or ".join(f'"{a}"' for a in named)
            + f" in their title or abstract ({every}, in any form; catalogue count{'; by ' + each if each else ''})"
        )
        draft = CatalogueDraft("")
        lines = [head + (":" if found else ".")]
        for paper in found[: self.list_size]:
            n = draft.cite(paper)
            lines.append(f"{n}. **{name_of(paper)}** [{n}]")
            draft.claims.append(
                Claim(text=end_sentence(f"Title: {paper.title or paper.label}"), cites=[n], field="title")
            )
        if len(found) > self.list_size:
            lines.append(f"… and {len(found) - self.list_size} more.")
        draft.text = "\n".join(lines)
        return draft

    def _each(self, q: Query, catalog: Catalog, filters: Filters, topic: str) -> str:
        """ "decision: Oral **213**, Spotlight **380**" for a facet the question named as one list
        ("How many ICLR 2025 orals or spotlights?"): the union's total alone does not answer "orals vs
        spotlights" or "how many of each" ("" when it named none, or the caller's filter replaced the
        question's)."""
        parts = []
        for facet, values in q.listed.items():
            if getattr(filters, facet) is not None:
                continue
            rest = tuple(pair for pair in filters.excluded if pair[0] != facet)
            counts = []
            for value in values:
                named: dict[str, Any] = {facet: int(value) if facet == "year" else value}
                one = replace(filters, **named, excluded=rest)
                n = len(matching(catalog, one, topic, self.tokens)[0]) if topic else catalog.count(one)
                counts.append(f"{value} **{n:,}**")
            parts.append(f"{facet}: {', '.join(counts)}")
        return "; ".join(parts)

    def _list(self, catalog: Catalog, filters: Filters) -> CatalogueDraft:
        total = catalog.count(filters)
        if not total:
            return CatalogueDraft(f"No paper in the collection is {describe(filters)}.", abstained=True)
        shown = catalog.select(filters, self.list_size)
        lines = [
            f"{total:,} {_papers(total)} {describe(filters)}"
            + (f"; the first {len(shown)}:" if total > len(shown) else ":")
        ]
        draft = CatalogueDraft("")
        main = next((f for f in ("author", "track", "decision", "venue", "year") if getattr(filters, f)), "venue")
        shown_field = "authors" if main == "author" else main
        for paper in shown:
            n = draft.cite(paper)
            value = (
                format_authors(paper.authors, paper.authors_truncated, 8, alphabetical=paper.alphabetical)
                if main == "author"
                else ""
            )
            value = value or field_value(paper, shown_field)
            claim = end_sentence(f"{shown_field.capitalize()}: {value}") if value else ""
            lines.append(f"{n}. **{name_of(paper)}** [{n}]" + (f". {claim}" if claim else ""))
            if claim:
                draft.claims.append(Claim(text=claim, cites=[n], field=shown_field))
        if total > len(shown):
            lines.append(f"… and {total - len(shown):,} more.")
        draft.text = "\n".join(lines)
        return draft

    @staticmethod
    def _fields(papers: list[Paper], name: str) -> CatalogueDraft:
        draft = CatalogueDraft("")
        lines = []
        for paper in papers:
            value = field_value(paper, name)
            if not value:
                lines.append(f"The catalogue does not record the {name} of **{name_of(paper)}**.")
                draft.related.append(paper)
                continue
            n = draft.cite(paper)
            shown = (
                # every name the catalogue holds: the question asked for them ("et al." only when
                # the source itself cut the list)
                format_authors(paper.authors, paper.authors_truncated, alphabetical=paper.alphabetical)
                if name == "authors"
                else value
            )
            claim = end_sentence(f"{name.capitalize()}: {shown}")
            where = " ".join(str(x) for x in (paper.venue, paper.year) if x and name not in ("venue", "year"))
            lines.append(f"**{name_of(paper)}** [{n}]{f' ({where})' if where else ''}. {claim}")
            draft.claims.append(Claim(text=claim, cites=[n], field=name))
        draft.text = "\n".join(lines)
        draft.abstained = not draft.papers
        return draft
