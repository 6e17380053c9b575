"""HTML for the chat and the sources panel. Pure functions of an Answer, so they are tested
without a browser; everything shown is escaped, since abstracts are untrusted text."""

from __future__ import annotations

import html
import re

from rag.cite import MARKER, parse_numbers
from rag.types import Answer, Citation, Paper

NO_SOURCES = "<div class='sources-empty'>Sources of the selected answer appear here.</div>"


def link_markers(text: str, turn: int, valid: set[int]) -> str:
    """Citation markers become links that select their source card (`#src-TURN-N`)."""

    def repl(match: re.Match[str]) -> str:
        numbers = parse_numbers(match.group(1))
        links = [
            f"<a class='cite' href='#src-{turn}-{n}'>{n}</a>" if n in valid else str(n)
            for n in numbers
        ]
        return " [" + ", ".join(links) + "]"

    return MARKER.sub(repl, text)


def answer_markdown(answer: Answer, turn: int) -> str:
    valid = {c.n for c in answer.citations}
    body = link_markers(html.escape(answer.text, quote=False), turn, valid)
    flagged = [c for c in answer.claims if not c.supported]
    if flagged:
        body += "\n\n" + "\n".join(
            f"<span class='unsupported'>⚠ unsupported: {html.escape(c.text[:140])} ({html.escape(c.reason)})</span>"
            for c in flagged
        )
    if answer.removed_citations:
        body += f"\n\n<span class='removed'>Removed citations to sources that were not retrieved: {answer.removed_citations}</span>"
    return body


def _authors(paper: Paper) -> str:
    names = ", ".join(paper.authors[:6])
    if len(paper.authors) > 6 or paper.authors_truncated:
        names += " et al."
    return names


def highlight(abstract: str, quote: str) -> str:
    text = html.escape(abstract)
    if quote:
        escaped = html.escape(quote)
        if escaped in text:
            return text.replace(escaped, f"<mark>{escaped}</mark>", 1)
    return text


def source_card(citation: Citation, turn: int) -> str:
    p = citation.paper
    meta = " · ".join(html.escape(str(x)) for x in (p.venue, p.year, p.track, p.decision) if x)
    link = f" <a href='{html.escape(p.url)}' target='_blank' rel='noopener'>link</a>" if p.url.startswith("http") else ""
    badge = (f"<span class='badge ok'>support {citation.support:.2f}</span>" if citation.supported
             else f"<span class='badge bad'>UNSUPPORTED (support {citation.support:.2f})</span>")
    return (
        f"<div class='source-card' id='src-{turn}-{citation.n}' data-n='{citation.n}'>"
        f"<div class='source-title'>[{citation.n}] {html.escape(p.display_title)}</div>"
        f"<div class='source-meta'>{html.escape(_authors(p))}</div>"
        f"<div class='source-meta'>{meta}{link} {badge}</div>"
        f"<div class='source-abstract'>{highlight(p.abstract, citation.quote)}</div></div>"
    )


def sources_html(answer: Answer | None, turn: int) -> str:
    if answer is None:
        return NO_SOURCES
    if not answer.citations:
        if not answer.sources:
            return "<div class='sources-empty'>Nothing found: no paper matches this question and these filters.</div>"
        return "<div class='sources-empty'>No source cited: the retrieved abstracts do not answer this question.</div>"
    return f"<div class='sources' data-turn='{turn}'>" + "".join(source_card(c, turn) for c in answer.citations) + "</div>"
