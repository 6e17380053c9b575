"""The extractive answer: the search's papers that the relevance model keeps, in the search's
order, each with the sentences that answer this question (rag.answer.sentences), quoted.

Every quoted sentence is a claim citing its paper; names and authors come from the catalogue.
Citation markers in a draft use source numbers (`hits` order); the pipeline renumbers them in
order of appearance. Layout, one block per paper:

    **<title or label>** [n] (authors · venue year)
    - "<quoted sentence>"

A title-only paper is said to be one: its title is all the collection holds of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rag.answer.cues import ASKS, cues
from rag.answer.relevance import PaperEvidence
from rag.answer.sentences import SentenceScorer
from rag.text import end_sentence, format_authors
from rag.types import Claim, Paper

EXTRACTIVE_NOTE = "Extractive answer (sentences quoted from the abstracts; no language model was used)."
TITLE_ONLY = "title only: the collection has no abstract for this paper"


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


def also_relevant_line(papers: Sequence[Paper]) -> str:
    """ "Also relevant: **A**; **B**." with one final period, never two (a label may end in "…")."""
    return end_sentence("Also relevant: " + "; ".join(f"**{name_of(p)}**" for p in papers))


def byline(paper: Paper, limit: int = 6) -> str:
    where = " ".join(str(x) for x in (paper.venue, paper.year) if x)
    authors = format_authors(paper.authors, paper.authors_truncated, limit, alphabetical=paper.alphabetical)
    return " · ".join(x for x in (authors, where) if x)


class ExtractiveAnswerer:
    """Quotes, per kept paper, its best sentences for the question: `alone` sentences when one paper
    is kept (`alone_method` when the question asks for a method: its mechanism is often the scorer's
    fourth sentence), else `lead` for the first paper and `per_paper` for the others (one when many
    papers are kept), in the abstract's order.

    `alone_method`: on the sentence cache, questions asking for a method had their fact in the top
    three sentences for 0.869 of train items and in the top four for 0.935 (validation 0.926 ->
    0.971), at about 160 more characters quoted; docs/benchmarks.md, session 36, has the end-to-end
    figures."""

    mode = "extractive"

    def __init__(
        self,
        scorer: SentenceScorer,
        lead: int = 2,
        per_paper: int = 2,
        many: int = 4,
        alone: int = 3,
        alone_method: int = 4,
    ) -> None:
        self.scorer = scorer
        self.lead = lead
        self.alone = alone
        self.alone_method = alone_method
        self.per_paper = per_paper
        self.many = many

    def compose(self, question: str, kept: Sequence[tuple[int, PaperEvidence]], weights: dict[int, float]) -> Draft:
        """`kept`: (source number, the paper's evidence), in the order to show them."""
        lines = [EXTRACTIVE_NOTE]
        claims: list[Claim] = []
        asks_method = bool(cues(question, ASKS)[1])
        for position, (n, paper) in enumerate(kept):
            hit = paper.hit
            meta = byline(hit.paper)
            lines.append("")
            lines.append(f"**{name_of(hit.paper)}** [{n}]" + (f" ({meta})" if meta else ""))
            if not hit.paper.abstract.strip():
                lines.append(f"- {TITLE_ONLY}.")
                claims.append(Claim(text=hit.paper.title, cites=[n]))
                continue
            if len(kept) == 1:
                take = self.alone_method if asks_method else self.alone
            else:
                take = self.lead if position == 0 else (1 if len(kept) >= self.many else self.per_paper)
            chosen = self.choose(question, paper, weights, take)
            lines += [f'- "{s}"' for s in chosen]
            claims += [Claim(text=s, cites=[n]) for s in chosen]
        return Draft("\n".join(lines), claims)

    def choose(self, question: str, paper: PaperEvidence, weights: dict[int, float], take: int) -> list[str]:
        if not paper.sentences:
            return []
        scores = self.scorer.scores(question, paper.sentences, paper.cosines, weights)
        best = sorted(np.argsort(-scores, kind="stable")[:take].tolist())
        return [paper.sentences[i] for i in best]
