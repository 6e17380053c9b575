"""The paper catalogue in memory: lookup by title, label, author or method name, and the metadata
filters that retrieval applies. Filters resolve to a set of paper ids, which both retrievers
honour, so a filter is applied inside retrieval rather than by trimming a top-k afterwards."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from rag.types import Paper


def _fold(text: str) -> str:
    """Case- and accent-insensitive form for matching names ("Léo" finds "Leo")."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


@dataclass(frozen=True)
class Filters:
    venue: str | None = None
    year: int | None = None
    track: str | None = None
    decision: str | None = None
    author: str | None = None

    def active(self) -> bool:
        return any(v not in (None, "") for v in (self.venue, self.year, self.track, self.decision, self.author))

    def public(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


class Catalog:
    def __init__(self, papers: list[Paper]) -> None:
        self.papers = {p.id: p for p in papers}
        self._authors: dict[str, list[str]] | None = None
        self._fold_cache: dict[str, tuple[str, str, str, list[str]]] = {}

    def named_authors(self, text: str) -> list[str]:
        """Papers with an author whose full name appears in `text` ("what did Aaron Mueller
        propose?"), so retrieval can rank them even when the abstract never says the name."""
        if self._authors is None:
            self._authors = {}
            for pid, paper in self.papers.items():
                for name in paper.authors:
                    if len(name.split()) >= 2:
                        self._authors.setdefault(_fold(name), []).append(pid)
        folded = _fold(text)
        found: list[str] = []
        for name, pids in self._authors.items():
            if name in folded and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", folded):
                found += [p for p in pids if p not in found]
        return found

    def __len__(self) -> int:
        return len(self.papers)

    def get(self, paper_id: str) -> Paper | None:
        return self.papers.get(paper_id)

    def _folded(self, paper: Paper) -> tuple[str, str, str, list[str]]:
        """Folded venue, tracks, decision and author names, computed once per paper."""
        cached = self._fold_cache.get(paper.id)
        if cached is None:
            tracks = " | ".join([paper.track, str(paper.extra.get("area", "")), *map(str, paper.extra.get("tracks", []))])
            cached = (_fold(paper.venue), _fold(tracks), _fold(paper.decision), [_fold(a) for a in paper.authors])
            self._fold_cache[paper.id] = cached
        return cached

    def matches(self, paper: Paper, filters: Filters) -> bool:
        venue, tracks, decision, authors = self._folded(paper)
        if filters.venue and _fold(filters.venue) not in venue:
            return False
        if filters.year and paper.year != filters.year:
            return False
        if filters.track and _fold(filters.track) not in tracks:
            return False
        if filters.decision and _fold(filters.decision) not in decision:
            return False
        if filters.author:
            wanted = _fold(filters.author)
            if not any(wanted in name for name in authors):
                return False
        return True

    def allowed(self, filters: Filters) -> set[str] | None:
        """Paper ids that pass the filters, or None when no filter is set."""
        if not filters.active():
            return None
        return {pid for pid, paper in self.papers.items() if self.matches(paper, filters)}

    def lookup(self, query: str = "", filters: Filters = Filters(), limit: int = 50) -> list[Paper]:
        """Catalogue entries whose title, label, authors or abstract name the query, best first:
        a title/label match outranks an author match, which outranks a mention in the abstract."""
        terms = [t for t in re.split(r"\s+", _fold(query).strip()) if t]
        scored: list[tuple[float, str, Paper]] = []
        for paper in self.papers.values():
            if not self.matches(paper, filters):
                continue
            if not terms:
                scored.append((0.0, paper.display_title.lower(), paper))
                continue
            head = _fold(f"{paper.title} {paper.label}")
            authors = _fold(" ; ".join(paper.authors))
            body = _fold(paper.abstract)
            score = 0.0
            for term in terms:
                pattern = re.compile(r"(?<!\w)" + re.escape(term))
                if pattern.search(head):
                    score += 3
                elif pattern.search(authors):
                    score += 2
                elif pattern.search(body):
                    score += 1
                else:
                    score = -1
                    break
            if score > 0:
                if _fold(query).strip() in (_fold(paper.title), _fold(paper.label)):
                    score += 10
                scored.append((-score, paper.display_title.lower(), paper))
        scored.sort(key=lambda item: (item[0], item[1]))
        return [paper for _, _, paper in scored[:limit]]
