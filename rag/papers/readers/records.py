"""Turn one loosely shaped record (a JSON object, a CSV row, a BibTeX entry) into a Paper.

Every structured reader goes through here, so JSON, CSV and BibTeX agree on field names, on how an
author list is split, and on what counts as a cut ("et al.") list."""

from __future__ import annotations

import re
from typing import Any

from rag.papers.identity import derived_id, is_placeholder
from rag.papers.readers.authors import declared_alphabetical
from rag.text import collapse
from rag.types import ALPHABETICAL, Paper

ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "paper_id", "openreview_id", "forum", "key", "ID", "doi", "arxiv_id"),
    "title": ("title", "name"),
    "abstract": ("abstract", "summary", "text"),
    "authors": ("authors", "author", "author_list"),
    "venue": ("venue", "conference", "booktitle", "journal"),
    "year": ("year",),
    "track": ("track",),
    "area": ("area", "primary_area", "topic"),
    "decision": ("decision", "status"),
    "url": ("url", "link", "pdf_url"),
    "author_order": ("author_order", "authors_order", "author_ordering"),
}
_TRUNCATION = re.compile(r"(\bet\s*al\.?|(?:\band\s+|^)others|等|…|\.\.\.)\s*$", re.I)


class RecordError(ValueError):
    """A record that cannot become a paper; the message says which field is wrong."""


def split_authors(value: Any) -> tuple[list[str], bool]:
    """Authors from a list or a string ("A, B and C", "A and B and others", "A, B 等").
    Returns the names and whether the list was cut."""
    if value is None or value == "":
        return [], False
    if isinstance(value, (list, tuple)):
        names = [str(v).strip() for v in value if str(v).strip()]
        truncated = bool(names) and bool(_TRUNCATION.fullmatch(names[-1].strip()))
        if truncated:
            names = names[:-1]
        return names, truncated
    if not isinstance(value, str):
        raise RecordError(f"field 'authors' must be a list or a string, not {type(value).__name__}")
    text = value.strip()
    truncated = bool(_TRUNCATION.search(text))
    text = _TRUNCATION.sub("", text).strip().rstrip(",;")
    sep = r"\s+and\s+" if re.search(r"\s+and\s+", text) and "," not in text else r"\s*[,;，、]\s*|\s+and\s+"
    names = [n.strip() for n in re.split(sep, text) if n and n.strip()]
    return names, truncated


def parse_year(value: Any) -> int | None:
    if value is None or value == "":
        return None
    match = re.search(r"(19|20)\d\d", str(value))
    if not match:
        raise RecordError(f"field 'year' is not a year: {value!r}")
    return int(match.group(0))


def clean_abstract(text: str) -> str:
    """Collapse whitespace and undo a text pasted twice (a known quirk of the public lists)."""
    text = collapse(text or "")
    half = len(text) // 2
    for cut in range(max(0, half - 2), min(len(text), half + 3)):
        first, second = text[:cut].strip(), text[cut:].strip()
        if first and first == second:
            return first
    return text


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def scrub(text: str) -> tuple[str, bool]:
    """Replace lone surrogates (`"\\ud800"` in JSON decodes to one; no encoder accepts it) with
    U+FFFD; say whether any were found."""
    if _SURROGATE.search(text):
        return _SURROGATE.sub("\ufffd", text), True
    return text, False


def _pick(record: dict[str, Any], name: str, lowered: dict[str, Any] | None = None) -> Any:
    if name not in ALIASES:
        value = record.get(name)
        return None if value in (None, "") else value
    if lowered is None:
        lowered = {str(k).lower(): v for k, v in record.items()}
    for alias in ALIASES[name]:
        if alias.lower() in lowered and lowered[alias.lower()] not in (None, ""):
            return lowered[alias.lower()]
    return None


def _scrub_all(value: Any, found: list[bool]) -> Any:
    if isinstance(value, str):
        text, bad = scrub(value)
        if bad:
            found.append(True)
        return text
    if isinstance(value, list):
        return [_scrub_all(v, found) for v in value]
    if isinstance(value, dict):
        return {_scrub_all(k, found): _scrub_all(v, found) for k, v in value.items()}
    return value


def paper_from_record(
    record: dict[str, Any],
    source: str,
    position: int,
    ordinal: int = 0,
    notes: list[str] | None = None,
    scrub_needed: bool = True,
) -> Paper:
    """Map a record onto a Paper. Unknown fields are kept in `extra`; missing ones are allowed,
    but a record with neither title nor abstract is no paper at all. A placeholder abstract
    ("No abstract available") counts as none. Invalid characters are replaced, and said in
    `notes`."""
    if not isinstance(record, dict):
        raise RecordError(f"expected an object with paper fields, got {type(record).__name__}")
    found: list[bool] = []
    if scrub_needed:
        record = _scrub_all(record, found)
    if found and notes is not None:
        notes.append("replaced invalid characters (lone UTF-16 surrogates) with U+FFFD")
    lowered = {str(k).lower(): v for k, v in record.items()}
    text_fields = {}
    for name in ("title", "abstract", "venue", "track", "decision", "url", "area"):
        value = _pick(record, name, lowered)
        if value is not None and not isinstance(value, (str, int, float)):
            raise RecordError(f"field '{name}' must be text, not {type(value).__name__}")
        text_fields[name] = "" if value is None else collapse(str(value))
    abstract = clean_abstract(text_fields["abstract"])
    if is_placeholder(abstract):
        abstract = ""
    title = text_fields["title"].strip("{} ")
    if not abstract and not title:
        raise RecordError("record has neither a title nor an abstract")
    authors, truncated = split_authors(_pick(record, "authors", lowered))
    raw_id = _pick(record, "id", lowered)
    known = {alias.lower() for aliases in ALIASES.values() for alias in aliases}
    extra = {k: v for k, v in record.items() if str(k).lower() not in known and v not in (None, "")}
    if text_fields["area"]:
        extra["area"] = text_fields["area"]
    url = text_fields["url"]
    doi = lowered.get("doi")
    if not url and isinstance(doi, str) and doi.strip():
        url = "https://doi.org/" + doi.strip()
    return new_paper(
        raw_id,
        source,
        position,
        ordinal,
        abstract=abstract,
        title=title,
        authors=authors,
        authors_truncated=truncated,
        venue=text_fields["venue"],
        year=parse_year(_pick(record, "year", lowered)),
        track=text_fields["track"],
        decision=text_fields["decision"],
        url=url,
        extra=extra,
        authors_order=ALPHABETICAL if declared_alphabetical(_pick(record, "author_order", lowered)) else "",
    )


def new_paper(raw_id: Any, source: str, position: int, ordinal: int, **fields: Any) -> Paper:
    """A copy as read, for every reader alike: the source's own id when it gives one, else an id
    derived from the content (rag.papers.identity), so that the rule for "own id" lives in one place."""
    own_id = raw_id is not None and str(raw_id).strip() != ""
    paper = Paper(
        id=str(raw_id).strip() if own_id else "",
        own_id=own_id,
        source=source,
        position=position,
        ordinal=ordinal,
        **fields,
    )
    if not own_id:
        paper.id = derived_id(paper)
    return paper
