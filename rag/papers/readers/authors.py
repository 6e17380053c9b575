"""Whether an author list gives the paper's order or is sorted by name.

Some sources list authors alphabetically: ICLR 2025's OpenReview export sorts them by given name
(2,635 of its 2,816 lists of four or more open with four names in alphabetical order, where chance
gives one in 24), so its "first author" of "Scaling and evaluating sparse autoencoders" is Alec
Radford, where the paper's is Leo Gao. A list sorted by name says nothing about who came first,
so nothing may name a first author from it (BibTeX keys, bylines): such a copy is marked
`authors_order = ALPHABETICAL`. Three ways to know:
- the source says so, in a record field `author_order` ("alphabetical", "sorted", "unknown");
- the list itself: its first five or more names in alphabetical order, by given name or by surname
  (one in 120 either way by chance);
- the source: when over half of its first lists of four or more names open with four in
  alphabetical order, every list of that source is taken as sorted (short lists too, which alone
  could not tell). ICML 2025's lists: 3.8% by given name, near chance, so they keep their order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rag.text import fold
from rag.types import ALPHABETICAL, Paper

LIST_RUN = 5  # a list whose first this many names are sorted is taken as sorted
SOURCE_RUN = 4  # a source's lists are judged by whether their first this many names are sorted
SOURCE_SAMPLE = 200  # lists of SOURCE_RUN or more names a source is judged on
SOURCE_MIN = 20  # fewer lists than this (a short file): the source is not judged
SOURCE_SHARE = 0.5
DECLARED = frozenset({"alphabetical", "alphabetic", "alphabetically", "sorted", "unknown", "not significant"})


def _given(name: str) -> str:
    return fold(name)


def _surname(name: str) -> str:
    """The surname: before the comma of "Knuth, Donald", else the last word."""
    name = name.strip()
    return fold(name.split(",")[0] if "," in name else (name.split() or [""])[-1])


def sorted_run(names: Sequence[str], key: Callable[[str], str]) -> int:
    """How many names, from the first, are in alphabetical order by `key`."""
    keys = [key(n) for n in names]
    run = 1 if keys else 0
    while run < len(keys) and keys[run - 1] <= keys[run]:
        run += 1
    return run


def opens_sorted(names: Sequence[str], run: int) -> bool:
    """Whether the first `run` names (and there are that many) are sorted by given name or surname."""
    return len(names) >= run and any(sorted_run(names, key) >= run for key in (_given, _surname))


def declared_alphabetical(value: object) -> bool:
    """Whether a record's `author_order` field says its list is not in the paper's order."""
    return isinstance(value, str) and fold(value).strip() in DECLARED


class SourceOrder:
    """Judges one source from its first lists: `observe` each copy's authors until `decided`;
    then `mark` each copy (those held back meanwhile, and the rest)."""

    def __init__(self) -> None:
        self.lists = 0
        self.sorted = 0
        self.done = False

    @property
    def alphabetical(self) -> bool:
        return self.lists >= SOURCE_MIN and self.sorted > SOURCE_SHARE * self.lists

    def observe(self, names: Sequence[str]) -> None:
        if len(names) >= SOURCE_RUN:
            self.lists += 1
            self.sorted += opens_sorted(names, SOURCE_RUN)
            self.done = self.lists >= SOURCE_SAMPLE

    def mark(self, paper: Paper) -> Paper:
        if not paper.authors_order and (
            (self.alphabetical and len(paper.authors) >= 2) or opens_sorted(paper.authors, LIST_RUN)
        ):
            paper.authors_order = ALPHABETICAL
        return paper
