"""Merging the copies of one paper that arrive from several sources.

A catalogue record keeps every source's own copy (under `extra["_sources"]`, keyed by file and
position) and the shown paper is recomputed from all of them, field by field, the richer value
winning. Recomputing instead of patching is what makes re-ingest idempotent and lets an edited
file replace its own contribution without erasing what another file said."""

from __future__ import annotations

from typing import Any

from rag.label import derive_label
from rag.types import Paper

SOURCES = "_sources"


def source_key(paper: Paper) -> str:
    return f"{paper.source}:{paper.position}"


def is_derived_id(paper_id: str) -> bool:
    return paper_id.startswith(("a-", "t-"))


def _richer(a: str, b: str) -> str:
    return b if len(b.strip()) > len(a.strip()) else a


def _authors(parts: list[Paper]) -> tuple[list[str], bool]:
    best: tuple[list[str], bool] = ([], False)
    for p in parts:
        names, cut = p.authors, p.authors_truncated
        if not names:
            continue
        # A complete list beats a cut one unless the cut one is strictly longer.
        better = (not best[0]) or (best[1] and not cut and len(names) >= len(best[0])) or (
            best[1] == cut and len(names) > len(best[0])
        )
        if better:
            best = (names, cut)
    return best


def merge_papers(parts: list[Paper], paper_id: str) -> Paper:
    """One paper from all source copies. Strings: the longer non-empty value; authors: a
    complete list over a cut one; year: the first given; tracks: all kept in extra."""
    ordered = sorted(parts, key=lambda p: (is_derived_id(p.id), p.source, p.position))
    merged = Paper(id=paper_id, source=ordered[0].source, position=ordered[0].position)
    tracks: list[str] = []
    extra: dict[str, Any] = {}
    for p in ordered:
        for name in ("abstract", "title", "venue", "decision", "url"):
            setattr(merged, name, _richer(getattr(merged, name), getattr(p, name)))
        merged.year = merged.year or p.year
        if p.track and p.track not in tracks:
            tracks.append(p.track)
        for k, v in p.extra.items():
            if k != SOURCES:
                extra.setdefault(k, v)
    merged.authors, merged.authors_truncated = _authors(ordered)
    merged.track = max(tracks, key=len) if tracks else ""
    if len(tracks) > 1:
        extra["tracks"] = tracks
    merged.label = derive_label(merged.abstract) if merged.abstract else merged.title[:60]
    merged.extra = extra
    return merged


def canonical_id(ids: list[str], current: str) -> str:
    """Keep the source's own id when any copy has one; a derived id only as a fallback."""
    if not is_derived_id(current):
        return current
    own = sorted(i for i in ids if not is_derived_id(i))
    return own[0] if own else current


def raw(paper: Paper) -> dict[str, Any]:
    data = paper.to_dict()
    data["extra"] = {k: v for k, v in paper.extra.items() if k != SOURCES}
    return data
