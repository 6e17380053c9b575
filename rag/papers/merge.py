"""The paper shown for a set of copies. A paper's copies (one per source that lists it) are kept
as they were read, and the shown paper is recomputed from all of them, field by field, the richer
value winning. Recomputing instead of patching is what makes re-ingest idempotent, lets an edited
file replace its own contribution without erasing what another file said, and makes the result
the same whatever order concurrent writers' copies arrive in."""

from __future__ import annotations

from typing import Any

from rag.papers.identity import abstract_key, is_placeholder, title_head
from rag.papers.naming import derive_label
from rag.types import Paper


def _richer(a: str, b: str) -> str:
    return b if len(b.strip()) > len(a.strip()) else a


def _authors(parts: list[Paper]) -> tuple[list[str], bool, str]:
    """The best author list among the copies, whether it was cut, and its order."""
    best: tuple[list[str], bool, str] = ([], False, "")
    for p in parts:
        names, cut = p.authors, p.authors_truncated
        if not names:
            continue
        # A complete list beats a cut one unless the cut one is strictly longer; between equals,
        # one in the paper's order beats one sorted by name.
        better = (
            (not best[0])
            or (best[1] and not cut and len(names) >= len(best[0]))
            or (best[1] == cut and len(names) > len(best[0]))
            or (best[1] == cut and len(names) == len(best[0]) and best[2] and not p.authors_order)
        )
        if better:
            best = (names, cut, p.authors_order)
    return best


def merge_papers(parts: list[Paper], paper_id: str, label: str | None = None) -> Paper:
    """One paper from all its copies. Strings: the longer non-empty value; authors: a complete
    list over a cut one; year: the first given; tracks: all kept (`extra["tracks"]`); sources:
    every file (`extra["sources"]`). Copies with an own id come first, so their values win ties."""
    ordered = sorted(parts, key=lambda p: (not p.own_id, p.source, p.ordinal))
    first = ordered[0]
    merged = Paper(
        id=paper_id,
        source=first.source,
        position=first.position,
        ordinal=first.ordinal,
        own_id=any(p.own_id for p in parts),
    )
    tracks: list[str] = []
    extra: dict[str, Any] = {}
    for p in ordered:
        for name in ("title", "venue", "decision", "url"):
            setattr(merged, name, _richer(getattr(merged, name), getattr(p, name)))
        if not is_placeholder(p.abstract):
            merged.abstract = _richer(merged.abstract, p.abstract)
        merged.year = merged.year or p.year
        if p.track and p.track not in tracks:
            tracks.append(p.track)
        for k, v in p.extra.items():
            if k not in ("tracks", "sources"):
                extra.setdefault(k, v)
    merged.authors, merged.authors_truncated, merged.authors_order = _authors(ordered)
    merged.track = max(tracks, key=len) if tracks else ""
    if len(tracks) > 1:
        extra["tracks"] = tracks
    extra["sources"] = sorted({p.source for p in parts})
    if label is not None:
        merged.label = label  # computed before, from the same copies
    else:
        merged.label = derive_label(merged.abstract) if merged.abstract else ""
    merged.extra = extra
    return merged


def listed_claims(paper: Paper, copies: list[Paper] | None = None) -> tuple[str, str]:
    """What a listed paper offers id-less copies to join it by, from its own-id copies alone (never
    from id-less copies it took in, so that the claim, and which copies join it, does not depend on
    the order they came in): (whole-abstract key, "") when its own copies give an abstract, else
    ("", the name its title opens with). `copies`: all its copies, when some may be id-less (None:
    the merged `paper` is its own copies' alone). An id-less paper claims nothing."""
    if not paper.own_id:
        return "", ""
    own = [c for c in copies if c.own_id] if copies is not None else None
    listed = merge_papers(own, paper.id, label="") if own and len(own) < len(copies or []) else paper
    if listed.abstract:
        return abstract_key(listed.abstract), ""
    return "", title_head(listed.title)
