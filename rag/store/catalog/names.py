"""The catalogue's name and mention index: papers found by the names a question or a lookup uses
(a whole title, a label, the coined name a title opens with, an author's full name), and the
lookup that ranks title, label and author matches above abstracts that hold every word."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

from rag.papers import title_key
from rag.store.catalog.connection import _chunks_of, _fts_query, name_key
from rag.store.catalog.rows import Rows
from rag.text import STOPWORDS, fold, is_coined
from rag.types import Filters, Paper

_POSSESSIVE = re.compile(r"(?:'s|(?<=s)')$")  # "roth's", "jones'" (after `name_key`: apostrophes kept)


def _any_case(name: str) -> bool:
    """A name unmistakable in any case: inner capitals or digits ("GradSurg", "TGB-Seq", "GPT4o")."""
    return any(c.isupper() for c in name[1:]) and not name.isupper() or any(c.isdigit() for c in name)


_TITLE_WORD = re.compile(r"[A-Za-z][\w-]*[A-Za-z0-9]")


@lru_cache(maxsize=1 << 18)
def _name_like(word: str, coined_only: bool) -> bool:
    """A word that can be a paper's name (cached: titles share most of their words, and this
    ran once per title word per paper at ingest)."""
    coined = is_coined(word)
    if coined_only and not coined:
        return False
    return (
        len(word) >= 3
        and " " not in word
        and (coined or (word[:1].isupper() and "-" not in word))
        and fold(word) not in STOPWORDS
    )


def names_of(paper: Paper) -> set[str]:
    """The single-word names a paper goes by: its label when that is one name-like word
    ("Celcomen"), the word its title opens with before a colon ("Cybench: A Framework …"), and
    the coined words of its title (not of an ALL-CAPS title, where every word looks coined)."""
    title = paper.title
    shouting = bool(title) and sum(map(str.isupper, title)) > 0.6 * sum(map(str.isalpha, title))
    found: set[str] = set()
    if paper.label and _name_like(paper.label.strip(), False):
        found.add(paper.label.strip())
    if title and not shouting:
        head = title.split(":", 1)[0].strip() if ":" in title else ""
        if head and _name_like(head, False):
            found.add(head)
        found |= {w for w in _TITLE_WORD.findall(title) if _name_like(w, True)}
    return found


class NameIndex(Rows):
    # -- lookup -------------------------------------------------------------------------------
    def lookup(self, query: str = "", filters: Filters = Filters(), limit: int = 50) -> list[Paper]:
        """Papers whose title, label or authors name the query, most relevant first: an exact
        title or label first, then full-text rank with title and label weighted over authors.
        Without a query: the papers passing the filters."""
        if not query.strip():
            return self.select(filters, limit)
        allowed = self.allowed(filters)
        found: list[int] = []
        exact = self.title_matches(query)
        found += [p for p in self.pnos(exact).values()]
        fts = _fts_query(query)
        if fts:
            rows = self.db.execute(
                "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? "
                "ORDER BY bm25(papers_fts, 10.0, 8.0, 2.0) LIMIT ?",
                (fts, max(limit * 4, 200)),
            ).fetchall()
            found += [int(r[0]) for r in rows]
        ordered = [p for p in dict.fromkeys(found) if allowed is None or (p < len(allowed) and allowed[p])]
        papers = self.by_pno(ordered[:limit])
        return [papers[p] for p in ordered[:limit] if p in papers]

    def named_pnos(self, query: str) -> set[int]:
        """Every paper `lookup` finds by title, label or authors for the query, unranked and
        unlimited: what "N papers match" counts."""
        found = set(self.pnos(self.title_matches(query)).values())
        fts = _fts_query(query)
        if fts:
            rows = self.db.execute("SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?", (fts,))
            found |= {int(r[0]) for r in rows}
        return found

    def title_matches(self, query: str) -> list[str]:
        """Papers whose whole title or label is the query (case, accents and punctuation aside),
        or whose title starts with it when the query is a long title cut short ("SWIFT: On-the-Fly
        Self-Speculative Decoding…")."""
        key = title_key(query.rstrip("…. "))
        if not key:
            return []
        found = [r[0] for r in self.db.execute("SELECT pid FROM papers WHERE title_key = ?", (key,))]
        folded = fold(query).strip()
        if not found and len(folded) <= 60:
            found = [
                r[0]
                for r in self.db.execute(
                    "SELECT pid FROM papers WHERE label_key = ? OR title_head = ?", (folded, folded)
                )
            ]
        if not found and len(folded) >= 24 and query.rstrip().endswith(("…", "...")):
            prefix = _fts_query(query.rstrip("…. "))
            rows = self.db.execute(
                "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? LIMIT 50", (f"title : ({prefix})",)
            ).fetchall()
            papers = self.by_pno([r[0] for r in rows])
            stem = re.sub(r"\W+", "", fold(query.rstrip("…. ")))
            found = [p.id for p in papers.values() if re.sub(r"\W+", "", fold(p.title)).startswith(stem)]
        return found

    def authors_named_in(self, text: str) -> list[str]:
        """Full author names (two words or more, as written in the catalogue) that occur in the
        text as whole words, ignoring case, accents and the periods of initials ("Justin S Kang"
        finds "Justin S. Kang"), also in the possessive ("Aaron Roth's papers", "Jones' papers").
        Longest first; a name inside a longer found name is not repeated; a surname alone never
        matches. Found by looking up each run of two to six words."""
        written = name_key(text).split()
        bare = [_POSSESSIVE.sub("", w) or w for w in written]
        spans = [(start, size) for size in range(6, 1, -1) for start in range(len(written) - size + 1)]

        def keys(start: int, size: int) -> tuple[str, str]:
            # only the run's last word may carry the possessive ("Aaron Roth's", not "Roth's Aaron")
            run = written[start : start + size]
            return " ".join(run), " ".join([*run[:-1], bare[start + size - 1]])

        wanted = list(dict.fromkeys(key for start, size in spans for key in keys(start, size)))
        shown: dict[str, str] = {}
        for part in _chunks_of(wanted):
            for key, name in self.db.execute(
                f"SELECT key, min(name) FROM authors WHERE key IN ({','.join('?' * len(part))}) GROUP BY key", part
            ):
                shown[key] = name
        found: list[str] = []
        covered: set[int] = set()
        for start, size in spans:
            span = set(range(start, start + size))
            as_written, without = keys(start, size)
            name = shown.get(as_written) or shown.get(without)
            if name is not None and not span & covered and name not in found:
                found.append(name)
                covered |= span
        return found

    def papers_by_author(self, name: str, filters: Filters = Filters(), limit: int = 50) -> list[Paper]:
        """Papers passing the filters with an author whose full name is `name` (folded, initials'
        periods ignored), in `select` order, at most `limit`."""
        where = self._where(filters)
        if where is None:
            return []
        rows = self.db.execute(
            f"SELECT data FROM papers WHERE pno IN (SELECT pno FROM authors WHERE key = ?) AND {where[0]} "
            "ORDER BY sort_key, pid LIMIT ?",
            [name_key(name), *where[1], limit],
        )
        return [Paper.from_dict(json.loads(r[0])) for r in rows]

    def pids_by_authors(self, names: Sequence[str]) -> list[str]:
        rows: list[str] = []
        for name in names:
            rows += [
                r[0]
                for r in self.db.execute(
                    "SELECT p.pid FROM authors a JOIN papers p ON p.pno = a.pno WHERE a.key = ? ORDER BY p.pno",
                    (name_key(name),),
                )
            ]
        return list(dict.fromkeys(rows))

    def titles_in(self, text: str) -> list[str]:
        """Papers whose whole title (12 characters or more) occurs in the text: every run of up to
        forty words is looked up by its title key, so no title list is scanned."""
        words = re.findall(r"\S+", text)
        keys: set[str] = set()
        for start in range(len(words)):
            for end in range(start + 1, min(len(words), start + 40) + 1):
                run = " ".join(words[start:end]).strip(" \"'“”‘’?!.,;:()")
                if len(run) >= 12:
                    keys.add(title_key(run))
        keys.discard("")
        found: list[str] = []
        ordered = sorted(keys)
        for part in _chunks_of(list(ordered)):
            found += [
                r[0]
                for r in self.db.execute(
                    f"SELECT pid FROM papers WHERE title_key IN ({','.join('?' * len(part))})", part
                )
            ]
        return found

    def papers_named_in(
        self, text: str, rare: Callable[[str], bool] = lambda word: True, names_from: str | None = None
    ) -> list[str]:
        """Ids of papers the text names, most specific first: a whole title (or a long title cut
        short with "…"), then a paper's names (`names_of`) as whole words of `names_from` (default:
        the text; a caller leaves out the words that named a filter, so "that ICLR 2025 paper" does
        not name a paper called "ICLR", while a whole title holding such a word still names its
        paper) in the order they occur:
        exactly as written, or in any case when the name is unmistakably coined (inner capitals
        or digits: "gradsurg" finds GradSurg, but "gets" never finds GETS) and the word as written
        is `rare`: a title that capitalises a letter of a common word for its acronym ("Generative
        AttentioN based …") must not be named by every question that says "attention". A name
        shared by more than three papers ("Position", "In-Context") names none of them."""
        found = self.titles_in(text) or self.title_matches(text.strip(" \"'“”"))
        words = re.findall(r"[\w][\w-]*[\w]|\w", text if names_from is None else names_from)
        candidates: list[str] = []
        for word in words:
            candidates += [word] + ([word[:-1]] if word.endswith("s") and len(word) > 3 else [])
        keys = sorted({fold(w) for w in candidates})
        rows: dict[str, list[tuple[str, str]]] = {}
        for part in _chunks_of(list(keys)):
            for key, name, pid in self.db.execute(
                f"SELECT n.key, n.name, p.pid FROM names n JOIN papers p ON p.pno = n.pno WHERE n.key IN "
                f"({','.join('?' * len(part))})",
                part,
            ):
                rows.setdefault(key, []).append((name, pid))
        for word in candidates:
            hits = [pid for name, pid in rows.get(fold(word), []) if name == word or _any_case(name) and rare(word)]
            if 0 < len(set(hits)) <= 3:
                found += hits
        return list(dict.fromkeys(found))

    def namers(self, names: Iterable[str]) -> set[str]:
        """The distinct id-less abstracts (their whole-abstract key, else their copy key) that
        introduce one of these coined names."""
        wanted = sorted(set(names))
        if not wanted:
            return set()
        marks = ",".join("?" * len(wanted))
        rows = self.db.execute(
            f"SELECT n.skey, a.key FROM idless n LEFT JOIN idless a ON a.skey = n.skey AND a.kind = 'a' "
            f"WHERE n.kind = 'n' AND n.key IN ({marks})",
            wanted,
        )
        return {key or skey for skey, key in rows}
