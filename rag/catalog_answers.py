"""Answers from the catalogue: counts, lists by venue/year/track/decision, papers by an author,
the authors or the track of a paper. The catalogue's fields are the facts; each paper named is
cited, each stated field is a claim checked against that paper's field, and a cut list says how
many more matched.

Uses only these Catalog operations: count, count_by_identity, select, papers_by_author, papers_named_in, get (the
SQLite catalogue ports them with the same semantics)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rag.catalog import Catalog, Filters
from rag.cite import field_value
from rag.compose import byline, name_of
from rag.evidence import source_text
from rag.gate import ABSTAIN_TEXT
from rag.question import Kind, Question
from rag.text import INTRODUCE, end_sentence, format_authors, split_sentences
from rag.types import Claim, Hit, Paper

FIELD_NAMES = {"authors": "authors", "track": "track", "venue": "venue", "decision": "decision", "year": "year"}
# Finds the paper a question describes ("the paper on cryptic crosswords"): retrieval plus the
# gate, supplied by the pipeline. Returns the answering papers, best first ([] when none).
Locate = Callable[[str, Filters], list[Paper]]
# The sentence of a paper that best answers a text (the support checker's scorer).
BestSentence = Callable[[str, Paper], str]


@dataclass
class CatalogueDraft:
    text: str
    papers: list[Paper] = field(default_factory=list)  # cited, in the order first cited ([n] = papers[n-1])
    claims: list[Claim] = field(default_factory=list)
    abstained: bool = False
    related: list[Paper] = field(default_factory=list)

    def hits(self) -> list[Hit]:
        return [Hit(p, 0.0) for p in self.papers]


def describe(filters: Filters) -> str:
    """ "from ICML 2025, track position, decision Oral, by Jane Doe" (empty when no filter)."""
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
    return ", ".join(parts)


def describing_sentences(paper: Paper) -> list[str]:
    """What a paper is about, in its own words: the sentence that says what it does ("we
    propose …", else its first sentence), preceded by its first sentence when it has no title
    (a title names the topic; without one, the opening sentence usually does)."""
    sentences = split_sentences(source_text(paper))
    if not sentences:
        return []
    intro = next((s for s in sentences if INTRODUCE.search(s)), sentences[0])
    if not paper.title and intro != sentences[0]:
        return [sentences[0], intro]
    return [intro]


def count_text(with_id: int, without_id: int, files: list[str], scope: str, shown: int = 3) -> str:
    """ "The collection has **3,333** papers from ICML 2025 (catalogue count): **3,330** with their
    own id and 3 without one (from 004.txt), which may repeat …". A paper without an id is merged
    with a listed one only on proof (rag.identity), so when a count mixes the two, the part with
    ids is the list's own figure and the rest is said to be possibly the same papers again.
    `files` holds up to `shown` + 1 source files of the papers without an id."""
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


def _papers(n: int) -> str:
    return "paper" if n == 1 else "papers"


class CatalogueAnswerer:
    def __init__(self, list_size: int = 10) -> None:
        self.list_size = list_size

    def answer(
        self,
        q: Question,
        catalog: Catalog,
        filters: Filters,
        context: list[Paper],
        locate: Locate,
        best_sentence: BestSentence,
    ) -> CatalogueDraft | None:
        """The catalogue's answer, or None when the question is not one the catalogue can settle
        (the pipeline then answers it from the abstracts)."""
        if q.unmet and q.kind in (Kind.COUNT, Kind.CATALOGUE_LIST):  # "How many orals?" without decisions
            why = "; ".join(f"{reason}, so it cannot tell which papers are {words}" for words, reason in q.unmet)
            return CatalogueDraft(f"The collection cannot say: {why}.", abstained=True)
        if q.kind is Kind.COUNT:
            if q.authors:
                return self._by_author(q, catalog, filters, best_sentence, counting=True)
            return CatalogueDraft(count_text(*catalog.count_by_identity(filters), describe(filters)))
        if q.kind is Kind.CATALOGUE_LIST:
            return self._list(catalog, filters)
        if q.kind is Kind.BY_AUTHOR:
            return self._by_author(q, catalog, filters, best_sentence)
        if q.kind in (Kind.AUTHORS_OF, Kind.FIELD_OF):
            papers = self._target(q, catalog, filters, context, locate)
            if not papers:  # the abstracts do not list authors or tracks: nothing else can answer
                what = f' matches "{q.subject}"' if q.subject else " is the one meant"
                return CatalogueDraft(f"{ABSTAIN_TEXT}\n\nNo paper in the collection{what}.", abstained=True)
            return self._fields(papers, q.field or "authors")
        return None

    # -- pieces ------------------------------------------------------------------------

    def _target(
        self, q: Question, catalog: Catalog, filters: Filters, context: list[Paper], locate: Locate
    ) -> list[Paper]:
        """The paper(s) the question is about: the previous answer's papers for "its"/"their", the
        papers the question names, else the paper retrieval finds for its subject."""
        if q.pronoun and context:
            plural = re.search(r"\b(?:their|they|them|these|those)\b", q.text, re.I)
            return context[:3] if plural else context[:1]
        named = catalog.papers_named_in(q.subject or q.text)
        papers = [p for p in (catalog.get(pid) for pid in named) if p is not None]
        if 0 < len(papers) <= 3:
            return papers
        subject = q.subject or q.topic
        if not subject:
            return []
        found = locate(subject, filters)[:1]
        if q.described:  # "the paper on cryptic crosswords": the paper that best answers the description
            return found
        # "Who wrote X?" names a thing: only a paper that introduces X is X's paper ("Who wrote
        # the Harry Potter books?" is not answered by a paper that unlearns them)
        return [p for p in found if q.introduced_in(source_text(p), p.title)]

    def _fields(self, papers: list[Paper], name: str) -> CatalogueDraft:
        draft = CatalogueDraft("")
        lines = []
        for paper in papers:
            value = field_value(paper, name)
            if not value:
                lines.append(f"The catalogue does not record the {name} of **{name_of(paper)}**.")
                draft.related.append(paper)
                continue
            draft.papers.append(paper)
            n = len(draft.papers)
            shown = format_authors(paper.authors, paper.authors_truncated, 12) if name == "authors" else value
            claim = end_sentence(f"{FIELD_NAMES.get(name, name).capitalize()}: {shown}")
            where = " ".join(str(x) for x in (paper.venue, paper.year) if x and name not in ("venue", "year"))
            lines.append(f"**{name_of(paper)}** [{n}]{f' ({where})' if where else ''}. {claim}")
            draft.claims.append(Claim(text=claim, cites=[n], field=name))
        draft.text = "\n".join(lines)
        draft.abstained = not draft.papers
        return draft

    def _list(self, catalog: Catalog, filters: Filters) -> CatalogueDraft:
        total = catalog.count(filters)
        if not total:
            return CatalogueDraft(f"No paper in the collection is {describe(filters)}.", abstained=True)
        shown = catalog.select(filters, self.list_size)
        main = next((f for f in ("track", "decision", "venue", "year") if getattr(filters, f)), "venue")
        lines = [
            f"{total} paper{'s' if total != 1 else ''} {describe(filters)}"
            + (f"; the first {len(shown)}:" if total > len(shown) else ":")
        ]
        draft = CatalogueDraft("")
        for i, paper in enumerate(shown, start=1):
            value = field_value(paper, main)
            claim = end_sentence(f"{main.capitalize()}: {value}") if value else ""
            authors = format_authors(paper.authors, paper.authors_truncated, 3)
            lines.append(
                f"{i}. **{name_of(paper)}** [{i}]"
                + (f" ({authors})" if authors else "")
                + (f". {claim}" if claim else "")
            )
            draft.papers.append(paper)
            if claim:
                draft.claims.append(Claim(text=claim, cites=[i], field=main))
        if total > len(shown):
            lines.append(f"… and {total - len(shown)} more.")
        draft.text = "\n".join(lines)
        return draft

    def _by_author(
        self, q: Question, catalog: Catalog, filters: Filters, best_sentence: BestSentence, counting: bool = False
    ) -> CatalogueDraft:
        found = [catalog.papers_by_author(name, filters, 10_000) for name in q.authors]
        ids = [{p.id for p in papers} for papers in found]
        common = set.intersection(*ids) if ids else set()
        papers = [p for p in found[0] if p.id in common] if common else [p for papers in found for p in papers]
        papers = list({p.id: p for p in papers}.values())
        who = " and ".join(q.authors)
        scope = describe(filters)
        if not papers:
            return CatalogueDraft(
                f"The catalogue lists no paper by {who}{' ' + scope if scope else ''}.", abstained=True
            )
        together = " together" if len(q.authors) > 1 and common else ""
        verb = "have" if len(q.authors) > 1 else "has"
        plural = "s" if len(papers) != 1 else ""
        head = (
            f"**{who}** {verb} {len(papers)} paper{plural}{together} in the collection{' ' + scope if scope else ''}:"
        )
        topic = re.sub(r"\s+", " ", q.topic).strip()
        topical = bool(
            re.sub(
                r"\b(?:propose\w*|wrote|write|written|work\w*|on|stud\w*|did|publish\w*)\b", "", topic, flags=re.I
            ).strip()
        )
        draft = CatalogueDraft("")
        lines = [head]
        shown = papers[: self.list_size]
        for i, paper in enumerate(shown, start=1):
            draft.papers.append(paper)
            authors = format_authors(paper.authors, paper.authors_truncated, 12)
            claim = end_sentence(f"Authors: {authors}")
            quotes = [best_sentence(q.text, paper)] if topical else describing_sentences(paper)
            quotes = [s for s in quotes if s]
            lines.append(
                f"{i}. **{name_of(paper)}** [{i}] ({byline(paper, 12)})"
                + (": " + " … ".join(f'"{s}"' for s in quotes) if quotes else "")
            )
            draft.claims.append(Claim(text=claim, cites=[i], field="authors"))
            draft.claims += [Claim(text=s, cites=[i]) for s in quotes]
        if len(papers) > len(shown):
            lines.append(f"… and {len(papers) - len(shown)} more.")
        draft.text = "\n".join(lines)
        return draft
