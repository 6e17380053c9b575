"""The plain-text paper-list pages of the bundled sample.

Layout A (files 000-003): a header line ("ICLR 2025 Papers", "ICLR 2025 论文列表"), then one
abstract per paragraph. Layout B (file 004): header "论文检索", then blocks of three paragraphs:
`Area · Subarea`, an authors line (a trailing `等` means the list was cut), the abstract.
Both are read by one state machine: a track line or an authors line is held until the abstract
that follows it."""

from __future__ import annotations

import re
from collections.abc import Iterator

from rag.errors import InputError
from rag.papers.readers.records import clean_abstract, new_paper, scrub, split_authors
from rag.types import Paper

_HEADER = re.compile(r"^\s*([A-Za-z][A-Za-z-]*)\s*[' ]?\s*((?:19|20)\d\d)\b")
_TRACK = re.compile(r"^[^.!?\n]{2,120}\s·\s[^.!?\n]{2,160}$")
MIN_ABSTRACT_CHARS = 80


def _paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """Paragraphs with the 1-based line number where each starts."""
    start, lines = 0, list[str]()
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            if not lines:
                start = number
            lines.append(line.strip())
        elif lines:
            yield start, " ".join(lines)
            lines = []
    if lines:
        yield start, " ".join(lines)


def _is_authors(paragraph: str) -> bool:
    if len(paragraph) > 1200 or paragraph.endswith((".", "?", "!")) and not paragraph.endswith("等"):
        return False
    if paragraph.rstrip().endswith("等"):
        return True
    parts = [p.strip() for p in re.split(r"[,，、]", paragraph)]
    if len(parts) < 2:
        return bool(re.fullmatch(r"[A-Z][\w.'-]+(?: [A-Z][\w.'-]+){1,3}", paragraph))
    return all(0 < len(p.split()) <= 5 for p in parts)


_MARKUP_LINE = re.compile(r"^\s*(#{1,6}\s|```|~~~|\|.*\||[-*+]\s|\d+\.\s|<[a-zA-Z!/]|>\s)")


# The header line of a page: "ICLR 2025 Papers", "ICLR 2025 论文列表", "ICML 2025 Accepted Papers",
# "NeurIPS 2024", or the search page's "论文检索". A line that merely mentions papers is not one.
_PAGE_HEADER = re.compile(
    r"^(?:[A-Za-z][A-Za-z-]*\s*'?\s*(?:19|20)\d\d"
    r"(?:[\s:·-]+(?:accepted|papers?|abstracts?|list|orals?|spotlights?|posters?|论文列表|论文|列表))*"
    r"|论文检索|论文列表)\s*$",
    re.I,
)
PAGE_EXTENSIONS = (".txt", ".md")


def looks_like_pagetext(text: str) -> bool:
    """The sample's page layout: a header line naming a list (`_PAGE_HEADER`), then paragraphs of
    which at least half are abstract-length (the rest track or author lines), and no Markdown or
    HTML structure. A README, notes or source code whose first line mentions "papers" is not a list."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not _PAGE_HEADER.match(lines[0].strip()):
        return False
    markup = sum(1 for line in lines if _MARKUP_LINE.match(line))
    if markup > max(2, len(lines) // 20):
        return False
    body = [p for _, p in _paragraphs(text)][1:]
    abstracts = sum(1 for p in body if len(p) >= MIN_ABSTRACT_CHARS and not _is_authors(p))
    others = sum(1 for p in body if _TRACK.match(p) or _is_authors(p))
    return abstracts > 0 and abstracts * 2 >= len(body) - others


def read_pagetext(text: str, source: str) -> Iterator[Paper | InputError]:
    paragraphs = list(_paragraphs(text))
    if not paragraphs:
        return
    venue, year = "", None
    _, header = paragraphs[0]
    body = paragraphs
    if len(header) < 120 and not header.endswith("."):
        body = paragraphs[1:]
        match = _HEADER.match(header)
        if match:
            venue, year = match.group(1), int(match.group(2))
    track, truncated = "", False
    authors: list[str] = []
    ordinal = 0
    for line, para in body:
        para, _ = scrub(para)
        if _TRACK.match(para) and not para.endswith("."):
            track = para
            continue
        if _is_authors(para):
            authors, truncated = split_authors(para)
            continue
        abstract = clean_abstract(para)
        if len(abstract) < MIN_ABSTRACT_CHARS:
            yield InputError(source, f"paragraph too short to be an abstract: {para[:60]!r}", line)
            continue
        ordinal += 1
        yield new_paper(
            None,
            source,
            line,
            ordinal,
            abstract=abstract,
            authors=authors,
            authors_truncated=truncated,
            venue=venue,
            year=year,
            track=track,
        )
        track, authors, truncated = "", [], False
