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
from rag.readers.records import clean_abstract, derived_id, split_authors
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


def looks_like_pagetext(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return len(first) < 120 and bool(
        _HEADER.match(first) or re.search(r"(papers|论文|paper list|accepted)", first, re.I)
    )


def read_pagetext(text: str, source: str) -> Iterator[Paper | InputError]:
    paragraphs = list(_paragraphs(text))
    if not paragraphs:
        return
    venue, year = "", None
    header_line, header = paragraphs[0]
    body = paragraphs
    if len(header) < 120 and not header.endswith("."):
        body = paragraphs[1:]
        match = _HEADER.match(header)
        if match:
            venue, year = match.group(1), int(match.group(2))
    track, truncated = "", False
    authors: list[str] = []
    for line, para in body:
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
        yield Paper(
            id=derived_id(abstract),
            abstract=abstract,
            authors=authors,
            authors_truncated=truncated,
            venue=venue,
            year=year,
            track=track,
            source=source,
            position=line,
        )
        track, authors, truncated = "", [], False
