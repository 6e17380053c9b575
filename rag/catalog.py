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

    # == Catalogue operations used by answering (rag.catalog_answers, rag.chat, eval) ===========
    # One block, so the SQLite catalogue can port these with the same signatures and semantics.
    # Matching is on folded text (rag.text.fold: case- and accent-insensitive) throughout.

    def count(self, filters: Filters = Filters()) -> int:
        """How many papers pass `filters` (all papers when no filter is set). Same predicate as
        `matches`: venue, track (track or area text), decision and author are folded substring
        tests; year is equality."""
        if not filters.active():
            return len(self.papers)
        return sum(1 for paper in self.papers.values() if self.matches(paper, filters))

    def select(self, filters: Filters = Filters(), limit: int = 50, offset: int = 0) -> list[Paper]:
        """Papers passing `filters`, in a stable order (folded display title, then id), from
        `offset`, at most `limit`. Paging with offset/limit visits every paper exactly once."""
        chosen = [p for p in self.papers.values() if not filters.active() or self.matches(p, filters)]
        chosen.sort(key=lambda p: (_fold(p.display_title), p.id))
        return chosen[offset : offset + limit] if limit >= 0 else chosen[offset:]

    def facet_values(self, field: str) -> list[str]:
        """Distinct non-empty values of `venue`, `year`, `track` or `decision` (as strings),
        sorted. `track` lists the track field only (e.g. "main", "position",
        "Position · Methodology"), not areas. Any other field is a ValueError."""
        if field not in ("venue", "year", "track", "decision"):
            raise ValueError(f"no facet {field!r}: use venue, year, track or decision")
        return sorted({str(getattr(p, field)) for p in self.papers.values() if getattr(p, field)})

    def _author_names(self) -> dict[str, str]:
        """Folded, punctuation-free full name ("justin s kang") -> the name as written; only
        names of two words or more."""
        if getattr(self, "_author_keys", None) is None:
            keys: dict[str, str] = {}
            for paper in self.papers.values():
                for name in paper.authors:
                    key = _name_key(name)
                    if len(key.split()) >= 2:
                        keys.setdefault(key, name)
            self._author_keys = keys
        return self._author_keys

    def authors_named_in(self, text: str) -> list[str]:
        """Full author names (two words or more, as written in the catalogue) that occur in
        `text` as whole words, ignoring case, accents and the periods of initials ("Justin S
        Kang" finds "Justin S. Kang"). Longest names first; a name inside a longer found name
        is not repeated. Surnames alone never match."""
        keys = self._author_names()
        words = _name_key(text).split()
        found: list[str] = []
        covered: set[int] = set()
        for size in range(6, 1, -1):
            for start in range(len(words) - size + 1):
                span = set(range(start, start + size))
                if span & covered:
                    continue
                name = keys.get(" ".join(words[start : start + size]))
                if name is not None and name not in found:
                    found.append(name)
                    covered |= span
        return found

    def papers_by_author(self, name: str, filters: Filters = Filters(), limit: int = 50) -> list[Paper]:
        """Papers passing `filters` with an author whose full name equals `name` (folded,
        initials' periods ignored), in `select` order, at most `limit`."""
        key = _name_key(name)
        chosen = [p for p in self.papers.values()
                  if any(_name_key(a) == key for a in p.authors) and (not filters.active() or self.matches(p, filters))]
        chosen.sort(key=lambda p: (_fold(p.display_title), p.id))
        return chosen[:limit]

    def _names(self) -> tuple[dict[str, list[str]], dict[str, list[str]], list[tuple[str, str]]]:
        """(folded name -> paper ids, exact name -> paper ids, [(folded title, id)]).

        A paper's names are its label when that is one name-like word ("Celcomen"), the word
        opening its title before a colon ("Cybench" in "Cybench: A Framework …"), and the coined
        names in its title (rag.text.is_coined; not from an ALL-CAPS title, where every word looks
        coined). A name has three characters or more and is coined or capitalised. A name the
        abstracts also use as a lower-case word ("position", "gets") names a paper only when
        written exactly so and in capitals ("GETS: Ensemble Temperature Scaling …"); so
        "Position: …", "LLM-based", "IT" and "TASKS" name nothing."""
        if getattr(self, "_name_index", None) is None:
            from rag.text import is_coined

            prose = re.sub(r"\S*[/@]\S*", " ", " ".join(p.abstract for p in self.papers.values()))  # not in URLs
            common = set(re.findall(r"(?<![\w-])[a-z][a-z-]+", prose))

            def kind(word: str) -> str:
                """"folded", "exact" (a common word written as an acronym) or "" (not a name)."""
                word = word.strip()
                if len(word) < 3 or " " in word or not (is_coined(word) or (word[:1].isupper() and "-" not in word)):
                    return ""
                if word.lower() in common:
                    return "exact" if word.isupper() else ""
                return "folded"

            folded_names: dict[str, list[str]] = {}
            exact_names: dict[str, list[str]] = {}
            titles: list[tuple[str, str]] = []
            for pid, paper in self.papers.items():
                found: set[str] = set()
                shouting = bool(paper.title) and sum(c.isupper() for c in paper.title) > 0.6 * sum(c.isalpha() for c in paper.title)
                if paper.label and kind(paper.label):
                    found.add(paper.label.strip())
                if paper.title:
                    titles.append((_fold(paper.title), pid))
                    head = paper.title.split(":", 1)[0].strip() if ":" in paper.title else ""
                    if head and not shouting and kind(head):
                        found.add(head)
                    if not shouting:  # an ALL-CAPS title makes every word look coined
                        found |= {w for w in re.findall(r"[A-Za-z][\w-]*[A-Za-z0-9]", paper.title) if is_coined(w) and kind(w)}
                for name in found:
                    if kind(name) == "exact":
                        exact_names.setdefault(name, []).append(pid)
                    else:
                        folded_names.setdefault(_fold(name), []).append(pid)
            self._name_index = (folded_names, exact_names, titles)
        return self._name_index

    def papers_named_in(self, text: str) -> list[str]:
        """Ids of papers named in `text`: a paper's full title (folded substring, titles of 12+
        characters), or one of its names (see `_names`) as a whole word, folded or, for names
        that are also common words, exactly as written. Title matches first, then names in the
        order they occur in the text; a name shared by several papers yields all of them."""
        folded_names, exact_names, titles = self._names()
        folded = _fold(text)
        found = [pid for title, pid in titles if len(title) >= 12 and title in folded]

        def add(ids: list[str]) -> None:
            found.extend(pid for pid in ids if pid not in found)

        for word in re.findall(r"[\w][\w-]*[\w]|\w", text):
            low = _fold(word)
            for candidate in (low, low[:-1] if low.endswith("s") and len(low) > 3 else ""):
                if candidate:
                    add(folded_names.get(candidate, []))
            for candidate in (word, word[:-1] if word.endswith("s") and len(word) > 3 else ""):
                if candidate:
                    add(exact_names.get(candidate, []))
        return found

def _name_key(text: str) -> str:
    """A person's name as a match key: folded, punctuation but hyphens and apostrophes dropped
    (the periods of initials too), single spaces."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s'-]", " ", _fold(text))).strip()
